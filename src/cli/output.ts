/**
 * Where a reading command's output goes as it is made: stdout, or a file (`-o`) written owner-only like the logs
 * it comes from. Text is gathered into chunks and each write waits for the stream to drain, so a view of a log
 * of any size never piles up in memory behind a slow pipe. When the reader goes away (`mcptap view logs/ | head`)
 * the next write throws OUTPUT_CLOSED, which the CLI ends on quietly, as `git log | head` does.
 */
import type { WriteStream } from 'node:fs';
import { open } from 'node:fs/promises';
import { McptapError } from '../types.js';

const CHUNK_CHARS = 64 * 1024;

export class Output {
  private buffer: string[] = [];
  private chars = 0;
  private stream: NodeJS.WritableStream | undefined;
  private file: WriteStream | undefined;
  /** Characters written so far. */
  written = 0;
  /** The stream's error, once it had one (EPIPE: the reader went away). */
  private failure: NodeJS.ErrnoException | undefined;

  /**
   * Output to `file` (created 0600, an existing one narrowed to 0600), or to stdout without one. The file is
   * made at the first write: logs that turn out to hold no record leave none behind.
   */
  private constructor(private readonly path: string | undefined) {}

  static to(file: string | undefined): Output {
    return new Output(file);
  }

  /** Add text; waits only when a chunk is full and the stream is behind. */
  async write(text: string): Promise<void> {
    this.buffer.push(text);
    this.chars += text.length;
    if (this.chars >= CHUNK_CHARS) await this.flush();
  }

  /** A line: the text and a newline. */
  line(text: string): Promise<void> {
    return this.write(`${text}\n`);
  }

  async flush(): Promise<void> {
    if (this.chars === 0) return;
    const text = this.buffer.join('');
    this.buffer = [];
    this.written += this.chars;
    this.chars = 0;
    const stream = this.stream ?? (await this.open());
    this.check();
    if (!stream.write(text)) await new Promise<void>((resolve) => {
      // Whichever comes first; the other listener goes, or a long output piles them up on the stream.
      const done = (): void => {
        stream.off('drain', done);
        stream.off('error', done);
        resolve();
      };
      stream.once('drain', done);
      stream.once('error', done);
    });
    this.check();
  }

  private check(): void {
    if (!this.failure) return;
    if (this.failure.code === 'EPIPE') throw new McptapError('OUTPUT_CLOSED', 'the output was closed by its reader.');
    throw new McptapError('CANNOT_WRITE', `cannot write ${this.path ?? 'to stdout'} (${this.failure.code ?? this.failure.message}).`);
  }

  private watch(stream: NodeJS.WritableStream): NodeJS.WritableStream {
    stream.on('error', (error: NodeJS.ErrnoException) => (this.failure ??= error));
    return stream;
  }

  private async open(): Promise<NodeJS.WritableStream> {
    if (this.path === undefined) return (this.stream = this.watch(process.stdout));
    const file = this.path;
    const handle = await open(file, 'w', 0o600).catch((error: NodeJS.ErrnoException) => {
      throw new McptapError('CANNOT_WRITE', `cannot write ${file} (${error.code ?? error.message}). Choose a file in a folder that exists and that you can write to.`);
    });
    await handle.chmod(0o600);
    this.file = handle.createWriteStream();
    return (this.stream = this.watch(this.file));
  }

  /** Write what is left; close the file, if any. */
  async close(): Promise<void> {
    await this.flush();
    // Logs that hold records but nothing to print (a view of no lines) still make the file asked for.
    if (this.path !== undefined && this.stream === undefined) await this.open();
    if (this.file) {
      const file = this.file;
      await new Promise((resolve) => file.end(resolve));
    }
    this.check();
  }
}
