/**
 * A batch of inspection calls as it crosses from the relay to the inspection thread: built on the main thread
 * (CallBatch), posted as one message, read back in order on the thread (BatchReader).
 *
 * Most calls carry a chunk of traffic, one per chunk the relay forwards, and they all have one shape:
 * `[kind, subject, chunk, time, mono]` (a stdio stream's data, an HTTP body's, a WebSocket's). Those travel as
 * five numbers each in a Float64Array, their chunks packed end to end in one buffer, both moved to the thread,
 * not copied; every other call (a request head, a record) is an array in `calls`, cloned as usual. Cloning is
 * what costs: when each chunk went as a Buffer of its own, a 2000-chunk HTTP stream took 1.27x a bare proxy's
 * time with a thread that ignored the batches, and 1.05x when they were not posted at all; with the chunks
 * packed but each call an array, perf still found the clone of those arrays at about 190 ns a chunk of the
 * relay's main thread.
 */

import type { SpareBuffers } from './spare-buffers.js';

/** A chunk in a posted call: its place in the batch's packed chunks. */
export type ChunkRef = number;

/** The numbers of one chunk call: kind, subject, chunk (its ChunkRef), time, mono. */
const CHUNK_CALL_WIDTH = 5;

/** Room for this many chunk calls in a new batch (it doubles as needed). */
const FIRST_CHUNK_CALLS = 256;

/** Room for at least this many bytes of small chunks in a new batch (it grows as needed). */
const FIRST_SMALL_BYTES = 16 * 1024;

/** A batch holding this many bytes of copies is posted at once, without waiting for its timer (inspection-thread.ts). */
export const MAX_BATCH_BYTES = 1024 * 1024;

/** Chunks up to this size are copied into the batch as they are queued, larger ones when it is posted (CallBatch.small). */
const COPY_WHEN_QUEUED_MAX_BYTES = 8 * 1024;

/** What the main thread posts. */
export interface PostedBatch {
  /** The calls, in order: an array is one call; a number `n` stands for the next `n` calls of `chunkCalls`. */
  calls: unknown[];
  /** The chunk calls, CHUNK_CALL_WIDTH numbers each (a Float64Array's buffer, moved to the thread). */
  chunkCalls?: ArrayBuffer;
  /** The chunks' bytes, end to end, and room unused after them (moved to the thread, not copied). */
  packed?: ArrayBuffer;
  /** Where each chunk ends in `packed` (a Uint32Array's buffer). */
  ends?: ArrayBuffer;
  /** The process is exiting: carry out everything, write the log synchronously, then say so. */
  atExit?: true;
  /** Someone waits on a call of this batch: the thread carries it out without waiting for a pause (traffic-gate.ts). */
  urgent?: true;
  /** `packed` is a spare the thread sent (spare-buffers.ts): the thread sends another. */
  fromSpare?: true;
}

/** The calls queued on the main thread until their batch is posted. */
export class CallBatch {
  /** `spares`: buffers already touched, for packing a big batch's chunks into (see spare-buffers.ts). */
  constructor(private readonly spares?: SpareBuffers) {}

  private calls: unknown[] = [];
  private chunkCalls = new Float64Array(FIRST_CHUNK_CALLS * CHUNK_CALL_WIDTH);
  /** Numbers written to chunkCalls so far. */
  private chunkCallNumbers = 0;
  /**
   * The small chunks' bytes (up to COPY_WHEN_QUEUED_MAX_BYTES each), copied in end to end as each is queued, so
   * that the relay's buffer can go at once. Kept until the batch was posted, a small chunk outlived young
   * collections with the Buffer that held it, and each collection copied those along. Measured over seventy
   * 2000-chunk HTTP streams back to back: the main thread collected 1.7 times a stream (a bare proxy 0.8), and
   * those collections took 2.9 ms a stream in the faster half of the streams and 4.3 ms in the slower; with the
   * copies, 1.6 and 2.2 ms.
   */
  private small: Buffer<ArrayBuffer> | undefined;
  private smallBytes = 0;
  /**
   * Larger chunks are kept as they are and copied once the batch is posted: a few of them fill a batch, so they
   * cost the collections little, and copying 64 KiB stdio frames as they came was slower (0.67x a bare relay's
   * rate against 0.71x, six rounds each).
   */
  private kept: Buffer[] = [];
  /** Bytes of the small chunks queued before each kept one. */
  private keptAfterSmall: number[] = [];
  /** Where each chunk ends among the batch's bytes, small and kept ones in the order they were queued. */
  private ends = new Uint32Array(FIRST_CHUNK_CALLS);
  private chunkCount = 0;
  /** Bytes of the chunks queued. */
  bytes = 0;
  /** The small chunks' bytes in the batch taken last: the next batch's room for them starts that big. */
  private lastSmallBytes = 0;

  get empty(): boolean {
    return this.calls.length === 0;
  }

  /** A call that is not a chunk call. */
  add(call: readonly unknown[]): void {
    this.calls.push(call);
  }

  /** The call `[kind, subject, chunk, time, mono]`, with a copy of `chunk` packed into the batch. */
  addChunkCall(kind: number, subject: number, chunk: Buffer, time: number, mono: number): void {
    const calls = this.calls;
    const last = calls.length - 1;
    // Chunk calls in a row are one number in `calls`: how many of them come next.
    if (last >= 0 && typeof calls[last] === 'number') (calls[last] as number)++;
    else calls.push(1);
    let numbers = this.chunkCalls;
    const at = this.chunkCallNumbers;
    if (at + CHUNK_CALL_WIDTH > numbers.length) {
      numbers = new Float64Array(numbers.length * 2);
      numbers.set(this.chunkCalls);
      this.chunkCalls = numbers;
    }
    numbers[at] = kind;
    numbers[at + 1] = subject;
    numbers[at + 2] = this.pack(chunk);
    numbers[at + 3] = time;
    numbers[at + 4] = mono;
    this.chunkCallNumbers = at + CHUNK_CALL_WIDTH;
  }

  /** Queue `chunk`'s bytes (see `small` and `kept`); returns its ChunkRef. */
  private pack(chunk: Buffer): ChunkRef {
    const length = chunk.length;
    if (length <= COPY_WHEN_QUEUED_MAX_BYTES) {
      const end = this.smallBytes + length;
      const small = this.small !== undefined && end <= this.small.length ? this.small : this.growSmall(end);
      chunk.copy(small, this.smallBytes);
      this.smallBytes = end;
    } else {
      this.kept.push(chunk);
      this.keptAfterSmall.push(this.smallBytes);
    }
    let ends = this.ends;
    const ref = this.chunkCount;
    if (ref === ends.length) {
      ends = new Uint32Array(ends.length * 2);
      ends.set(this.ends);
      this.ends = ends;
    }
    this.bytes += length;
    ends[ref] = this.bytes;
    this.chunkCount = ref + 1;
    return ref;
  }

  /** Room for `needed` bytes of small chunks, with those so far copied in. */
  private growSmall(needed: number): Buffer<ArrayBuffer> {
    const room = Math.max(needed, FIRST_SMALL_BYTES, this.lastSmallBytes, 2 * (this.small?.length ?? 0));
    // allocUnsafeSlow: a buffer of its own, never a slice of Node's shared pool, so it can be moved to the thread.
    const small = Buffer.allocUnsafeSlow(room);
    this.small?.copy(small, 0, 0, this.smallBytes);
    this.small = small;
    return small;
  }

  /**
   * All the batch's bytes in one buffer that can be moved: the small chunks' buffer as it is when it holds them
   * all, else a spare or a new buffer, with every chunk in its place.
   */
  private packed(): { packed: ArrayBuffer; fromSpare: boolean } {
    const { small, kept, keptAfterSmall } = this;
    if (kept.length === 0) return { packed: small!.buffer, fromSpare: false };
    const spare = this.spares?.take(this.bytes);
    const packed = spare ? Buffer.from(spare) : Buffer.allocUnsafeSlow(this.bytes);
    let at = 0;
    let smallFrom = 0;
    for (let i = 0; i < kept.length; i++) {
      if (keptAfterSmall[i]! > smallFrom) at += small!.copy(packed, at, smallFrom, keptAfterSmall[i]);
      smallFrom = keptAfterSmall[i]!;
      at += kept[i]!.copy(packed, at);
    }
    if (this.smallBytes > smallFrom) small!.copy(packed, at, smallFrom, this.smallBytes);
    return { packed: packed.buffer, fromSpare: spare !== undefined };
  }

  /** The batch to post, with the buffers to move along; this CallBatch is empty again. */
  take(extra: Pick<PostedBatch, 'atExit' | 'urgent'> = {}): { batch: PostedBatch; transfer: ArrayBuffer[] } {
    const batch: PostedBatch = { calls: this.calls, ...extra };
    const transfer: ArrayBuffer[] = [];
    if (this.chunkCallNumbers > 0) {
      // Only the numbers written cross: slices of their own, as small as the batch.
      const chunkCalls = this.chunkCalls.slice(0, this.chunkCallNumbers).buffer;
      const ends = this.ends.slice(0, this.chunkCount).buffer;
      const { packed, fromSpare } = this.packed();
      Object.assign(batch, { chunkCalls, ends, packed });
      if (fromSpare) batch.fromSpare = true;
      transfer.push(chunkCalls, ends, packed);
    }
    this.calls = [];
    this.chunkCallNumbers = 0;
    this.lastSmallBytes = this.smallBytes;
    this.small = undefined;
    this.smallBytes = 0;
    this.kept = [];
    this.keptAfterSmall = [];
    this.chunkCount = 0;
    this.bytes = 0;
    return { batch, transfer };
  }
}

/**
 * The thread's view of a posted batch's chunks: `chunkAt(ref)` gives each chunk as a Buffer of its own, copied
 * out of the packed bytes (small ones into Node's pool). A view into the packed bytes would be cheaper, but
 * whatever keeps a chunk (a body's head, a partial line) would keep the whole batch's bytes alive with it.
 */
export function unpackChunks(batch: PostedBatch): (ref: ChunkRef) => Buffer {
  if (!batch.packed || !batch.ends) return () => Buffer.alloc(0);
  const packed = Buffer.from(batch.packed);
  const ends = new Uint32Array(batch.ends);
  return (ref) => Buffer.from(packed.subarray(ref === 0 ? 0 : ends[ref - 1], ends[ref]));
}

/** A posted batch on the thread: its calls one by one, in the order they were queued. */
export class BatchReader {
  /** Gives the chunk a call refers to (its ChunkRef) as a Buffer of its own. */
  readonly chunkAt: (ref: ChunkRef) => Buffer;
  /** Bytes of the batch's chunks. */
  readonly bytes: number;
  /** How many calls the batch holds. */
  readonly callCount: number;
  readonly urgent: boolean;
  /** The batch's bytes are in a spare (spare-buffers.ts), which can go back to the relay once they are read. */
  readonly spare: ArrayBuffer | undefined;
  private readonly calls: unknown[];
  private readonly chunkCalls: Float64Array;
  private callIndex = 0;
  /** Chunk calls still to come in the current run of them. */
  private runLeft = 0;
  private chunkCallAt = 0;

  constructor(batch: PostedBatch) {
    this.calls = batch.calls;
    this.chunkCalls = batch.chunkCalls ? new Float64Array(batch.chunkCalls) : new Float64Array(0);
    this.chunkAt = unpackChunks(batch);
    const ends = batch.ends ? new Uint32Array(batch.ends) : undefined;
    this.bytes = ends && ends.length > 0 ? ends[ends.length - 1]! : 0;
    let callCount = 0;
    for (const entry of batch.calls) callCount += typeof entry === 'number' ? entry : 1;
    this.callCount = callCount;
    this.urgent = batch.urgent === true;
    this.spare = batch.fromSpare ? batch.packed : undefined;
  }

  /** True once every call has been read. */
  get done(): boolean {
    return this.runLeft === 0 && this.callIndex >= this.calls.length;
  }

  /** The next call (a chunk call as `[kind, subject, ref, time, mono]`), or undefined after the last. */
  next(): unknown[] | undefined {
    if (this.runLeft === 0) {
      if (this.callIndex >= this.calls.length) return undefined;
      const entry = this.calls[this.callIndex++];
      if (typeof entry !== 'number') return entry as unknown[];
      this.runLeft = entry;
    }
    this.runLeft--;
    const numbers = this.chunkCalls;
    const at = this.chunkCallAt;
    this.chunkCallAt = at + CHUNK_CALL_WIDTH;
    return [numbers[at], numbers[at + 1], numbers[at + 2], numbers[at + 3], numbers[at + 4]];
  }
}
