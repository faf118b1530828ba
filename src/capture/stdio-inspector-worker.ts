/**
 * The inspection thread of the stdio tap (started by stdio-inspector-thread.ts): runs a StdioInspector on the
 * calls the main thread posts, in order, and keeps the shared counters current.
 */
import { parentPort, workerData } from 'node:worker_threads';
import { StdioInspector } from './stdio-inspector.js';
import type { StdioInspectorConfig, StdioStream } from './stdio-inspection.js';
import { CALL, OWED_SLOT } from './stdio-inspector-thread.js';
import type { InspectionThreadReply, InspectionWorkerData } from './inspection-thread.js';
import type { ChunkRef } from './call-batch.js';
import { serveCalls } from './inspection-worker.js';
import type { RecordDraft } from '../log/schema.js';
import type { OverlongEnd } from '../framing/line-cap.js';

const { config, shared } = workerData as InspectionWorkerData & { config: StdioInspectorConfig };
const counters = new Int32Array(shared);
const port = parentPort!;
const inspector = new StdioInspector(config, { notice: (notice) => port.postMessage({ notice } satisfies InspectionThreadReply) });

serveCalls(
  port,
  counters,
  (call, chunkAt) => {
    switch (call[0]) {
      case CALL.data: {
        const bytes = chunkAt(call[2] as ChunkRef);
        inspector.data(call[1] as StdioStream, bytes, call[3] as number, call[4] as number);
        return bytes.length;
      }
      case CALL.inputEnd:
        inspector.inputEnd(call[1] as number, call[2] as number);
        return 0;
      case CALL.gap:
        inspector.gap(call[1] as StdioStream, call[2] as number, call[3] as number);
        return 0;
      case CALL.record:
        inspector.record(call[1] as RecordDraft);
        return 0;
      case CALL.overlongEnd: {
        const end = call[2] as OverlongEnd;
        const tail = end.tail as Uint8Array;
        inspector.overlongEnd(call[1] as StdioStream, { ...end, tail: Buffer.from(tail.buffer, tail.byteOffset, tail.byteLength) }, call[3] as number, call[4] as number);
        return 0;
      }
      case CALL.endStreams:
        inspector.endStreams(call[1] as number, call[2] as number);
        return 0;
      case CALL.close:
        void inspector.close(call[1] as RecordDraft).then(() => port.close());
        return 0;
      default:
        return 0;
    }
  },
  () => Atomics.store(counters, OWED_SLOT, inspector.owedToClient()),
);
