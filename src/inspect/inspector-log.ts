/**
 * The log an inspector writes, as both taps set it up: opened on the main thread first (so mcptap can say at
 * once whether it logs), then handed to the inspector, inline or on its thread. Light on purpose: the main
 * thread of `mcptap -- server` loads this, not the writer.
 */
import type { Channel } from '../types.js';
import type { RedactRules } from '../log/redact.js';
import type { LogWriterOptions } from '../log/writer.js';
import { cannotOpenLogMessage, openLogFile } from '../log/open-file.js';

/** The log settings of an inspector; plain data, so they cross to the inspection thread. */
export interface InspectorLogConfig {
  logFile: string;
  /** The log file, already opened (openLogFile); undefined to open it where the writer runs. */
  fd?: number;
  /** False when `fd` belongs to another thread, which closes it (default true). */
  closeFd?: boolean;
  /** The log could not be opened and mcptap has said so: the writer's own attempt stays quiet. */
  logUnwritable?: boolean;
  session: string;
  label: string;
  redact?: RedactRules | false;
  maxLogBytes?: number;
  maxLogFiles?: number;
}

/**
 * Open the log for an inspector. A log that cannot be opened is said once here, and the config says so: the
 * inspector then follows the traffic without a log (the stdio tap still needs to know which answers are owed).
 */
export function openLogForInspection<C extends InspectorLogConfig>(config: C, notice: (message: string) => void): C {
  try {
    return { ...config, fd: openLogFile(config.logFile) };
  } catch (error) {
    notice(cannotOpenLogMessage(config.logFile, error));
    return { ...config, logUnwritable: true };
  }
}

/** The LogWriter options for an inspector's log. */
export function logWriterOptions(config: InspectorLogConfig, channel: Channel, notice: (message: string) => void): LogWriterOptions {
  return {
    file: config.logFile,
    session: config.session,
    channel,
    label: config.label,
    warn: config.logUnwritable ? () => {} : notice,
    ...(config.fd !== undefined ? { fd: config.fd, closeFd: config.closeFd !== false } : {}),
    ...(config.redact !== undefined ? { redact: config.redact } : {}),
    ...(config.maxLogBytes !== undefined ? { maxFileBytes: config.maxLogBytes, maxFiles: config.maxLogFiles ?? 0 } : {}),
  };
}
