/**
 * The stdio inspector on its inspection thread, seen from the main thread: the same calls as StdioInspector, each
 * posted to the thread in order (stdio-inspector-worker.ts runs the real one). What the main thread asks back —
 * how many answers the server still owes — the thread keeps in a shared counter, so asking never waits.
 */
import type { RecordDraft } from '../log/schema.js';
import { FIRST_TAP_SLOT, InspectionThread, workerScript } from './inspection-thread.js';
import { MAX_STDERR_LINE, STREAM, type StdioInspection, type StdioInspectorConfig, type StdioStream } from './stdio-inspection.js';
import { LineCap } from '../framing/line-cap.js';

const LF = 0x0a;

/** Messages to the thread: a tag, then the call's arguments. */
export const CALL = { data: 0, inputEnd: 1, gap: 2, record: 3, endStreams: 4, close: 5, overlongEnd: 6 } as const;
/** Shared counters: the first slots are the thread's own (inspection-thread.ts). */
export const OWED_SLOT = FIRST_TAP_SLOT;
export const SHARED_SLOTS = FIRST_TAP_SLOT + 1;

/**
 * The stdio backlog limit: a skip costs a frame its record, and a burst of a few tens of MB (a big tool result,
 * echoed both ways) must not be cut just because the machine is busy; still a bound, not a buffer without end.
 */
export const STDIO_MAX_BACKLOG_BYTES = 64 * 1024 * 1024;

export class StdioInspectorThread implements StdioInspection {
  private readonly thread: InspectionThread;
  /** Bytes skipped per stream while the thread was behind, told to it before the next chunk it gets. */
  private readonly skipped = [0, 0, 0];

  /** Per stream: cuts lines longer than the log keeps, so only their heads are copied (see line-cap.ts). */
  private readonly caps: readonly [LineCap, LineCap, LineCap];

  constructor(
    config: StdioInspectorConfig,
    notice: (message: string) => void,
    /** Copies are skipped while more than this many bytes wait for the thread (smaller in tests). */
    private readonly maxBacklogBytes = STDIO_MAX_BACKLOG_BYTES,
  ) {
    this.caps = [new LineCap(config.maxBody), new LineCap(config.maxBody), new LineCap(MAX_STDERR_LINE)];
    const threadConfig: StdioInspectorConfig = { ...config, overlongByCaller: true };
    // The thread lets half the backlog bound wait for a pause in the traffic (traffic-gate.ts): a tool result of
    // tens of MB passes before it starts, and the other half is still free when it does.
    // Pipe reads of up to 64 KiB fill batches by size in a burst, and those are packed into the thread's spares.
    this.thread = new InspectionThread({ script: workerScript('stdio-inspector-worker'), config: threadConfig, sharedSlots: SHARED_SLOTS, holdBackBytes: maxBacklogBytes / 2, spares: true, notice });
  }

  data(stream: StdioStream, chunk: Buffer, time: number, mono: number): void {
    const thread = this.thread;
    let from = 0;
    if (this.skipped[stream]! > 0) {
      // Once a copy was skipped, the rest of that line is of no use to the thread: copies resume where the next
      // line starts, after one gap call for the whole span.
      const lf = chunk.indexOf(LF);
      if (lf === -1 || thread.wouldOverflow(chunk.length - lf - 1, this.maxBacklogBytes)) {
        this.skipped[stream]! += chunk.length;
        return;
      }
      thread.post([CALL.gap, stream, this.skipped[stream]! + lf + 1, time]);
      this.skipped[stream] = 0;
      from = lf + 1;
      if (from === chunk.length) return;
    }
    const rest = from === 0 ? chunk : chunk.subarray(from);
    for (const piece of this.caps[stream].cut(rest)) {
      if ('end' in piece) {
        thread.post([CALL.overlongEnd, stream, piece.end, time, mono]);
        continue;
      }
      if (thread.wouldOverflow(piece.copy.length, this.maxBacklogBytes)) {
        // Skip from this piece to the end of the chunk; copies resume after the next newline.
        this.skipped[stream] = rest.length - (piece.copy.byteOffset - rest.byteOffset);
        this.caps[stream].reset();
        return;
      }
      thread.postChunk(CALL.data, stream, piece.copy, time, mono);
    }
  }

  /**
   * A stream ended: bytes still being skipped are said (a gap), and an over-long line it left unfinished ends
   * here, as a partial line.
   */
  private endStream(stream: StdioStream, time: number, mono: number): void {
    if (this.skipped[stream]! > 0) this.thread.post([CALL.gap, stream, this.skipped[stream], time]);
    this.skipped[stream] = 0;
    const end = this.caps[stream].end();
    if (end) this.thread.post([CALL.overlongEnd, stream, end, time, mono]);
  }

  inputEnd(time: number, mono: number): void {
    this.endStream(STREAM.c2s, time, mono);
    // Posted at once: from now on the relay asks whether the server still owes answers (serverMayOweClient).
    this.thread.postNow([CALL.inputEnd, time, mono]);
  }

  record(draft: RecordDraft): void {
    this.thread.post([CALL.record, draft]);
  }

  endStreams(time: number, mono: number): void {
    for (const stream of [STREAM.c2s, STREAM.s2c, STREAM.stderr]) this.endStream(stream, time, mono);
    this.thread.post([CALL.endStreams, time, mono]);
  }

  close(exit: RecordDraft): Promise<void> {
    return this.thread.finish([CALL.close, exit]);
  }

  /** True once the thread has started (before that, a larger backlog is allowed). */
  get started(): boolean {
    return this.thread.started;
  }

  serverMayOweClient(): boolean {
    // The count is the thread's as of the calls it has carried out: it only answers once it has caught up.
    if (!this.thread.alive) return false;
    return !this.thread.caughtUpWithCalls || Atomics.load(this.thread.shared, OWED_SLOT) > 0;
  }
}
