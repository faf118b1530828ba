/**
 * `replay()`: the one call a test suite needs to stand a capture in for its peers.
 *
 * With `listen`, the recorded HTTP exchanges are served in-process and `url` says where. Without it, the replay
 * is a stdio MCP server, and `command` + `args` are what a stdio client (the SDK's StdioClientTransport, an
 * mcpServers entry) spawns: this package's own CLI, `mcptap replay LOG...`.
 */
import { resolve } from 'node:path';
import { fileURLToPath } from 'node:url';
import { listLogFiles, readAllRecords } from '../log/reader.js';
import { buildScript } from './mcp-engine.js';
import { startHttpReplay } from './http-server.js';
import type { MatchMode } from './match.js';

/** The capture to replay and how (stdio unless `listen` is given). */
export interface ReplayOptions {
  /** Log files or folders holding the capture. */
  logs: string | readonly string[];
  /** Serve recorded HTTP exchanges here (`{port: 0}` picks a free port; host defaults to 127.0.0.1). */
  listen?: { host?: string; port: number } | number;
  /** stdio: how live requests find recorded ones (default `params`). */
  match?: MatchMode;
  /** stdio: which recorded MCP session, when the logs hold several. */
  session?: string;
  /** Play the recorded pauses (server answers, streamed chunks) this many times faster. */
  speed?: number;
  /** Answer at once, without the recorded pauses. */
  noDelay?: boolean;
  /** HTTP: JSON fields left out when matching request bodies. */
  ignore?: readonly string[];
  /** HTTP: misses and warnings as they happen. */
  onNote?: (note: string) => void;
}

/** A started replay: where to reach it, and how to stop it. */
export interface ReplayHandle {
  /** Base URL of the HTTP replay (only with `listen`). */
  url?: string;
  /** The stdio replay's command and arguments (what a stdio client spawns). */
  command: string;
  args: string[];
  /** Requests the HTTP replay could not answer so far. */
  misses: string[];
  /** Stop the HTTP replay (a stdio replay ends when its client closes stdin). */
  close(): Promise<void>;
}

/** Path of the mcptap executable that ships with this package. */
const BIN = fileURLToPath(new URL('../../bin/mcptap.js', import.meta.url));

/** Start a replay of the given capture. Throws McptapError when the logs are missing or hold nothing to replay. */
export async function replay(options: ReplayOptions): Promise<ReplayHandle> {
  const logs = typeof options.logs === 'string' ? [options.logs] : [...options.logs];
  // Fail here, in the test, rather than inside a child process whose stderr nobody reads.
  await listLogFiles(logs);
  const absolute = logs.map((l) => resolve(l));
  const args = [BIN, 'replay', ...absolute];
  if (options.match) args.push('--match', options.match);
  if (options.session) args.push('--session', options.session);
  if (options.speed !== undefined) args.push('--speed', String(options.speed));
  if (options.noDelay) args.push('--no-delay');
  if (options.listen === undefined) {
    // Read the capture here too, so a log with nothing to replay (or several sessions) fails in the caller.
    buildScript(await readAllRecords(absolute), options.session);
    return { command: process.execPath, args, misses: [], close: async () => {} };
  }
  const listen = typeof options.listen === 'number' ? { port: options.listen } : options.listen;
  const server = await startHttpReplay({
    logs: absolute,
    listen,
    ...(options.speed !== undefined ? { speed: options.speed } : {}),
    ...(options.noDelay !== undefined ? { noDelay: options.noDelay } : {}),
    ...(options.ignore ? { ignore: options.ignore } : {}),
    ...(options.onNote ? { onNote: options.onNote } : {}),
  });
  return { url: server.url, command: process.execPath, args, misses: server.misses, close: () => server.close() };
}
