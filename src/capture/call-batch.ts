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

/** A chunk in a posted call: its place in the batch's packed chunks. */
export type ChunkRef = number;

/** The numbers of one chunk call: kind, subject, chunk (its ChunkRef), time, mono. */
const CHUNK_CALL_WIDTH = 5;

/** Room for this many chunk calls in a new batch (it doubles as needed). */
const FIRST_CHUNK_CALLS = 256;

/** What the main thread posts. */
export interface PostedBatch {
  /** The calls, in order: an array is one call; a number `n` stands for the next `n` calls of `chunkCalls`. */
  calls: unknown[];
  /** The chunk calls, CHUNK_CALL_WIDTH numbers each (a Float64Array's buffer, moved to the thread). */
  chunkCalls?: ArrayBuffer;
  /** The chunks' bytes, end to end (moved to the thread, not copied). */
  packed?: ArrayBuffer;
  /** Where each chunk ends in `packed` (a Uint32Array's buffer). */
  ends?: ArrayBuffer;
  /** The process is exiting: carry out everything, write the log synchronously, then say so. */
  atExit?: true;
  /** Someone waits on a call of this batch: the thread carries it out without waiting for a pause (traffic-gate.ts). */
  urgent?: true;
}

/** The calls queued on the main thread until their batch is posted. */
export class CallBatch {
  private calls: unknown[] = [];
  private chunkCalls = new Float64Array(FIRST_CHUNK_CALLS * CHUNK_CALL_WIDTH);
  /** Numbers written to chunkCalls so far. */
  private chunkCallNumbers = 0;
  private chunks: Buffer[] = [];
  /** Bytes of the chunks queued. */
  bytes = 0;

  get empty(): boolean {
    return this.calls.length === 0;
  }

  /** A call that is not a chunk call. */
  add(call: readonly unknown[]): void {
    this.calls.push(call);
  }

  /** The call `[kind, subject, chunk, time, mono]`, with `chunk` packed into the batch. */
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
    numbers[at + 2] = this.chunks.push(chunk) - 1;
    numbers[at + 3] = time;
    numbers[at + 4] = mono;
    this.chunkCallNumbers = at + CHUNK_CALL_WIDTH;
    this.bytes += chunk.length;
  }

  /** The batch to post, with the buffers to move along; this CallBatch is empty again. */
  take(extra: Pick<PostedBatch, 'atExit' | 'urgent'> = {}): { batch: PostedBatch; transfer: ArrayBuffer[] } {
    const batch: PostedBatch = { calls: this.calls, ...extra };
    const transfer: ArrayBuffer[] = [];
    if (this.chunkCallNumbers > 0) {
      // Only the numbers written cross: a slice of its own, as small as the batch.
      batch.chunkCalls = this.chunkCalls.slice(0, this.chunkCallNumbers).buffer;
      transfer.push(batch.chunkCalls);
      Object.assign(batch, packChunks(this.chunks));
      transfer.push(batch.packed!, batch.ends!);
    }
    this.calls = [];
    this.chunks = [];
    this.chunkCallNumbers = 0;
    this.bytes = 0;
    return { batch, transfer };
  }
}

/** Pack `chunks` into one fresh buffer (movable to another thread) and the offsets where each ends. */
export function packChunks(chunks: readonly Buffer[]): Pick<PostedBatch, 'packed' | 'ends'> {
  if (chunks.length === 0) return {};
  let total = 0;
  for (const chunk of chunks) total += chunk.length;
  // allocUnsafeSlow: a buffer of its own, never a slice of Node's shared pool, so it can be transferred.
  const packed = Buffer.allocUnsafeSlow(total);
  const ends = new Uint32Array(chunks.length);
  let at = 0;
  for (let i = 0; i < chunks.length; i++) {
    at += chunks[i]!.copy(packed, at);
    ends[i] = at;
  }
  return { packed: packed.buffer, ends: ends.buffer };
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
    this.bytes = batch.packed?.byteLength ?? 0;
    let callCount = 0;
    for (const entry of batch.calls) callCount += typeof entry === 'number' ? entry : 1;
    this.callCount = callCount;
    this.urgent = batch.urgent === true;
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
