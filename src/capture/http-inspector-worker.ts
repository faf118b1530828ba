/**
 * The inspection thread of the HTTP tap (started by http-inspector-thread.ts): carries out the batches of calls
 * the main thread posts, in order, and counts the bytes of traffic it has taken in.
 */
import { parentPort, workerData } from 'node:worker_threads';
import { HttpInspector } from './http-inspector.js';
import { CHUNK_INDEX, HTTP_CALL, type HttpInspectorConfig } from './http-inspection.js';
import { PROCESSED_SLOT } from './inspection-thread.js';
import type { HttpThreadReply } from './http-inspector-thread.js';

const { config, shared } = workerData as { config: HttpInspectorConfig; shared: SharedArrayBuffer };
const counters = new Int32Array(shared);
const port = parentPort!;
const inspector = new HttpInspector(config, { notice: (notice) => port.postMessage({ notice } satisfies HttpThreadReply) });
const CARRIES_CHUNK = new Set<number>([HTTP_CALL.requestData, HTTP_CALL.responseData, HTTP_CALL.wsData]);

port.on('message', (batch: unknown[][]) => {
  let taken = 0;
  for (const call of batch) {
    const kind = call[0] as number;
    if (CARRIES_CHUNK.has(kind)) {
      // A Buffer arrives as a plain Uint8Array: view the same memory as a Buffer again.
      const bytes = call[CHUNK_INDEX] as Uint8Array;
      taken += bytes.byteLength;
      call[CHUNK_INDEX] = Buffer.from(bytes.buffer, bytes.byteOffset, bytes.byteLength);
    }
    if (kind === HTTP_CALL.close) void inspector.close(call).then(() => port.close());
    else inspector.apply(call);
  }
  Atomics.add(counters, PROCESSED_SLOT, taken);
});
