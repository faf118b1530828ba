/**
 * The inspection thread's end of the channel (channel.ts): loads the named inspector and carries out the
 * batches of calls in order, in slices, so that the log's writes (and their callbacks) keep pace with a burst.
 * While the log has more queued than the disk has taken, it waits for the writes rather than drop records; the
 * backlog then stays on the relay's side of the channel, where its bound is.
 */
import { setPriority } from 'node:os';
import { parentPort, workerData, type MessagePort } from 'node:worker_threads';
import { CHUNK_CALL_WIDTH, EXIT_WAIT_MS, FIRST_REPORT_SLOT, SLOT, type ChannelWorkerData, type CreateInspector, type Inspector, type PostedBatch } from './channel.js';
import { readRing } from './ring.js';
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
    private readonly lend: boolean,
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
    const chunk = readRing(this.ring, n[at + 2]!, n[at + 3]!, this.lend);
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
  const server = new ChannelServer(port, inspector, counters);
  port.on('message', (batch: PostedBatch) => server.receive(new BatchReader(batch, ring, inspector.borrowsChunks === true)));
  Atomics.store(counters, SLOT.ready, 1);
}

/** The thread's end: batches carried out in order, in slices, while the log keeps up with them. */
class ChannelServer {
  private readonly pending: BatchReader[] = [];
  private scheduled = false;
  private closing = false;
  /** Calls the tap stopped the drain of, counted until the last call comes (it may still be on its way). */
  private readonly skipped = { chunks: 0, bytes: 0 };

  constructor(
    private readonly port: MessagePort,
    private readonly inspector: Inspector,
    private readonly counters: Int32Array,
  ) {}

  receive(batch: BatchReader): void {
    this.pending.push(batch);
    if (batch.batch.atExit) this.writeBeforeExit();
    else this.schedule();
  }

  private schedule(): void {
    if (this.scheduled) return;
    this.scheduled = true;
    setImmediate(() => this.work());
  }

  private get stopped(): boolean {
    return Atomics.load(this.counters, SLOT.stop) === 1;
  }

  private work(): void {
    this.scheduled = false;
    if (this.closing) return;
    if (this.stopped) return this.abandon();
    if (logsBacklogged()) return this.waitForTheDisk();
    this.carryOutWhile((done, taken) => done < SLICE_CALLS && taken < SLICE_BYTES);
    if (this.pending.length > 0) this.schedule();
  }

  /** The disk is behind: wait for it rather than drop records; a stop still ends the wait at once. */
  private waitForTheDisk(): void {
    this.scheduled = true;
    const poll = setInterval(() => {
      if (!this.stopped) return;
      clearInterval(poll);
      this.work();
    }, 20);
    void whenLogsDrained().then(() => {
      clearInterval(poll);
      if (this.scheduled) this.work();
    });
  }

  /** Carry out calls while `more` allows, then update the shared counters. */
  private carryOutWhile(more: (done: number, taken: number) => boolean): void {
    let taken = 0;
    let done = 0;
    while (this.pending.length > 0 && more(done, taken)) {
      const batch = this.pending[0]!;
      const next = batch.next();
      if (next !== undefined) {
        if (batch.done && batch.batch.last) return this.close(next.call);
        this.inspector.apply(next.call);
        taken += next.bytes;
        done++;
      }
      if (batch.done) this.pending.shift();
    }
    Atomics.add(this.counters, SLOT.taken, taken);
    const figures = this.inspector.report?.() ?? [];
    for (let i = 0; i < figures.length; i++) Atomics.store(this.counters, FIRST_REPORT_SLOT + i, figures[i]!);
    // After the figures: a tap that sees every call carried out also sees their effect.
    Atomics.add(this.counters, SLOT.done, done);
  }

  private close(last: unknown[]): void {
    this.closing = true;
    this.pending.length = 0;
    void this.inspector.close(last).then(() => this.port.close());
  }

  /** The tap stopped the drain: count what is left, and once the last call is here say it once and close. */
  private abandon(): void {
    for (const batch of this.pending.splice(0)) {
      const left = batch.left();
      this.skipped.chunks += left.chunks;
      this.skipped.bytes += left.bytes;
      if (!batch.batch.last) continue;
      this.inspector.abandoned(this.skipped.chunks, this.skipped.bytes);
      this.close(batch.batch.calls.at(-1) as unknown[]);
    }
  }

  /** The main thread is exiting and blocks until the log is written (ThreadChannel.handOverAtExit). */
  private writeBeforeExit(): void {
    const until = performance.now() + EXIT_WAIT_MS / 2;
    this.carryOutWhile(() => performance.now() < until);
    flushOpenWriters();
    Atomics.store(this.counters, SLOT.exitWritten, 1);
    Atomics.notify(this.counters, SLOT.exitWritten);
  }
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
  if (data.keepYoungGenerationSmall) void keepYoungGenerationsSmallNow(data.collectYoungEarly);
  const module = (await import(new URL(`./${data.inspector}.js`, import.meta.url).href)) as { createInspector: CreateInspector };
  const inspector = module.createInspector(data.config as never, { notice: (notice) => port.postMessage({ notice }) });
  serve(port, inspector, new Int32Array(data.shared), Buffer.from(data.ring));
}
