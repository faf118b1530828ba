/**
 * The worker end of an inspection thread: takes the batches of calls the main thread posts and carries them out
 * in order, in slices. Between slices the thread's event loop turns, so the log's writes (and their callbacks)
 * keep pace with a burst: a backlog of many megabytes posted at once would otherwise become hundreds of
 * thousands of records before the first of them could be written.
 */
import type { MessagePort } from 'node:worker_threads';
import { PROCESSED_SLOT, READY_SLOT } from './inspection-thread.js';

/** Calls, or bytes of traffic, carried out before the thread lets its event loop turn. */
const SLICE_CALLS = 512;
const SLICE_BYTES = 256 * 1024;

/**
 * Serve `port`: each call goes to `carryOut`, which returns how many bytes of traffic it took in (counted in the
 * shared slot the main thread reads its backlog from). `afterSlice` runs after each slice (shared counters).
 */
export function serveCalls(port: MessagePort, counters: Int32Array, carryOut: (call: unknown[]) => number, afterSlice?: () => void): void {
  const pending: unknown[][][] = [];
  let batchIndex = 0;
  let scheduled = false;
  const work = (): void => {
    scheduled = false;
    let taken = 0;
    let done = 0;
    while (pending.length > 0 && done < SLICE_CALLS && taken < SLICE_BYTES) {
      const batch = pending[0]!;
      taken += carryOut(batch[batchIndex++]!);
      done++;
      if (batchIndex >= batch.length) {
        pending.shift();
        batchIndex = 0;
      }
    }
    Atomics.add(counters, PROCESSED_SLOT, taken);
    afterSlice?.();
    if (pending.length > 0) schedule();
  };
  const schedule = (): void => {
    if (scheduled) return;
    scheduled = true;
    setImmediate(work);
  };
  port.on('message', (batch: unknown[][]) => {
    pending.push(batch);
    schedule();
  });
  // The thread has started: from now on the main thread holds it to the steady backlog limit.
  Atomics.store(counters, READY_SLOT, 1);
}
