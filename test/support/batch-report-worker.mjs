// A stand-in inspection thread for tests of the relay's side (inspection-thread.ts): it reports each batch it
// receives as a notice, and sends spare buffers as the real thread does (inspection-worker.ts). Loads the built
// spare-buffers module: `npm test` builds first.
import { parentPort, workerData } from 'node:worker_threads';
import { makeSpare, SPARES_KEPT } from '../../dist/capture/spare-buffers.js';

const READY_SLOT = 1;
const sendSpare = () => {
  const spare = makeSpare();
  parentPort.postMessage({ spare }, [spare]);
};
parentPort.on('message', (batch) => {
  if (batch.fromSpare) sendSpare();
  const ends = batch.ends ? new Uint32Array(batch.ends) : new Uint32Array(0);
  parentPort.postMessage({ notice: JSON.stringify({ at: Date.now(), bytes: ends.length > 0 ? ends[ends.length - 1] : 0, chunks: ends.length, fromSpare: batch.fromSpare === true }) });
  if (batch.calls.some((call) => Array.isArray(call) && call[0] === 'close')) parentPort.close();
});
if (workerData.spares) for (let i = 0; i < SPARES_KEPT; i++) sendSpare();
Atomics.store(new Int32Array(workerData.shared), READY_SLOT, 1);
