/**
 * The worker end of an inspection thread: takes the batches of calls the main thread posts and carries them out
 * in order, in slices. Between slices the thread's event loop turns, so the log's writes (and their callbacks)
 * keep pace with a burst: a backlog of many megabytes posted at once would otherwise become hundreds of
 * thousands of records before the first of them could be written. Before each slice it asks the traffic gate
 * (traffic-gate.ts) whether to wait for the traffic to pause first.
 */
import { setPriority } from 'node:os';
import { workerData, type MessagePort } from 'node:worker_threads';
import { CALLS_SLOT, EXIT_WAIT_MS, EXITING_WRITTEN_SLOT, LAST_POST_SLOT, PROCESSED_SLOT, READY_SLOT, type InspectionThreadReply, type InspectionWorkerData } from './inspection-thread.js';
import { BatchReader, type ChunkRef, type PostedBatch } from './call-batch.js';
import { keepYoungGenerationsSmallNow } from './young-generation.js';
import { flushOpenWriters } from '../log/writer.js';
import { TrafficGate } from './traffic-gate.js';
import { fitsSpare, makeSpare, SPARES_KEPT } from './spare-buffers.js';

/**
 * The inspection thread's nice value on Linux, where nice is per thread. When the relay, the client, the server
 * and the inspection all want a core (2 cores: a sequential stdio session, a model's token stream), the kernel
 * then gives it to the traffic first and the inspection takes what is left; the backlog bound covers the rest.
 * Measured on 2 cores: a 2000-chunk HTTP stream 1.75x -> 1.3x a bare http-proxy's time.
 */
export const INSPECTION_NICE = 10;

/** Calls, or bytes of traffic, carried out before the thread lets its event loop turn. */
const SLICE_CALLS = 512;
const SLICE_BYTES = 256 * 1024;
/**
 * Within a slice, the thread looks whether the traffic has started again (TrafficGate.stopsFor) every this many
 * calls: about half a millisecond of its work on a token stream, against a clock read and an atomic read.
 */
const TRAFFIC_LOOK_CALLS = 32;

/** For a process that is exiting: how long the thread carries out calls before it writes what it has. */
const EXIT_WORK_MS = EXIT_WAIT_MS / 2;

/** Gives the chunk a chunk call refers to (its ChunkRef, see InspectionThread.postChunk) as a Buffer of its own. */
export type ChunkAt = (ref: ChunkRef) => Buffer;

/**
 * Serve `port`: each call goes to `carryOut`, with `chunkAt` for the chunks it refers to; it returns how many
 * bytes of traffic it took in (counted in the shared slot the main thread reads its backlog from). `afterSlice`
 * runs after each slice (shared counters).
 */
export function serveCalls(port: MessagePort, counters: Int32Array, carryOut: (call: unknown[], chunkAt: ChunkAt) => number, afterSlice?: () => void): void {
  yieldToTheTraffic();
  const { keepYoungGenerationSmall, epoch, holdBackBytes, spares } = workerData as InspectionWorkerData;
  /** Spares whose batches have been read, to go back to the relay before any new one is made. */
  const readSpares: ArrayBuffer[] = [];
  /** A spare buffer for the relay (spare-buffers.ts), moved to it: one it filled before, or one made here. */
  const sendSpare = (): void => {
    const spare = readSpares.pop() ?? makeSpare();
    port.postMessage({ spare } satisfies InspectionThreadReply, [spare]);
  };
  if (keepYoungGenerationSmall) void keepYoungGenerationsSmallNow();
  const pending: BatchReader[] = [];
  let pendingBytes = 0;
  let pendingCalls = 0;
  let scheduled = false;
  /** The timer of a wait for the traffic to pause, while one runs. */
  let waiting: NodeJS.Timeout | undefined;
  const gate = new TrafficGate(holdBackBytes);
  /** Carry out calls while `more` (given the calls and bytes so far) allows, then update the shared counters. */
  const carryOutWhile = (more: (done: number, taken: number) => boolean): void => {
    let taken = 0;
    let done = 0;
    while (pending.length > 0 && more(done, taken)) {
      const batch = pending[0]!;
      const call = batch.next();
      if (call !== undefined) {
        taken += carryOut(call, batch.chunkAt);
        done++;
      }
      if (batch.done) {
        pending.shift();
        pendingBytes -= batch.bytes;
        // Its chunks were copied out as they were read (chunkAt): the spare holds nothing any more.
        if (batch.spare && readSpares.length < SPARES_KEPT) readSpares.push(batch.spare);
      }
    }
    pendingCalls -= done;
    Atomics.add(counters, PROCESSED_SLOT, taken);
    // After the tap's own counters: a main thread that sees every call carried out also sees their effect.
    afterSlice?.();
    Atomics.add(counters, CALLS_SLOT, done);
  };
  /** How long ago the main thread last queued a call, in ms. */
  const sinceLastPost = (): number => (Date.now() - epoch - Atomics.load(counters, LAST_POST_SLOT)) | 0;
  const work = (): void => {
    scheduled = false;
    waiting = undefined;
    const urgent = pending.some((batch) => batch.urgent);
    const wait = gate.waitBeforeWork({ now: performance.now(), sinceLastPost: sinceLastPost(), pendingBytes, pendingCalls, urgent });
    if (wait > 0) {
      scheduled = true;
      waiting = setTimeout(work, wait);
      return;
    }
    // Every TRAFFIC_LOOK_CALLS calls (not before the first), the slice also ends if the traffic has come back.
    const trafficBack = (done: number): boolean => done > 0 && done % TRAFFIC_LOOK_CALLS === 0 && gate.stopsFor({ sinceLastPost: sinceLastPost(), urgent });
    carryOutWhile((done, taken) => done < SLICE_CALLS && taken < SLICE_BYTES && !trafficBack(done));
    if (pending.length > 0) schedule();
    else gate.caughtUp();
  };
  const schedule = (): void => {
    if (scheduled) return;
    scheduled = true;
    setImmediate(work);
  };
  /**
   * The main thread is exiting and blocks until this thread says its log is written (InspectionThread.
   * handOverAtExit): carry out what is pending while there is time, write every log synchronously, say so.
   */
  const writeBeforeExit = (): void => {
    const until = performance.now() + EXIT_WORK_MS;
    carryOutWhile(() => performance.now() < until);
    flushOpenWriters();
    Atomics.store(counters, EXITING_WRITTEN_SLOT, 1);
    Atomics.notify(counters, EXITING_WRITTEN_SLOT);
  };
  /** Set once the first batch big enough for a spare came: a session without such bursts never gets spares. */
  let sparesSent = false;
  port.on('message', (batch: PostedBatch) => {
    const reader = new BatchReader(batch);
    // At once, not after the gate's wait: the relay packs the next batches of the burst into the spares it has.
    if (spares && !batch.atExit) {
      if (batch.fromSpare) sendSpare();
      else if (!sparesSent && fitsSpare(reader.bytes)) {
        sparesSent = true;
        for (let i = 0; i < SPARES_KEPT; i++) sendSpare();
      }
    }
    pending.push(reader);
    pendingBytes += reader.bytes;
    pendingCalls += reader.callCount;
    if (batch.atExit) {
      writeBeforeExit();
      return;
    }
    // A wait for a pause is looked at again with what this batch brings (it may be urgent, or tip the bytes).
    if (waiting) {
      clearTimeout(waiting);
      waiting = undefined;
      scheduled = false;
    }
    schedule();
  });
  // The thread has started: from now on the main thread holds it to the steady backlog limit.
  Atomics.store(counters, READY_SLOT, 1);
}

/**
 * Lower this thread's priority below the relay's. Only on Linux: elsewhere the call would lower the whole
 * process, relay included. Not being allowed to is no reason to stop.
 */
function yieldToTheTraffic(): void {
  if (process.platform !== 'linux') return;
  try {
    // On Linux, pid 0 names the calling thread (nice is a per-thread attribute there).
    setPriority(0, INSPECTION_NICE);
  } catch {
    // a sandbox that forbids it: inspect at normal priority
  }
}
