/**
 * Lines put aside until the end of a read: what a reading command can print only once it has seen every record
 * (a column's width, a section that comes first but is known last). Held in memory up to a bound, then written
 * to a private temporary file (0600 in a 0700 folder: it holds what the logs hold) and read back in order, so
 * a log of any size costs the disk, not the memory. Each line is one line: no `\n` in it.
 */
import { closeSync, createReadStream, mkdtempSync, openSync, rmSync, writeSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { createInterface } from 'node:readline';

/** Characters held in memory before the spool goes to disk. */
const MEMORY_CHARS = 256 * 1024;

export class Spool {
  private held: string[] = [];
  private chars = 0;
  private dir: string | undefined;
  private fd: number | undefined;
  /** Lines added so far. */
  count = 0;

  constructor(private readonly memoryChars = MEMORY_CHARS) {}

  add(line: string): void {
    this.held.push(line);
    this.chars += line.length;
    this.count++;
    if (this.chars > this.memoryChars) this.spill();
  }

  /** Every line, in the order added; then the spool is empty and its file gone. */
  async *lines(): AsyncGenerator<string> {
    try {
      if (this.fd !== undefined) {
        closeSync(this.fd);
        this.fd = undefined;
        for await (const line of createInterface({ input: createReadStream(join(this.dir!, 'spool')), crlfDelay: Infinity })) yield line;
      }
      yield* this.held;
    } finally {
      this.dispose();
    }
  }

  /** The lines of a spool that never went to disk (one made with no memory bound, for a result wanted at once). */
  linesNow(): string[] {
    if (this.fd !== undefined) throw new Error('the spool is on disk: read it with lines()');
    return this.held;
  }

  /** Remove the file, if any. */
  readonly dispose = (): void => {
    if (this.fd !== undefined) closeSync(this.fd);
    this.fd = undefined;
    if (this.dir !== undefined) rmSync(this.dir, { recursive: true, force: true });
    if (this.dir !== undefined) process.off('exit', this.dispose);
    this.dir = undefined;
    this.held = [];
    this.chars = 0;
  };

  private spill(): void {
    if (this.fd === undefined) {
      this.dir = mkdtempSync(join(tmpdir(), 'mcptap-spool-'));
      // A process that exits before the spool is read (process.exit on an error) still removes it.
      process.once('exit', this.dispose);
      this.fd = openSync(join(this.dir, 'spool'), 'w', 0o600);
    }
    writeSync(this.fd, `${this.held.join('\n')}\n`);
    this.held = [];
    this.chars = 0;
  }
}
