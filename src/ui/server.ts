/**
 * `mcptap ui`: a local page that shows what the taps log, as it happens. Running taps write to the log folder as
 * always; this server follows the folder (tail.ts), sends every record to each open page over a WebSocket (the
 * past first, then new ones as they are written), and with them the linked trace — sessions, tool round trips,
 * findings and the sequence diagram drawn by the same renderer as `view --format html`.
 *
 * Loopback only by default, and every request — page, script and WebSocket — must carry a Host (and, when sent,
 * an Origin) that names this server (net-safety.ts `checkHostHeader`): otherwise a web page could reach it through
 * DNS rebinding and read the traffic. The page loads nothing from the network; its Content-Security-Policy allows
 * only this server's own script and WebSocket.
 */
import http from 'node:http';
import type { Duplex } from 'node:stream';
import { WebSocketServer, type WebSocket } from 'ws';
import type { LogRecord } from '../log/schema.js';
import { checkHostHeader, nonLoopbackWarning } from '../net-safety.js';
import { parseListenAddress } from '../addresses.js';
import { linkTrace } from '../trace/link.js';
import { buildTimeline } from '../trace/timeline.js';
import { DEFAULT_HTML_MAX_STEPS, renderSequenceSvg } from '../trace/html.js';
import { McptapError } from '../types.js';
import { MCPTAP_VERSION } from '../version.js';
import { LogTail } from './tail.js';
import { HeldRecords } from './held-records.js';
import { SkippedLines } from '../log/skipped-lines.js';
import { UI_SCRIPT, uiPage } from './page.js';

/** How often the log folder is looked at, in milliseconds. */
export const DEFAULT_UI_POLL_MS = 250;
/** Records kept in memory (and sent to a new page); the oldest go first. */
export const DEFAULT_UI_MAX_RECORDS = 100_000;
/** Bytes of log lines kept in memory (the records cost about half as much again as their lines). */
export const DEFAULT_UI_MAX_BYTES = 8 * 1024 * 1024;
/** Records per WebSocket message, so a large backfill arrives in steps the page can draw as they come. */
const BATCH = 2000;

export interface UiServerOptions {
  /** The log folder to follow. */
  logDir: string;
  /** Where to listen: a port, `HOST:PORT`, or `{host, port}`. Port 0 picks a free one. Default 127.0.0.1:0. */
  listen?: string | number | { host?: string; port: number };
  pollMs?: number;
  maxRecords?: number;
  /** Most bytes of log lines held (DEFAULT_UI_MAX_BYTES); past it, the oldest records are let go. */
  maxBytes?: number;
  /** Called with a sentence when something needs the user's attention (a non-loopback address). */
  warn?: (message: string) => void;
}

/** A running live view. */
export interface UiServer {
  /** The page's URL, e.g. http://127.0.0.1:7007/ */
  readonly url: string;
  readonly host: string;
  readonly port: number;
  readonly logDir: string;
  /** Records held (read so far, less those let go). */
  readonly records: number;
  /** Bytes of log lines let go, the oldest first, to stay within maxRecords and maxBytes (read or not). */
  readonly leftOutBytes: number;
  /** The bound of bytes held. */
  readonly maxBytes: number;
  close(): Promise<void>;
}

/** What the steps of the live view share. */
interface UiContext {
  options: UiServerOptions;
  host: string;
  /** Known once listening (port 0 picks one); requests only arrive after that. */
  port: number;
  held: HeldRecords;
  tail: LogTail;
  /** The pages connected. */
  clients: Set<WebSocket>;
}

/** Start the live view server. Resolves once it listens and the past records have been read. */
export async function startUiServer(options: UiServerOptions): Promise<UiServer> {
  const { host, port } = parseListenAddress(options.listen);
  const held = new HeldRecords(options.maxRecords ?? DEFAULT_UI_MAX_RECORDS, options.maxBytes ?? DEFAULT_UI_MAX_BYTES);
  const warn = options.warn ?? ((m: string) => process.stderr.write(`mcptap: ${m}\n`));
  const skipped = new SkippedLines(warn);
  // What is older than the bytes held would be let go anyway: the backfill reads each log's newest bytes only.
  const tail = new LogTail(options.logDir, { onProblem: skipped.add, lastBytes: held.maxBytes });
  const ui: UiContext = { options, host, port, held, tail, clients: new Set() };
  const server = http.createServer((req, res) => answerRequest(ui, req, res));
  const wss = new WebSocketServer({ noServer: true, maxPayload: 4096 });
  server.on('upgrade', (req: http.IncomingMessage, socket: Duplex, head: Buffer) => acceptPage(ui, wss, req, socket, head));
  // The backfill: every record already in the folder (the newest within the bounds), before a page can connect.
  do held.add(await tail.pollSized());
  while (tail.behind);
  skipped.finish();
  const timer = followLogs(ui, options.pollMs ?? DEFAULT_UI_POLL_MS);
  await listen(server, host, port).catch((error: unknown) => {
    clearInterval(timer);
    throw error;
  });
  const address = server.address();
  ui.port = typeof address === 'object' && address ? address.port : port;
  const warning = nonLoopbackWarning(host, ui.port);
  if (warning) warn(warning);
  return {
    url: `http://${host.includes(':') ? `[${host}]` : host}:${ui.port}/`,
    host,
    port: ui.port,
    logDir: options.logDir,
    get records() {
      return held.records.length;
    },
    get leftOutBytes() {
      return leftOutBytes(ui);
    },
    maxBytes: held.maxBytes,
    close: () => closeUi(ui, server, wss, timer),
  };
}

/** Bytes of log lines let go: those the backfill did not read, and those held once and let go since. */
function leftOutBytes(ui: UiContext): number {
  return ui.tail.skippedBytes + ui.held.leftOutBytes;
}

/** Every request must name this server (DNS rebinding: see the top of this file). */
function allowed(ui: UiContext, req: http.IncomingMessage): { ok: true } | { ok: false; reason: string } {
  return checkHostHeader({ host: req.headers.host, origin: req.headers.origin }, { port: ui.port, allowedHosts: [ui.host] });
}

const COMMON_HEADERS = {
  'cache-control': 'no-store',
  'x-content-type-options': 'nosniff',
  'referrer-policy': 'no-referrer',
  'cross-origin-resource-policy': 'same-origin',
};

/** The page, its script, or a plain refusal. */
function answerRequest(ui: UiContext, req: http.IncomingMessage, res: http.ServerResponse): void {
  const verdict = allowed(ui, req);
  if (!verdict.ok) {
    res.writeHead(403, { 'content-type': 'text/plain; charset=utf-8' }).end(`mcptap ui refused this request: ${verdict.reason}\n`);
    return;
  }
  const path = (req.url ?? '/').split('?')[0];
  if (req.method !== 'GET' && req.method !== 'HEAD') {
    res.writeHead(405, { allow: 'GET, HEAD' }).end();
    return;
  }
  if (path === '/' || path === '/index.html') {
    const self = `${ui.host.includes(':') ? `[${ui.host}]` : ui.host}:${ui.port}`;
    res.writeHead(200, {
      ...COMMON_HEADERS,
      'content-type': 'text/html; charset=utf-8',
      'content-security-policy': `default-src 'none'; script-src 'self'; style-src 'unsafe-inline'; img-src data:; connect-src ws://${self} ws://localhost:${ui.port}; base-uri 'none'; form-action 'none'; frame-ancestors 'none'`,
      'x-frame-options': 'DENY',
    });
    res.end(req.method === 'HEAD' ? undefined : uiPage({ logDir: ui.options.logDir, version: MCPTAP_VERSION }));
  } else if (path === '/ui.js') {
    res.writeHead(200, { ...COMMON_HEADERS, 'content-type': 'text/javascript; charset=utf-8' });
    res.end(req.method === 'HEAD' ? undefined : UI_SCRIPT);
  } else {
    res.writeHead(404, { ...COMMON_HEADERS, 'content-type': 'text/plain; charset=utf-8' }).end('Not here: the live view is at /\n');
  }
}

/** A page connects at /ws: it gets every record held, then the trace, then new records as they come. */
function acceptPage(ui: UiContext, wss: WebSocketServer, req: http.IncomingMessage, socket: Duplex, head: Buffer): void {
  const verdict = allowed(ui, req);
  const path = (req.url ?? '/').split('?')[0];
  if (!verdict.ok || path !== '/ws') {
    const status = verdict.ok ? '404 Not Found' : '403 Forbidden';
    socket.end(`HTTP/1.1 ${status}\r\nContent-Type: text/plain\r\nConnection: close\r\n\r\n${verdict.ok ? 'no WebSocket here' : verdict.reason}\n`);
    return;
  }
  wss.handleUpgrade(req, socket, head, (ws) => {
    ui.clients.add(ws);
    ws.on('close', () => ui.clients.delete(ws));
    ws.on('error', () => ui.clients.delete(ws));
    // The page sends nothing; anything it does send is ignored.
    const records = ui.held.records;
    send(ws, { type: 'hello', logDir: ui.options.logDir, version: MCPTAP_VERSION, records: records.length, leftOutMb: megabytes(leftOutBytes(ui)), maxMb: megabytes(ui.held.maxBytes) });
    for (let i = 0; i < records.length; i += BATCH) send(ws, { type: 'records', backfill: true, records: records.slice(i, i + BATCH) });
    send(ws, { type: 'backfill-done' });
    if (records.length > 0) send(ws, traceMessage(records));
  });
}

function send(ws: WebSocket, message: unknown): void {
  if (ws.readyState === ws.OPEN) ws.send(JSON.stringify(message));
}

function broadcast(clients: Set<WebSocket>, message: unknown): void {
  if (clients.size === 0) return;
  const text = JSON.stringify(message);
  for (const ws of clients) if (ws.readyState === ws.OPEN) ws.send(text);
}

/** The linked trace of `records` as the page draws it, or why it could not be linked. */
function traceMessage(records: LogRecord[]): Record<string, unknown> {
  try {
    const trace = linkTrace(records);
    const timeline = buildTimeline(records, trace);
    // The newest arrows, as many as the html view draws: a diagram of every arrow of a long log is megabytes.
    const steps = timeline.steps.slice(-DEFAULT_HTML_MAX_STEPS);
    return {
      type: 'trace',
      sessions: trace.sessions,
      roundTrips: trace.roundTrips,
      diagnostics: trace.diagnostics,
      svg: renderSequenceSvg({ ...timeline, steps }),
      drawnSteps: steps.length,
      earlierSteps: timeline.steps.length - steps.length,
    };
  } catch (error) {
    return { type: 'trace', error: `the trace could not be linked: ${(error as Error).message}` };
  }
}

/** Look at the folder every `pollMs`: new records go to every page at once, the trace at most once a second. */
function followLogs(ui: UiContext, pollMs: number): NodeJS.Timeout {
  let polling = false;
  let traceDue = false;
  let lastTrace = 0;
  const tick = async (): Promise<void> => {
    if (polling) return;
    polling = true;
    try {
      const look = await ui.tail.pollSized();
      ui.held.add(look);
      const fresh = look.records;
      if (fresh.length > 0) {
        for (let i = 0; i < fresh.length; i += BATCH) broadcast(ui.clients, { type: 'records', backfill: false, records: fresh.slice(i, i + BATCH) });
        traceDue = true;
      }
      // Linking is over all records: at most once a second, so a busy agent does not keep the CPU on it.
      if (traceDue && ui.clients.size > 0 && Date.now() - lastTrace >= 1000) {
        traceDue = false;
        lastTrace = Date.now();
        broadcast(ui.clients, traceMessage(ui.held.records));
      }
    } finally {
      polling = false;
    }
  };
  return setInterval(() => void tick(), pollMs);
}

/** Listen, or reject with a sentence that says what to do. */
function listen(server: http.Server, host: string, port: number): Promise<void> {
  return new Promise<void>((resolve, reject) => {
    server.once('error', (error: NodeJS.ErrnoException) => {
      const hint = error.code === 'EADDRINUSE' ? `${host}:${port} is already in use; pick another --listen (or 0 for any free port).` : `cannot listen on ${host}:${port}: ${error.message}`;
      reject(new McptapError('LISTEN_FAILED', hint, { cause: error }));
    });
    server.listen(port, host, () => resolve());
  });
}

async function closeUi(ui: UiContext, server: http.Server, wss: WebSocketServer, timer: NodeJS.Timeout): Promise<void> {
  clearInterval(timer);
  for (const ws of ui.clients) ws.terminate();
  wss.close();
  await new Promise<void>((resolve) => {
    server.close(() => resolve());
    server.closeAllConnections?.();
  });
}

/** Bytes as whole megabytes, at least 1 when there are any (a note that says 0 MB were left out would be false). */
export function megabytes(bytes: number): number {
  return bytes > 0 ? Math.max(1, Math.round(bytes / 1024 / 1024)) : 0;
}
