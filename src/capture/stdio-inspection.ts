/**
 * What the stdio tap asks of its inspector, inline or on the inspection thread: the calls, the streams they name,
 * and the settings that cross to the thread. Kept apart from the inspector itself so the main thread can speak
 * to an inspection thread without loading the inspector's code.
 */
import type { InspectorLogConfig } from './inspector-log.js';
import type { RecordDraft, RecordSink } from '../log/schema.js';
import type { RecordObserver } from '../export/tee-sink.js';

/** The three byte streams of a wrapped server, as the inspector numbers them. */
export const STREAM = { c2s: 0, s2c: 1, stderr: 2 } as const;
export type StdioStream = (typeof STREAM)[keyof typeof STREAM];
/** How a record names each stream. */
export const STREAM_NAMES = ['the client\u2019s input', 'the server\u2019s stdout', 'the server\u2019s stderr'] as const;

/** Longest stderr line kept in a record. */
export const MAX_STDERR_LINE = 8 * 1024;

/** Everything the inspector needs that can cross to another thread (plain data only). */
export interface StdioInspectorConfig extends InspectorLogConfig {
  maxBody: number;
  /** Lines longer than the cap are cut by the caller (LineCap) and end with overlongEnd (the thread's case). */
  overlongByCaller?: boolean;
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
  /** A record made by the tap itself (lifecycle, warnings). */
  record(draft: RecordDraft): void;
  /** The server is gone: finish every stream and end the MCP session (open requests become `pending`). */
  endStreams(time: number, mono: number): void;
  /** Write the exit record (the stderr tail is added here), flush and close the log. */
  close(exit: RecordDraft): Promise<void>;
  /**
   * True while the server may still owe the client an answer (the stdin-EOF escalation waits for that): a
   * request is open, or traffic the inspector has not yet looked at might hold one.
   */
  serverMayOweClient(): boolean;
}

