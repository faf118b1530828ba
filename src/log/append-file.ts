/**
 * An append-only file written asynchronously, in order, with a bounded buffer: the destination under LogWriter.
 *
 * pino's destination (SonicBoom) was the first choice; it is replaced by this small class because every exit
 * path of SonicBoom (`end`, `flushSync`) fsyncs, which cost tens of ms at each server exit, and its
 * `flushSync` may write behind an async write still in flight. A log needs neither: here one write is in flight
 * at a time, what is queued behind it goes into the next writes (whole blocks, up to about 1 MiB each), and
 * `end()` waits for the write in flight before writing the rest synchronously.
 *
 * Writes are coalesced: a record waits up to COALESCE_MS for the ones behind it, so a busy session makes one write
 * per few milliseconds rather than one per frame. Each asynchronous write is a thread-pool job, and on a small
 * machine one job per frame cost the relay more than the records themselves (profiled: the pool thread woke for
 * every round trip of a sequential stdio benchmark and competed with the server for a core).
 *
 * Queued records are kept as UTF-8 in 256 KiB blocks outside the JavaScript heap, encoded as they arrive, and
 * written where they lie. Kept as strings they lived through the coalescing delay on the heap, and each write
 * joined them into one string and copied that into a Buffer. (No change in speed could be told from noise in
 * the benchmarks; the blocks save the join and the copy.)
 */
import { closeSync, writev as fsWritev, writevSync } from 'node:fs';

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
/** Size of a queue block (a single larger record gets a block of its own). */
const BLOCK_BYTES = 256 * 1024;
/** Most bytes one write takes from the queue: a long queue goes out in slices of whole blocks. */
const MAX_WRITE_BYTES = 1024 * 1024;

/**
 * Bytes every AppendFile of this thread holds unwritten. The inspection thread waits while there are more than
 * WAIT_ABOVE_BYTES (channel-thread.ts), until they are below RESUME_BELOW_BYTES: a record waits for the disk
 * instead of being dropped, and the backlog stays on the relay's side of the channel, where its bound is.
 */
let threadHeld = 0;
const WAIT_ABOVE_BYTES = 8 * 1024 * 1024;
const RESUME_BELOW_BYTES = 2 * 1024 * 1024;
let drainWaiters: (() => void)[] = [];

/** True while this thread's logs hold more unwritten than the disk should be asked to take at once. */
export function logsBacklogged(): boolean {
  return threadHeld > WAIT_ABOVE_BYTES;
}

/** Resolves once this thread's logs hold little unwritten again. */
export function whenLogsDrained(): Promise<void> {
  if (threadHeld <= RESUME_BELOW_BYTES) return Promise.resolve();
  return new Promise((resolve) => drainWaiters.push(resolve));
}

function released(bytes: number): void {
  threadHeld -= bytes;
  if (threadHeld > RESUME_BELOW_BYTES || drainWaiters.length === 0) return;
  const waiters = drainWaiters;
  drainWaiters = [];
  for (const resolve of waiters) resolve();
}

/** A block of queued UTF-8: bytes [taken, filled) are still to be written. */
interface Block {
  readonly bytes: Buffer;
  filled: number;
  taken: number;
}

/**
 * Written blocks of BLOCK_BYTES, kept for the next records of any file of this thread: a fresh block costs the
 * kernel a page fault and a zeroed page every 4 KiB as it is first filled, and the GC its external memory. As
 * many as a thread holds before it waits for the disk, so a burst that fills the queue and drains it reuses them.
 */
const spareBlocks: Buffer[] = [];
const MAX_SPARE_BLOCKS = WAIT_ABOVE_BYTES / BLOCK_BYTES;

function newBlock(size: number): Block {
  const bytes = size <= BLOCK_BYTES ? (spareBlocks.pop() ?? Buffer.allocUnsafeSlow(BLOCK_BYTES)) : Buffer.allocUnsafeSlow(size);
  return { bytes, filled: 0, taken: 0 };
}

/**
 * Write `text` as UTF-8 into the room left in `block`: the bytes written, or -1 when it does not all fit. A
 * write of a one-byte string of ASCII is a copy, and counting its size first would read it twice; the write
 * stops short only where the next character does not fit, and no character takes over 4 bytes.
 */
function fill(block: Block, text: string): number {
  const room = block.bytes.length - block.filled;
  if (room < text.length) return -1;
  const written = block.bytes.write(text, block.filled, room, 'utf8');
  return written <= room - 4 || written === Buffer.byteLength(text) ? written : -1;
}

/** Blocks whose bytes are all written (no write reads them any more) go back to the spares. */
function recycle(blocks: readonly Block[]): void {
  for (const block of blocks) if (block.bytes.length === BLOCK_BYTES && spareBlocks.length < MAX_SPARE_BLOCKS) spareBlocks.push(block.bytes);
}

export class AppendFile {
  /** Oldest first; records are appended to the last. */
  private blocks: Block[] = [];
  /** Bytes queued and not yet taken for a write. */
  private queuedBytes = 0;
  private inFlight: Promise<void> | undefined;
  private failed = false;
  private closed = false;
  private timer: NodeJS.Timeout | undefined;
  /** Bytes queued or in flight, not yet written (this file's part of threadHeld). */
  private held = 0;

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
    let block = this.blocks.at(-1);
    let written = block ? fill(block, text) : -1;
    if (!block || written === -1) {
      // A UTF-16 unit takes at most 3 bytes of UTF-8: only a record too long for that in a block is counted.
      block = newBlock(text.length * 3 <= BLOCK_BYTES ? 0 : Buffer.byteLength(text));
      this.blocks.push(block);
      written = block.bytes.write(text, 0, 'utf8');
    }
    block.filled += written;
    this.queuedBytes += written;
    this.held += written;
    threadHeld += written;
    this.schedule();
  }

  /** Start a write now (a full batch is waiting) or arm the coalescing timer; nothing while one is in flight. */
  private schedule(): void {
    if (this.inFlight || this.failed || this.queuedBytes === 0) return;
    if (this.queuedBytes >= WRITE_NOW_BYTES || this.closed) this.startWrite();
    else this.timer ??= setTimeout(() => this.startWrite(), COALESCE_MS).unref();
  }

  private startWrite(): void {
    this.clearTimer();
    if (!this.inFlight && !this.failed && this.queuedBytes > 0) this.inFlight = this.pump();
  }

  private clearTimer(): void {
    if (this.timer) clearTimeout(this.timer);
    this.timer = undefined;
  }

  /** Write what is queued synchronously, for process exit; a write still in flight finishes on its own. */
  flushSync(): void {
    if (this.failed || this.queuedBytes === 0 || this.inFlight) return;
    this.writeAllSync();
  }

  /**
   * The process is exiting (Node's 'exit' event: nothing asynchronous will run again). Unlike flushSync this
   * writes the queue even while a write is in flight, since that write's callback will never come to take it:
   * the queue would be lost. The in-flight write, already handed to the OS, may land after it.
   */
  flushAtExit(): void {
    if (this.failed || this.closed || this.queuedBytes === 0) return;
    this.writeAllSync();
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

  /**
   * Take the oldest queued bytes for a write: whole blocks, up to about MAX_WRITE_BYTES (at least one). The
   * bytes stay where they are, since a write in flight reads them there; later records go after them.
   */
  private take(): { data: Buffer[]; done: Block[] } {
    this.clearTimer();
    const data: Buffer[] = [];
    let size = 0;
    for (const block of this.blocks) {
      if (block.taken === block.filled) continue;
      if (data.length > 0 && size + block.filled - block.taken > MAX_WRITE_BYTES) break;
      data.push(block.bytes.subarray(block.taken, block.filled));
      size += block.filled - block.taken;
      block.taken = block.filled;
    }
    this.queuedBytes -= size;
    // Blocks taken whole are done, except the last one, which later records still fill: once this write has
    // written them, they can be filled again.
    const last = this.blocks.at(-1);
    const done = this.blocks.filter((block) => block.taken === block.filled && block !== last);
    if (done.length > 0) this.blocks = this.blocks.filter((block) => block.taken < block.filled || block === last);
    return { data, done };
  }

  /**
   * Write what is queued now, then hand over to the next write: at once when a full batch has gathered
   * meanwhile, else after the coalescing delay. Partial writes continue where they stopped.
   */
  private async pump(): Promise<void> {
    try {
      const taken = this.take();
      let data = taken.data;
      while (data.length > 0) {
        const written = await new Promise<number>((resolve, reject) => {
          fsWritev(this.fd, data, (error, count) => (error ? reject(error) : resolve(count)));
        });
        data = unwritten(data, written);
        this.wrote(written);
      }
      recycle(taken.done);
    } catch (error) {
      this.failed = true;
      this.blocks = [];
      this.queuedBytes = 0;
      this.wrote(this.held);
      this.options.onError(error as NodeJS.ErrnoException);
    } finally {
      this.inFlight = undefined;
    }
    this.schedule();
  }

  private wrote(bytes: number): void {
    this.held -= bytes;
    released(bytes);
  }

  private writeAllSync(): void {
    try {
      while (this.queuedBytes > 0) {
        const taken = this.take();
        for (let data = taken.data; data.length > 0; ) {
          const written = writevSync(this.fd, data);
          data = unwritten(data, written);
          this.wrote(written);
        }
        // At exit a write may still be in flight, reading a block this take finished: none is filled again then.
        if (!this.inFlight) recycle(taken.done);
      }
    } catch (error) {
      this.failed = true;
      this.wrote(this.held);
      this.options.onError(error as NodeJS.ErrnoException);
    }
  }
}

/** What is left of `buffers` once their first `written` bytes are written (a write may stop short). */
export function unwritten(buffers: Buffer[], written: number): Buffer[] {
  let i = 0;
  while (i < buffers.length && written >= buffers[i]!.length) written -= buffers[i++]!.length;
  if (i === buffers.length) return [];
  return [buffers[i]!.subarray(written), ...buffers.slice(i + 1)];
}
