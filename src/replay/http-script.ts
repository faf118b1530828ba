/**
 * Recorded HTTP exchanges, ready to be served again. Pure: records in, exchanges out; a live request in, the
 * recorded exchange that answers it out; a body and its recorded chunk boundaries in, a timed plan out.
 *
 * An exchange is assembled from its three records (schema.ts): `http-request` (method, path, body),
 * `http-response` (status, headers, time to first byte) and `http-end` (the response body and its chunk spacing).
 */
import type { HttpEndRecord, HttpOutcome, HttpRequestRecord, HttpResponseRecord, LoggedHeaders, LogRecord } from '../log/schema.js';
import type { JsonRpcId } from '../types.js';
import { canonicalBody } from './match.js';
import { redactPathQuery } from '../log/redact.js';

/** One recorded HTTP exchange. */
export interface RecordedExchange {
  /** Where it came from (`file#exchange`), for messages. */
  ref: string;
  method: string;
  path: string;
  requestBody?: string;
  status?: number;
  headers: LoggedHeaders;
  ttfbMs: number;
  body: Buffer;
  bodyTruncated: boolean;
  chunks?: [number, number][];
  outcome: HttpOutcome;
  /** An LLM stream that delivered its terminator before the connection ended: served whole and ended, whatever the outcome. */
  replyComplete?: boolean;
  /** For a JSON-RPC request body: its id and method (ids are rewritten to the live ones on the way out). */
  rpcId?: JsonRpcId;
  rpcMethod?: string;
  /** `params._meta.progressToken` of a JSON-RPC request body. */
  progressToken?: unknown;
  /** Position in the list buildHttpExchanges returns. */
  index: number;
  /** The MCP session whose frames this exchange carried (ids are rewritten per session). */
  mcpSession?: string;
  /**
   * For an MCP event stream: its events, each with its recorded time after the headers and, when the recorded
   * server sent it only after the client's next message (its answer to a sampling request, a POST on the legacy
   * SSE transport), the exchange that carried that message. The replay holds the event until that exchange's
   * live request has arrived: the same rule as the stdio replay, so streams keep their place in the conversation
   * whatever the pace.
   */
  events?: TimedPiece[];
}

/** Records with the file they came from (files scope exchange ids). */
export interface RecordInFile {
  record: LogRecord;
  file?: string;
}

/** What the records say of each exchange (by file and exchange id), before the exchanges are built. */
interface GatheredExchanges {
  parts: Map<string, { req?: HttpRequestRecord; res?: HttpResponseRecord; end?: HttpEndRecord; order: number }>;
  /** What each exchange's stream carried (server frames and SSE events, in order). */
  streamed: Map<string, LogRecord[]>;
  /** The client's frames, per file in seq order, for a binary search per event. */
  clientFrames: Map<string, { seq: number; key: string }[]>;
  /** The MCP session each exchange carried. */
  sessionOf: Map<string, string>;
}

/** Gather the complete recorded exchanges, in the order their requests were recorded. */
export function buildHttpExchanges(records: readonly RecordInFile[]): RecordedExchange[] {
  const gathered = gatherExchanges(records);
  const exchanges: RecordedExchange[] = [];
  const indexOf = new Map<string, number>();
  const streams: { exchange: RecordedExchange; key: string; res: HttpResponseRecord }[] = [];
  for (const [key, { req, res, end }] of [...gathered.parts.entries()].sort((a, b) => a[1].order - b[1].order)) {
    // A WebSocket upgrade is not an HTTP answer that can be served again (its messages are not replayed).
    if (!req || !end || end.outcome === 'upgraded') continue;
    const exchange = recordedExchange(exchanges.length, key, req, res, end, gathered.sessionOf.get(key));
    indexOf.set(key, exchanges.length);
    exchanges.push(exchange);
    if (res && String(res.headers['content-type'] ?? '').includes('text/event-stream')) streams.push({ exchange, key, res });
  }
  for (const { exchange, key, res } of streams) {
    const clientFrames = gathered.clientFrames.get(key.slice(0, key.lastIndexOf('#'))) ?? [];
    const events = streamEvents(exchange.body, gathered.streamed.get(key) ?? [], res, (after, before) => gateOf(clientFrames, key, indexOf, after, before));
    if (events) exchange.events = events;
  }
  return exchanges;
}

function gatherExchanges(records: readonly RecordInFile[]): GatheredExchanges {
  const gathered: GatheredExchanges = { parts: new Map(), streamed: new Map(), clientFrames: new Map(), sessionOf: new Map() };
  for (const { record, file } of records) {
    if (record.kind === 'request' || record.kind === 'response' || record.kind === 'notification' || record.kind === 'invalid' || record.kind === 'sse') {
      const carrier = (record as { exchange?: string }).exchange;
      if (carrier === undefined) continue;
      const key = `${file ?? ''}#${carrier}`;
      if (!gathered.sessionOf.has(key)) gathered.sessionOf.set(key, record.session);
      if (record.dir === 's2c') pushTo(gathered.streamed, key, record);
      else pushTo(gathered.clientFrames, file ?? '', { seq: record.seq, key });
      continue;
    }
    if (record.kind !== 'http-request' && record.kind !== 'http-response' && record.kind !== 'http-end') continue;
    const key = `${file ?? ''}#${record.exchange}`;
    const entry = gathered.parts.get(key) ?? { order: gathered.parts.size };
    if (record.kind === 'http-request') entry.req = record;
    else if (record.kind === 'http-response') entry.res = record;
    else entry.end = record;
    gathered.parts.set(key, entry);
  }
  for (const list of gathered.clientFrames.values()) list.sort((a, b) => a.seq - b.seq);
  return gathered;
}

function pushTo<V>(map: Map<string, V[]>, key: string, item: V): void {
  const list = map.get(key);
  if (list) list.push(item);
  else map.set(key, [item]);
}

/** One exchange as the replay serves it, from its three records. */
function recordedExchange(index: number, key: string, req: HttpRequestRecord, res: HttpResponseRecord | undefined, end: HttpEndRecord, mcpSession: string | undefined): RecordedExchange {
  const exchange: RecordedExchange = {
    index,
    ref: key.startsWith('#') ? key.slice(1) : key,
    method: req.method,
    path: req.path,
    headers: res?.headers ?? {},
    ttfbMs: res?.ttfbMs ?? 0,
    body: end.body === undefined ? Buffer.alloc(0) : Buffer.from(end.body, end.bodyEncoding === 'base64' ? 'base64' : 'utf8'),
    bodyTruncated: end.bodyTruncated === true,
    outcome: end.outcome,
  };
  const status = res?.status ?? end.status;
  if (status !== undefined) exchange.status = status;
  if (mcpSession !== undefined) exchange.mcpSession = mcpSession;
  if (end.chunks) exchange.chunks = end.chunks;
  if (end.replyComplete === true) exchange.replyComplete = true;
  if (req.body !== undefined) {
    exchange.requestBody = req.bodyEncoding === 'base64' ? Buffer.from(req.body, 'base64').toString('utf8') : req.body;
    const rpc = jsonRpcRequestOf(exchange.requestBody);
    if (rpc) {
      exchange.rpcId = rpc.id;
      exchange.rpcMethod = rpc.method;
      if (rpc.progressToken !== undefined) exchange.progressToken = rpc.progressToken;
    }
  }
  return exchange;
}

/**
 * The exchange an event of stream `key` waited for: the one that carried the client's last message before the
 * event (seq `before`), sent after the stream opened (seq `after`), on another exchange.
 */
function gateOf(clientFrames: readonly { seq: number; key: string }[], key: string, indexOf: ReadonlyMap<string, number>, after: number, before: number): number | undefined {
  let lo = 0;
  let hi = clientFrames.length;
  while (lo < hi) {
    const mid = (lo + hi) >> 1;
    if (clientFrames[mid]!.seq < before) lo = mid + 1;
    else hi = mid;
  }
  for (let i = lo - 1; i >= 0 && clientFrames[i]!.seq > after; i--) if (clientFrames[i]!.key !== key) return indexOf.get(clientFrames[i]!.key);
  return undefined;
}

/**
 * Cut an SSE body into its events and pair them with the records the tap wrote for them (one per event, in
 * order). Undefined when they do not pair up one to one (a batch, a truncated body): the chunks are used then.
 */
function streamEvents(
  body: Buffer,
  records: readonly LogRecord[],
  headers: HttpResponseRecord,
  gateBetween: (afterSeq: number, beforeSeq: number) => number | undefined,
): TimedPiece[] | undefined {
  const text = body.toString('utf8');
  const events: string[] = [];
  const boundary = /\r?\n\r?\n/g;
  let start = 0;
  for (let m = boundary.exec(text); m; m = boundary.exec(text)) {
    events.push(text.slice(start, m.index + m[0].length));
    start = m.index + m[0].length;
  }
  if (start < text.length) {
    if (events.length === 0) return undefined;
    events[events.length - 1] += text.slice(start);
  }
  if (events.length === 0 || events.length !== records.length) return undefined;
  let previousSeq = headers.seq;
  return events.map((event, k) => {
    const record = records[k]!;
    const gate = gateBetween(previousSeq, record.seq);
    previousSeq = record.seq;
    return { atMs: Math.max(0, record.time - headers.time), bytes: Buffer.from(event), ...(gate !== undefined ? { gate } : {}) };
  });
}

/** The id, method and progress token of a JSON-RPC request body, if it is one. */
export function jsonRpcRequestOf(body: string | undefined): { id: JsonRpcId; method: string; progressToken?: unknown } | undefined {
  if (!body) return undefined;
  let o: unknown;
  try {
    o = JSON.parse(body);
  } catch {
    return undefined;
  }
  if (o === null || typeof o !== 'object' || Array.isArray(o)) return undefined;
  const m = o as Record<string, unknown>;
  if (m.jsonrpc !== '2.0' || typeof m.method !== 'string' || (typeof m.id !== 'string' && typeof m.id !== 'number')) return undefined;
  const meta = (m.params as Record<string, unknown> | undefined)?._meta as Record<string, unknown> | undefined;
  return { id: m.id, method: m.method, ...(meta?.progressToken !== undefined ? { progressToken: meta.progressToken } : {}) };
}

/** The JSON-RPC response id of a body that is a client's answer to a server request (a POST of a response). */
function jsonRpcResponseIdOf(body: string | undefined): JsonRpcId | undefined {
  if (!body) return undefined;
  try {
    const o = JSON.parse(body) as Record<string, unknown>;
    if (o && o.jsonrpc === '2.0' && !('method' in o) && (typeof o.id === 'string' || typeof o.id === 'number')) return o.id;
  } catch {
    // not JSON
  }
  return undefined;
}

/** A live request as the matcher sees it. */
export interface LiveRequest {
  method: string;
  path: string;
  body?: string;
}

/** Why no recorded exchange answers a live request. */
export interface HttpMiss {
  miss: true;
  /** A sentence naming the request and saying it is not in the capture. */
  message: string;
}

/**
 * Picks recorded exchanges for live requests: same method, path and canonical body (`--ignore` fields left out;
 * a JSON-RPC request's id and `_meta` never count, and a client's answer to a server request is matched by its id
 * alone). Repeats are served in recorded order; once every recording of a request has been served, the last one
 * is served again. A JSON-RPC request with no exact twin falls back to the first unserved recording of the same
 * JSON-RPC method (a client whose clientInfo version changed still gets its initialize answered).
 */
export class HttpMatcher {
  private readonly exchanges: RecordedExchange[];
  private readonly used: boolean[];
  private readonly ignore: ReadonlySet<string>;
  /** Exchanges by exact key, and by method + path + JSON-RPC method (the fallback), each in recorded order. */
  private readonly byKey = new Map<string, { at: number[]; next: number }>();
  private readonly byRpcMethod = new Map<string, { at: number[]; next: number }>();
  private readonly paths = new Set<string>();

  constructor(exchanges: readonly RecordedExchange[], ignore: readonly string[] = []) {
    this.exchanges = [...exchanges];
    this.ignore = new Set(ignore);
    this.used = this.exchanges.map(() => false);
    this.exchanges.forEach((e, i) => {
      push(this.byKey, this.keyOf(e.method, e.path, e.requestBody), i);
      if (e.rpcMethod !== undefined) push(this.byRpcMethod, `${e.method} ${pathKey(e.path)} ${e.rpcMethod}`, i);
      this.paths.add(`${e.method} ${pathKey(e.path)}`);
    });
  }

  /** How many recorded exchanges can be served. */
  get size(): number {
    return this.exchanges.length;
  }

  /** Exchanges never served so far. */
  unserved(): RecordedExchange[] {
    return this.exchanges.filter((_, i) => !this.used[i]);
  }

  pick(live: LiveRequest): RecordedExchange | HttpMiss {
    const exact = this.byKey.get(this.keyOf(live.method, live.path, live.body));
    if (exact) {
      const i = this.nextUnused(exact);
      // Every recording of this request has been served: serve the last one again.
      return this.take(i ?? exact.at[exact.at.length - 1]!);
    }
    const rpc = jsonRpcRequestOf(live.body);
    if (rpc) {
      const same = this.byRpcMethod.get(`${live.method} ${pathKey(live.path)} ${rpc.method}`);
      const i = same ? this.nextUnused(same) : undefined;
      if (i !== undefined) return this.take(i);
    }
    const shownPath = pathKey(live.path);
    const what = rpc ? `${live.method} ${shownPath} (JSON-RPC ${rpc.method})` : `${live.method} ${shownPath}`;
    const message = this.paths.has(`${live.method} ${shownPath}`)
      ? `${what} with this body is not in the capture: the recorded requests to ${shownPath} had other bodies${this.ignore.size ? '' : ' (--ignore FIELD leaves out fields such as timestamps)'}.`
      : `${what} is not in the capture: nothing was recorded for that method and path.`;
    return { miss: true, message };
  }

  private nextUnused(slot: { at: number[]; next: number }): number | undefined {
    while (slot.next < slot.at.length && this.used[slot.at[slot.next]!]) slot.next++;
    return slot.next < slot.at.length ? slot.at[slot.next] : undefined;
  }

  private take(i: number): RecordedExchange {
    this.used[i] = true;
    return this.exchanges[i]!;
  }

  private keyOf(method: string, path: string, body: string | undefined): string {
    const responseId = jsonRpcResponseIdOf(body);
    const bodyKey = responseId !== undefined ? `rpc-response:${typeof responseId}:${responseId}` : canonicalBody(body, this.ignore);
    return `${method} ${pathKey(path)} ${bodyKey}`;
  }
}

/**
 * A path as the matcher compares it: credentials in the query redacted as the capture logged them, so a live
 * `?key=AIza…` finds the recorded `?key=[redacted]` (and a miss never prints the live key).
 */
function pathKey(path: string): string {
  return redactPathQuery(path);
}

function push(map: Map<string, { at: number[]; next: number }>, key: string, index: number): void {
  const slot = map.get(key) ?? { at: [], next: 0 };
  slot.at.push(index);
  map.set(key, slot);
}

/** One piece of a response body and when to send it, in ms after the headers. */
export interface TimedPiece {
  atMs: number;
  bytes: Buffer;
  /** Index of the exchange whose live request must have arrived before this piece goes out. */
  gate?: number;
}

/** The pieces to send for an exchange: its gated events when known, else its recorded chunks. */
export function planExchange(exchange: RecordedExchange, options: { speed?: number; noDelay?: boolean } = {}): TimedPiece[] {
  if (!exchange.events) return planChunks(exchange.body, exchange.chunks, options);
  const speed = options.speed ?? 1;
  return exchange.events.map((e) => ({ ...e, atMs: options.noDelay ? 0 : e.atMs / speed }));
}

/**
 * Cut a recorded body along its recorded chunk boundaries, with the recorded spacing divided by `speed` (or none
 * with `noDelay`). When the boundaries do not add up to the body (the body was logged decompressed), they are
 * scaled to it; without boundaries the body goes out whole.
 */
export function planChunks(body: Buffer, chunks: readonly [number, number][] | undefined, options: { speed?: number; noDelay?: boolean } = {}): TimedPiece[] {
  const speed = options.speed ?? 1;
  const at = (ms: number): number => (options.noDelay ? 0 : Math.max(0, ms / speed));
  if (!chunks || chunks.length === 0) return body.length ? [{ atMs: 0, bytes: body }] : [];
  const total = chunks.reduce((n, [, len]) => n + len, 0);
  const pieces: TimedPiece[] = [];
  let start = 0;
  let cumulative = 0;
  for (const [index, [ms, len]] of chunks.entries()) {
    cumulative += len;
    const end = index === chunks.length - 1 ? body.length : total === body.length ? cumulative : Math.round((body.length * cumulative) / Math.max(total, 1));
    if (end > start) pieces.push({ atMs: at(ms), bytes: body.subarray(start, Math.min(end, body.length)) });
    start = Math.max(start, Math.min(end, body.length));
  }
  return pieces;
}

/**
 * Recorded JSON-RPC ids (and progress tokens) of client requests and the live ones that replaced them, per MCP
 * session. A response can travel on another exchange than its request (the legacy SSE transport sends every
 * response on the GET stream), so the replay rewrites from this table rather than from the exchange alone.
 */
export class IdTable {
  private readonly ids = new Map<string, JsonRpcId>();
  private readonly tokens = new Map<string, unknown>();

  /** Remember that the live client used `live` where the recording had `recorded`. */
  set(session: string, recorded: { id?: JsonRpcId; token?: unknown }, live: { id?: JsonRpcId; token?: unknown }): void {
    if (recorded.id !== undefined && live.id !== undefined) this.ids.set(key(session, recorded.id), live.id);
    if (recorded.token !== undefined && live.token !== undefined) this.tokens.set(key(session, recorded.token), live.token);
  }

  /**
   * The piece with recorded ids replaced by live ones: a whole JSON body, or the `data:` lines of SSE events.
   * Only responses (and progress notifications) change; the server's own requests keep their ids. Pieces with
   * nothing to rewrite come back as the same buffer.
   */
  rewrite(piece: Buffer, session: string, sse: boolean): Buffer {
    if (this.ids.size === 0 && this.tokens.size === 0) return piece;
    const rewrite = (text: string): string | undefined => {
      let o: Record<string, unknown>;
      try {
        o = JSON.parse(text) as Record<string, unknown>;
      } catch {
        return undefined;
      }
      if (!o || typeof o !== 'object' || o.jsonrpc !== '2.0') return undefined;
      if (!('method' in o) && (typeof o.id === 'string' || typeof o.id === 'number')) {
        const live = this.ids.get(key(session, o.id));
        return live === undefined || live === o.id ? undefined : JSON.stringify({ ...o, id: live });
      }
      const params = o.params as Record<string, unknown> | undefined;
      if (o.method === 'notifications/progress' && params && params.progressToken !== undefined) {
        const live = this.tokens.get(key(session, params.progressToken));
        return live === undefined || live === params.progressToken ? undefined : JSON.stringify({ ...o, params: { ...params, progressToken: live } });
      }
      return undefined;
    };
    const text = piece.toString('utf8');
    if (!sse) {
      const changed = rewrite(text);
      return changed === undefined ? piece : Buffer.from(changed);
    }
    let touched = false;
    const lines = text.split('\n').map((line) => {
      const m = /^data: ?(.*?)(\r?)$/.exec(line);
      if (!m) return line;
      const changed = rewrite(m[1]!);
      if (changed === undefined) return line;
      touched = true;
      return `data: ${changed}${m[2]}`;
    });
    return touched ? Buffer.from(lines.join('\n')) : piece;
  }
}

function key(session: string, value: unknown): string {
  return `${session}|${typeof value}:${String(value)}`;
}

/** Rewrite one piece with one recorded → live pair (see IdTable). */
export function rewriteRpcIds(piece: Buffer, recorded: { id?: JsonRpcId; token?: unknown }, live: { id?: JsonRpcId; token?: unknown }, sse: boolean): Buffer {
  const table = new IdTable();
  table.set('', recorded, live);
  return table.rewrite(piece, '', sse);
}

/** Response headers fit to send again: hop-by-hop and length/encoding headers dropped (the body is re-sent decoded). */
export function replayHeaders(headers: LoggedHeaders): Record<string, string | string[]> {
  const drop = new Set(['content-length', 'content-encoding', 'transfer-encoding', 'connection', 'keep-alive', 'date']);
  const out: Record<string, string | string[]> = {};
  for (const [name, value] of Object.entries(headers)) if (!drop.has(name.toLowerCase())) out[name] = value;
  return out;
}
