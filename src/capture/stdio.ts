/**
 * The stdio tap: spawns the real MCP server, relays bytes unchanged both ways, and logs a copy.
 *
 * Forwarding uses `pipe`, registered before the tap's own `data` listener, so every chunk is handed to the other
 * side before mcptap looks at it, and backpressure works as if mcptap were not there. The copy goes to the
 * inspector (stdio-inspector.ts: framed into lines, decoded by an McpSession, logged), which runs on an
 * inspection thread so its work never waits in line with the relay. Nothing but the child's own stdout ever
 * reaches our stdout.
 *
 * mcptap owns its child's life: signals are forwarded (to the child's whole process group on POSIX, so `npx`
 * and `uv run` grandchildren go too) and escalate to SIGKILL after a grace period (unref'd timers); stdin EOF
 * is passed on, and once the server owes the client no answer it gets the MCP SDK's escalation (wait → SIGTERM →
 * wait → SIGKILL); processes the server leaves behind in its group are ended; the child's exit code becomes ours.
 */
import type { ChildProcess } from 'node:child_process';
import { constants as osConstants } from 'node:os';
import { performance } from 'node:perf_hooks';
import type { Readable, Writable } from 'node:stream';
import { join } from 'node:path';
import { openLogForInspection } from './inspector-log.js';
import { labelFromCommand, logFileName, newSessionId, resolveLogDir } from '../log/location.js';
import { LEVEL, type RecordDraft, type RecordSink } from '../log/schema.js';
import type { RedactRules } from '../log/redact.js';
import { startWatchdog } from './watchdog.js';
import type { RecordObserver } from '../export/tee-sink.js';
import { STREAM, type StdioInspection, type StdioInspectorConfig } from './stdio-inspection.js';
import { StdioInspectorThread } from './stdio-inspector-thread.js';
import { QueuedInspection } from './queued-inspection.js';
import { MCPTAP_VERSION } from '../version.js';
import { spawnServer, type SpawnedServer } from './spawn-server.js';

/** Default cap on how much of one frame the log keeps (the traffic itself is never cut). */
export const DEFAULT_MAX_BODY = 1024 * 1024;
/** How long the child gets after a forwarded signal before SIGKILL (as the MCP SDK's client waits after SIGTERM). */
export const DEFAULT_KILL_GRACE_MS = 2000;
/** After stdin EOF: how often to look whether the server still owes answers, and how long to wait for them at most. */
const EOF_CHECK_MS = 100;
const EOF_MAX_WAIT_MS = 60_000;

export interface StdioTapOptions {
  command: string;
  args?: string[];
  /** Log folder; see resolveLogDir for the default. */
  logDir?: string;
  /** Label for the log file and records; defaults to the command's (or script's) base name. */
  label?: string;
  /** Keep at most this many bytes of any one frame in the log. */
  maxBody?: number;
  env?: NodeJS.ProcessEnv;
  cwd?: string;
  /** The client side: defaults to this process's stdin and stdout. */
  input?: Readable;
  output?: Writable;
  /** Where the child's stderr and mcptap's own notices go; defaults to this process's stderr. */
  errorOutput?: Writable;
  killGraceMs?: number;
  /** Extra redaction rules for the log, or `false` to log secrets as they are (--no-redact). On by default. */
  redact?: RedactRules | false;
  /** Start a new part of the log past this many bytes (--max-log-mb), keeping at most maxLogFiles parts. */
  maxLogBytes?: number;
  maxLogFiles?: number;
  /**
   * Also hand every record to this sink, after the log file (for programs that watch live). It receives the
   * records as observed, before redaction. If it throws, mcptap says so once on stderr and the traffic goes on.
   */
  sink?: RecordSink;
  /** Called with every record after it is logged, stamped as in the log (the live OTLP exporter); must not block. */
  onRecord?: RecordObserver;
  /** Start the watchdog that ends the server if mcptap is killed (POSIX; default true). See watchdog.ts. */
  watchdog?: boolean;
  /**
   * Inspect the copy on an inspection thread (default), or inline on the main thread (`false`). A `sink` or
   * `onRecord` needs the records on the main thread, so either of them means inline.
   */
  inspectionThread?: boolean;
}

/** How the wrapped process ended. */
export interface StdioTapExit {
  /** The code mcptap should exit with: the child's code, 128 + n for death by signal n. */
  exitCode: number;
  code: number | null;
  signal: NodeJS.Signals | null;
}

export interface StdioTap {
  /** Path of the log file being written. */
  readonly logFile: string;
  readonly session: string;
  readonly child: ChildProcess;
  /** Resolves once the child has exited, its output has been relayed and the log flushed. */
  readonly exited: Promise<StdioTapExit>;
  /** Send a signal to the child (and its process group); escalates to SIGKILL after the grace period. */
  signal(signal: NodeJS.Signals): void;
  /** Process id of the watchdog that ends the server should mcptap be killed, when one runs. */
  readonly watchdogPid?: number | undefined;
}

/**
 * Start the wrapped server and the tap around it. A caller that spawned the server itself, with the same
 * command, passes it as `server` (the CLI does, before it loads this module: see spawn-server.ts).
 */
export function startStdioTap(options: StdioTapOptions, server?: SpawnedServer): StdioTap {
  const args = options.args ?? [];
  const input = options.input ?? process.stdin;
  const output = options.output ?? process.stdout;
  const errorOutput = options.errorOutput ?? process.stderr;
  const grace = options.killGraceMs ?? DEFAULT_KILL_GRACE_MS;
  const maxBody = options.maxBody ?? DEFAULT_MAX_BODY;
  const label = options.label ?? labelFromCommand(options.command, args, options.cwd);
  // The server starts first: its start-up, not mcptap's, is what the host waits for.
  server ??= spawnServer(options.command, args, {
    env: options.env ?? process.env,
    ...(options.cwd !== undefined ? { cwd: options.cwd } : {}),
  });
  const { child, started, startMono, ownGroup: groupKill } = server;
  const session = newSessionId(label, started);
  const logFile = join(resolveLogDir(options.logDir, options.env ?? process.env, options.cwd ?? process.cwd()), logFileName(label, started));
  // Set once nobody reads our stderr (EPIPE): mcptap's notices stop, the server's stderr is only logged.
  let errorOutputBroken = false;
  const notice = (message: string): void => {
    if (!errorOutputBroken) errorOutput.write(`mcptap: ${message}\n`);
  };
  // A host that closed mcptap's stderr must not crash it (an unhandled EPIPE would end the session): stderr is
  // free-form logging, not the protocol. Whether the server's stderr still has a reader is handled below.
  errorOutput.on('error', () => {
    errorOutputBroken = true;
  });


  const config: StdioInspectorConfig = {
    logFile,
    session,
    label,
    maxBody,
    ...(options.redact !== undefined ? { redact: options.redact } : {}),
    ...(options.maxLogBytes !== undefined ? { maxLogBytes: options.maxLogBytes, maxLogFiles: options.maxLogFiles ?? 0 } : {}),
  };
  const inspection = startInspection(config, options, notice);
  if (inspection.logging) notice(`logging ${label} to ${logFile}`);
  const tap: StdioInspection = inspection.inspector;
  /** Every record the tap writes itself goes to the inspector, after the traffic before it. */
  const record = (draft: RecordDraft): void => tap.record(draft);

  // If mcptap is SIGKILLed, the server's stdin closes; the watchdog covers servers that ignore that.
  const watchdog = groupKill && options.watchdog !== false && child.pid !== undefined ? startWatchdog(child.pid, grace) : undefined;

  record({
    time: started.getTime(),
    kind: 'lifecycle',
    event: 'start',
    msg: `mcptap ${MCPTAP_VERSION} starts ${[options.command, ...args].join(' ')}${child.pid ? ` (pid ${child.pid})` : ''}.`,
    mcptapVersion: MCPTAP_VERSION,
    command: options.command,
    args,
    pid: process.pid,
    ...(child.pid !== undefined ? { childPid: child.pid } : {}),
    cwd: options.cwd ?? process.cwd(),
  });

  // --- forwarding first: pipes carry the bytes, untouched, with backpressure ---
  const childStdin = child.stdin!;
  const childStdout = child.stdout!;
  const childStderr = child.stderr!;
  let childStderrUnpiped = false;
  input.pipe(childStdin);
  childStdout.pipe(output, { end: false });
  childStderr.pipe(errorOutput, { end: false });
  errorOutput.on('error', (error: NodeJS.ErrnoException) => {
    if (childStderrUnpiped) return;
    childStderrUnpiped = true;
    // Keep reading (and logging) the server's stderr so it never blocks on a full pipe; only the relay stops.
    childStderr.unpipe(errorOutput);
    childStderr.resume();
    lifecycleWarning(`nobody reads mcptap's stderr any more (${error.code ?? error.message}); the server's stderr is still logged but no longer relayed.`);
  });
  // A child that exits without reading its stdin must not crash mcptap with EPIPE.
  childStdin.on('error', () => {});
  output.on('error', (error: NodeJS.ErrnoException) => {
    // The client went away (EPIPE). Pass the broken pipe on, as a pipe would: stop reading the server's stdout,
    // so its next write fails (EPIPE, or SIGPIPE) exactly as it would without mcptap, and end its input.
    // Draining its output instead kept a server that writes on (`yes`, a chatty server) running forever, with
    // mcptap logging every line of it.
    lifecycleWarning(`the client stopped reading mcptap's stdout (${error.code ?? error.message}); the server's stdout is closed and its input ended, as a broken pipe would.`);
    input.unpipe(childStdin);
    childStdin.end();
    childStdout.unpipe(output);
    childStdout.destroy();
  });

  // --- then the copy: each chunk, once forwarded, goes to the inspector with the time it passed ---
  input.on('data', (chunk: Buffer) => tap.data(STREAM.c2s, chunk, Date.now(), performance.now()));
  childStdout.on('data', (chunk: Buffer) => tap.data(STREAM.s2c, chunk, Date.now(), performance.now()));
  childStderr.on('data', (chunk: Buffer) => tap.data(STREAM.stderr, chunk, Date.now(), performance.now()));
  // Only now may the server's output flow: what it wrote while this tap was loading is relayed and logged.
  server.releaseOutput();

  /** SIGKILL after a forwarded signal. */
  let killTimer: NodeJS.Timeout | undefined;
  /** The stdin-EOF escalation (a check interval, then the SIGTERM and SIGKILL timers). */
  let eofTimer: NodeJS.Timeout | undefined;
  input.on('end', () => {
    tap.inputEnd(Date.now(), performance.now());
    record({ time: Date.now(), kind: 'lifecycle', event: 'stdin-end', msg: 'The client closed its side (stdin ended); the server\u2019s stdin is closed in turn.' });
    afterStdinEnd();
  });

  /**
   * After stdin EOF the server gets what the MCP SDK's client gives it (2 s, SIGTERM, 2 s, SIGKILL), so a server
   * that ignores EOF is not left running once its client is gone. But the clock starts only when the server owes
   * the client no answer: a piped client (a script) closes stdin right after its last request and waits for the
   * answers, and a server finishing that work must not be cut off (it could finish without mcptap). A request
   * never answered starts the clock after EOF_MAX_WAIT_MS all the same.
   */
  function afterStdinEnd(): void {
    const since = performance.now();
    eofTimer = setInterval(() => {
      if (tap.serverMayOweClient() && performance.now() - since < EOF_MAX_WAIT_MS) return;
      clearInterval(eofTimer);
      eofTimer = setTimeout(() => {
        sendSignal('SIGTERM');
        eofTimer = setTimeout(() => sendSignal('SIGKILL'), grace);
        eofTimer.unref();
      }, grace);
      eofTimer.unref();
    }, EOF_CHECK_MS);
    eofTimer.unref();
  }

  function lifecycleWarning(message: string): void {
    record({ time: Date.now(), kind: 'lifecycle', event: 'warning', level: LEVEL.warn, msg: message });
  }

  // --- the child's life ---
  function sendSignal(signal: NodeJS.Signals): void {
    if (child.exitCode !== null || child.signalCode !== null || child.pid === undefined) return;
    try {
      if (groupKill) process.kill(-child.pid, signal);
      else child.kill(signal);
    } catch {
      try {
        child.kill(signal);
      } catch {
        // already gone
      }
    }
  }
  /** Forward a signal; if the child is still there one grace period later, SIGKILL its group. */
  function escalate(signal: NodeJS.Signals): void {
    sendSignal(signal);
    if (killTimer) return;
    killTimer = setTimeout(() => sendSignal('SIGKILL'), grace);
    killTimer.unref();
  }

  const exited = new Promise<StdioTapExit>((resolve) => {
    let spawnError: NodeJS.ErrnoException | undefined;
    let finished = false;
    const finish = (code: number | null, signal: NodeJS.Signals | null): void => {
      if (finished) return;
      finished = true;
      if (killTimer) clearTimeout(killTimer);
      if (eofTimer) clearTimeout(eofTimer); // also clears an interval
      const now = Date.now();
      const mono = performance.now();
      tap.endStreams(now, mono);
      const exitCode = spawnError ? (spawnError.code === 'ENOENT' ? 127 : 126) : exitCodeOf(code, signal);
      const durationMs = Math.round(mono - startMono);
      // The server is gone, but processes it started may still be in its group (a background job that holds its
      // output, say); nobody could reach them once mcptap leaves. End them: SIGTERM now, and the watchdog,
      // left unreleased, sends SIGKILL after the grace period once mcptap has exited.
      const leftovers = groupKill && !spawnError && child.pid !== undefined && groupAlive(child.pid);
      if (leftovers) {
        try {
          process.kill(-child.pid!, 'SIGTERM');
        } catch {
          // gone meanwhile
        }
        lifecycleWarning(`The server exited but left processes running in its process group; mcptap ends them (SIGTERM, then SIGKILL after ${grace} ms) so none is orphaned.`);
      } else {
        watchdog?.release();
      }
      const exit: RecordDraft = {
        time: now,
        kind: 'lifecycle',
        event: 'exit',
        code,
        signal,
        durationMs,
        ...(exitCode !== 0 ? { level: LEVEL.warn } : {}),
        msg: signal
          ? `The server was ended by ${signal} after ${durationMs} ms; mcptap exits with ${exitCode}.`
          : spawnError
            ? `The server could not be started; mcptap exits with ${exitCode}.`
            : `The server exited with code ${code} after ${durationMs} ms.`,
      };
      void tap.close(exit).then(() => resolve({ exitCode, code, signal }));
    };
    server.onError((error) => {
      spawnError = error;
      const hint =
        error.code === 'ENOENT'
          ? `command not found. Check the spelling and that it is on the PATH mcptap sees (hosts like Claude Desktop start servers with a minimal PATH; an absolute path always works).`
          : error.code === 'EACCES'
            ? 'permission denied. Make the file executable or run it through its interpreter.'
            : error.message;
      notice(`cannot start ${options.command}: ${hint}`);
      record({ time: Date.now(), kind: 'lifecycle', event: 'warning', level: LEVEL.error, msg: `mcptap could not start ${options.command}: ${error.code ?? error.message}.` });
      // 'close' may not follow a spawn failure on every platform: finish here too.
      finish(null, null);
    });
    // 'close' waits for the child's stdout and stderr to end, so every byte is relayed before we finish. A
    // grandchild holding the pipes open must not keep us alive, though: give it a moment after 'exit'.
    server.onExit((code, signal) => {
      const late = setTimeout(() => finish(code, signal), 1000);
      late.unref();
      child.once('close', () => {
        clearTimeout(late);
        finish(code, signal);
      });
    });
  });

  return {
    logFile,
    session,
    child,
    exited,
    signal: (signal) => escalate(signal),
    watchdogPid: watchdog?.pid,
  };
}

/**
 * The inspector for this tap, with the log opened here first so mcptap can say at once whether it logs. It runs
 * on an inspection thread, or inline when the caller wants the records on this thread (loaded on first use: a
 * plain `mcptap -- server` never loads it on the main thread, which keeps start-up short).
 */
function startInspection(
  config: StdioInspectorConfig,
  options: StdioTapOptions,
  notice: (message: string) => void,
): { inspector: StdioInspection; logging: boolean } {
  const opened = openLogForInspection(config, notice);
  const inline = options.inspectionThread === false || options.sink !== undefined || options.onRecord !== undefined;
  if (!inline && opened.fd !== undefined) {
    try {
      return { inspector: new StdioInspectorThread(opened, notice), logging: true };
    } catch (error) {
      notice(`could not start the inspection thread (${(error as Error).message}); inspecting on the main thread instead.`);
    }
  }
  const hooks = {
    notice,
    ...(options.sink ? { sink: options.sink } : {}),
    ...(options.onRecord ? { onRecord: options.onRecord } : {}),
  };
  const inspector = new QueuedInspection(import('./stdio-inspector.js').then(({ StdioInspector }) => new StdioInspector(opened, hooks)), notice);
  return { inspector, logging: opened.fd !== undefined };
}

/** True while any process is left in the process group `pgid`. */
function groupAlive(pgid: number): boolean {
  try {
    process.kill(-pgid, 0);
    return true;
  } catch {
    // ESRCH: nobody left. EPERM: a member exists but belongs to someone else (it changed user); not ours to end.
    return false;
  }
}

/** The child's code, or 128 + n for death by signal n (what shells report). */
export function exitCodeOf(code: number | null, signal: NodeJS.Signals | null): number {
  if (code !== null) return code;
  if (signal) return 128 + ((osConstants.signals as Record<string, number>)[signal] ?? 1);
  return 1;
}
