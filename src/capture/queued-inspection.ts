/**
 * An inspector that is still loading: calls wait in order until it is there, then go to it. The inline stdio
 * inspector is imported on first use, so the main thread of a plain `mcptap -- server` never loads the framers,
 * decoders and writer that its inspection thread runs; what passes meanwhile is inspected a moment later.
 */
import type { RecordDraft } from '../log/schema.js';
import type { StdioInspection, StdioStream } from './stdio-inspection.js';

export class QueuedInspection implements StdioInspection {
  private target: StdioInspection | undefined;
  private waiting: ((target: StdioInspection) => void)[] = [];
  private failed = false;

  constructor(loading: Promise<StdioInspection>, notice: (message: string) => void) {
    loading.then(
      (target) => {
        this.target = target;
        for (const call of this.waiting) call(target);
        this.waiting = [];
      },
      (error: unknown) => {
        this.failed = true;
        this.waiting = [];
        notice(`could not load the inspector (${(error as Error)?.message ?? String(error)}); the traffic goes on without a log. Please report it.`);
      },
    );
  }

  data(stream: StdioStream, chunk: Buffer, time: number, mono: number): void {
    this.call((t) => t.data(stream, chunk, time, mono));
  }

  inputEnd(time: number, mono: number): void {
    this.call((t) => t.inputEnd(time, mono));
  }

  record(draft: RecordDraft): void {
    this.call((t) => t.record(draft));
  }

  endStreams(time: number, mono: number): void {
    this.call((t) => t.endStreams(time, mono));
  }

  close(exit: RecordDraft): Promise<void> {
    if (this.failed) return Promise.resolve();
    return new Promise((resolve, reject) => this.call((t) => t.close(exit).then(resolve, reject)));
  }

  serverMayOweClient(): boolean {
    // Still loading: what has passed is not looked at yet, and may hold a request.
    return this.target ? this.target.serverMayOweClient() : !this.failed;
  }

  private call(work: (target: StdioInspection) => void): void {
    if (this.target) work(this.target);
    else if (!this.failed) this.waiting.push(work);
  }
}
