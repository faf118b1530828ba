/**
 * The inspection thread's end of the channel (channel.ts): loads the named inspector and carries out the
 * batches of calls in order, in slices, so that the log's writes (and their callbacks) keep pace with a burst.
 * While the log has more queued than the disk has taken, it waits for the writes rather than drop records; the
 * backlog then stays on the relay's side of the channel, where its bound is.
 */
import { setPriority } from 'node:os';
import { parentPort, workerData, type MessagePort } from 'node:worker_threads';
import { CHUNK_CALL_WIDTH, EXIT_WAIT_MS, FIRST_REPORT_SLOT, SLOT, readRing, type ChannelWorkerData, type CreateInspector, type Inspector, type PostedBatch } from './channel.js';
import { flushOpenWriters, logsBacklogged, whenLogsDrained } from '../log/writer.js';
import { keepYoungGenerationsSmallNow } from './young-generation.js';

/**
 * The thread's nice value on Linux, where nice is per thread: when the relay, the peers and the inspection all
 * want a core, the kernel gives it to the traffic first (see docs/benchmarks.md).
 */
export const INSPECTION_NICE = 10;

/** Calls, or bytes of traffic, carried out before the thread lets its event loop turn. */
const SLICE_CALLS = 1024;
const SLICE_BYTES = 512 * 1024;

/** A posted batch, read call by call; chunk calls come as `[kind, subject, bytes, time, mono]`. */
class BatchReader {
  private readonly numbers: Float64Array;
  private index = 0;
  private runLeft = 0;
  private chunkAt = 0;

  constructor(
    readonly batch: PostedBatch,
    private readonly ring: Buffer,
  ) {
    this.numbers = batch.chunkCalls ? new Float64Array(batch.chunkCalls) : new Float64Array(0);
  }

  get done(): boolean {
    return this.runLeft === 0 && this.index >= this.batch.calls.length;
  }

  /** The next call and the bytes of traffic it carries (read out of the ring), or undefined after the last. */
  next(): { call: unknown[]; bytes: number } | undefined {
    if (this.runLeft === 0) {
      if (this.index >= this.batch.calls.length) return undefined;
      const entry = this.batch.calls[this.index++];
      if (typeof entry !== 'number') return { call: entry as unknown[], bytes: 0 };
      this.runLeft = entry;
    }
    this.runLeft--;
    const n = this.numbers;
    const at = this.chunkAt;
    this.chunkAt += CHUNK_CALL_WIDTH;
    const chunk = readRing(this.ring, n[at + 2]!, n[at + 3]!);
    return { call: [n[at], n[at + 1], chunk, n[at + 4], n[at + 5]], bytes: chunk.length };
  }

  /** Chunk calls and their bytes not yet read. */
  left(): { chunks: number; bytes: number } {
    let chunks = this.runLeft;
    for (let i = this.index; i < this.batch.calls.length; i++) if (typeof this.batch.calls[i] === 'number') chunks += this.batch.calls[i] as number;
    let bytes = 0;
    for (let i = this.chunkAt + 3; i < chunks * CHUNK_CALL_WIDTH + this.chunkAt; i += CHUNK_CALL_WIDTH) bytes += this.numbers[i]!;
    return { chunks, bytes };
  }
}

/** Serve the channel on `port` with `inspector`. */
export function serve(port: MessagePort, inspector: Inspector, counters: Int32Array, ring: Buffer): void {
  yieldToTheTraffic();
  const pending: BatchReader[] = [];
  let scheduled = false;
  let closing = false;

  /** Carry out calls while `more` allows, then update the shared counters. */
  const carryOutWhile = (more: (done: number, taken: number) => boolean): void => {
    let taken = 0;
    let done = 0;
    while (pending.length > 0 && more(done, taken)) {
      const batch = pending[0]!;
      const next = batch.next();
      if (next !== undefined) {
        if (batch.done && batch.batch.last) {
          close(next.call);
          return;
        }
        inspector.apply(next.call);
        taken += next.bytes;
        done++;
      }
      if (batch.done) pending.shift();
    }
    Atomics.add(counters, SLOT.taken, taken);
    const figures = inspector.report?.() ?? [];
    for (let i = 0; i < figures.length; i++) Atomics.store(counters, FIRST_REPORT_SLOT + i, figures[i]!);
    // After the figures: a tap that sees every call carried out also sees their effect.
    Atomics.add(counters, SLOT.done, done);
  };
  const close = (last: unknown[]): void => {
    closing = true;
    pending.length = 0;
    void inspector.close(last).then(() => port.close());
  };
  /** Calls the tap stopped the drain of, counted until the last call comes (it may still be on its way). */
  const skipped = { chunks: 0, bytes: 0 };
  /** The tap stopped the drain: count what is left, and once the last call is here say it once and close. */
  const abandon = (): void => {
    for (const batch of pending.splice(0)) {
      const left = batch.left();
      skipped.chunks += left.chunks;
      skipped.bytes += left.bytes;
      if (!batch.batch.last) continue;
      inspector.abandoned(skipped.chunks, skipped.bytes);
      close(batch.batch.calls.at(-1) as unknown[]);
    }
  };
  const work = (): void => {
    scheduled = false;
    if (closing) return;
    if (Atomics.load(counters, SLOT.stop) === 1) return abandon();
    if (logsBacklogged()) {
      // The disk is behind: wait for it, not drop; a stop still ends the wait at once (see the stop poll).
      scheduled = true;
      const poll = setInterval(() => {
        if (Atomics.load(counters, SLOT.stop) === 1) {
          clearInterval(poll);
          work();
        }
      }, 20);
      void whenLogsDrained().then(() => {
        clearInterval(poll);
        if (scheduled) work();
      });
      return;
    }
    carryOutWhile((done, taken) => done < SLICE_CALLS && taken < SLICE_BYTES);
    if (pending.length > 0) schedule();
  };
  const schedule = (): void => {
    if (scheduled) return;
    scheduled = true;
    setImmediate(work);
  };
  /** The main thread is exiting and blocks until the log is written (ThreadChannel.handOverAtExit). */
  const writeBeforeExit = (): void => {
    const until = performance.now() + EXIT_WAIT_MS / 2;
    carryOutWhile(() => performance.now() < until);
    flushOpenWriters();
    Atomics.store(counters, SLOT.exitWritten, 1);
    Atomics.notify(counters, SLOT.exitWritten);
  };
  port.on('message', (batch: PostedBatch) => {
    pending.push(new BatchReader(batch, ring));
    if (batch.atExit) writeBeforeExit();
    else schedule();
  });
  Atomics.store(counters, SLOT.ready, 1);
}

/** Below the relay's priority, on Linux only (elsewhere it would lower the whole process); refused is fine. */
function yieldToTheTraffic(): void {
  if (process.platform !== 'linux') return;
  try {
    setPriority(0, INSPECTION_NICE);
  } catch {
    // a sandbox that forbids it: inspect at normal priority
  }
}

if (parentPort) {
  const data = workerData as ChannelWorkerData;
  const port = parentPort;
  if (data.keepYoungGenerationSmall) void keepYoungGenerationsSmallNow();
  const module = (await import(new URL(`./${data.inspector}.js`, import.meta.url).href)) as { createInspector: CreateInspector };
  const inspector = module.createInspector(data.config as never, { notice: (notice) => port.postMessage({ notice }) });
  serve(port, inspector, new Int32Array(data.shared), Buffer.from(data.ring));
}
