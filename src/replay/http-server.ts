/**
 * The HTTP replay: an HTTP server that answers live requests with recorded exchanges — MCP Streamable HTTP (with
 * its session header and SSE streams), Ollama NDJSON, OpenAI SSE, plain JSON — streaming each recorded body in
 * its recorded chunks with the recorded spacing (`speed`, `noDelay`).
 *
 * The I/O edge only: matching, chunk plans and id rewriting live in http-script.ts. Binds 127.0.0.1 unless told.
 */
import { createServer, type Server, type ServerResponse } from 'node:http';
import type { AddressInfo } from 'node:net';
import { readLogs, type LogProblem } from '../log/reader.js';
import { readOptions } from './stdio-server.js';
import type { LogRecord } from '../log/schema.js';
import { McptapError } from '../types.js';
import {
  buildHttpExchanges,
  HttpMatcher,
  jsonRpcRequestOf,
  planExchange,
  replayHeaders,
  IdTable,
  type RecordedExchange,
  type RecordInFile,
} from './http-script.js';

/** What to serve and how: the capture, where to listen, the pace. */
export interface HttpReplayOptions {
  /** Log files or folders holding the capture. */
  logs?: readonly string[];
  /** Already-read records, instead of `logs`. */
  records?: readonly LogRecord[];
  /** Where to listen; host defaults to 127.0.0.1, port 0 picks a free one. */
  listen?: { host?: string; port: number };
  /** Play recorded spacing this many times faster (default 1). */
  speed?: number;
  /** Send each recorded body at once. */
  noDelay?: boolean;
  /** JSON fields left out when matching request bodies. */
  ignore?: readonly string[];
  /** Misses and warnings, as plain sentences (the CLI prints them on stderr). */
  onNote?: (note: string) => void;
  /** Lines of `logs` that are not records. */
  onProblem?: (problem: LogProblem) => void;
}

/** A running HTTP replay. */
export interface HttpReplay {
  /** Base URL, e.g. http://127.0.0.1:41234 */
  readonly url: string;
  readonly port: number;
  /** Number of recorded exchanges that can be served. */
  readonly exchanges: number;
  /** Requests that found no recorded exchange so far. */
  readonly misses: string[];
  close(): Promise<void>;
}

/** Parse `[HOST:]PORT` (`8080`, `0.0.0.0:8080`, `[::1]:8080`). */
export function parseListen(text: string): { host: string; port: number } {
  const m = /^(?:\[([^\]]+)\]:|([^:]+):)?(\d+)$/.exec(text.trim());
  const port = m ? Number(m[3]) : NaN;
  if (!m || !Number.isInteger(port) || port > 65535) {
    throw new McptapError('BAD_LISTEN', `--listen takes [HOST:]PORT, for example 11434 or 127.0.0.1:8080, not "${text}".`);
  }
  return { host: m[1] ?? m[2] ?? '127.0.0.1', port };
}

/** Start serving recorded HTTP exchanges. Throws McptapError when the logs hold none. */
export async function startHttpReplay(options: HttpReplayOptions): Promise<HttpReplay> {
  const note = options.onNote ?? (() => {});
  const matcher = new HttpMatcher(await recordedExchanges(options, note), options.ignore ?? []);
  const playback = new Playback(options);
  const misses: string[] = [];
  const server = createServer((req, res) => {
    const pieces: Buffer[] = [];
    req.on('data', (chunk: Buffer) => pieces.push(chunk));
    req.on('end', () => {
      const body = pieces.length ? Buffer.concat(pieces).toString('utf8') : undefined;
      const live = { method: req.method ?? 'GET', path: req.url ?? '/', ...(body !== undefined ? { body } : {}) };
      const picked = matcher.pick(live);
      if ('miss' in picked) {
        misses.push(picked.message);
        note(`replay miss: ${picked.message}`);
        sendMiss(res, live.path, body, picked.message);
        return;
      }
      playback.reached(picked, jsonRpcRequestOf(body));
      playback.serve(res, picked);
    });
  });
  const address = await listen(server, options.listen);
  const host = address.family === 'IPv6' ? `[${address.address}]` : address.address;
  return {
    url: `http://${host}:${address.port}`,
    port: address.port,
    exchanges: matcher.size,
    misses,
    close: async () => {
      playback.stop();
      server.closeAllConnections();
      await new Promise<void>((resolve) => server.close(() => resolve()));
    },
  };
}

/** The capture's exchanges, with a note for what is not replayed as recorded; throws when there are none. */
async function recordedExchanges(options: HttpReplayOptions, note: (note: string) => void): Promise<RecordedExchange[]> {
  const sourced: RecordInFile[] = [];
  if (options.records) for (const record of options.records) sourced.push({ record });
  else for await (const { record, file } of readLogs(options.logs ?? [], readOptions(options))) sourced.push({ record, file });
  const exchanges = buildHttpExchanges(sourced);
  if (exchanges.length === 0) {
    throw new McptapError('NO_HTTP_EXCHANGES', 'the logs hold no complete HTTP exchanges to serve. Give a log written by `mcptap http` (for a stdio capture, leave out --listen).');
  }
  const upgrades = sourced.filter(({ record }) => record.kind === 'http-end' && record.outcome === 'upgraded').length;
  if (upgrades) note(`${upgrades} recorded WebSocket upgrade${upgrades === 1 ? ' is' : 's are'} not replayed (only HTTP exchanges are); a client asking for one gets a 404.`);
  const truncated = exchanges.filter((e) => e.bodyTruncated).length;
  if (truncated) note(`${truncated} recorded response bodies were cut at --max-body when recorded; they are served as far as they were kept.`);
  return exchanges;
}

/** Listen, or reject with a sentence that says what to do. */
function listen(server: Server, listen: HttpReplayOptions['listen']): Promise<AddressInfo> {
  const port = listen?.port ?? 0;
  const host = listen?.host ?? '127.0.0.1';
  return new Promise((resolve, reject) => {
    server.once('error', (error: NodeJS.ErrnoException) => {
      const hint = error.code === 'EADDRINUSE' ? `port ${port} is already in use; choose another with --listen, or 0 for a free one.` : `cannot listen on ${host}:${port} (${error.code ?? error.message}).`;
      reject(new McptapError('LISTEN_FAILED', hint));
    });
    server.listen(port, host, () => resolve(server.address() as AddressInfo));
  });
}

/**
 * Plays recorded responses back: each piece at its recorded time, and a piece that in the recording waited for
 * a later request (its gate) only once a live request has reached that exchange. Ids are rewritten to the live ones.
 */
class Playback {
  private readonly timers = new Set<NodeJS.Timeout>();
  private readonly ids = new IdTable();
  /** Which recorded exchanges a live request has reached, and the stream pieces waiting for one. */
  private readonly reachedSet = new Set<number>();
  private readonly waiting = new Map<number, (() => void)[]>();

  constructor(private readonly options: HttpReplayOptions) {}

  /** A live request picked `exchange`: its ids become the recorded ones' stand-ins, and pieces waiting for it go. */
  reached(exchange: RecordedExchange, rpc: ReturnType<typeof jsonRpcRequestOf>): void {
    if (rpc) this.ids.set(exchange.mcpSession ?? '', { id: exchange.rpcId, token: exchange.progressToken }, { id: rpc.id, token: rpc.progressToken });
    this.reachedSet.add(exchange.index);
    for (const wake of this.waiting.get(exchange.index) ?? []) wake();
    this.waiting.delete(exchange.index);
  }

  serve(res: ServerResponse, exchange: RecordedExchange): void {
    if (exchange.status === undefined) {
      // The upstream never answered when this was recorded (unreachable or reset before headers): say so.
      sendJson(res, 502, { error: `mcptap replay: when recorded, ${exchange.method} ${exchange.path} got no response from upstream (${exchange.outcome}).` });
      return;
    }
    // 'close' on the response (not the socket, which keep-alive shares between requests): finished or hung up.
    let closed = false;
    res.on('close', () => {
      closed = true;
    });
    void this.play(res, exchange, () => closed);
  }

  stop(): void {
    for (const timer of this.timers) clearTimeout(timer);
    this.timers.clear();
  }

  private async play(res: ServerResponse, exchange: RecordedExchange, closed: () => boolean): Promise<void> {
    const sse = String(exchange.headers['content-type'] ?? '').includes('text/event-stream');
    const plan = planExchange(exchange, this.options);
    await this.sleep(this.options.noDelay ? 0 : exchange.ttfbMs / (this.options.speed ?? 1));
    if (closed()) return;
    res.writeHead(exchange.status!, replayHeaders(exchange.headers));
    res.flushHeaders();
    const start = Date.now();
    // One piece after another: each at its recorded time after the headers, and after the live request it
    // waited for in the recording (its gate), whichever comes later.
    for (const piece of plan) {
      const wait = start + piece.atMs - Date.now();
      if (wait > 0) await this.sleep(wait);
      if (piece.gate !== undefined) await this.gate(piece.gate);
      if (closed()) return;
      res.write(this.ids.rewrite(piece.bytes, exchange.mcpSession ?? '', sse));
    }
    // A model's stream that delivered its terminator is complete, however its connection ended when recorded.
    if (exchange.replyComplete) res.end();
    else if (exchange.outcome === 'upstream-reset') res.destroy();
    // A stream the client itself hung up on (a standalone SSE GET) stays open until this client does.
    else if (exchange.outcome !== 'client-aborted') res.end();
  }

  private gate(index: number): Promise<void> {
    if (this.reachedSet.has(index)) return Promise.resolve();
    return new Promise((resolve) => this.waiting.set(index, [...(this.waiting.get(index) ?? []), resolve]));
  }

  private sleep(ms: number): Promise<void> {
    if (ms <= 0) return Promise.resolve();
    return new Promise((resolve) => {
      const timer = setTimeout(() => {
        this.timers.delete(timer);
        resolve();
      }, ms);
      this.timers.add(timer);
    });
  }
}

/** A request not in the capture: 404 with a JSON body each kind of client shows to its user. */
function sendMiss(res: ServerResponse, path: string, body: string | undefined, message: string): void {
  const text = `mcptap replay: ${message}`;
  const rpc = jsonRpcRequestOf(body);
  if (rpc) {
    sendJson(res, 404, { jsonrpc: '2.0', id: rpc.id, error: { code: -32601, message: text } });
  } else if (path.startsWith('/v1/')) {
    // OpenAI clients read error.message.
    sendJson(res, 404, { error: { message: text, type: 'mcptap_replay_miss', code: 'not_in_capture' } });
  } else {
    // Ollama's client (and most others) read a string `error`.
    sendJson(res, 404, { error: text });
  }
}

function sendJson(res: ServerResponse, status: number, value: unknown): void {
  const text = JSON.stringify(value);
  res.writeHead(status, { 'content-type': 'application/json', 'content-length': Buffer.byteLength(text) });
  res.end(text);
}
