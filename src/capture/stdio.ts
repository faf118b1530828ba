/**
 * The stdio tap: spawns the real MCP server and relays bytes unchanged both ways with `pipe`, registered before
 * the tap's own `data` listeners, so each chunk is handed on before mcptap looks at it; the copy goes over the
 * channel to the inspector. Nothing but the child's own stdout ever reaches our stdout.
 *
 * mcptap owns its child's life: signals reach the child's whole process group (`npx`, `uv run` grandchildren)
 * and escalate to SIGKILL after a grace period; stdin EOF is passed on, with the MCP SDK's escalation once no
 * answer is owed; processes left in the group are ended; the child's exit code becomes ours.
 */
import type { ChildProcess } from 'node:child_process';
import { constants as osConstants } from 'node:os';
import { performance } from 'node:perf_hooks';
import type { Readable, Writable } from 'node:stream';
import { labelFromCommand } from '../log/location.js';
import { LEVEL, type RecordDraft, type RecordSink } from '../log/schema.js';
import { startWatchdog, type Watchdog } from './watchdog.js';
import { STDIO_MAX_BACKLOG_BYTES, STREAM, StdioCalls, type StdioInspectorConfig } from './stdio-calls.js';
import { openTapChannel, tapLogConfig, type TapOptions } from './tap.js';
import { MCPTAP_VERSION } from '../version.js';
import { spawnServer, type SpawnedServer } from './spawn-server.js';

/** Default cap on how much of one frame the log keeps (the traffic itself is never cut). */
export const DEFAULT_MAX_BODY = 1024 * 1024;
/** How long the child gets after a forwarded signal before SIGKILL (as the MCP SDK's client waits after SIGTERM). */
export const DEFAULT_KILL_GRACE_MS = 2000;
/** After stdin EOF: how often to look whether the server still owes answers, and how long to wait for them at most. */
const EOF_CHECK_MS = 100;
const EOF_MAX_WAIT_MS = 60_000;

/** The label defaults to the one labelFromCommand finds (the package or script the command runs). */
export interface StdioTapOptions extends TapOptions {
  command: string;
  args?: string[];
  /** The client side: defaults to this process's stdin and stdout. */
  input?: Readable;
  output?: Writable;
  /** Where the child's stderr and mcptap's own notices go; defaults to this process's stderr. */
  errorOutput?: Writable;
  killGraceMs?: number;
  /**
   * Also hand every record to this sink, after the log file (for programs that watch live). It receives the
   * records as observed, before redaction. If it throws, mcptap says so once on stderr and the traffic goes on.
   * A sink means inline inspection: it needs the records on the main thread.
   */
  sink?: RecordSink;
  /** Start the watchdog that ends the server if mcptap is killed (POSIX; default true). See watchdog.ts. */
  watchdog?: boolean;
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

/** What the steps of a stdio tap share. */
interface StdioTapContext {
  options: StdioTapOptions;
  server: SpawnedServer;
  child: ChildProcess;
  args: string[];
  grace: number;
  calls: StdioCalls;
  /** mcptap's own notice on stderr, while somebody reads it. */
  notice: (message: string) => void;
  /** A lifecycle warning in the log. */
  warning: (message: string) => void;
}

/**
 * Start the wrapped server and the tap around it. A caller that spawned the server itself, with the same
 * command, passes it as `server` (the CLI does, before it loads this module: see spawn-server.ts).
 */
export function startStdioTap(options: StdioTapOptions, server?: SpawnedServer): StdioTap {
  const args = options.args ?? [];
  const label = options.label ?? labelFromCommand(options.command, args, options.cwd);
  // The server starts first: its start-up, not mcptap's, is what the host waits for.
  server ??= spawnServer(options.command, args, {
    env: options.env ?? process.env,
    ...(options.cwd !== undefined ? { cwd: options.cwd } : {}),
  });
  const { logFile, session, ...log } = tapLogConfig(options, label, server.started);
  const notice = noticeOn(options.errorOutput ?? process.stderr);
  const calls = startInspection({ logFile, session, ...log, maxBody: options.maxBody ?? DEFAULT_MAX_BODY }, options, notice);
  const warning = (message: string): void => calls.record({ time: Date.now(), kind: 'lifecycle', event: 'warning', level: LEVEL.warn, msg: message });
  const tap: StdioTapContext = { options, server, child: server.child, args, grace: options.killGraceMs ?? DEFAULT_KILL_GRACE_MS, calls, notice, warning };
  // If mcptap is SIGKILLed, the server's stdin closes; the watchdog covers servers that ignore that.
  const watchdog = server.ownGroup && options.watchdog !== false && server.child.pid !== undefined ? startWatchdog(server.child.pid, tap.grace) : undefined;
  recordStart(tap);
  relay(tap);
  // Only now may the server's output flow: what it wrote while this tap was loading is relayed and logged.
  server.releaseOutput();
  const life = superviseChild(tap, watchdog);
  return { logFile, session, child: server.child, exited: life.exited, signal: life.signal, watchdogPid: watchdog?.pid };
}

/**
 * mcptap's notices on `errorOutput`. A host that closed mcptap's stderr must not crash it (an unhandled EPIPE
 * would end the session): the notices stop, and the server's stderr is then only logged (see relay).
 */
function noticeOn(errorOutput: Writable): (message: string) => void {
  let broken = false;
  errorOutput.on('error', () => {
    broken = true;
  });
  return (message) => {
    if (!broken) errorOutput.write(`mcptap: ${message}\n`);
  };
}

function recordStart({ options, server, child, args, calls }: StdioTapContext): void {
  calls.record({
    time: server.started.getTime(),
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
}

/** Forwarding first: pipes carry the bytes, untouched, with backpressure; then each chunk's copy, with its time. */
function relay({ options, child, calls, warning }: StdioTapContext): void {
  const input = options.input ?? process.stdin;
  const output = options.output ?? process.stdout;
  const errorOutput = options.errorOutput ?? process.stderr;
  const childStdin = child.stdin!;
  const childStdout = child.stdout!;
  const childStderr = child.stderr!;
  input.pipe(childStdin);
  childStdout.pipe(output, { end: false });
  childStderr.pipe(errorOutput, { end: false });
  // These listeners come after the pipes', so each chunk is handed on before it is copied.
  input.on('data', (chunk: Buffer) => calls.data(STREAM.c2s, chunk, Date.now(), performance.now()));
  childStdout.on('data', (chunk: Buffer) => calls.data(STREAM.s2c, chunk, Date.now(), performance.now()));
  childStderr.on('data', (chunk: Buffer) => calls.data(STREAM.stderr, chunk, Date.now(), performance.now()));
  let childStderrUnpiped = false;
  errorOutput.on('error', (error: NodeJS.ErrnoException) => {
    if (childStderrUnpiped) return;
    childStderrUnpiped = true;
    // Keep reading (and logging) the server's stderr so it never blocks on a full pipe; only the relay stops.
    childStderr.unpipe(errorOutput);
    childStderr.resume();
    warning(`nobody reads mcptap's stderr any more (${error.code ?? error.message}); the server's stderr is still logged but no longer relayed.`);
  });
  // A child that exits without reading its stdin must not crash mcptap with EPIPE.
  childStdin.on('error', () => {});
  output.on('error', (error: NodeJS.ErrnoException) => {
    // The client went away (EPIPE): pass the broken pipe on, as a pipe would. Stop reading the server's stdout,
    // so its next write fails exactly as it would without mcptap, and end its input (draining instead kept a
    // server that writes on, `yes`, running forever).
    warning(`the client stopped reading mcptap's stdout (${error.code ?? error.message}); the server's stdout is closed and its input ended, as a broken pipe would.`);
    input.unpipe(childStdin);
    childStdin.end();
    childStdout.unpipe(output);
    childStdout.destroy();
  });
}

/** The child's life: signals, the stdin-EOF escalation, and the exit that ends the tap. */
function superviseChild(tap: StdioTapContext, watchdog: Watchdog | undefined): { exited: Promise<StdioTapExit>; signal: (signal: NodeJS.Signals) => void } {
  const { child, grace, calls } = tap;
  /** SIGKILL after a forwarded signal; the stdin-EOF escalation, while it runs. */
  let killTimer: NodeJS.Timeout | undefined;
  let stopEofEscalation: (() => void) | undefined;
  /** Set once the log's drain has begun (the child is gone): a signal then cuts the drain short. */
  let draining = false;
  const send = (signal: NodeJS.Signals): void => sendSignal(child, tap.server.ownGroup, signal);
  (tap.options.input ?? process.stdin).on('end', () => {
    calls.inputEnd(Date.now(), performance.now());
    calls.record({ time: Date.now(), kind: 'lifecycle', event: 'stdin-end', msg: 'The client closed its side (stdin ended); the server\u2019s stdin is closed in turn.' });
    stopEofEscalation = escalateAfterEof(calls, grace, send);
  });
  const exited = new Promise<StdioTapExit>((resolve) => {
    let spawnError: NodeJS.ErrnoException | undefined;
    let finished = false;
    const finish = (code: number | null, signal: NodeJS.Signals | null): void => {
      if (finished) return;
      finished = true;
      clearTimeout(killTimer);
      stopEofEscalation?.();
      const exit = endTap(tap, watchdog, code, signal, spawnError);
      draining = true;
      void calls.close(exit.record).then(() => resolve(exit.result));
    };
    tap.server.onError((error) => {
      spawnError = error;
      reportSpawnError(tap, error);
      // 'close' may not follow a spawn failure on every platform: finish here too.
      finish(null, null);
    });
    // 'close' waits for the child's stdout and stderr to end, so every byte is relayed before we finish. A
    // grandchild holding the pipes open must not keep us alive, though: give it a moment after 'exit'.
    tap.server.onExit((code, signal) => {
      const late = setTimeout(() => finish(code, signal), 1000);
      late.unref();
      child.once('close', () => {
        clearTimeout(late);
        finish(code, signal);
      });
    });
  });
  const signal = (sig: NodeJS.Signals): void => {
    // The server is gone and the log is still being written: the user wants out, so the drain stops here.
    if (draining) return calls.channel.stop();
    send(sig);
    if (killTimer) return;
    killTimer = setTimeout(() => send('SIGKILL'), grace);
    killTimer.unref();
  };
  return { exited, signal };
}

/**
 * After stdin EOF the server gets what the MCP SDK's client gives it (2 s, SIGTERM, 2 s, SIGKILL), so a server
 * that ignores EOF is not left running once its client is gone. But the clock starts only when the server owes
 * the client no answer: a piped client (a script) closes stdin right after its last request and waits for the
 * answers. A request never answered starts the clock after EOF_MAX_WAIT_MS all the same.
 */
function escalateAfterEof(calls: StdioCalls, grace: number, send: (signal: NodeJS.Signals) => void): () => void {
  const since = performance.now();
  let timer: NodeJS.Timeout = setInterval(() => {
    if (calls.serverMayOweClient() && performance.now() - since < EOF_MAX_WAIT_MS) return;
    clearInterval(timer);
    timer = setTimeout(() => {
      send('SIGTERM');
      timer = setTimeout(() => send('SIGKILL'), grace);
      timer.unref();
    }, grace);
    timer.unref();
  }, EOF_CHECK_MS);
  timer.unref();
  return () => clearTimeout(timer); // clears the interval too
}

/**
 * The child is gone: finish the streams, end what it left in its process group, and build the exit record
 * and the code mcptap exits with.
 */
function endTap(tap: StdioTapContext, watchdog: Watchdog | undefined, code: number | null, signal: NodeJS.Signals | null, spawnError: NodeJS.ErrnoException | undefined): { record: RecordDraft; result: StdioTapExit } {
  const { child, grace } = tap;
  const now = Date.now();
  const mono = performance.now();
  tap.calls.endStreams(now, mono);
  const exitCode = spawnError ? (spawnError.code === 'ENOENT' ? 127 : 126) : exitCodeOf(code, signal);
  const durationMs = Math.round(mono - tap.server.startMono);
  // Processes the server started may still be in its group (a background job holding its output); nobody could
  // reach them once mcptap leaves. SIGTERM now; the watchdog, left unreleased, sends SIGKILL after the grace.
  if (tap.server.ownGroup && !spawnError && child.pid !== undefined && groupAlive(child.pid)) {
    try {
      process.kill(-child.pid, 'SIGTERM');
    } catch {
      // gone meanwhile
    }
    tap.warning(`The server exited but left processes running in its process group; mcptap ends them (SIGTERM, then SIGKILL after ${grace} ms) so none is orphaned.`);
  } else {
    watchdog?.release();
  }
  const record: RecordDraft = {
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
  return { record, result: { exitCode, code, signal } };
}

function reportSpawnError(tap: StdioTapContext, error: NodeJS.ErrnoException): void {
  const command = tap.options.command;
  const hint =
    error.code === 'ENOENT'
      ? `command not found. Check the spelling and that it is on the PATH mcptap sees (hosts like Claude Desktop start servers with a minimal PATH; an absolute path always works).`
      : error.code === 'EACCES'
        ? 'permission denied. Make the file executable or run it through its interpreter.'
        : error.message;
  tap.notice(`cannot start ${command}: ${hint}`);
  tap.calls.record({ time: Date.now(), kind: 'lifecycle', event: 'warning', level: LEVEL.error, msg: `mcptap could not start ${command}: ${error.code ?? error.message}.` });
}

/** Send a signal to the child's process group (POSIX, when it has one of its own), else to the child. */
function sendSignal(child: ChildProcess, ownGroup: boolean, signal: NodeJS.Signals): void {
  if (child.exitCode !== null || child.signalCode !== null || child.pid === undefined) return;
  try {
    if (ownGroup) process.kill(-child.pid, signal);
    else child.kill(signal);
  } catch {
    try {
      child.kill(signal);
    } catch {
      // already gone
    }
  }
}

/** The tap's calls over the channel to its inspector; mcptap says whether it logs as soon as it knows. */
function startInspection(config: StdioInspectorConfig, options: StdioTapOptions, notice: (message: string) => void): StdioCalls {
  const { channel, logging } = openTapChannel('stdio-inspector', config, options, notice, { maxBacklogBytes: STDIO_MAX_BACKLOG_BYTES, reports: 1, collectYoungEarly: false });
  if (logging) notice(`logging ${config.label} to ${config.logFile}`);
  return new StdioCalls(channel, config.maxBody);
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
