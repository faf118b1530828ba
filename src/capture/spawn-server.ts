/**
 * Spawning the wrapped server, on its own so the CLI can do it before loading the rest of mcptap: the server
 * boots while mcptap loads (docs/benchmarks.md, Start-up). This module imports nothing of mcptap.
 *
 * Until the tap listens, the server's `error` and `exit` events and its output are held: Node discards an
 * exited child's unread output (flushStdio resumes every stream without a `readable` listener), so a server
 * that printed why it failed would lose those words. A `readable` listener that reads nothing keeps them.
 */
import { spawn as spawnPosix, type ChildProcess, type SpawnOptions } from 'node:child_process';
import { createRequire } from 'node:module';
import { performance } from 'node:perf_hooks';

type ExitListener = (code: number | null, signal: NodeJS.Signals | null) => void;
type ErrorListener = (error: NodeJS.ErrnoException) => void;

/** A wrapped server, spawned, with its stdio as pipes. */
export interface SpawnedServer {
  readonly child: ChildProcess;
  /** When it was spawned, on both clocks. */
  readonly started: Date;
  readonly startMono: number;
  /** Whether it leads its own process group (POSIX), so signals can reach its whole group. */
  readonly ownGroup: boolean;
  /** Listen for a failure to start, including one that happened before this call. */
  onError(listener: ErrorListener): void;
  /** Listen for the exit, including one that happened before this call. */
  onExit(listener: ExitListener): void;
  /** Let stdout and stderr flow to the listeners and pipes attached by now (held until this call). */
  releaseOutput(): void;
}

export interface SpawnServerOptions {
  env?: NodeJS.ProcessEnv;
  cwd?: string;
}

/** Spawn `command args` with piped stdio, in its own process group on POSIX (so `npx`/`uv` grandchildren get signals too). */
export function spawnServer(command: string, args: readonly string[], options: SpawnServerOptions = {}): SpawnedServer {
  const ownGroup = process.platform !== 'win32';
  const started = new Date();
  const startMono = performance.now();
  const child = spawnCommand(command, [...args], {
    stdio: ['pipe', 'pipe', 'pipe'],
    env: options.env ?? process.env,
    ...(options.cwd !== undefined ? { cwd: options.cwd } : {}),
    detached: ownGroup,
  });
  const errors = heldEvents<[NodeJS.ErrnoException]>();
  const exits = heldEvents<[number | null, NodeJS.Signals | null]>();
  child.on('error', errors.emit);
  child.on('exit', exits.emit);
  const outputs = [child.stdout!, child.stderr!];
  for (const stream of outputs) stream.on('readable', holdOutput);
  return {
    child,
    started,
    startMono,
    ownGroup,
    onError: (listener) => errors.listen(listener),
    onExit: (listener) => exits.listen(listener),
    // Once the last `readable` listener goes, a stream with `data` listeners (pipe adds one) resumes flowing.
    releaseOutput: () => {
      for (const stream of outputs) stream.off('readable', holdOutput);
    },
  };
}

/** Reads nothing: its presence alone keeps the stream's data buffered (see the top of this file). */
function holdOutput(): void {}

/** Events kept until the first listener arrives, then passed straight through. */
function heldEvents<A extends unknown[]>(): { emit: (...args: A) => void; listen: (listener: (...args: A) => void) => void } {
  const held: A[] = [];
  const listeners: ((...args: A) => void)[] = [];
  return {
    emit: (...args) => {
      if (listeners.length === 0) held.push(args);
      for (const listener of listeners) listener(...args);
    },
    listen: (listener) => {
      listeners.push(listener);
      for (const args of held.splice(0)) listener(...args);
    },
  };
}

/**
 * Spawn the way users expect on every platform: on Windows `npx`, `uv` and friends are `.cmd` shims that
 * child_process cannot start by name, and cross-spawn resolves them. Elsewhere cross-spawn would only call
 * child_process.spawn, so it is not even loaded (server start-up time matters).
 */
function spawnCommand(command: string, args: string[], options: SpawnOptions): ChildProcess {
  if (process.platform !== 'win32') return spawnPosix(command, args, options);
  const crossSpawn = createRequire(import.meta.url)('cross-spawn') as typeof spawnPosix;
  return crossSpawn(command, args, options);
}
