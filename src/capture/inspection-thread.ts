/**
 * The main-thread end of an inspection thread: a worker that decodes, correlates and logs a tap's copy of the
 * traffic while the main thread only relays.
 *
 * Why a thread: a relay that inspects inline does its inspection between forwarding one chunk and reading the
 * next, so on a busy or small machine every frame's parsing, redaction and serialization waits in line with the
 * traffic (profiled on 2 cores: the 64 KiB-frame relay ran at a third of a bare relay's rate). Here the main
 * thread forwards a chunk, appends a copy to a batch, and posts the batch a few milliseconds later.
 *
 * Memory stays bounded when the thread falls behind (a 1 GB stream, a slow disk): the thread counts the bytes
 * it has taken in a shared counter, and once more than the tap's backlog bound is waiting the tap stops copying
 * and tells the thread what it skipped. The traffic never waits for the thread.
 */
import { closeSync } from 'node:fs';
import { Worker } from 'node:worker_threads';
import { youngGenerationKeptSmall } from './young-generation.js';
import { CallBatch, MAX_BATCH_BYTES, type PostedBatch } from './call-batch.js';
import { SpareBuffers } from './spare-buffers.js';

/**
 * The backlog bound while the thread is still starting (each tap has its own for the steady state) (loading its modules takes a moment, longer on a busy machine):
 * a burst at the start of a session (a 20 MB tool result) should not be lost to the thread's start-up.
 */
export const MAX_STARTING_BACKLOG_BYTES = 64 * 1024 * 1024;

/**
 * How long a batch gathers calls before it is posted. Every post wakes the thread, and on a small machine the
 * wakes cost the traffic more than the work they bring. Measured on 2 cores, sequential stdio round trips
 * against a bare relay (8 alternating runs each):
 *
 * - a post per turn of the relay's event loop, as this did first: a post per frame, 100 µs of the relay's CPU
 *   per round trip;
 * - 5 ms: 0.70x. A thread that ignored every batch cost the round trips as much as full inspection (0.75x
 *   both), where building the batches and never posting them cost little (0.95x): the wakes were the cost;
 * - 50 ms: 0.81–0.84x, with 10% less CPU per round trip; 100 ms gained nothing more.
 *
 * Only the copy waits, never the traffic, and the log is written 50 ms later than it could be (later still while
 * the traffic goes on without a pause: the thread then holds its work back, see traffic-gate.ts). A batch that
 * reaches MAX_BATCH_BYTES is posted at once, and so are the calls someone waits on (see `postNow`).
 */
export const BATCH_DELAY_MS = 50;

/** Slot 0 of the shared counters: bytes the thread has taken in (mod 2^32). */
export const PROCESSED_SLOT = 0;
/** Slot 1: set to 1 once the thread has started. */
export const READY_SLOT = 1;
/** Slot 2: calls the thread has carried out (mod 2^32). */
export const CALLS_SLOT = 2;
/** Slot 3: set to 1 once the thread has written its log for a process that is exiting (see handOverAtExit). */
export const EXITING_WRITTEN_SLOT = 3;
/** Slot 4: when the main thread last posted a call, in ms since InspectionWorkerData.epoch (see traffic-gate.ts). */
export const LAST_POST_SLOT = 4;
/** Taps use the slots from here on. */
export const FIRST_TAP_SLOT = 5;

/**
 * How long a process that is exiting without closing its taps (an uncaught exception, process.exit) waits for
 * each inspection thread to write what it has. Only such an exit waits, and only while a thread is working.
 */
export const EXIT_WAIT_MS = 1000;

/**
 * The worker script `name` (a file of src/capture, built to dist/capture). Under vitest the library runs from
 * its TypeScript sources, which a worker cannot load: the built file is used then (`npm test` builds first).
 */
export function workerScript(name: string): URL {
  const here = import.meta.url;
  return here.endsWith('.ts') ? new URL(`../../dist/capture/${name}.js`, here) : new URL(`./${name}.js`, here);
}

export interface InspectionThreadOptions {
  /** The worker script (workerScript) and its config; `closeFd: false` is added, as the log fd stays ours. */
  script: URL;
  config: { fd?: number };
  /** Shared Int32 counters, the thread's own (up to FIRST_TAP_SLOT) included. */
  sharedSlots: number;
  /** Copies the thread may let wait for a pause in the traffic before it works on them anyway (traffic-gate.ts). */
  holdBackBytes: number;
  /** The thread sends spare buffers to pack big batches into (spare-buffers.ts): for a tap whose chunks are big. */
  spares?: boolean;
  /**
   * mcptap's notices, from the thread (`{ notice }` messages) and about it: a thread that dies (an uncaught
   * error in it, or it could not start) is said once, and the tap goes on without inspecting.
   */
  notice: (message: string) => void;
}

/** What an inspection thread starts with. */
export interface InspectionWorkerData {
  config: object;
  shared: SharedArrayBuffer;
  /** The CLI keeps young generations small (young-generation.ts): the thread applies it, for both threads, once it runs. */
  keepYoungGenerationSmall: boolean;
  /** Date.now() when the thread was made: LAST_POST_SLOT counts from it. */
  epoch: number;
  /** Copies the thread may let wait for a pause in the traffic (TrafficGate). */
  holdBackBytes: number;
  /** The thread sends spare buffers (spare-buffers.ts). */
  spares: boolean;
}

/** What an inspection thread sends back: a notice for stderr, or a spare buffer. */
export type InspectionThreadReply = { notice: string } | { spare: ArrayBuffer };

/**
 * The Node options an inspection thread starts with: this process's, as Node would pass them on, less
 * `--input-type`. Node refuses a worker file started with it ("--input-type can only be used with string
 * input"), so a host run as `node --input-type=module -e …` had a tap whose thread never started.
 */
export function workerExecArgv(execArgv: readonly string[]): string[] {
  const kept: string[] = [];
  for (let i = 0; i < execArgv.length; i++) {
    if (execArgv[i] === '--input-type') i++;
    else if (!execArgv[i]!.startsWith('--input-type=')) kept.push(execArgv[i]!);
  }
  return kept;
}

/**
 * Start the worker with this process's Node options (workerExecArgv), so that `--cpu-prof` and the like reach
 * the thread too. Node refuses V8's options for a worker (`--max-old-space-size`, `--stack-size`,
 * `--perf-basic-prof`: "invalid execArgv flags"), and `node --max-old-space-size=4096 mcptap …` then inspected
 * on the main thread. V8's options belong to the whole process and are in force in the thread without being
 * passed, so the thread is started again with none.
 */
function startWorker(script: URL, workerData: InspectionWorkerData): Worker {
  try {
    return new Worker(script, { workerData, execArgv: workerExecArgv(process.execArgv) });
  } catch (error) {
    if ((error as NodeJS.ErrnoException).code !== 'ERR_WORKER_INVALID_EXEC_ARGV') throw error;
    return new Worker(script, { workerData, execArgv: [] });
  }
}

/** Threads started and not yet finished, for the exit hook. */
const runningThreads = new Set<InspectionThread>();
let exitHookInstalled = false;

/**
 * Node's 'exit' on the main thread, when taps were not closed first (a crash, process.exit): the copies still
 * batched here, and whatever the threads have not written yet, would die with the process. Records of the
 * frames before a crash are the ones someone debugging it needs most, so each thread gets them and a bounded
 * time to write its log. (A clean exit closes its taps first, and then no thread is left running.)
 */
function handOverAtExit(): void {
  for (const thread of runningThreads) thread.handOverAtExit();
}

export class InspectionThread {
  readonly shared: Int32Array;
  private readonly worker: Worker;
  /** Spare buffers the thread has sent, when it sends them. */
  private readonly spares: SpareBuffers | undefined;
  /** The calls queued for the next post. */
  private batch: CallBatch;
  /** The timer that posts the batch BATCH_DELAY_MS after its first call, while one is set. */
  private flushTimer: NodeJS.Timeout | undefined;
  /** Bytes posted so far (mod 2^32), against the thread's count of bytes taken in. */
  private posted = 0;
  /** The thread's count of bytes taken in, as last read (it only grows): see wouldOverflow. */
  private processedSeen = 0;
  /** What LAST_POST_SLOT was last set to. */
  private lastPostStored = -1;
  private failed = false;
  private readonly exited: Promise<void>;
  /** Set once the started thread's backlog has first come down to the tap's steady bound. */
  private caughtUp = false;
  /** Calls posted so far (mod 2^32), against the thread's count of calls carried out. */
  private postedCalls = 0;
  /** Set once finish() has posted the last call. */
  private finishing = false;
  /** LAST_POST_SLOT's origin. */
  private readonly epoch = Date.now();

  constructor(private readonly options: InspectionThreadOptions) {
    const shared = new SharedArrayBuffer(Int32Array.BYTES_PER_ELEMENT * options.sharedSlots);
    this.shared = new Int32Array(shared);
    // The log fd was opened on this thread and is closed here once the thread is done (finish): a worker may
    // not close a descriptor the main thread opened.
    this.spares = options.spares === true ? new SpareBuffers() : undefined;
    this.batch = new CallBatch(this.spares);
    const workerData: InspectionWorkerData = {
      config: { ...options.config, closeFd: false },
      shared,
      keepYoungGenerationSmall: youngGenerationKeptSmall(),
      epoch: this.epoch,
      holdBackBytes: options.holdBackBytes,
      spares: this.spares !== undefined,
    };
    this.worker = startWorker(options.script, workerData);
    this.worker.on('message', (message: InspectionThreadReply) => {
      if ('spare' in message) this.spares?.give(message.spare);
      else options.notice(message.notice);
    });
    this.exited = new Promise((resolve) => {
      this.worker.once('error', (error) => {
        this.fail(error.message);
        resolve();
      });
      this.worker.once('exit', (code) => {
        if (code !== 0) this.fail(`it exited with code ${code}`);
        resolve();
      });
    });
    runningThreads.add(this);
    void this.exited.then(() => runningThreads.delete(this));
    if (!exitHookInstalled) {
      exitHookInstalled = true;
      process.on('exit', handOverAtExit);
    }
  }

  /** Bytes posted and not yet taken in by the thread, from its count read now (kept as processedSeen). */
  private readBacklog(): number {
    this.processedSeen = Atomics.load(this.shared, PROCESSED_SLOT);
    return (this.posted - this.processedSeen) >>> 0;
  }

  /** True once the thread has started and takes calls. */
  get started(): boolean {
    return Atomics.load(this.shared, READY_SLOT) === 1;
  }

  /**
   * True when `bytes` more would take the backlog past `limit`. The higher starting bound holds until the
   * thread has started and caught up once with what was posted meanwhile.
   */
  wouldOverflow(bytes: number, limit: number): boolean {
    // The backlog as of the thread's count last read can only be more than it is now: while that fits, the
    // shared counter need not be read again (an atomic read for every chunk cost the relay measurably).
    if (this.caughtUp && ((this.posted - this.processedSeen) >>> 0) + bytes <= limit) return false;
    const backlog = this.readBacklog();
    if (!this.caughtUp && this.started && backlog <= limit) this.caughtUp = true;
    return backlog + bytes > (this.caughtUp ? limit : Math.max(limit, MAX_STARTING_BACKLOG_BYTES));
  }

  /** Spare buffers the thread has sent that wait for a batch (spare-buffers.ts). */
  get sparesReady(): number {
    return this.spares?.count ?? 0;
  }

  /** True when the thread has carried out every call posted so far: what it reports is current. */
  get caughtUpWithCalls(): boolean {
    return Atomics.load(this.shared, CALLS_SLOT) === this.postedCalls;
  }

  /** False once the thread has died: posts are dropped. */
  get alive(): boolean {
    return !this.failed;
  }

  /** Queue a call for the thread; it is posted with its batch (BATCH_DELAY_MS). */
  post(message: readonly unknown[]): void {
    if (this.failed) return;
    this.batch.add(message);
    this.queued(Date.now());
  }

  /**
   * Queue the call `[kind, subject, chunk, time, mono]` for a chunk of traffic, counted toward the backlog. The
   * thread gets it as that array, `chunk` as a ChunkRef to read with its batch's `chunkAt` (call-batch.ts).
   */
  postChunk(kind: number, subject: number, chunk: Buffer, time: number, mono: number): void {
    if (this.failed) return;
    this.posted = (this.posted + chunk.length) | 0;
    this.batch.addChunkCall(kind, subject, chunk, time, mono);
    this.queued(time);
  }

  /** A call was queued at `time`: say so to the thread's traffic gate, and see that the batch goes out. */
  private queued(time: number): void {
    this.postedCalls = (this.postedCalls + 1) | 0;
    // The thread holds its work back while calls keep coming (traffic-gate.ts). It reads milliseconds: calls in
    // the same one need not store it again.
    const sinceEpoch = time - this.epoch;
    if (sinceEpoch !== this.lastPostStored) {
      this.lastPostStored = sinceEpoch;
      Atomics.store(this.shared, LAST_POST_SLOT, sinceEpoch);
    }
    if (this.batch.bytes >= MAX_BATCH_BYTES) this.flush();
    else this.schedule();
  }

  private schedule(): void {
    // Unref'd: a batch never keeps mcptap alive; finish() posts whatever is left.
    this.flushTimer ??= setTimeout(() => this.flush(), BATCH_DELAY_MS).unref();
  }

  /** Queue a message and post it with its batch now: for calls the main thread soon asks the thread about. */
  postNow(message: readonly unknown[]): void {
    this.post(message);
    this.flush({ urgent: true });
  }

  /** Send what is queued now. */
  flush(extra: Pick<PostedBatch, 'urgent'> = {}): void {
    // A batch posted early (by size, or for a call someone waits on) takes its timer along: left set, it would
    // post the next batch a moment after that one began, before it had gathered anything.
    if (this.flushTimer !== undefined) {
      clearTimeout(this.flushTimer);
      this.flushTimer = undefined;
    }
    if (this.batch.empty || this.failed) return;
    this.send(extra);
  }

  /** Post the batch (emptying it), with `extra` fields. */
  private send(extra: Pick<PostedBatch, 'atExit' | 'urgent'>): void {
    const { batch, transfer } = this.batch.take(extra);
    this.worker.postMessage(batch, transfer);
  }

  /**
   * The process is exiting without having finished this thread (see handOverAtExit): post what is batched and
   * block, at most EXIT_WAIT_MS, while the thread carries out its calls and writes its log. Synchronous, as
   * Node's 'exit' handlers must be.
   */
  handOverAtExit(): void {
    if (this.failed || this.finishing) return;
    this.send({ atExit: true });
    Atomics.wait(this.shared, EXITING_WRITTEN_SLOT, 0, EXIT_WAIT_MS);
  }

  /** Post the last message, wait for the thread to finish its work and exit, and close the log fd. */
  async finish(lastMessage: readonly unknown[]): Promise<void> {
    this.post(lastMessage);
    this.finishing = true;
    this.flush({ urgent: true });
    await this.exited;
    const fd = this.options.config.fd;
    if (fd === undefined) return;
    try {
      closeSync(fd);
    } catch {
      // already closed
    }
  }

  private fail(reason: string): void {
    if (this.failed) return;
    this.failed = true;
    this.batch = new CallBatch();
    this.options.notice(`the inspection thread stopped (${reason}); the traffic goes on, but is no longer logged. Please report it.`);
  }
}
