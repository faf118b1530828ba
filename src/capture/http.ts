/**
 * The HTTP tap: a reverse proxy in front of an MCP server, Ollama or an OpenAI-compatible API. Every byte is
 * forwarded as it arrives (http-relay.ts; http-proxy for WebSocket upgrades, ws.ts), and a copy of each chunk,
 * once written on, goes over the channel to the inspector; compressed bodies reach the client compressed.
 * An unreachable upstream gets a 502 that says why, a client that gives up aborts the upstream request, an
 * upstream that breaks off mid-stream ends the client's connection, and each gets a record.
 */
import http from 'node:http';
import type { Duplex } from 'node:stream';
import { performance } from 'node:perf_hooks';
import httpProxy from 'http-proxy';
import { HTTP_MAX_BACKLOG_BYTES, HTTP_MAX_EXCHANGE_BACKLOG_BYTES, HttpCalls, now, type HttpInspectorConfig } from './http-calls.js';
import { openTapChannel, tapLogConfig, type TapOptions } from './tap.js';
import { tapWebSocket } from './ws.js';
import { MAX_HEADER_BYTES, relayRequest } from './http-relay.js';
import { MCPTAP_VERSION } from '../version.js';
import { McptapError } from '../types.js';
import { LEVEL } from '../log/schema.js';
import { redactPathQuery } from '../log/redact.js';
import { parseListenAddress, parseTarget } from '../addresses.js';
import { checkHostHeader, isLoopbackHost, nonLoopbackWarning } from '../net-safety.js';

/** Default cap on how much of one body or frame the log keeps (the traffic itself is never cut). */
export const DEFAULT_HTTP_MAX_BODY = 1024 * 1024;

/** The label defaults to the target's host name (and port). */
export interface HttpTapOptions extends TapOptions {
  /** Upstream base URL, e.g. http://127.0.0.1:11435 or https://api.openai.com/v1. */
  target: string;
  /** Where to listen: a port, `HOST:PORT`, or `{host, port}`. Port 0 picks a free one. Default 127.0.0.1:0. */
  listen?: string | number | { host?: string; port: number };
  /** Write an `llm-chunk` record per streamed chunk (default true). */
  chunks?: boolean;
  /** Where mcptap's own notices go (a log that cannot be written); defaults to stderr. */
  warn?: (message: string) => void;
  /**
   * Apply mcptap's own DNS-rebinding rule to proxied requests too (--strict-host): refuse with 403 any request
   * whose Host, or Origin when sent, does not name this proxy. Off by default: the proxy is transparent, so the
   * upstream's own Host and Origin checks see what the client sent.
   */
  strictHost?: boolean;
}

/** A running HTTP tap. */
export interface HttpTap {
  /** The proxy's base URL, e.g. http://127.0.0.1:11434. */
  readonly url: string;
  readonly host: string;
  readonly port: number;
  readonly target: string;
  /** Path of the log file being written. */
  readonly logFile: string;
  /** Session of records that belong to no MCP session. */
  readonly session: string;
  /** Stop listening, end open connections, write the close record and flush the log. */
  close(): Promise<void>;
}

/** An ended message's trailers, when it had any (most have none). */
function trailersOf(message: http.IncomingMessage): Record<string, string> | undefined {
  return message.rawTrailers.length > 0 ? { ...message.trailers } as Record<string, string> : undefined;
}

/** Errors that mean the upstream could not be connected to at all (as opposed to a connection lost later). */
const CONNECT_ERRORS = new Set(['ECONNREFUSED', 'ENOTFOUND', 'EAI_AGAIN', 'EHOSTUNREACH', 'ENETUNREACH', 'ETIMEDOUT', 'EADDRNOTAVAIL', 'CERT_HAS_EXPIRED', 'DEPTH_ZERO_SELF_SIGNED_CERT', 'UNABLE_TO_VERIFY_LEAF_SIGNATURE', 'ERR_TLS_CERT_ALTNAME_INVALID', 'SELF_SIGNED_CERT_IN_CHAIN']);

function isConnectError(error: NodeJS.ErrnoException): boolean {
  return error.code !== undefined && CONNECT_ERRORS.has(error.code);
}

interface Tracked {
  /** The exchange's number in the inspection calls. */
  x: number;
  proxyReq?: http.ClientRequest;
  settled: boolean;
}

/** What the steps of an HTTP tap share. */
interface HttpTapContext {
  options: HttpTapOptions;
  /** The upstream base URL, without a trailing slash. */
  target: string;
  relayTarget: { url: URL; agent: http.Agent; changeOrigin: boolean };
  proxy: httpProxy;
  host: string;
  /** Known once listening (port 0 picks one); requests only arrive after that. */
  port: number;
  inspection: HttpCalls;
}

// Each chunk goes to the inspection after the forwarding `pipe` has written it on: the `data` listeners are
// registered after the relay's, and the calls are posted (or, inline, carried out) in a later turn.

/** Start the proxy. Resolves once it listens. */
export async function startHttpTap(options: HttpTapOptions): Promise<HttpTap> {
  const targetUrl = parseTarget(options.target);
  const { host, port } = parseListenAddress(options.listen);
  const warn = options.warn ?? ((m: string) => process.stderr.write(`mcptap: ${m}\n`));
  const log = startHttpLog(options, targetUrl, warn);
  const tap = await relayContext(options, targetUrl, host, port, log.inspection);
  const { server, sockets } = proxyServer(tap);
  await listen(server, host, port).catch(async (error: unknown) => {
    tap.relayTarget.agent.destroy();
    const [at, atMono] = now();
    await tap.inspection.close({ time: at, kind: 'lifecycle', event: 'warning', level: LEVEL.error, msg: `mcptap could not listen: ${(error as Error).message}` }, at, atMono);
    throw error;
  });
  server.on('error', (error) => warn(`the proxy's listening socket failed: ${error.message}`));
  const url = recordListening(tap, server, log.started, warn);
  let closing: Promise<void> | undefined;
  const close = (): Promise<void> => (closing ??= closeTap(tap, server, sockets, url, log.startMono));
  return { url, host, port: tap.port, target: tap.target, logFile: log.logFile, session: log.session, close };
}

/** The log's name and session, and the inspection that writes it. */
function startHttpLog(options: HttpTapOptions, targetUrl: URL, warn: (message: string) => void): { logFile: string; session: string; started: Date; startMono: number; inspection: HttpCalls } {
  const label = options.label ?? (targetUrl.port ? `${targetUrl.hostname}-${targetUrl.port}` : targetUrl.hostname);
  const started = new Date();
  const startMono = performance.now();
  const config: HttpInspectorConfig = {
    ...tapLogConfig(options, label, started),
    maxBody: options.maxBody ?? DEFAULT_HTTP_MAX_BODY,
    chunks: options.chunks ?? true,
    targetPath: targetUrl.pathname === '/' ? '' : targetUrl.pathname,
  };
  const { channel } = openTapChannel('http-inspector', config, options, warn, { maxBacklogBytes: HTTP_MAX_BACKLOG_BYTES, maxSubjectBacklogBytes: HTTP_MAX_EXCHANGE_BACKLOG_BYTES });
  return { logFile: config.logFile, session: config.session, started, startMono, inspection: new HttpCalls(channel) };
}

/** How requests reach the upstream: our relay for plain requests, http-proxy for WebSocket upgrades. */
async function relayContext(options: HttpTapOptions, targetUrl: URL, host: string, port: number, inspection: HttpCalls): Promise<HttpTapContext> {
  const target = targetUrl.toString().replace(/\/$/, '');
  // Keep-alive to the upstream: a fresh TCP connection per request would add latency to every model call.
  const agent = targetUrl.protocol === 'https:' ? new (await import('node:https')).Agent({ keepAlive: true }) : new http.Agent({ keepAlive: true });
  // Transparent for a server on this machine: Host (and Origin) reach it as the client sent them, so its own
  // DNS-rebinding check still judges the real client (rewriting Host would launder a rebinding page's
  // requests into local-looking ones). A remote API behind a virtual host (api.openai.com) needs its own name.
  const changeOrigin = !isLoopbackHost(targetUrl.hostname);
  const proxy = httpProxy.createProxyServer({ target, changeOrigin, agent, ws: true });
  // Its errors go to the callback each upgrade gives it (ws.ts); a client gone early aborts the upstream request.
  proxy.on('econnreset', () => {});
  return { options, target, relayTarget: { url: targetUrl, agent, changeOrigin }, proxy, host, port, inspection };
}

/** The listening server, and its open sockets (closeTap ends them). */
function proxyServer(tap: HttpTapContext): { server: http.Server; sockets: Set<Duplex> } {
  const server = http.createServer({ maxHeaderSize: MAX_HEADER_BYTES }, (req, res) => relayExchange(tap, req, res));
  server.on('upgrade', (req: http.IncomingMessage, socket: Duplex, head: Buffer) => relayUpgrade(tap, req, socket, head));
  server.on('clientError', (error: NodeJS.ErrnoException, socket: Duplex) => answerClientError(tap, error, socket));
  const sockets = new Set<Duplex>();
  server.on('connection', (socket) => {
    sockets.add(socket);
    socket.on('close', () => sockets.delete(socket));
  });
  return { server, sockets };
}

/** Listening: the port it got, a warning when others can reach it, and the log's `listen` record. */
function recordListening(tap: HttpTapContext, server: http.Server, started: Date, warn: (message: string) => void): string {
  const address = server.address();
  tap.port = typeof address === 'object' && address ? address.port : tap.port;
  const exposed = nonLoopbackWarning(tap.host, tap.port);
  if (exposed) warn(exposed);
  const url = `http://${tap.host.includes(':') ? `[${tap.host}]` : tap.host}:${tap.port}`;
  tap.inspection.record({
    time: started.getTime(),
    kind: 'lifecycle',
    event: 'listen',
    msg: `mcptap ${MCPTAP_VERSION} listens on ${url} and forwards to ${tap.target}.`,
    mcptapVersion: MCPTAP_VERSION,
    pid: process.pid,
    target: tap.target,
    listen: url,
    cwd: tap.options.cwd ?? process.cwd(),
  });
  return url;
}

/** One request: refused (--strict-host), or relayed with its copy handed to the inspection. */
function relayExchange(tap: HttpTapContext, req: http.IncomingMessage, res: http.ServerResponse): void {
  const { inspection } = tap;
  const refused = refusal(tap, req);
  if (refused !== undefined) {
    const body = JSON.stringify({ error: `mcptap refused this request: ${refused}` });
    res.writeHead(403, { 'content-type': 'application/json', 'content-length': Buffer.byteLength(body) });
    res.end(body);
    return;
  }
  const x = inspection.begin({ method: req.method ?? 'GET', path: req.url ?? '/', headers: req.headers }, ...now());
  const t: Tracked = { x, settled: false };
  relayRequest(req, res, tap.relayTarget, {
    request: (proxyReq) => (t.proxyReq = proxyReq),
    response: (proxyRes) => copyResponse(tap, proxyRes, t, res),
    error: (error) => answerProxyError(tap, error, t, res),
  });
  // Registered after the relay's pipe, so each chunk is written upstream before the tap sees it.
  req.on('data', (chunk: Buffer) => inspection.requestData(x, chunk, Date.now(), performance.now()));
  req.on('end', () => inspection.requestEnd(x, ...now(), trailersOf(req)));
  res.on('close', () => {
    if (res.writableFinished || t.settled) return;
    // The client went away first: stop the upstream work it asked for (an LLM generating, an SSE stream).
    t.settled = true;
    const [at, atMono] = now();
    t.proxyReq?.destroy();
    inspection.fail(x, 'client-aborted', { name: 'Error', code: 'ECONNRESET', message: 'the client closed the connection before the response ended' }, at, atMono);
  });
}

/** The upstream's answer: its head, chunks and end go to the inspection as the relay forwards them. */
function copyResponse(tap: HttpTapContext, proxyRes: http.IncomingMessage, t: Tracked, res: http.ServerResponse): void {
  const { inspection } = tap;
  const { x } = t;
  inspection.responseHead(x, proxyRes.statusCode ?? 0, proxyRes.headers, ...now());
  proxyRes.on('data', (chunk: Buffer) => inspection.responseData(x, chunk, Date.now(), performance.now()));
  proxyRes.on('end', () => {
    if (t.settled) return;
    t.settled = true;
    inspection.responseEnd(x, ...now(), trailersOf(proxyRes));
  });
  // An IncomingMessage with no 'error' listener would crash the process when the upstream resets.
  proxyRes.on('error', () => {});
  proxyRes.on('close', () => {
    if (proxyRes.complete || t.settled) return;
    // The upstream broke off mid-body: end the client's connection too, rather than leave it waiting.
    t.settled = true;
    inspection.fail(x, 'upstream-reset', { name: 'Error', code: 'ECONNRESET', message: 'the upstream closed the connection before the response ended' }, ...now());
    res.destroy();
  });
}

/** The upstream could not be reached or broke off: the exchange's record says so, the client gets a 502. */
function answerProxyError(tap: HttpTapContext, error: NodeJS.ErrnoException, t: Tracked, res: http.ServerResponse): void {
  if (!t.settled) {
    t.settled = true;
    // Could not connect at all, or connected and then lost the connection.
    const outcome = res.headersSent || !isConnectError(error) ? 'upstream-reset' : 'upstream-unreachable';
    const err = { name: error.name, message: error.message, ...(error.code ? { code: error.code } : {}) };
    tap.inspection.fail(t.x, outcome, err, ...now());
  }
  if (res.headersSent) {
    res.destroy();
    return;
  }
  const target = tap.target;
  const body = JSON.stringify({
    error: isConnectError(error)
      ? `mcptap could not reach the upstream ${target}: ${error.code ?? error.message}. Is the server running, and is --target right?`
      : error.code === 'HPE_HEADER_OVERFLOW'
        ? `the upstream ${target} answered with response headers larger than mcptap relays (${MAX_HEADER_BYTES / 1024} KiB in all).`
        : `the upstream ${target} closed the connection before answering (${error.code ?? error.message}).`,
    target,
    cause: { code: error.code, message: error.message },
  });
  res.writeHead(502, { 'content-type': 'application/json', 'content-length': Buffer.byteLength(body) });
  res.end(body);
}

/** With --strict-host, the reason to refuse this request (and a record saying so), else undefined. */
function refusal(tap: HttpTapContext, req: http.IncomingMessage): string | undefined {
  if (!tap.options.strictHost) return undefined;
  const verdict = checkHostHeader(req.headers, { port: tap.port, allowedHosts: [tap.host] });
  if (verdict.ok) return undefined;
  tap.inspection.record({ time: Date.now(), kind: 'lifecycle', event: 'warning', level: LEVEL.warn, msg: `Refused ${req.method ?? 'GET'} ${redactPathQuery(req.url ?? '/')} (--strict-host): ${verdict.reason}` });
  return verdict.reason;
}

/** A WebSocket upgrade: relayed by http-proxy, its messages tapped (ws.ts). */
function relayUpgrade(tap: HttpTapContext, req: http.IncomingMessage, socket: Duplex, head: Buffer): void {
  if (refusal(tap, req) !== undefined) {
    socket.end('HTTP/1.1 403 Forbidden\r\nConnection: close\r\nContent-Length: 0\r\n\r\n');
    return;
  }
  const x = tap.inspection.begin({ method: req.method ?? 'GET', path: req.url ?? '/', headers: req.headers }, ...now());
  socket.on('error', () => {});
  tapWebSocket({ proxy: tap.proxy, req, socket, head, x, inspection: tap.inspection, tracked: { settled: false } });
}

/**
 * A malformed request from a client: answer it as Node would, without crashing the proxy. A head too big to
 * relay is said plainly, to the client and in the log (no exchange began: there is no request to log).
 */
function answerClientError(tap: HttpTapContext, error: NodeJS.ErrnoException, socket: Duplex): void {
  if (error.code === 'HPE_HEADER_OVERFLOW') {
    const sentence = `mcptap refused a request whose headers are larger than it relays (${MAX_HEADER_BYTES / 1024} KiB in all); the upstream never saw it.`;
    tap.inspection.record({ time: Date.now(), kind: 'lifecycle', event: 'warning', level: LEVEL.warn, msg: `Refused a request with HTTP 431: ${sentence}` });
    const body = JSON.stringify({ error: sentence });
    if (socket.writable) socket.end(`HTTP/1.1 431 Request Header Fields Too Large\r\nConnection: close\r\nContent-Type: application/json\r\nContent-Length: ${Buffer.byteLength(body)}\r\n\r\n${body}`);
    else socket.destroy();
    return;
  }
  if (socket.writable) socket.end('HTTP/1.1 400 Bad Request\r\nConnection: close\r\n\r\n');
  else socket.destroy();
}

/** Listen, or reject with a sentence that says what to do. */
function listen(server: http.Server, host: string, port: number): Promise<void> {
  return new Promise<void>((resolve, reject) => {
    server.once('error', (error: NodeJS.ErrnoException) => {
      const hint =
        error.code === 'EADDRINUSE'
          ? `${host}:${port} is already in use. Stop what listens there (for Ollama: start it on another port with OLLAMA_HOST=127.0.0.1:11435 ollama serve) or pick another --listen.`
          : error.code === 'EACCES'
            ? `no permission to listen on ${host}:${port}. Ports below 1024 need privileges; pick a higher one.`
            : `cannot listen on ${host}:${port}: ${error.message}`;
      reject(new McptapError('LISTEN_FAILED', hint, { cause: error }));
    });
    server.listen(port, host, () => resolve());
  });
}

/** Stop listening, end open connections, then let the inspector write the close record and flush the log. */
async function closeTap(tap: HttpTapContext, server: http.Server, sockets: Set<Duplex>, url: string, startMono: number): Promise<void> {
  const closed = new Promise<void>((resolve) => server.close(() => resolve()));
  // Open streams (SSE, keep-alive) would hold close() forever: end them, and wait until each socket has
  // closed, so the exchanges they carried have recorded how they ended.
  await Promise.all(
    [...sockets].map(
      (socket) =>
        new Promise<void>((resolve) => {
          socket.once('close', () => resolve());
          socket.destroy();
        }),
    ),
  );
  await closed;
  tap.relayTarget.agent.destroy();
  tap.proxy.close();
  // The inspector lets the decoders of the last chunks finish, ends the sessions, then writes this record.
  const [at, atMono] = now();
  const durationMs = Math.round(atMono - startMono);
  await tap.inspection.close({ time: at, kind: 'lifecycle', event: 'close', durationMs, msg: `mcptap stops listening on ${url} after ${durationMs} ms.` }, at, atMono);
}
