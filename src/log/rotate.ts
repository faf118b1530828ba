/**
 * Size-capped logs (`--max-log-mb`): when a log file would grow past the cap, the writer goes on in a new part
 * next to it, and the oldest parts beyond `maxFiles` are deleted.
 *
 * Parts are new files, never renamed ones: a reader that is following `weather-…-4242.ndjson` keeps a file that
 * stays whole, and every part is a complete log on its own (every record carries its session and label; `seq`
 * goes on counting across parts, so `requestSeq` still points at the right record). Part names sort after the
 * first file and in order: `weather-…-4242.ndjson`, `weather-…-4242.part002.ndjson`, `….part003.ndjson`.
 */
import { unlinkSync } from 'node:fs';

/** What the writer writes into: one append-only file. */
export interface LogTarget {
  /** `allowance`: how many times the queue's bound this text may still be queued within (default 1). */
  write(text: string, allowance?: number): void;
  flushSync(): void;
  /** For Node's 'exit' event: write what is queued even behind a write in flight. */
  flushAtExit?(): void;
  end(): Promise<void>;
}

/** The name of part `n` (1-based) of a log; part 1 is the file itself. */
export function partFileName(file: string, part: number): string {
  if (part <= 1) return file;
  const suffix = `.part${String(part).padStart(3, '0')}`;
  return file.endsWith('.ndjson') ? `${file.slice(0, -'.ndjson'.length)}${suffix}.ndjson` : `${file}${suffix}`;
}

/**
 * True when `text` should start a new part: the current part already holds something and `text` would take it
 * past the cap. A single record larger than the cap still goes into a part of its own, whole.
 */
export function needsNewPart(partBytes: number, textBytes: number, maxBytes: number): boolean {
  return partBytes > 0 && partBytes + textBytes > maxBytes;
}

export interface RotatingFileOptions {
  /** Path of the first part. */
  file: string;
  /** Largest size of one part in bytes. */
  maxBytes: number;
  /** Keep at most this many parts, deleting the oldest; 0 or undefined keeps them all. */
  maxFiles?: number;
  /** Opens one part (0600, folder 0700); undefined when it cannot be opened (the writer has warned). */
  open: (file: string) => LogTarget | undefined;
  /** Called when a part could not be deleted; the log goes on. */
  warn?: (message: string) => void;
}

/** A LogTarget that moves on to a new part when the current one is full. */
export class RotatingFile implements LogTarget {
  private current: LogTarget | undefined;
  private part = 1;
  private partBytes = 0;
  /** Parts written so far that still exist, oldest first. */
  readonly files: string[] = [];
  private readonly closing = new Set<Promise<void>>();

  constructor(private readonly options: RotatingFileOptions) {
    if (!(options.maxBytes > 0)) throw new RangeError('maxBytes must be positive');
    this.current = options.open(options.file);
    if (this.current) this.files.push(options.file);
  }

  /** False when the current part could not be opened. */
  get healthy(): boolean {
    return this.current !== undefined;
  }

  /** Path of the part being written. */
  get currentFile(): string {
    return partFileName(this.options.file, this.part);
  }

  write(text: string, allowance = 1): void {
    if (!this.current) return;
    // Bytes, not string length: a summary with "…" or any non-ASCII text is longer on disk than in characters.
    const bytes = Buffer.byteLength(text, 'utf8');
    if (needsNewPart(this.partBytes, bytes, this.options.maxBytes)) this.rotate();
    this.partBytes += bytes;
    this.current?.write(text, allowance);
  }

  flushSync(): void {
    this.current?.flushSync();
  }

  flushAtExit(): void {
    if (this.current?.flushAtExit) this.current.flushAtExit();
    else this.current?.flushSync();
  }

  async end(): Promise<void> {
    const current = this.current;
    this.current = undefined;
    await Promise.all([...this.closing, current?.end()]);
  }

  /** The part being written was removed (its folder with it): open it again. False when it cannot be. */
  reopen(): boolean {
    const previous = this.current;
    this.current = this.options.open(this.currentFile);
    this.partBytes = 0;
    void previous?.end().catch(() => {});
    return this.current !== undefined;
  }

  private rotate(): void {
    const previous = this.current!;
    // The old part finishes its queued writes and closes in the background; order within each file is kept.
    const closing = previous.end().catch(() => {});
    this.closing.add(closing);
    void closing.then(() => this.closing.delete(closing));
    this.part++;
    this.partBytes = 0;
    const file = this.currentFile;
    this.current = this.options.open(file);
    if (this.current) this.files.push(file);
    const maxFiles = this.options.maxFiles ?? 0;
    while (maxFiles > 0 && this.files.length > maxFiles) {
      const oldest = this.files.shift()!;
      // The oldest part may still be closing: unlinking an open file is fine on POSIX (the data goes when it
      // closes); on Windows it can fail, and that part is then left for `mcptap prune`.
      try {
        unlinkSync(oldest);
      } catch (error) {
        this.options.warn?.(`could not delete the old log part ${oldest} (${(error as Error).message}); remove it by hand or with mcptap prune.`);
      }
    }
  }
}
