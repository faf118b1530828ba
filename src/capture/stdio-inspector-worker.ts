/**
 * The inspection thread of the stdio tap (started by stdio-inspector-thread.ts): runs a StdioInspector on the
 * batches of calls the main thread posts, in order, and keeps the shared counters current after each batch.
 */
import { parentPort, workerData } from 'node:worker_threads';
import { StdioInspector } from './stdio-inspector.js';
import type { StdioInspectorConfig, StdioStream } from './stdio-inspection.js';
import { CALL, OWED_SLOT, type StdioThreadReply } from './stdio-inspector-thread.js';
import { PROCESSED_SLOT } from './inspection-thread.js';
import type { RecordDraft } from '../log/schema.js';

const { config, shared } = workerData as { config: StdioInspectorConfig; shared: SharedArrayBuffer };
const counters = new Int32Array(shared);
const port = parentPort!;
const inspector = new StdioInspector(config, { notice: (notice) => port.postMessage({ notice } satisfies StdioThreadReply) });

port.on('message', (batch: unknown[][]) => {
  let taken = 0;
  for (const call of batch) {
    switch (call[0]) {
      case CALL.data: {
        // A Buffer arrives as a plain Uint8Array: view the same memory as a Buffer again.
        const bytes = call[2] as Uint8Array;
        taken += bytes.byteLength;
        inspector.data(call[1] as StdioStream, Buffer.from(bytes.buffer, bytes.byteOffset, bytes.byteLength), call[3] as number, call[4] as number);
        break;
      }
      case CALL.inputEnd:
        inspector.inputEnd(call[1] as number, call[2] as number);
        break;
      case CALL.gap:
        inspector.gap(call[1] as StdioStream, call[2] as number, call[3] as number);
        break;
      case CALL.record:
        inspector.record(call[1] as RecordDraft);
        break;
      case CALL.endStreams:
        inspector.endStreams(call[1] as number, call[2] as number);
        break;
      case CALL.close:
        void inspector.close(call[1] as RecordDraft).then(() => port.close());
        break;
    }
  }
  Atomics.add(counters, PROCESSED_SLOT, taken);
  Atomics.store(counters, OWED_SLOT, inspector.owedToClient());
});
