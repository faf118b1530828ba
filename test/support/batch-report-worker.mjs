// A stand-in inspection thread for tests of the relay's side (inspection-thread.ts): it reports each batch it
// receives as a notice.
import { parentPort, workerData } from 'node:worker_threads';

const READY_SLOT = 1;
parentPort.on('message', (batch) => {
  const ends = batch.ends ? new Uint32Array(batch.ends) : new Uint32Array(0);
  parentPort.postMessage({ notice: JSON.stringify({ at: Date.now(), bytes: ends.length > 0 ? ends[ends.length - 1] : 0, chunks: ends.length }) });
  if (batch.calls.some((call) => Array.isArray(call) && call[0] === 'close')) parentPort.close();
});
Atomics.store(new Int32Array(workerData.shared), READY_SLOT, 1);
