/**
 * What every tap shares: the options that say where and how it logs, its log's file and session, and the
 * channel to the inspector behind it (on the inspection thread, or inline when a caller wants the records here).
 */
import { join } from 'node:path';
import { openChannel, type Channel, type ChannelSettings, type InspectorName } from '../inspect/channel.js';
import { openLogForInspection, type InspectorLogConfig } from '../inspect/inspector-log.js';
import { logFileName, newSessionId, resolveLogDir } from '../log/location.js';
import type { RedactRules } from '../log/redact.js';
import type { RecordSink } from '../log/schema.js';
import type { RecordObserver } from '../export/tee-sink.js';

export interface TapOptions {
  /** Log folder; see resolveLogDir for the default. */
  logDir?: string;
  /** Label for the log file and records; each tap says its default. */
  label?: string;
  /** Keep at most this many bytes of one frame or body in the log (the traffic itself is never cut). */
  maxBody?: number;
  /** Extra redaction rules for the log, or `false` to log secrets as they are (--no-redact). On by default. */
  redact?: RedactRules | false;
  /** Start a new part of the log past this many bytes (--max-log-mb), keeping at most maxLogFiles parts. */
  maxLogBytes?: number;
  maxLogFiles?: number;
  env?: NodeJS.ProcessEnv;
  cwd?: string;
  /** Called with every record after it is logged, stamped as in the log (the live OTLP exporter); must not block. */
  onRecord?: RecordObserver;
  /** Inspect the copy on an inspection thread (default), or inline on the main thread (`false`); `onRecord` means inline. */
  inspectionThread?: boolean;
}

/** The log of a tap labelled `label` that started at `started`: its file, session and settings. */
export function tapLogConfig(options: TapOptions, label: string, started: Date): InspectorLogConfig {
  const logDir = resolveLogDir(options.logDir, options.env ?? process.env, options.cwd ?? process.cwd());
  return {
    logFile: join(logDir, logFileName(label, started)),
    session: newSessionId(label, started),
    label,
    ...(options.redact !== undefined ? { redact: options.redact } : {}),
    ...(options.maxLogBytes !== undefined ? { maxLogBytes: options.maxLogBytes, maxLogFiles: options.maxLogFiles ?? 0 } : {}),
  };
}

/**
 * Open the log here, so mcptap can say at once whether it logs (`logging`), then the channel to the inspector.
 * A sink or onRecord needs the records on this thread, so either means inline.
 */
export function openTapChannel(inspector: InspectorName, config: InspectorLogConfig, options: TapOptions & { sink?: RecordSink }, notice: (message: string) => void, settings: ChannelSettings): { channel: Channel; logging: boolean } {
  const opened = openLogForInspection(config, notice);
  const inline = options.inspectionThread === false || options.sink !== undefined || options.onRecord !== undefined;
  const hooks = { notice, ...(options.sink ? { sink: options.sink } : {}), ...(options.onRecord ? { onRecord: options.onRecord } : {}) };
  return { channel: openChannel(inspector, opened, { inline, hooks, ...settings }), logging: opened.fd !== undefined };
}
