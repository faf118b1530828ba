/**
 * What the stdio tap does with its copy of the traffic: frame the client's and the server's bytes into lines,
 * decode and correlate them (McpSession), keep the server's stderr, and write every record to the log.
 *
 * It never touches the traffic: stdio.ts forwards the bytes and hands this class a copy with the time they
 * passed. It runs on the inspection thread (stdio-inspector-thread.ts) so that its work never waits in line
 * with the relay, or inline when a caller needs the records on the main thread (a `sink` or `onRecord`).
 */
import { withoutCutCharacter, LineFramer } from '../framing/lines.js';
import type { Frame } from '../types.js';
import { McpSession } from '../session/mcp-session.js';
import { LogWriter } from '../log/writer.js';
import type { RedactRules } from '../log/redact.js';
import { LEVEL, type RecordDraft, type RecordSink } from '../log/schema.js';
import { teeSink, type RecordObserver } from '../export/tee-sink.js';

/** Longest stderr line kept in a record, and how many last lines the exit record keeps. */
const MAX_STDERR_LINE = 8 * 1024;
const STDERR_TAIL_LINES = 20;

/** The three byte streams of a wrapped server, as the inspector numbers them. */
export const STREAM = { c2s: 0, s2c: 1, stderr: 2 } as const;
export type StdioStream = (typeof STREAM)[keyof typeof STREAM];
const STREAM_NAMES = ['the client\u2019s input', 'the server\u2019s stdout', 'the server\u2019s stderr'] as const;

/** Everything the inspector needs that can cross to another thread (plain data only). */
export interface StdioInspectorConfig {
  logFile: string;
  /** The log file, already opened by the main thread (openLogFile); undefined to open it here. */
  fd?: number;
  session: string;
  label: string;
  maxBody: number;
  redact?: RedactRules | false;
  maxLogBytes?: number;
  maxLogFiles?: number;
}

export interface StdioInspectorHooks {
  /** mcptap's own notices (a log that cannot be written, an internal error); a line on stderr. */
  notice: (message: string) => void;
  /** Also hand every record to this sink, after the log file. */
  sink?: RecordSink;
  /** Called with every record after it is logged, stamped as in the log. */
  onRecord?: RecordObserver;
}

/** The inspector's interface, the same inline and across threads (every call is in traffic order). */
export interface StdioInspection {
  /** A chunk that has just been forwarded on `stream`, with the time it passed. */
  data(stream: StdioStream, chunk: Buffer, time: number, mono: number): void;
  /** The client closed its side: a line it left unfinished is logged as partial. */
  inputEnd(time: number, mono: number): void;
  /** Bytes that passed while inspection had fallen behind: relayed in full, not inspected. */
  gap(stream: StdioStream, bytes: number, time: number): void;
  /** A record made by the tap itself (lifecycle, warnings). */
  record(draft: RecordDraft): void;
  /** The server is gone: finish every stream and end the MCP session (open requests become `pending`). */
  endStreams(time: number, mono: number): void;
  /** Write the exit record (the stderr tail is added here), flush and close the log. */
  close(exit: RecordDraft): Promise<void>;
  /** Requests the server still owes the client an answer to (the stdin-EOF escalation waits for them). */
  owedToClient(): number;
}

/** The inspection work itself, on whichever thread runs it. */
export class StdioInspector implements StdioInspection {
  private readonly writer: LogWriter;
  private readonly sink: RecordSink;
  private readonly mcp: McpSession;
  private readonly framers: readonly [LineFramer, LineFramer, LineFramer];
  private readonly stderrTail: string[] = [];
  private loggingFailed = false;

  constructor(
    config: StdioInspectorConfig,
    private readonly hooks: StdioInspectorHooks,
  ) {
    this.writer = new LogWriter({
      file: config.logFile,
      session: config.session,
      channel: 'stdio',
      label: config.label,
      warn: hooks.notice,
      ...(config.fd !== undefined ? { fd: config.fd } : {}),
      ...(config.redact !== undefined ? { redact: config.redact } : {}),
      ...(config.maxLogBytes !== undefined ? { maxFileBytes: config.maxLogBytes, maxFiles: config.maxLogFiles ?? 0 } : {}),
    });
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
    this.framers = [
      new LineFramer({ dir: 'c2s', maxFrameBytes: config.maxBody }),
      new LineFramer({ dir: 's2c', maxFrameBytes: config.maxBody }),
      new LineFramer({ dir: 's2c', maxFrameBytes: MAX_STDERR_LINE }),
    ];
  }

  /** False once the log cannot be written (the writer has said so). */
  get healthy(): boolean {
    return this.writer.healthy;
  }

  data(stream: StdioStream, chunk: Buffer, time: number, mono: number): void {
    let frames: Frame[] = [];
    this.safely(() => (frames = this.framers[stream].push(chunk, time, mono)));
    // One frame at a time: a record that cannot be written costs that record, not the rest of the chunk.
    if (stream === STREAM.stderr) for (const line of frames) this.safely(() => this.logStderr(line.bytes, line.size, line.truncated, line.time));
    else for (const frame of frames) this.safely(() => this.mcp.observe(frame));
  }

  inputEnd(time: number, mono: number): void {
    this.safely(() => {
      const tail = this.framers[STREAM.c2s].end(time, mono);
      if (tail) this.mcp.observe(tail);
    });
  }

  gap(stream: StdioStream, bytes: number, time: number): void {
    this.safely(() => {
      this.framers[stream].resync();
      this.sink.write({
        time,
        kind: 'lifecycle',
        event: 'warning',
        level: LEVEL.warn,
        msg: `mcptap fell behind and did not inspect ${bytes} bytes of ${STREAM_NAMES[stream]}; they were relayed in full. Logging resumes at the next complete line.`,
      });
    });
  }

  record(draft: RecordDraft): void {
    this.safely(() => this.sink.write(draft));
  }

  endStreams(time: number, mono: number): void {
    this.safely(() => {
      // A client line still unfinished (its stdin open) when the server went is a partial line all the same.
      for (const stream of [STREAM.c2s, STREAM.s2c] as const) {
        const tail = this.framers[stream].end(time, mono);
        if (tail) this.mcp.observe(tail);
      }
      const errTail = this.framers[STREAM.stderr].end(time, mono);
      if (errTail) this.logStderr(errTail.bytes, errTail.size, errTail.truncated, time);
      this.mcp.end(time, mono);
    });
  }

  async close(exit: RecordDraft): Promise<void> {
    this.record({ ...exit, stderrTail: [...this.stderrTail] } as RecordDraft);
    this.writer.flushSync();
    await this.writer.close();
  }

  owedToClient(): number {
    return this.mcp.openRequestsFrom('c2s');
  }

  private logStderr(bytes: Buffer, size: number, truncated: boolean, time: number): void {
    const text = (truncated ? withoutCutCharacter(bytes) : bytes).toString('utf8');
    this.stderrTail.push(text);
    if (this.stderrTail.length > STDERR_TAIL_LINES) this.stderrTail.shift();
    this.sink.write({ time, kind: 'stderr', dir: 's2c', text, bytes: size, ...(truncated ? { truncated: true } : {}), msg: `Server stderr: ${text.length > 200 ? `${text.slice(0, 199)}…` : text}` });
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
