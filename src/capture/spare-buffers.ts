/**
 * Spare buffers: memory the inspection thread has already touched, handed to the relay to pack a big batch's
 * copies into, so that the relay's thread does not take the page faults of fresh memory.
 *
 * A batch of big chunks (64 KiB stdio frames) is packed into one buffer of its own, moved to the thread with the
 * batch (call-batch.ts). Fresh from the allocator, each 4 KiB page of it faults the first time it is written:
 * the kernel clears and maps it, on the relay's thread, between forwarding one frame and reading the next.
 * Here the inspection thread, which runs at a lower priority, allocates and touches the buffers, a few at a
 * time, and the relay only writes to pages that are already there. The pages move with the buffer, both ways,
 * without a copy.
 *
 * Measured on 2 cores, relaying 512 echoed 64 KiB frames (six runs each, builds taking turns; fresh process /
 * warmed up): the relay's main thread used 365 / 279 µs of CPU a frame with spares against 468 / 345 without
 * (a bare relay, in another such run: 274 / 207), and took 10.3 / 6.6 minor faults a frame against 38.9 / 24.0
 * (a bare relay: 16.9 / 10.9). The rates through the relay did not move beyond the runs' spread.
 *
 * A spare is used only for a batch of at least SPARE_USE_MIN_BYTES: a batch the thread holds back keeps its
 * whole buffer, so a spare on a small batch would hold far more memory than its copies. The thread sends the
 * first spares when the first such batch comes, so a session of small messages never holds any; then one for
 * each batch packed into a spare, the spares it has read first.
 */
import { MAX_BATCH_BYTES } from './call-batch.js';

/** Batches smaller than those posted by size go in a buffer of their own size, never a spare (see above). */
export const SPARE_USE_MIN_BYTES = MAX_BATCH_BYTES;

/** Size of a spare: a batch is posted once it holds MAX_BATCH_BYTES, and one pipe read (64 KiB) more still fits. */
export const SPARE_BYTES = MAX_BATCH_BYTES + 64 * 1024;

/** Spares the relay keeps ready: batches of a burst come every few milliseconds, and the thread answers each. */
export const SPARES_KEPT = 4;

/** True for a batch of `bytes` that goes in a spare when one is ready. */
export function fitsSpare(bytes: number): boolean {
  return bytes >= SPARE_USE_MIN_BYTES && bytes <= SPARE_BYTES;
}

/** The relay's side: the spares the thread has sent, waiting for batches big enough. */
export class SpareBuffers {
  private readonly ready: ArrayBuffer[] = [];

  /** A spare the thread sent. */
  give(spare: ArrayBuffer): void {
    this.ready.push(spare);
  }

  /** A spare to pack `bytes` of copies into, or undefined when none fits or the batch is too small for one. */
  take(bytes: number): ArrayBuffer | undefined {
    return fitsSpare(bytes) ? this.ready.pop() : undefined;
  }

  /** How many spares are ready (for tests). */
  get count(): number {
    return this.ready.length;
  }
}

/** The thread's side: a new spare, every page of it touched here, so that it faults on this thread. */
export function makeSpare(): ArrayBuffer {
  return Buffer.allocUnsafeSlow(SPARE_BYTES).fill(0).buffer;
}
