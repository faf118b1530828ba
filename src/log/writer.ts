/**
 * Writes records to one NDJSON log file, asynchronously and in order (see append-file.ts for why not pino's
 * SonicBoom destination).
 *
 * Records are complete objects by the time they get here, so they are serialized once with JSON.stringify; a
 * logger would only copy their keys again. The output is pino-shaped (`level`, `time`, `msg`), so pino-pretty
 * and other pino tools read it.
 *
 * The log must never break the traffic: a file that cannot be opened or written (unwritable folder, full disk)
 * gives one warning on stderr and every later record is dropped quietly while the relay goes on. The write
 * queue is bounded, so a slow disk costs records, not memory.
 */
import { statSync } from 'node:fs';
import type { Channel } from '../types.js';
import { AppendFile } from './append-file.js';
export { logsBacklogged, whenLogsDrained } from './append-file.js';
import { cannotOpenLogMessage, describeError, openLogFile } from './open-file.js';
import { recordJson } from './record-json.js';
import { Redactor, type RedactRules } from './redact.js';
import { RotatingFile, type LogTarget } from './rotate.js';
import { LEVEL, LOG_FORMAT_VERSION, type RecordDraft, type RecordSink } from './schema.js';

/**
 * When the write queue is full (only a caller that never waits for the disk fills it: the inspection thread
 * waits at a fraction of it, see append-file.ts), frame records are dropped first. mcptap's own lifecycle records (start, warnings,
 * exit) are few and are never dropped; the server's stderr (its errors, a crash) may fill twice the bound.
 */
const QUEUE_ALLOWANCE: Partial<Record<RecordDraft['kind'], number>> = { lifecycle: Infinity, stderr: 2 };

/**
 * How often (by the records' own clock) the writer looks whether its file is still there: writes to a file
 * whose folder was removed succeed and go nowhere, so only a look at the path tells.
 */
const PRESENCE_CHECK_MS = 1000;

/**
 * True when `file` is no longer there (it or its folder removed). A folder made unreadable says nothing of the
 * sort: the open file is still written, so that is not gone.
 */
function isGone(file: string): boolean {
  try {
    statSync(file);
    return false;
  } catch (error) {
    const code = (error as NodeJS.ErrnoException).code;
    return code === 'ENOENT' || code === 'ENOTDIR';
  }
}

/** Largest amount of unwritten log text held in memory before records are dropped. */
const MAX_QUEUED_BYTES = 64 * 1024 * 1024;

/**
 * Writers not yet closed. Whatever ends the process — process.exit, an uncaught exception, the event loop running
 * dry — Node emits 'exit' first, and there only synchronous work runs: queued records are written then.
 * (SIGKILL runs nothing; what was handed to the kernel before it is in the file.)
 */
const openWriters = new Set<LogWriter>();
let exitHook = false;
/** Write what every open writer of this thread has queued, synchronously (for an exit; see InspectionThread). */
export function flushOpenWriters(): void {
  for (const writer of openWriters) writer.flushAtExit();
}

export interface LogWriterOptions {
  /** Full path of the log file. Its folder is created (0700) when missing. */
  file: string;
  session: string;
  channel: Channel;
  label: string;
  /** Called once with a sentence when the log cannot be written. Defaults to a line on stderr. */
  warn?: (message: string) => void;
  /**
   * Secrets are redacted from every record by default (see redact.ts); extra rules here, or `false` to write
   * records as they are (--no-redact). The traffic is never changed either way.
   */
  redact?: RedactRules | false;
  /** Start a new part of the log when a file would grow past this many bytes (--max-log-mb); see rotate.ts. */
  maxFileBytes?: number;
  /** With maxFileBytes: keep at most this many parts, deleting the oldest (0 keeps all). */
  maxFiles?: number;
  /**
   * `file` already opened by openLogFile (0600, append): the stdio tap opens it on the main thread, to say at
   * once whether it logs, and writes it from the inspection thread.
   */
  fd?: number;
  /** False to leave `fd` open at close(): a worker thread may not close a descriptor the main thread opened. */
  closeFd?: boolean;
}

/** An open log file. Implements RecordSink so the session observers can write into it. */
export class LogWriter implements RecordSink {
  readonly file: string;
  private readonly warnOnce: (message: string) => void;
  private destination: LogTarget | undefined;
  private seq = 0;
  /** Records dropped because the write queue was full, not yet said in the log. */
  private dropped = 0;
  /** The rules every record passes through, or undefined when redaction is off. Taps hand it to redactHeaders. */
  readonly redactor: Redactor | undefined;
  private rotating: RotatingFile | undefined;
  /** `"session":…,`, `"channel":…,` and `"label":…,`, serialized once. */
  private readonly sessionField: string;
  private readonly channelField: string;
  private readonly labelField: string;
  /** `,"level":30,` and the three fields above: the stamp after `seq` of a draft that sets none of them. */
  private readonly usualStampTail: string;

  /** An fd opened for `file` before this writer existed; used by the first open of `file`. */
  private presetFd: number | undefined;
  private readonly closePresetFd: boolean;

  constructor(options: LogWriterOptions) {
    this.file = options.file;
    this.presetFd = options.fd;
    this.closePresetFd = options.closeFd !== false;
    this.sessionField = `"session":${JSON.stringify(options.session)},`;
    this.channelField = `"channel":${JSON.stringify(options.channel)},`;
    this.labelField = `"label":${JSON.stringify(options.label)},`;
    this.usualStampTail = `,"level":${LEVEL.info},${this.sessionField}${this.channelField}${this.labelField}`;
    let warned = false;
    const warn = options.warn ?? ((m: string) => process.stderr.write(`mcptap: ${m}\n`));
    this.warnOnce = (message) => {
      if (warned) return;
      warned = true;
      warn(message);
    };
    this.redactor = options.redact === false ? undefined : new Redactor(options.redact ?? {});
    if (options.maxFileBytes !== undefined && options.maxFileBytes > 0) {
      const rotating = new RotatingFile({
        file: this.file,
        maxBytes: options.maxFileBytes,
        ...(options.maxFiles !== undefined ? { maxFiles: options.maxFiles } : {}),
        open: (file) => this.open(file),
        warn,
      });
      this.rotating = rotating;
      if (rotating.healthy) this.destination = rotating;
    } else {
      this.destination = this.open(this.file);
    }
    if (this.destination) {
      openWriters.add(this);
      if (!exitHook) {
        exitHook = true;
        process.on('exit', flushOpenWriters);
      }
    }
  }

  /** The files this log has written so far (more than one once it has rotated), oldest first. */
  get files(): string[] {
    return this.rotating ? [...this.rotating.files] : [this.file];
  }

  /** False once the log has failed; records are then counted but not written. */
  get healthy(): boolean {
    return this.destination !== undefined;
  }

  /**
   * Stamp and write one record; returns its `seq`. Never throws.
   *
   * Every frame passes through here, so the line is built without copying the draft (object spread costs
   * microseconds per record on Node 20's V8): the stamp is written as a prefix and the draft is serialized as it
   * is. A draft that carries its own session or channel (an HTTP tap carries several) keeps it, and the stamp
   * then leaves that key out, so no key is ever written twice.
   */
  write(draft: RecordDraft): number {
    if (this.dropped > 0 && draft.kind === 'lifecycle' && this.destination) {
      // Say in the log itself where records went missing, before the next of mcptap's own records.
      const count = this.dropped;
      this.dropped = 0;
      this.write({ time: draft.time, kind: 'lifecycle', event: 'warning', level: LEVEL.warn, dropped: count, msg: `${count} records were dropped before this point: the log fell behind the traffic (the traffic itself was not affected).` });
    }
    if (draft.time - this.presenceCheckedAt >= PRESENCE_CHECK_MS) this.checkPresence(draft.time);
    const seq = this.seq++;
    const destination = this.destination;
    if (!destination) return seq;
    let stamp: string;
    // Most drafts carry none of the stamp's own fields: its tail is then one string, made once.
    if (draft.level === undefined && draft.session === undefined && draft.channel === undefined) stamp = `{"v":${LOG_FORMAT_VERSION},"seq":${seq}${this.usualStampTail}`;
    else {
      stamp = `{"v":${LOG_FORMAT_VERSION},"seq":${seq},`;
      if (draft.level === undefined) stamp += `"level":${LEVEL.info},`;
      if (draft.session === undefined) stamp += this.sessionField;
      if (draft.channel === undefined) stamp += this.channelField;
      stamp += this.labelField;
    }
    // The line is built as one string; redaction reads the record's own fields in it (slices copy nothing).
    const line = recordJson(draft, stamp, '}\n');
    let text = line.text;
    // The one place every record passes: redaction here covers every tap. Usually one regex test.
    if (this.redactor) {
      const fields = text.slice(stamp.length, -1);
      // The exact text is read only past the prescreen, so it is passed whole (its stamp can only add a look).
      const json = this.redactor.redactJson(draft, fields, line.exact === text ? fields : line.exact);
      if (json !== fields) text = `${stamp}${json.slice(1)}\n`;
    }
    destination.write(text, QUEUE_ALLOWANCE[draft.kind] ?? 1);
    return seq;
  }

  /** When the file was last looked for (the time of the record then written). */
  private presenceCheckedAt = 0;
  /** Set once the log was found removed: it is reopened once, and said once. */
  private reopened = false;

  /**
   * The file is gone (its folder removed mid-session, say): open it again, its folder recreated, and say so once
   * on stderr and at the top of the new file; or say plainly that it cannot be, and go on without a log.
   */
  private checkPresence(time: number): void {
    this.presenceCheckedAt = time;
    if (!this.destination || this.reopened) return;
    const file = this.rotating ? this.rotating.currentFile : this.file;
    if (!isGone(file)) return;
    this.reopened = true;
    let ok: boolean;
    if (this.rotating) ok = this.rotating.reopen();
    else {
      const previous = this.destination;
      this.destination = this.openQuietly(file);
      ok = this.destination !== undefined;
      void previous.end().catch(() => {});
    }
    if (!ok) {
      this.destination = undefined;
      this.warnOnce(`the log ${file} was removed during the session and cannot be made again (${this.reopenError ?? 'unknown error'}); the traffic goes on without a log.`);
      return;
    }
    const message = `the log ${file} was removed during the session; mcptap made it again and logs on there (records of the last second before this may be missing).`;
    this.warnOnce(message);
    this.write({ time, kind: 'lifecycle', event: 'warning', level: LEVEL.warn, msg: `The log file was removed during the session: ${message.slice(message.indexOf(';') + 2)}` });
  }

  /** Why the last open failed, for checkPresence. */
  private reopenError: string | undefined;

  /** open() without its warning, for checkPresence, which says one sentence of its own. */
  private openQuietly(file: string): AppendFile | undefined {
    try {
      const fd = openLogFile(file);
      return this.appendFile(fd, true);
    } catch (error) {
      this.reopenError = describeError(error);
      return undefined;
    }
  }

  /** Write everything queued, synchronously: for process exit and fatal signals. */
  flushSync(): void {
    this.destination?.flushSync();
  }

  /** For process exit only: write everything queued, even behind a write still in flight (see AppendFile). */
  flushAtExit(): void {
    const destination = this.destination;
    if (destination?.flushAtExit) destination.flushAtExit();
    else destination?.flushSync();
  }

  /** Wait for pending writes, then close the file. */
  async close(): Promise<void> {
    const destination = this.destination;
    this.destination = undefined;
    openWriters.delete(this);
    await destination?.end();
  }

  private open(file: string): AppendFile | undefined {
    let fd: number;
    let preset = false;
    try {
      if (this.presetFd !== undefined && file === this.file) {
        fd = this.presetFd;
        this.presetFd = undefined;
        preset = true;
      } else fd = openLogFile(file);
    } catch (error) {
      this.reopenError = describeError(error);
      if (!this.reopened) this.warnOnce(cannotOpenLogMessage(file, error));
      return undefined;
    }
    return this.appendFile(fd, !preset || this.closePresetFd);
  }

  private appendFile(fd: number, closeFd: boolean): AppendFile {
    const file: AppendFile = new AppendFile(fd, {
      maxQueuedBytes: MAX_QUEUED_BYTES,
      closeFd,
      onError: (error) => {
        // A file replaced by checkPresence may still fail as it closes: that is no reason to stop the new one.
        if (this.destination !== file && !this.rotating) return;
        this.destination = undefined;
        this.warnOnce(`writing the log ${this.file} failed (${describeError(error)}); the traffic goes on without a log.`);
      },
      onDrop: () => {
        this.dropped++;
        this.warnOnce(`the log ${this.file} is falling behind the traffic; records are being dropped (the traffic is not affected).`);
      },
    });
    return file;
  }
}
