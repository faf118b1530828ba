/**
 * What the stdio tap tells its inspector (stdio-inspector.ts) over the channel: the calls, the streams they
 * name, the settings that cross to the thread, and StdioCalls, the tap's side. Kept apart from the inspector
 * so that the main thread of `mcptap -- server` never loads the inspector's code.
 */
import type { InspectorLogConfig } from '../inspect/inspector-log.js';
import type { RecordDraft } from '../log/schema.js';
import type { Channel } from '../inspect/channel.js';
import { LineCap } from '../framing/line-cap.js';

/** The three byte streams of a wrapped server, as the inspector numbers them. */
export const STREAM = { c2s: 0, s2c: 1, stderr: 2 } as const;
export type StdioStream = (typeof STREAM)[keyof typeof STREAM];
/** How a record names each stream. */
export const STREAM_NAMES = ['the client\u2019s input', 'the server\u2019s stdout', 'the server\u2019s stderr'] as const;
/** How a record's `stream` field names each. */
export const STREAM_FIELDS = ['stdin', 'stdout', 'stderr'] as const;

/** Longest stderr line kept in a record. */
export const MAX_STDERR_LINE = 8 * 1024;

/** The calls: a tag, then the arguments. `data` has a chunk call's shape, `[data, stream, chunk, time, mono]`. */
export const CALL = { data: 0, inputEnd: 1, gap: 2, record: 3, endStreams: 4, close: 5, overlongEnd: 6 } as const;

/** What the inspector reports back (Inspector.report): the answers the server still owes the client. */
export const OWED_REPORT = 0;

/**
 * The stdio backlog bound: a skip costs a frame its record. A pipe relays faster than any inspection reads, so a
 * burst is held whole: 1,500 frames of 64 KiB echoed both ways fit even if the inspection made no progress
 * meanwhile. Still a bound, not a buffer without end; the pages a backlog touched stay with the process.
 */
export const STDIO_MAX_BACKLOG_BYTES = 256 * 1024 * 1024;

/** Everything the inspector needs that can cross to another thread (plain data only). */
export interface StdioInspectorConfig extends InspectorLogConfig {
  maxBody: number;
}

const LF = 0x0a;

/** The tap's side: each event becomes a call, in traffic order; copies the channel refuses become gaps. */
export class StdioCalls {
  /** Bytes skipped per stream while the channel was full, said before the next line the inspector gets. */
  private readonly skipped = [0, 0, 0];
  /** Per stream: cuts lines longer than the log keeps, so only their heads are copied (see line-cap.ts). */
  private readonly caps: readonly [LineCap, LineCap, LineCap];

  constructor(
    readonly channel: Channel,
    maxBody: number,
  ) {
    this.caps = [new LineCap(maxBody), new LineCap(maxBody), new LineCap(MAX_STDERR_LINE)];
  }

  /** A chunk that has just been forwarded on `stream`, with the time it passed. */
  data(stream: StdioStream, chunk: Buffer, time: number, mono: number): void {
    let rest = chunk;
    if (this.skipped[stream]! > 0) {
      // Once a copy was skipped, the rest of that line is of no use: copies resume where the next line starts.
      const lf = chunk.indexOf(LF);
      if (lf === -1) {
        this.skipped[stream]! += chunk.length;
        return;
      }
      this.channel.post([CALL.gap, stream, this.skipped[stream]! + lf + 1, time]);
      this.skipped[stream] = 0;
      if (lf + 1 === chunk.length) return;
      rest = chunk.subarray(lf + 1);
    }
    for (const piece of this.caps[stream].cut(rest)) {
      if ('end' in piece) {
        this.channel.post([CALL.overlongEnd, stream, piece.end, time, mono]);
      } else if (!this.channel.postChunk(CALL.data, stream, piece.copy, time, mono)) {
        // Skip from this piece to the end of the chunk; copies resume after the next newline.
        this.skipped[stream] = rest.length - (piece.copy.byteOffset - rest.byteOffset);
        this.caps[stream].reset();
        return;
      }
    }
  }

  /** The client closed its side: a line it left unfinished is logged as partial. */
  inputEnd(time: number, mono: number): void {
    this.endStream(STREAM.c2s, time, mono);
    // At once: from now on the relay asks whether the server still owes answers (serverMayOweClient).
    this.channel.postNow([CALL.inputEnd, time, mono]);
  }

  /** A record made by the tap itself (lifecycle, warnings). */
  record(draft: RecordDraft): void {
    this.channel.post([CALL.record, draft]);
  }

  /** The server is gone: finish every stream and end the MCP session (open requests become `pending`). */
  endStreams(time: number, mono: number): void {
    for (const stream of [STREAM.c2s, STREAM.s2c, STREAM.stderr]) this.endStream(stream, time, mono);
    this.channel.post([CALL.endStreams, time, mono]);
  }

  /** Write the exit record (the stderr tail is added there), flush and close the log. */
  close(exit: RecordDraft): Promise<void> {
    return this.channel.finish([CALL.close, exit]);
  }

  /** True while the server may still owe the client an answer, or traffic not yet inspected might hold one. */
  serverMayOweClient(): boolean {
    if (!this.channel.alive) return false;
    return (this.channel.report(OWED_REPORT) ?? 1) > 0;
  }

  /** Bytes still being skipped are said (a gap); an over-long line left unfinished ends here, as partial. */
  private endStream(stream: StdioStream, time: number, mono: number): void {
    if (this.skipped[stream]! > 0) this.channel.post([CALL.gap, stream, this.skipped[stream], time]);
    this.skipped[stream] = 0;
    const end = this.caps[stream].end();
    if (end) this.channel.post([CALL.overlongEnd, stream, end, time, mono]);
  }
}
