// A stand-in inspection thread for tests of the relay's side (inspection-thread.ts): the real serveCalls
// (inspection-worker.ts, built: `npm test` builds first) with calls that do nothing, and beside it a listener
// that reports each batch as it arrives, as a notice.
import { parentPort, workerData } from 'node:worker_threads';
import { serveCalls } from '../../dist/capture/inspection-worker.js';

parentPort.on('message', (batch) => {
  const ends = batch.ends ? new Uint32Array(batch.ends) : new Uint32Array(0);
  parentPort.postMessage({ notice: JSON.stringify({ at: Date.now(), bytes: ends.length > 0 ? ends[ends.length - 1] : 0, chunks: ends.length, fromSpare: batch.fromSpare === true }) });
  if (batch.calls.some((call) => Array.isArray(call) && call[0] === 'close')) parentPort.close();
});
serveCalls(parentPort, new Int32Array(workerData.shared), () => 0);
