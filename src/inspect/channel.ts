/**
 * The channel: the one way a tap hands its copy of the traffic to an inspector, on an inspection thread
 * (channel-thread.ts) or inline. A tap posts calls (`[kind, …]`, in traffic order) and never waits. A chunk's
 * bytes are copied once, into a ring of shared memory the thread reads them from; the ring is the backlog's
 * bound, and a copy that does not fit is refused (the tap logs what it skipped). Calls are batched for
 * BATCH_DELAY_MS and posted as one message: every post wakes the thread, and the wakes cost the relay CPU.
 */
import { closeSync } from 'node:fs';
import { Worker } from 'node:worker_threads';
import { RingWriter } from './ring.js';
import { youngGenerationKeptSmall } from './young-generation.js';
import type { InspectorLogConfig } from './inspector-log.js';
import type { RecordSink } from '../log/schema.js';
import type { RecordObserver } from '../export/tee-sink.js';

/** How long a batch gathers calls before it is posted (the copy waits, never the traffic). */
export const BATCH_DELAY_MS = 50;
/** A batch holding this many bytes of copies is posted at once. */
export const MAX_BATCH_BYTES = 1024 * 1024;
/** How long a process that exits without closing its taps waits for each thread to write its log. */
export const EXIT_WAIT_MS = 1000;

/** Shared slots: bytes taken in (mod 2^32), calls carried out (mod 2^32), started, written at exit, stop. */
export const SLOT = { taken: 0, done: 1, ready: 2, exitWritten: 3, stop: 4 } as const;
/** The inspector's reported figures (Inspector.report) follow the channel's own slots. */
export const FIRST_REPORT_SLOT = 5;

/** The numbers of one chunk call: kind, subject, where its bytes start in the ring, their length, time, mono. */
export const CHUNK_CALL_WIDTH = 6;

/** What any inspector offers the channel, on whichever thread it runs. */
export interface Inspector {
  /** Carry out one call; a chunk call is `[kind, subject, bytes, time, mono]`. Never throws. */
  apply(call: unknown[]): void;
  /** The last call: carry it out, flush and close the log. */
  close(call: unknown[]): Promise<void>;
  /** The tap stopped the drain: say once what was relayed but not inspected. */
  abandoned(chunks: number, bytes: number): void;
  /** Figures the tap reads back (the stdio tap: answers the server owes), current after each slice. */
  report?(): readonly number[];
  /** True when it keeps nothing of a chunk past the call (it copies what it keeps): the ring's bytes are lent. */
  readonly borrowsChunks?: boolean;
}

/** The one warning of a drain the tap stopped (Inspector.abandoned). */
export function stoppedMessage(chunks: number, bytes: number): string {
  return `mcptap was stopped while it was still logging: ${bytes} bytes (${chunks} chunks) of traffic were relayed in full but not inspected, and their records are missing from this log.`;
}

/** What an inspector is given besides its config: on the thread only `notice`, inline also the caller's hooks. */
export interface InspectorHooks {
  /** mcptap's own notices (a log that cannot be written, an internal error); a line on stderr. */
  notice: (message: string) => void;
  /** Also hand every record to this sink, after the log file. */
  sink?: RecordSink;
  /** Called with every record after it is logged, stamped as in the log. */
  onRecord?: RecordObserver;
}

/** An inspector module exports this: build the inspector from its plain-data config. */
export type CreateInspector = (config: never, hooks: InspectorHooks) => Inspector;

/** The inspectors there are, by their module in inspect/. */
export type InspectorName = 'stdio-inspector' | 'http-inspector';

/**
 * The channel a tap speaks through, its log already opened (openLogForInspection): to an inspection thread,
 * or inline when the caller wants the records on this thread (a sink, onRecord), the log could not be opened,
 * or the thread could not start. Inline, the inspector is loaded on first use: the main thread of a plain
 * `mcptap -- server` never loads its code.
 */
export function openChannel(inspector: InspectorName, config: InspectorLogConfig, options: ChannelSettings & { inline: boolean; hooks: InspectorHooks }): Channel {
  const { inline, hooks, ...settings } = options;
  const { notice } = hooks;
  if (!inline && config.fd !== undefined) {
    try {
      return new ThreadChannel({ inspector, config, ...settings, notice });
    } catch (error) {
      notice(`could not start the inspection thread (${(error as Error).message}); inspecting on the main thread instead.`);
    }
  }
  const load = async (): Promise<Inspector> => {
    const module = (await (inspector === 'stdio-inspector' ? import('./stdio-inspector.js') : import('./http-inspector.js'))) as { createInspector: CreateInspector };
    return module.createInspector(config as never, hooks);
  };
  return new InlineChannel(load, notice);
}

/** What a tap holds: the same on both ends, threaded or inline. */
export interface Channel {
  post(call: readonly unknown[]): void;
  /** Post `[kind, subject, chunk, time, mono]`; false (and nothing posted) when the backlog is at its bound. */
  postChunk(kind: number, subject: number, chunk: Buffer, time: number, mono: number): boolean;
  /** Post a call and send its batch now: for calls the tap soon asks the inspector about. */
  postNow(call: readonly unknown[]): void;
  /** Report figure `i`, or undefined while the inspector has not carried out every call posted so far. */
  report(i: number): number | undefined;
  /** Post the last call; resolves once the inspector has closed its log. */
  finish(last: readonly unknown[]): Promise<void>;
  /** Stop a drain under way: what is carried out is flushed, the rest only counted (SIGTERM). */
  stop(): void;
  /** False once the inspector is gone (it failed to start or died): posts go nowhere. */
  readonly alive: boolean;
}

/** What is posted to the thread. */
export interface PostedBatch {
  /** The calls in order: an array is one call, a number `n` the next `n` chunk calls. */
  calls: unknown[];
  chunkCalls?: ArrayBuffer;
  /** The last call (Channel.finish): close the log after it. */
  last?: true;
  /** The process is exiting: carry out what there is time for and write the log synchronously. */
  atExit?: true;
}

/** The calls queued until their batch is posted; a chunk's bytes are already in the ring. */
export class Batch {
  calls: unknown[] = [];
  private numbers = new Float64Array(256 * CHUNK_CALL_WIDTH);
  private count = 0;
  /** Bytes of the chunks in this batch. */
  size = 0;

  get empty(): boolean {
    return this.calls.length === 0;
  }

  add(call: readonly unknown[]): void {
    this.calls.push(call);
  }

  addChunk(kind: number, subject: number, at: number, length: number, time: number, mono: number): void {
    if ((this.count + 1) * CHUNK_CALL_WIDTH > this.numbers.length) {
      const more = new Float64Array(this.numbers.length * 2);
      more.set(this.numbers);
      this.numbers = more;
    }
    const i = this.count * CHUNK_CALL_WIDTH;
    const numbers = this.numbers;
    numbers[i] = kind;
    numbers[i + 1] = subject;
    numbers[i + 2] = at;
    numbers[i + 3] = length;
    numbers[i + 4] = time;
    numbers[i + 5] = mono;
    this.count++;
    this.size += length;
    const last = this.calls.length - 1;
    if (typeof this.calls[last] === 'number') (this.calls[last] as number)++;
    else this.calls.push(1);
  }

  /** The batch to post and the buffer it moves; this batch is empty again. */
  take(extra: Pick<PostedBatch, 'last' | 'atExit'> = {}): { batch: PostedBatch; transfer: ArrayBuffer[] } {
    const batch: PostedBatch = { calls: this.calls, ...extra };
    const transfer: ArrayBuffer[] = [];
    if (this.count > 0) {
      batch.chunkCalls = this.numbers.buffer;
      transfer.push(batch.chunkCalls);
      this.numbers = new Float64Array(256 * CHUNK_CALL_WIDTH);
    }
    this.calls = [];
    this.count = 0;
    this.size = 0;
    return { batch, transfer };
  }
}

/**
 * The worker script `name` (a file of src/inspect, built to dist/inspect). Under vitest the library runs from
 * its TypeScript sources, which a worker cannot load: the built file is used then (`npm test` builds first).
 */
export function workerScript(name: string): URL {
  const here = import.meta.url;
  return here.endsWith('.ts') ? new URL(`../../dist/inspect/${name}.js`, here) : new URL(`./${name}.js`, here);
}

/** What the thread starts with. */
export interface ChannelWorkerData {
  /** The inspector's module, a file of inspect/ that exports `createInspector`. */
  inspector: string;
  config: object;
  shared: SharedArrayBuffer;
  ring: SharedArrayBuffer;
  keepYoungGenerationSmall: boolean;
  /** And collected early (young-generation.ts). */
  collectYoungEarly: boolean;
}

/** How a tap's channel is bounded, and what its inspector reports back. */
export interface ChannelSettings {
  /** The ring's size: copies are refused while they would not fit beside those waiting for the thread. */
  maxBacklogBytes: number;
  /** The most of it one subject (an HTTP exchange) may hold: one endless stream cannot then take it all. */
  maxSubjectBacklogBytes?: number;
  /** How many figures the inspector reports. */
  reports?: number;
  /** False: the young generations are kept small but not collected early (young-generation.ts). */
  collectYoungEarly?: boolean;
}

export interface ChannelOptions extends ChannelSettings {
  inspector: InspectorName;
  /** The inspector's config; its log fd stays this thread's, closed once the thread is done. */
  config: { fd?: number };
  notice: (message: string) => void;
}

/** Threads started and not yet finished, for the exit hook. */
const running = new Set<ThreadChannel>();
let exitHookInstalled = false;

/** The channel to an inspection thread. */
export class ThreadChannel implements Channel {
  private readonly shared: Int32Array;
  private readonly worker: Worker;
  private readonly ring: RingWriter;
  private batch = new Batch();
  private timer: NodeJS.Timeout | undefined;
  /** Calls posted (mod 2^32), against the thread's count. */
  private postedCalls = 0;
  private failed = false;
  private finishing = false;
  private readonly exited: Promise<void>;

  constructor(private readonly options: ChannelOptions) {
    const shared = new SharedArrayBuffer(4 * (FIRST_REPORT_SLOT + (options.reports ?? 0)));
    this.shared = new Int32Array(shared);
    const ring = new SharedArrayBuffer(options.maxBacklogBytes);
    this.ring = new RingWriter(ring, () => Atomics.load(this.shared, SLOT.taken), options.maxSubjectBacklogBytes);
    const workerData: ChannelWorkerData = {
      inspector: options.inspector,
      // A worker may not close a descriptor this thread opened: finish() closes it.
      config: { ...options.config, closeFd: false },
      shared,
      ring,
      keepYoungGenerationSmall: youngGenerationKeptSmall(),
      collectYoungEarly: options.collectYoungEarly ?? true,
    };
    this.worker = startWorker(workerScript('channel-thread'), workerData);
    this.worker.on('message', (message: { notice: string }) => options.notice(message.notice));
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
    running.add(this);
    void this.exited.then(() => running.delete(this));
    if (!exitHookInstalled) {
      exitHookInstalled = true;
      process.on('exit', () => {
        for (const channel of running) channel.handOverAtExit();
      });
    }
  }

  get alive(): boolean {
    return !this.failed;
  }

  /** True once the thread has started and takes calls. */
  get started(): boolean {
    return Atomics.load(this.shared, SLOT.ready) === 1;
  }

  post(call: readonly unknown[]): void {
    if (this.failed) return;
    this.batch.add(call);
    this.queued();
  }

  postChunk(kind: number, subject: number, chunk: Buffer, time: number, mono: number): boolean {
    if (this.failed) return true;
    // Once a batch: what the thread has released lets the ring start over from its beginning.
    if (this.batch.empty) this.ring.refresh();
    const at = this.ring.write(chunk, subject);
    if (at === -1) return false;
    this.batch.addChunk(kind, subject, at, chunk.length, time, mono);
    this.queued();
    return true;
  }

  postNow(call: readonly unknown[]): void {
    this.post(call);
    this.flush();
  }

  report(i: number): number | undefined {
    if (!this.caughtUp) return undefined;
    return Atomics.load(this.shared, FIRST_REPORT_SLOT + i);
  }

  /** True when the thread has carried out every call posted so far. */
  get caughtUp(): boolean {
    return Atomics.load(this.shared, SLOT.done) === this.postedCalls;
  }

  async finish(last: readonly unknown[]): Promise<void> {
    this.post(last);
    this.finishing = true;
    this.flush({ last: true });
    await this.exited;
    const fd = this.options.config.fd;
    if (fd === undefined) return;
    try {
      closeSync(fd);
    } catch {
      // already closed
    }
  }

  stop(): void {
    Atomics.store(this.shared, SLOT.stop, 1);
  }

  private queued(): void {
    this.postedCalls = (this.postedCalls + 1) | 0;
    if (this.batch.size >= MAX_BATCH_BYTES) this.flush();
    // Unref'd: a batch never keeps mcptap alive; finish() posts whatever is left.
    else this.timer ??= setTimeout(() => this.flush(), BATCH_DELAY_MS).unref();
  }

  private flush(extra: Pick<PostedBatch, 'last' | 'atExit'> = {}): void {
    if (this.timer !== undefined) clearTimeout(this.timer);
    this.timer = undefined;
    if (this.failed || (this.batch.empty && !extra.last && !extra.atExit)) return;
    const { batch, transfer } = this.batch.take(extra);
    this.worker.postMessage(batch, transfer);
  }

  /**
   * The process is exiting without having finished this channel (an uncaught exception, process.exit): post
   * what is batched and block, at most EXIT_WAIT_MS, while the thread writes its log. The frames before a crash
   * are the ones its log must keep.
   */
  private handOverAtExit(): void {
    if (this.failed || this.finishing) return;
    this.flush({ atExit: true });
    Atomics.wait(this.shared, SLOT.exitWritten, 0, EXIT_WAIT_MS);
  }

  private fail(reason: string): void {
    if (this.failed) return;
    this.failed = true;
    this.batch = new Batch();
    this.options.notice(`the inspection thread stopped (${reason}); the traffic goes on, but is no longer logged. Please report it.`);
  }
}

/**
 * The inspector on this thread, loaded on first use (a plain `mcptap -- server` never loads its code here).
 * Calls wait in one queue drained by setImmediate, not a microtask: a microtask would run before Node hands the
 * rest of the same socket read to the other side.
 */
export class InlineChannel implements Channel {
  private inspector: Inspector | undefined;
  private queue: unknown[][] = [];
  private scheduled = false;
  private failed = false;
  private readonly loading: Promise<void>;

  constructor(load: () => Promise<Inspector>, notice: (message: string) => void) {
    this.loading = load().then(
      (inspector) => {
        this.inspector = inspector;
        this.drain();
      },
      (error: unknown) => {
        this.failed = true;
        this.queue = [];
        notice(`could not load the inspector (${(error as Error)?.message ?? String(error)}); the traffic goes on without a log. Please report it.`);
      },
    );
  }

  get alive(): boolean {
    return !this.failed;
  }

  post(call: readonly unknown[]): void {
    if (this.failed) return;
    this.queue.push(call as unknown[]);
    if (this.scheduled || !this.inspector) return;
    this.scheduled = true;
    setImmediate(() => this.drain());
  }

  postChunk(kind: number, subject: number, chunk: Buffer, time: number, mono: number): boolean {
    this.post([kind, subject, chunk, time, mono]);
    return true;
  }

  postNow(call: readonly unknown[]): void {
    this.post(call);
  }

  report(i: number): number | undefined {
    if (!this.inspector || this.queue.length > 0) return undefined;
    return this.inspector.report?.()[i];
  }

  async finish(last: readonly unknown[]): Promise<void> {
    await this.loading;
    if (!this.inspector) return;
    this.drain();
    await this.inspector.close(last as unknown[]);
  }

  stop(): void {
    // Inline, the work is done as the calls come: there is no backlog to stop.
  }

  private drain(): void {
    this.scheduled = false;
    const calls = this.queue;
    this.queue = [];
    for (const call of calls) this.inspector!.apply(call);
  }
}

/**
 * The Node options the thread starts with: this process's, less `--input-type` (Node refuses a worker file
 * started with it). V8's own options (`--max-old-space-size`) are refused for a worker but already in force
 * in it, so on that refusal the thread starts with none.
 */
export function workerExecArgv(execArgv: readonly string[]): string[] {
  const kept: string[] = [];
  for (let i = 0; i < execArgv.length; i++) {
    if (execArgv[i] === '--input-type') i++;
    else if (!execArgv[i]!.startsWith('--input-type=')) kept.push(execArgv[i]!);
  }
  return kept;
}

function startWorker(script: URL, workerData: ChannelWorkerData): Worker {
  try {
    return new Worker(script, { workerData, execArgv: workerExecArgv(process.execArgv) });
  } catch (error) {
    if ((error as NodeJS.ErrnoException).code !== 'ERR_WORKER_INVALID_EXEC_ARGV') throw error;
    return new Worker(script, { workerData, execArgv: [] });
  }
}
