/**
 * The HTTP inspector on its inspection thread, seen from the main thread: the calls of HttpInspectionClient
 * are posted to the thread in order (http-inspector-worker.ts carries them out). Copies are refused while more
 * than the backlog limit waits for the thread; the client then only counts the rest of that exchange.
 */
import { FIRST_TAP_SLOT, InspectionThread, workerScript } from './inspection-thread.js';
import type { HttpCall, HttpCallChannel, HttpInspectorConfig } from './http-inspection.js';

/**
 * The HTTP backlog limit: a skip only ends the inspection of the exchange it cuts, and a model's stream is many
 * small chunks, so a small bound keeps a long flood (a 1 GB body) from costing memory.
 */
export const HTTP_MAX_BACKLOG_BYTES = 8 * 1024 * 1024;
/**
 * Copies the thread lets wait for a pause in the traffic (traffic-gate.ts). A model's turn is tens of KB of
 * chunks, so this holds many turns back to back. It is kept far below the backlog bound because a long body
 * holds this much of its copies for as long as it lasts (measured, `mcptap http` relaying 1 GiB after three
 * 2000-chunk streams: peak RSS 157.8–170.0 MB at 2 MiB against 159.3–170.2 MB at 1 MiB, seven runs each).
 */
export const HTTP_HOLD_BACK_BYTES = 2 * 1024 * 1024;

export class HttpInspectorThread implements HttpCallChannel {
  private readonly thread: InspectionThread;

  constructor(
    config: HttpInspectorConfig,
    notice: (message: string) => void,
    /** Copies are refused while more than this many bytes wait for the thread (smaller in tests). */
    private readonly maxBacklogBytes = HTTP_MAX_BACKLOG_BYTES,
  ) {
    this.thread = new InspectionThread({ script: workerScript('http-inspector-worker'), config, sharedSlots: FIRST_TAP_SLOT, holdBackBytes: Math.min(HTTP_HOLD_BACK_BYTES, maxBacklogBytes / 2), notice });
  }

  /** True once the thread has started (before that, a larger backlog is allowed). */
  get started(): boolean {
    return this.thread.started;
  }

  send(call: HttpCall): void {
    this.thread.post(call);
  }

  sendChunk(kind: number, x: number, chunk: Buffer, time: number, mono: number): boolean {
    if (this.thread.wouldOverflow(chunk.length, this.maxBacklogBytes)) return false;
    this.thread.postChunk(kind, x, chunk, time, mono);
    return true;
  }

  close(call: HttpCall): Promise<void> {
    return this.thread.finish(call);
  }
}
