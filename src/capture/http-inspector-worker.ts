/**
 * The inspection thread of the HTTP tap (started by http-inspector-thread.ts): carries out the calls the main
 * thread posts, in order, and counts the bytes of traffic it has taken in.
 */
import { parentPort, workerData } from 'node:worker_threads';
import { HttpInspector } from './http-inspector.js';
import { CHUNK_INDEX, HTTP_CALL, type HttpInspectorConfig } from './http-inspection.js';
import { serveCalls } from './inspection-worker.js';
import type { InspectionThreadReply, InspectionWorkerData } from './inspection-thread.js';
import type { ChunkRef } from './call-batch.js';

const { config, shared } = workerData as InspectionWorkerData & { config: HttpInspectorConfig };
const port = parentPort!;
const inspector = new HttpInspector(config, { notice: (notice) => port.postMessage({ notice } satisfies InspectionThreadReply) });
const CARRIES_CHUNK = new Set<number>([HTTP_CALL.requestData, HTTP_CALL.responseData, HTTP_CALL.wsDataC2S, HTTP_CALL.wsDataS2C]);

serveCalls(port, new Int32Array(shared), (call, chunkAt) => {
  const kind = call[0] as number;
  let taken = 0;
  if (CARRIES_CHUNK.has(kind)) {
    // The main thread sent a reference to the chunk (HttpInspectorThread.sendChunk); the inspector takes the bytes.
    const bytes = chunkAt(call[CHUNK_INDEX] as ChunkRef);
    taken = bytes.length;
    call[CHUNK_INDEX] = bytes;
  }
  if (kind === HTTP_CALL.close) void inspector.close(call).then(() => port.close());
  else inspector.apply(call);
  return taken;
});
