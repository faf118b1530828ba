/**
 * What the stdio tap does with its copy of the traffic: frame the client's and the server's bytes into lines,
 * decode and correlate them (McpSession), keep the server's stderr, and write every record to the log.
 *
 * It never touches the traffic: stdio.ts forwards the bytes and hands it a copy, as the calls of stdio-calls.ts,
 * over a channel (channel.ts): on the inspection thread, or inline when a caller wants the records there.
 */
import { withoutCutCharacter, LineFramer } from '../framing/lines.js';
import type { Frame } from '../types.js';
import type { OverlongEnd } from '../framing/line-cap.js';
import { McpSession } from '../session/mcp-session.js';
import { LogWriter } from '../log/writer.js';
import { logWriterOptions } from './inspector-log.js';
import { LEVEL, type RecordDraft, type RecordSink } from '../log/schema.js';
import { teeSink } from '../export/tee-sink.js';
import { CALL, MAX_STDERR_LINE, STREAM, STREAM_FIELDS, STREAM_NAMES, type StdioInspectorConfig, type StdioStream } from '../capture/stdio-calls.js';
import { stoppedMessage, type Inspector } from './channel.js';
import type { RecordObserver } from '../export/tee-sink.js';
import { dropDanglingSecret, shorten } from '../log/redact.js';

/**
 * The exit of a copy of the server that a 2026-07-28 client started only to ask server/discover (the SDK v2
 * client's version probe over stdio): it ends it as soon as it knows the revision, and that is no failure.
 */
function describeProbeExit(client: string, exit: RecordDraft): string {
  const how = exit.kind === 'lifecycle' && exit.signal ? `ended it with ${exit.signal}` : 'closed it';
  return `This copy of the server was a version probe: ${client} started it only to ask server/discover, and ${how} once it knew which revision the server speaks; its real session with the server is another log. Not a failure.`;
}

export interface StdioInspectorHooks {
  /** mcptap's own notices (a log that cannot be written, an internal error); a line on stderr. */
  notice: (message: string) => void;
  /** Also hand every record to this sink, after the log file. */
  sink?: RecordSink;
  /** Called with every record after it is logged, stamped as in the log. */
  onRecord?: RecordObserver;
}

/** The channel builds the inspector with this, on its thread or inline (channel.ts, channel-thread.ts). */
export function createInspector(config: StdioInspectorConfig, hooks: StdioInspectorHooks): StdioInspector {
  return new StdioInspector(config, hooks);
}

/** How many last lines of the server's stderr the exit record keeps. */
const STDERR_TAIL_LINES = 20;

/** The inspection work itself, on whichever thread runs it. */
export class StdioInspector implements Inspector {
  private readonly writer: LogWriter;
  private readonly sink: RecordSink;
  private readonly mcp: McpSession;
  private readonly framers: readonly [LineFramer, LineFramer, LineFramer];
  private readonly stderrTail: string[] = [];
  private loggingFailed = false;
  /** Nothing of a chunk is kept past its call: the framers copy an unfinished line (see LineFramer). */
  readonly borrowsChunks = true;

  constructor(
    config: StdioInspectorConfig,
    private readonly hooks: StdioInspectorHooks,
  ) {
    this.writer = new LogWriter(logWriterOptions(config, 'stdio', hooks.notice));
    const writer = this.writer;
    const extraSink = hooks.sink;
    const logSink: RecordSink = extraSink
      ? {
          write(draft: RecordDraft): number {
            const seq = writer.write(draft);
            extraSink.write(draft);
            return seq;
          },
        }
      : writer;
    // The live OTLP exporter (--otlp-endpoint) sees each record as the log has it, after the log.
    this.sink = hooks.onRecord ? teeSink(logSink, { session: config.session, channel: 'stdio', label: config.label }, hooks.onRecord) : logSink;
    this.mcp = new McpSession({ sink: this.sink, stdio: true });
    // Lines longer than the log keeps are cut on the tap's side (StdioCalls), which ends them with overlongEnd.
    // A chunk is read where the channel's ring holds it: the framers copy what they keep of it past the call.
    const framing = { overlongByCaller: true, borrowed: true } as const;
    this.framers = [
      new LineFramer({ dir: 'c2s', maxFrameBytes: config.maxBody, ...framing }),
      new LineFramer({ dir: 's2c', maxFrameBytes: config.maxBody, ...framing }),
      new LineFramer({ dir: 's2c', maxFrameBytes: MAX_STDERR_LINE, ...framing }),
    ];
  }

  apply(call: unknown[]): void {
    switch (call[0]) {
      case CALL.data:
        return this.data(call[1] as StdioStream, call[2] as Buffer, call[3] as number, call[4] as number);
      case CALL.inputEnd:
        return this.endStream(STREAM.c2s, call[1] as number, call[2] as number);
      case CALL.gap:
        return this.gap(call[1] as StdioStream, call[2] as number, call[3] as number);
      case CALL.record:
        return this.record(call[1] as RecordDraft);
      case CALL.overlongEnd: {
        const end = call[2] as OverlongEnd;
        // Across threads the tail arrives as a plain Uint8Array.
        const tail = Buffer.from(end.tail.buffer, end.tail.byteOffset, end.tail.byteLength);
        return this.overlongEnd(call[1] as StdioStream, { ...end, tail }, call[3] as number, call[4] as number);
      }
      case CALL.endStreams:
        return this.endStreams(call[1] as number, call[2] as number);
    }
  }

  report(): readonly number[] {
    return [this.mcp.openRequestsFrom('c2s')];
  }

  abandoned(chunks: number, bytes: number): void {
    const msg = stoppedMessage(chunks, bytes);
    this.hooks.notice(msg);
    this.record({ time: Date.now(), kind: 'lifecycle', event: 'warning', level: LEVEL.warn, msg });
  }

  private data(stream: StdioStream, chunk: Buffer, time: number, mono: number): void {
    let frames: Frame[] = [];
    this.safely(() => (frames = this.framers[stream].push(chunk, time, mono)));
    // One frame at a time: a record that cannot be written costs that record, not the rest of the chunk.
    for (const frame of frames) this.observe(stream, frame);
  }

  /** An over-long line ended, as the tap's LineCap saw it. */
  private overlongEnd(stream: StdioStream, end: OverlongEnd, time: number, mono: number): void {
    let frame: Frame | undefined;
    this.safely(() => (frame = this.framers[stream].endOverlong(end, time, mono)));
    if (frame) this.observe(stream, frame);
  }

  /**
   * Bytes that passed while inspection had fallen behind, relayed in full but not inspected, up to the end of a
   * line (or of the stream): what comes next starts a new line.
   */
  private gap(stream: StdioStream, bytes: number, time: number): void {
    this.safely(() => {
      // The start of the line the skip cut was copied, but alone it is not a frame: it goes uninspected too.
      const framer = this.framers[stream];
      bytes += framer.partialBytes;
      framer.dropPartial();
      this.sink.write({
        time,
        kind: 'lifecycle',
        event: 'warning',
        level: LEVEL.warn,
        uninspectedBytes: bytes,
        stream: STREAM_FIELDS[stream],
        msg: `mcptap fell behind and did not inspect ${bytes} bytes of ${STREAM_NAMES[stream]}, up to the end of a line; they were relayed in full, and logging resumes with the next line.`,
      });
    });
  }

  private record(draft: RecordDraft): void {
    this.safely(() => this.sink.write(draft));
  }

  private endStreams(time: number, mono: number): void {
    // A client line still unfinished (its stdin open) when the server went is a partial line all the same.
    for (const stream of [STREAM.c2s, STREAM.s2c, STREAM.stderr]) this.endStream(stream, time, mono);
    this.safely(() => this.mcp.end(time, mono));
  }

  /** The close call: the exit record (with the stderr tail), then flush and close the log. */
  async close(call: unknown[]): Promise<void> {
    let exit = call[1] as RecordDraft;
    const probe = exit.kind === 'lifecycle' && exit.event === 'exit' ? this.mcp.versionProbe() : undefined;
    if (probe) exit = { ...exit, level: LEVEL.info, probe: true, msg: describeProbeExit(probe, exit) } as RecordDraft;
    this.record({ ...exit, stderrTail: [...this.stderrTail] } as RecordDraft);
    this.writer.flushSync();
    await this.writer.close();
  }

  /** A stream ended: its unfinished last line, if any, is a partial frame. */
  private endStream(stream: StdioStream, time: number, mono: number): void {
    let tail: Frame | undefined;
    this.safely(() => (tail = this.framers[stream].end(time, mono)));
    if (tail) this.observe(stream, tail);
  }

  /** One frame: a stderr line, or an MCP message for the session. */
  private observe(stream: StdioStream, frame: Frame): void {
    if (stream === STREAM.stderr) this.safely(() => this.logStderr(frame.bytes, frame.size, frame.truncated, frame.time));
    else this.safely(() => this.mcp.observe(frame));
  }

  private logStderr(bytes: Buffer, size: number, truncated: boolean, time: number): void {
    const text = (truncated ? withoutCutCharacter(bytes) : bytes).toString('utf8');
    // The exit record quotes the tail as it is: a line the cap cut must not end in the head of a key.
    this.stderrTail.push(truncated ? dropDanglingSecret(text) : text);
    if (this.stderrTail.length > STDERR_TAIL_LINES) this.stderrTail.shift();
    this.sink.write({ time, kind: 'stderr', dir: 's2c', text, bytes: size, ...(truncated ? { truncated: true } : {}), msg: `Server stderr: ${shorten(text, 200)}` });
  }

  /** An exception in the logging path is reported once and the traffic keeps flowing. */
  private safely(work: () => void): void {
    try {
      work();
    } catch (error) {
      if (this.loggingFailed) return;
      this.loggingFailed = true;
      this.hooks.notice(`an internal error in the logging path (${(error as Error).message}); the traffic is not affected. Please report it.`);
    }
  }
}
