/**
 * An append-only file written asynchronously, in order, with a bounded buffer: the destination under LogWriter.
 *
 * pino's destination (SonicBoom) was the first choice; it is replaced by this small class because every exit
 * path of SonicBoom (`end`, `flushSync`) fsyncs, which cost 40–70 ms at each server exit in profiles, and its
 * `flushSync` may write behind an async write still in flight. A log needs neither: here one write is in flight
 * at a time, what is queued behind it goes into the next writes (joined, at most MAX_WRITE_BYTES each), and
 * `end()` waits for the write in flight before writing the rest synchronously.
 *
 * Writes are coalesced: a record waits up to COALESCE_MS for the ones behind it, so a busy session makes one write
 * per few milliseconds rather than one per frame. Each asynchronous write is a thread-pool job, and on a small
 * machine one job per frame cost the relay more than the records themselves (profiled: the pool thread woke for
 * every round trip of a sequential stdio benchmark and competed with the server for a core).
 */
import { closeSync, write as fsWrite, writeSync } from 'node:fs';

export interface AppendFileOptions {
  /** Most bytes queued in memory; past it, writes are dropped and `onDrop` is called. */
  maxQueuedBytes: number;
  onError: (error: NodeJS.ErrnoException) => void;
  onDrop: () => void;
  /** False when someone else closes the fd (it was opened on another thread). Default true. */
  closeFd?: boolean;
}

/** How long a queued record waits for others before a write starts (a live reader sees it this much later). */
const COALESCE_MS = 10;
/** A queue this large is written at once, without waiting for the timer. */
const WRITE_NOW_BYTES = 256 * 1024;
/** Most text joined into one asynchronous write: a long queue goes out in slices, never copied whole twice. */
const MAX_WRITE_BYTES = 1024 * 1024;

export class AppendFile {
  private queue: string[] = [];
  private queuedBytes = 0;
  private inFlight: Promise<void> | undefined;
  private failed = false;
  private closed = false;
  private timer: NodeJS.Timeout | undefined;

  constructor(
    private readonly fd: number,
    private readonly options: AppendFileOptions,
  ) {}

  /**
   * Queue text; it is written within COALESCE_MS, sooner when much is queued. Past the bound times `allowance`
   * it is dropped: records that a reader of a flooded log needs most get a larger allowance (see LogWriter).
   */
  write(text: string, allowance = 1): void {
    if (this.failed || this.closed) return;
    // String length stands in for bytes: the bound only needs to be approximate.
    if (this.queuedBytes + text.length > this.options.maxQueuedBytes * allowance) {
      this.options.onDrop();
      return;
    }
    this.queue.push(text);
    this.queuedBytes += text.length;
    this.schedule();
  }

  /** Start a write now (a full batch is waiting) or arm the coalescing timer; nothing while one is in flight. */
  private schedule(): void {
    if (this.inFlight || this.failed || this.queue.length === 0) return;
    if (this.queuedBytes >= WRITE_NOW_BYTES || this.closed) this.startWrite();
    else this.timer ??= setTimeout(() => this.startWrite(), COALESCE_MS).unref();
  }

  private startWrite(): void {
    this.clearTimer();
    if (!this.inFlight && !this.failed && this.queue.length > 0) this.inFlight = this.pump();
  }

  private clearTimer(): void {
    if (this.timer) clearTimeout(this.timer);
    this.timer = undefined;
  }

  /** Write what is queued synchronously, for process exit; a write still in flight finishes on its own. */
  flushSync(): void {
    if (this.failed || this.queue.length === 0 || this.inFlight) return;
    this.writeAllSync(Buffer.from(this.takeQueue(), 'utf8'));
  }

  /**
   * The process is exiting (Node's 'exit' event: nothing asynchronous will run again). Unlike flushSync this
   * writes the queue even while a write is in flight, since that write's callback will never come to take it:
   * the queue would be lost. The in-flight write, already handed to the OS, may land after it.
   */
  flushAtExit(): void {
    if (this.failed || this.closed || this.queue.length === 0) return;
    this.writeAllSync(Buffer.from(this.takeQueue(), 'utf8'));
  }

  /** Wait for the write in flight, write the rest, close the file. */
  async end(): Promise<void> {
    if (this.closed) return;
    while (this.inFlight) await this.inFlight;
    this.flushSync();
    this.closed = true;
    if (this.options.closeFd === false) return;
    try {
      closeSync(this.fd);
    } catch {
      // already closed
    }
  }

  /** Take queued text (all of it, or about `limit` characters of whole records) as one string. */
  private takeQueue(limit = Infinity): string {
    this.clearTimer();
    let count = 0;
    let taken = 0;
    while (count < this.queue.length && (count === 0 || taken + this.queue[count]!.length <= limit)) taken += this.queue[count++]!.length;
    const text = count === 1 ? this.queue[0]! : this.queue.slice(0, count).join('');
    this.queue = count === this.queue.length ? [] : this.queue.slice(count);
    this.queuedBytes -= taken;
    return text;
  }

  /**
   * Write what is queued now, then hand over to the next write: at once when a full batch has gathered
   * meanwhile, else after the coalescing delay. Partial writes continue where they stopped.
   */
  private async pump(): Promise<void> {
    try {
      const data = Buffer.from(this.takeQueue(MAX_WRITE_BYTES), 'utf8');
      let offset = 0;
      while (offset < data.length) {
        offset += await new Promise<number>((resolve, reject) => {
          fsWrite(this.fd, data, offset, data.length - offset, null, (error, written) => (error ? reject(error) : resolve(written)));
        });
      }
    } catch (error) {
      this.failed = true;
      this.queue = [];
      this.queuedBytes = 0;
      this.options.onError(error as NodeJS.ErrnoException);
    } finally {
      this.inFlight = undefined;
    }
    this.schedule();
  }

  private writeAllSync(data: Buffer): void {
    try {
      let offset = 0;
      while (offset < data.length) offset += writeSync(this.fd, data, offset, data.length - offset);
    } catch (error) {
      this.failed = true;
      this.options.onError(error as NodeJS.ErrnoException);
    }
  }
}
