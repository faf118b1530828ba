/**
 * The HTTP inspector on its inspection thread, seen from the main thread: the calls of HttpInspectionClient
 * are posted to the thread in order (http-inspector-worker.ts carries them out). Copies are refused while more
 * than the backlog limit waits for the thread; the client then only counts the rest of that exchange.
 */
import { closeSync } from 'node:fs';
import { FIRST_TAP_SLOT, InspectionThread, workerScript } from './inspection-thread.js';
import type { HttpCall, HttpCallChannel, HttpInspectorConfig } from './http-inspection.js';

export type HttpThreadReply = { notice: string };

/**
 * The HTTP backlog limit: a skip only ends the inspection of the exchange it cuts, and a model's stream is many
 * small chunks, so a small bound keeps a long flood (a 1 GB body) from costing memory.
 */
export const HTTP_MAX_BACKLOG_BYTES = 8 * 1024 * 1024;

export class HttpInspectorThread implements HttpCallChannel {
  private readonly thread: InspectionThread;
  private readonly fd: number | undefined;

  constructor(
    config: HttpInspectorConfig,
    notice: (message: string) => void,
    /** Copies are refused while more than this many bytes wait for the thread (smaller in tests). */
    private readonly maxBacklogBytes = HTTP_MAX_BACKLOG_BYTES,
  ) {
    this.fd = config.fd;
    this.thread = new InspectionThread({
      script: workerScript('http-inspector-worker'),
      workerData: { config: { ...config, closeFd: false } satisfies HttpInspectorConfig },
      sharedSlots: FIRST_TAP_SLOT,
      onMessage: (message) => notice((message as HttpThreadReply).notice),
      onFailure: (reason) => notice(`the inspection thread stopped (${reason}); the traffic goes on, but is no longer logged. Please report it.`),
    });
  }

  send(call: HttpCall): void {
    this.thread.post(call);
  }

  sendCopy(call: HttpCall, chunk: Buffer): boolean {
    if (this.thread.wouldOverflow(chunk.length, this.maxBacklogBytes)) return false;
    this.thread.copy(chunk);
    this.thread.post(call);
    return true;
  }

  async close(call: HttpCall): Promise<void> {
    await this.thread.finish(call);
    if (this.fd === undefined) return;
    try {
      closeSync(this.fd);
    } catch {
      // already closed
    }
  }
}
