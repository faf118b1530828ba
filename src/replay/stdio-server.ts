/**
 * The stdio replay: a recorded MCP session standing in for its server on stdin/stdout, so `mcptap replay LOG`
 * can sit in an mcpServers entry or be spawned by a test's StdioClientTransport.
 *
 * The I/O edge only: lines in through the same LineFramer the tap uses, the McpReplayEngine decides, frames out.
 * stdout carries nothing but MCP frames; misses and differences go to stderr as plain sentences.
 */
import type { Readable, Writable } from 'node:stream';
import { LineFramer } from '../framing/lines.js';
import { readAllRecords, type LogProblem, type ReadLogsOptions } from '../log/reader.js';
import type { LogRecord } from '../log/schema.js';
import { buildScript, McpReplayEngine, type EngineOutput, type ReplayStats } from './mcp-engine.js';
import type { MatchMode } from './match.js';

/** Largest line the replay accepts from a client (the SDK's own default cap is 10 MiB). */
const MAX_LINE = 64 * 1024 * 1024;

/** What to replay over which streams. */
export interface StdioReplayOptions {
  /** Log files or folders holding the recorded session. */
  logs?: readonly string[];
  /** Already-read records, instead of `logs`. */
  records?: readonly LogRecord[];
  /** Lines of `logs` that are not records, and what a folder walk skipped (the CLI prints them). */
  onProblem?: (problem: LogProblem) => void;
  onNote?: (note: string) => void;
  /** Which recorded session, when the logs hold more than one. */
  session?: string;
  match?: MatchMode;
  /** Play the recorded server's pauses this many times faster (default 1). */
  speed?: number;
  /** Answer at once instead of with the recorded server's pauses. */
  noDelay?: boolean;
  /** The client side; defaults to this process's stdin and stdout. */
  input?: Readable;
  output?: Writable;
  /** Where misses are reported; defaults to this process's stderr. */
  errorOutput?: Writable;
}

/** A running stdio replay. */
export interface StdioReplay {
  /** The recorded session being replayed. */
  readonly session: string;
  /** Resolves when the client has closed its side (stdin ended), with what happened. */
  readonly done: Promise<ReplayStats>;
}

/** Start replaying a recorded MCP session over a pair of streams. Throws McptapError for unusable logs. */
export async function startStdioReplay(options: StdioReplayOptions): Promise<StdioReplay> {
  const records = options.records ?? (await readAllRecords(options.logs ?? [], readOptions(options)));
  const script = buildScript(records, options.session);
  const input = options.input ?? process.stdin;
  const output = options.output ?? process.stdout;
  const errorOutput = options.errorOutput ?? process.stderr;
  const source = options.logs?.length ? options.logs.join(', ') : script.session;
  const engine = new McpReplayEngine(script, { ...(options.match ? { match: options.match } : {}), source });
  const framer = new LineFramer({ dir: 'c2s', maxFrameBytes: MAX_LINE });

  const speed = options.speed ?? 1;
  // Frames go out one after another, each after its recorded pause: a chain keeps their order across bursts.
  // The pauses matter to real clients: the SDK handles notifications a tick later than responses, so progress
  // written in the same chunk as its response is dropped by the client; the recorded server never did that.
  let queue: Promise<void> = Promise.resolve();
  const emit = (out: EngineOutput): void => {
    for (const note of out.notes) errorOutput.write(`mcptap: ${note}\n`);
    for (const frame of out.frames) {
      const wait = options.noDelay ? 0 : frame.delayMs / speed;
      queue = queue
        .then(() => (wait > 0 ? new Promise<void>((r) => setTimeout(r, wait)) : undefined))
        .then(() => {
          output.write(frame.partial ? frame.bytes : Buffer.concat([frame.bytes, Buffer.from(frame.crlf ? '\r\n' : '\n')]));
        });
    }
  };
  // A client that goes away must not crash the replay with EPIPE.
  output.on('error', () => {});

  emit(engine.start());
  const done = new Promise<ReplayStats>((resolve) => {
    input.on('data', (chunk: Buffer) => {
      for (const frame of framer.push(chunk, Date.now(), 0)) emit(engine.receive(frame.bytes.toString('utf8')));
    });
    input.on('end', () => {
      const tail = framer.end(Date.now(), 0);
      if (tail) emit(engine.receive(tail.bytes.toString('utf8')));
      void queue.then(() => resolve(engine.stats));
    });
    input.on('error', () => resolve(engine.stats));
  });
  return { session: script.session, done };
}

/** The reader's callbacks the caller gave. */
export function readOptions(options: { onProblem?: (problem: LogProblem) => void; onNote?: (note: string) => void }): ReadLogsOptions {
  return { ...(options.onProblem ? { onProblem: options.onProblem } : {}), ...(options.onNote ? { onNote: options.onNote } : {}) };
}
