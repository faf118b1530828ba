/**
 * `mcptap export --format har`: logs as a HAR 1.2 archive, the format browser devtools, proxies and HAR viewers
 * import. The mapping is documented in docs/log-format.md ("HAR export mapping"); in short:
 *
 * - every HTTP exchange the HTTP tap saw is one entry, as it was: method, URL (the upstream target + path),
 *   headers as logged (secrets already redacted), request and response bodies as far as the log kept them,
 *   status, and timings from the tap's clock (send = request start → request end, wait = time to response
 *   headers, receive = headers → end).
 * - an LLM call is its HTTP exchange's entry, with `_llm` (model, tool calls, usage, time to first token) added;
 *   an MCP message carried over HTTP is listed in its exchange's `_mcp`.
 * - an MCP call that travelled outside HTTP (stdio) becomes one entry of its own: `POST
 *   mcp+stdio://<label>/<method>?name=<tool>`, the JSON-RPC request as the posted body, the response as the
 *   content, status 200 for a result, 500 for a JSON-RPC error, 0 when it was never answered; the tool's own
 *   failure (`isError`) is status 200 with statusText `Tool error`.
 *
 * Fields HAR has no place for go in `_`-prefixed custom fields, which HAR 1.2 allows and readers ignore.
 * Pure: records in (ordered by time, as readAllRecords gives them), a plain object out; or, streaming, records
 * in and entries out as each becomes final (`HarBuilder`, `writeHar`).
 */
import { STATUS_CODES } from 'node:http';
import type {
  HttpEndRecord,
  HttpRequestRecord,
  HttpResponseRecord,
  LlmErrorRecord,
  LlmRequestRecord,
  LlmResponseRecord,
  LogRecord,
  LoggedHeaders,
  PendingRecord,
  RequestRecord,
  ResponseRecord,
} from '../log/schema.js';
import { pendingOfEvicted } from '../log/evicted.js';
import { DEFAULT_MAX_PENDING } from '../session/correlator.js';
import { RecentMap } from '../session/recent-map.js';
import { MCPTAP_VERSION } from '../version.js';

/** A HAR name/value pair (headers, query string). */
export interface HarNameValue {
  name: string;
  value: string;
}

/** One HAR 1.2 entry. */
export interface HarEntry {
  startedDateTime: string;
  time: number;
  request: {
    method: string;
    url: string;
    httpVersion: string;
    cookies: HarNameValue[];
    headers: HarNameValue[];
    queryString: HarNameValue[];
    postData?: { mimeType: string; text: string; comment?: string };
    headersSize: number;
    bodySize: number;
  };
  response: {
    status: number;
    statusText: string;
    httpVersion: string;
    cookies: HarNameValue[];
    headers: HarNameValue[];
    content: { size: number; mimeType: string; text?: string; encoding?: string; comment?: string };
    redirectURL: string;
    headersSize: number;
    bodySize: number;
  };
  cache: Record<string, never>;
  timings: { blocked: number; dns: number; connect: number; send: number; wait: number; receive: number; ssl: number };
  comment?: string;
  /** mcptap: where the entry came from. */
  _mcptap: Record<string, unknown>;
  /** mcptap: the LLM call this exchange carried. */
  _llm?: Record<string, unknown>;
  /** mcptap: the MCP messages this exchange carried. */
  _mcp?: Record<string, unknown>[];
}

/** A HAR 1.2 archive. */
export interface Har {
  log: {
    version: '1.2';
    creator: { name: string; version: string };
    entries: HarEntry[];
    comment?: string;
  };
}

interface HttpParts {
  label: string;
  session: string;
  channel: string;
  exchange: string;
  request?: HttpRequestRecord;
  response?: HttpResponseRecord;
  end?: HttpEndRecord;
  llmRequest?: LlmRequestRecord;
  llmResponse?: LlmResponseRecord;
  llmError?: LlmErrorRecord;
  mcp: Record<string, unknown>[];
  sse: number;
}

/** Build the HAR archive of these records. */
export function buildHar(records: readonly LogRecord[]): Har {
  const builder = new HarBuilder();
  const entries: HarEntry[] = [];
  for (const r of records) for (const e of builder.push(r)) entries.push(e);
  for (const e of builder.end()) entries.push(e);
  return { log: { version: '1.2', creator: { name: 'mcptap', version: MCPTAP_VERSION }, entries } };
}

/** The archive as the text of a .har file. */
export function formatHar(records: readonly LogRecord[]): string {
  return `${JSON.stringify(buildHar(records), null, 2)}\n`;
}

/**
 * The .har file of a stream of records, written as the entries become final: the same text as `formatHar`,
 * with only the exchanges still open (and a minute after their end) in memory.
 */
export async function writeHar(records: AsyncIterable<LogRecord>, out: { write(text: string): Promise<void> }): Promise<{ records: number; entries: number }> {
  const builder = new HarBuilder();
  const head = JSON.stringify({ log: { version: '1.2', creator: { name: 'mcptap', version: MCPTAP_VERSION }, entries: [] } }, null, 2);
  let n = 0;
  let entries = 0;
  const write = async (list: HarEntry[]): Promise<void> => {
    // Indented line by line at `\n` only: a regex's `^` would also match after a U+2028 inside a string.
    for (const e of list) await out.write(`${entries++ === 0 ? '[\n' : ',\n'}      ${JSON.stringify(e, null, 2).split('\n').join('\n      ')}`);
  };
  for await (const r of records) {
    // Everything up to the entries' `[`, as JSON.stringify writes it with two-space indents; written once there
    // is a record (logs with none are an error, and print nothing).
    if (n++ === 0) await out.write(head.slice(0, head.lastIndexOf('[]')));
    await write(builder.push(r));
  }
  await write(builder.end());
  await out.write(`${entries === 0 ? '[]' : '\n    ]'}\n  }\n}\n`);
  return { records: n, entries };
}

/** How long after an exchange ended a record of it may still come (its LLM summary, a late MCP record). */
const SETTLE_MS = 60_000;
/** Records between looks for entries to hand on, however little time they span (a flood). */
const SETTLE_EVERY = 4096;

/** An entry made, waiting for the earlier ones (entries are in start order). */
interface ReadyEntry {
  entry: HarEntry;
  key: [number, number, number];
}

/** The HAR entries of records as they stream by, handed on in start order once no earlier one can come. */
export class HarBuilder {
  private readonly targets = new Map<string, string>();
  private readonly exchanges = new Map<string, HttpParts & { ord: number }>();
  private readonly openCalls = new Map<string, StdioCall>();
  /**
   * Calls the tap evicted, with their `pending` record, held for the late answer it may pair (`afterPending`):
   * as many as it pairs late one way. One pushed out gets its entry as the `pending` record says: no response.
   */
  private readonly evicted = new RecentMap<string, { call: StdioCall; pending: PendingRecord }>(DEFAULT_MAX_PENDING);
  private ready: ReadyEntry[] = [];
  private now = -Infinity;
  private lastSettle = -Infinity;
  private sinceSettle = 0;
  private ord = 0;
  /** Whether an HTTP tap is in the logs yet: until one is, no exchange can start before the record read last. */
  private sawHttp = false;

  /** Take one record; returns the entries now final (often none). */
  push(r: LogRecord): HarEntry[] {
    if (r.time > this.now) this.now = r.time;
    this.take(r);
    // A look at what ended once a second of the stream, or a few thousand records, not at every record.
    if (this.now - this.lastSettle < 1000 && ++this.sinceSettle < SETTLE_EVERY) return [];
    this.lastSettle = this.now;
    this.sinceSettle = 0;
    this.settle(false);
    return this.release(false);
  }

  /** Every entry left, in start order. */
  end(): HarEntry[] {
    this.settle(true);
    return this.release(true);
  }

  private take(r: LogRecord): void {
    if ('exchange' in r || (r.kind === 'lifecycle' && r.event === 'listen')) this.sawHttp = true;
    switch (r.kind) {
      case 'lifecycle':
        if (r.event === 'listen' && r.target !== undefined) this.targets.set(r.label, r.target);
        break;
      case 'http-request':
        this.parts(r).request = r;
        break;
      case 'http-response':
        this.parts(r).response = r;
        break;
      case 'http-end':
        this.parts(r).end = r;
        break;
      case 'llm-request':
        Object.assign(this.parts(r), { llmRequest: r, channel: r.channel });
        break;
      case 'llm-response':
        this.parts(r).llmResponse = r;
        break;
      case 'llm-error':
        this.parts(r).llmError = r;
        break;
      case 'sse':
        this.parts(r).sse++;
        break;
      case 'request':
      case 'response':
      case 'notification':
      case 'invalid':
        if (r.exchange !== undefined) this.noteHttpMcp(r as Extract<LogRecord, { kind: 'request' | 'response' | 'notification' | 'invalid' }> & { exchange: string });
        else if (r.kind === 'request') this.openCalls.set(`${r.session}\u0000${r.seq}`, { request: r, ord: this.ord++ });
        else if (r.kind === 'response' && r.requestSeq !== undefined) this.answer(`${r.session}\u0000${r.requestSeq}`, r);
        break;
      case 'pending':
        this.pending(`${r.session}\u0000${r.requestSeq}`, r);
        break;
      case 'evicted':
        for (const p of pendingOfEvicted(r)) this.pending(`${p.session}\u0000${p.requestSeq}`, p);
        break;
      default:
        break;
    }
  }

  private parts(r: LogRecord & { exchange: string }): HttpParts & { ord: number } {
    const key = `${r.label}\u0000${r.exchange}`;
    let p = this.exchanges.get(key);
    if (!p) {
      p = { label: r.label, session: r.session, channel: r.channel, exchange: r.exchange, mcp: [], sse: 0, ord: this.ord++ };
      this.exchanges.set(key, p);
    }
    return p;
  }

  /** An MCP message carried over HTTP, listed in its exchange's entry. */
  private noteHttpMcp(r: Extract<LogRecord, { kind: 'request' | 'response' | 'notification' | 'invalid' }> & { exchange: string }): void {
    const p = this.parts(r);
    p.channel = r.channel;
    p.mcp.push({
      kind: r.kind,
      dir: r.dir,
      ...('id' in r && r.id !== undefined ? { id: r.id } : {}),
      ...('method' in r && r.method !== undefined ? { method: r.method } : {}),
      seq: r.seq,
      session: r.session,
      ...revisionFields(r),
    });
  }

  /** A stdio call's answer, late ones too: its entry is made. */
  private answer(key: string, response: ResponseRecord): void {
    const call = this.openCalls.get(key) ?? this.evicted.take(key)?.call;
    if (!call) return;
    this.openCalls.delete(key);
    this.entryOf(call, response, undefined);
  }

  /** A stdio call's `pending` record: its entry is made, unless the tap evicted it and may pair a late answer. */
  private pending(key: string, pending: PendingRecord): void {
    const call = this.openCalls.get(key);
    if (!call) return;
    this.openCalls.delete(key);
    if (!pending.evicted || pending.cancelled) return this.entryOf(call, undefined, pending);
    const gone = this.evicted.set(key, { call, pending });
    if (gone) this.entryOf(gone.call, undefined, gone.pending);
  }

  private entryOf(call: StdioCall, response: ResponseRecord | undefined, pending: PendingRecord | undefined): void {
    const entry = mcpEntry(call.request, response, pending);
    this.ready.push({ entry, key: [Date.parse(entry.startedDateTime), 1, call.ord] });
  }

  /** Make the entries of the HTTP exchanges that ended a while ago (all, at the end). */
  private settle(final: boolean): void {
    for (const [key, p] of this.exchanges) {
      const last = p.end?.time ?? (p.request ? undefined : (p.llmResponse ?? p.llmError)?.time);
      if (!final && (last === undefined || this.now - last < SETTLE_MS)) continue;
      this.exchanges.delete(key);
      const entry = p.request ? httpEntry(p, this.targets) : p.llmRequest ? llmOnlyEntry(p, this.targets) : undefined;
      if (entry) this.ready.push({ entry, key: [Date.parse(entry.startedDateTime), 0, p.ord] });
    }
    if (!final) return;
    for (const call of this.openCalls.values()) this.entryOf(call, undefined, undefined);
    this.openCalls.clear();
    for (const [key, { call, pending }] of this.evicted.entries()) {
      this.evicted.take(key);
      this.entryOf(call, undefined, pending);
    }
  }

  /** The ready entries that start before anything still open can (all, at the end). */
  private release(final: boolean): HarEntry[] {
    if (this.ready.length === 0) return [];
    // An exchange still open starts at its request, or a little before it (an entry's start is when the
    // exchange began, which its http-request record may follow): a minute of slack.
    let before = final ? Infinity : this.now;
    if (!final) {
      for (const p of this.exchanges.values()) before = Math.min(before, p.request?.time ?? p.llmRequest?.time ?? before);
      if (this.sawHttp) before -= SETTLE_MS;
      // A stdio call's entry starts at its request's record: no slack.
      for (const c of this.openCalls.values()) before = Math.min(before, c.request.time);
      for (const [, { call }] of this.evicted.entries()) before = Math.min(before, call.request.time);
    }
    this.ready.sort((a, b) => a.key[0] - b.key[0] || a.key[1] - b.key[1] || a.key[2] - b.key[2]);
    let n = 0;
    // A start is known to the millisecond: an entry waits while one could still start in the same one.
    while (n < this.ready.length && this.ready[n]!.key[0] < Math.floor(before)) n++;
    const out = this.ready.slice(0, n).map((r) => r.entry);
    this.ready = this.ready.slice(n);
    return out;
  }
}

interface StdioCall {
  request: RequestRecord;
  ord: number;
}

function httpEntry(p: HttpParts, targets: Map<string, string>): HarEntry {
  const req = p.request!;
  const res = p.response;
  const end = p.end;
  const start = end ? Math.min(req.time, end.time - end.durationMs) : req.time;
  const send = Math.max(0, req.time - start);
  const wait = res ? res.ttfbMs : end ? Math.max(0, end.time - req.time) : 0;
  const receive = res && end ? Math.max(0, end.time - res.time) : 0;
  const entry: HarEntry = {
    startedDateTime: new Date(start).toISOString(),
    time: ms(send + wait + receive),
    request: harRequest(req, urlOf(targets.get(p.label), req.headers, req.path)),
    response: harResponse(res, end),
    cache: {},
    timings: { blocked: -1, dns: -1, connect: -1, send: ms(send), wait: ms(wait), receive: ms(receive), ssl: -1 },
    _mcptap: {
      session: p.session,
      label: p.label,
      channel: p.channel,
      exchange: p.exchange,
      ...(end ? { outcome: end.outcome } : {}),
      ...(end?.error ? { error: end.error } : {}),
      ...(p.sse > 0 ? { sseEvents: p.sse } : {}),
    },
  };
  if (end && end.outcome !== 'complete') entry.comment = `The exchange did not complete: ${end.outcome}${end.error ? ` (${end.error.message})` : ''}.`;
  const llm = llmSummary(p);
  if (llm) entry._llm = llm;
  if (p.mcp.length > 0) entry._mcp = p.mcp;
  return entry;
}

function harRequest(req: HttpRequestRecord, url: string): HarEntry['request'] {
  return {
    method: req.method,
    url,
    httpVersion: 'HTTP/1.1',
    cookies: [],
    headers: harHeaders(req.headers),
    queryString: queryOf(url),
    ...(req.body !== undefined || req.bodyBytes > 0
      ? {
          postData: {
            mimeType: headerValue(req.headers, 'content-type') ?? '',
            text: req.body ?? '',
            ...(req.bodyEncoding === 'base64' ? { comment: 'text is base64: the body was not valid UTF-8' } : {}),
            ...(req.bodyTruncated ? { comment: `only the first part of the ${req.bodyBytes}-byte body was logged` } : {}),
          },
        }
      : {}),
    headersSize: -1,
    bodySize: req.bodyBytes,
  };
}

function harResponse(res: HttpResponseRecord | undefined, end: HttpEndRecord | undefined): HarEntry['response'] {
  const status = res?.status ?? end?.status ?? 0;
  return {
    status,
    statusText: statusText(status, end),
    httpVersion: 'HTTP/1.1',
    cookies: [],
    headers: harHeaders(res?.headers ?? {}),
    content: {
      size: end?.body !== undefined && end.bodyEncoding !== 'base64' && !end.bodyTruncated ? Buffer.byteLength(end.body) : (end?.resBytes ?? 0),
      mimeType: headerValue(res?.headers, 'content-type') ?? '',
      ...(end?.body !== undefined ? { text: end.body } : {}),
      ...(end?.bodyEncoding === 'base64' ? { encoding: 'base64' } : {}),
      ...(end?.bodyTruncated ? { comment: 'only the first part of the body was logged (--max-body)' } : {}),
    },
    redirectURL: headerValue(res?.headers, 'location') ?? '',
    headersSize: -1,
    bodySize: end?.resBytes ?? -1,
  };
}

/** An LLM call whose HTTP records are missing (a log filtered to LLM records): one entry from the LLM records. */
function llmOnlyEntry(p: HttpParts, targets: Map<string, string>): HarEntry {
  const q = p.llmRequest!;
  const reply = p.llmResponse ?? p.llmError;
  const wait = p.llmResponse ? (p.llmResponse.ttftMs ?? p.llmResponse.durationMs) : reply ? reply.time - q.time : 0;
  const total = p.llmResponse ? p.llmResponse.durationMs : wait;
  const status = reply?.status ?? 0;
  const url = urlOf(targets.get(p.label), {}, q.endpoint);
  return {
    startedDateTime: new Date(q.time).toISOString(),
    time: ms(total),
    request: { method: 'POST', url, httpVersion: 'HTTP/1.1', cookies: [], headers: [], queryString: [], headersSize: -1, bodySize: -1 },
    response: {
      status,
      statusText: STATUS_CODES[status] ?? '',
      httpVersion: 'HTTP/1.1',
      cookies: [],
      headers: [],
      content: { size: -1, mimeType: 'application/json', ...(p.llmResponse ? { text: p.llmResponse.content } : p.llmError ? { text: p.llmError.error } : {}), comment: 'the reply text as mcptap reassembled it, not the body bytes' },
      redirectURL: '',
      headersSize: -1,
      bodySize: -1,
    },
    cache: {},
    timings: { blocked: -1, dns: -1, connect: -1, send: 0, wait: ms(wait), receive: ms(Math.max(0, total - wait)), ssl: -1 },
    _mcptap: { session: p.session, label: p.label, channel: p.channel, exchange: p.exchange },
    _llm: llmSummary(p)!,
  };
}

function llmSummary(p: HttpParts): Record<string, unknown> | undefined {
  if (!p.llmRequest && !p.llmResponse && !p.llmError) return undefined;
  const q = p.llmRequest;
  const a = p.llmResponse;
  return {
    ...(q ? { endpoint: q.endpoint, model: q.model, stream: q.stream, messageCount: q.messageCount, toolsOffered: q.tools, toolResults: q.toolResults.length } : {}),
    ...(a ? { responseModel: a.model, content: a.content, toolCalls: a.toolCalls, finishReason: a.finishReason, usage: a.usage, ttftMs: a.ttftMs, durationMs: a.durationMs } : {}),
    ...(p.llmError ? { error: p.llmError.error, phase: p.llmError.phase } : {}),
  };
}

function mcpEntry(q: RequestRecord, a: ResponseRecord | undefined, pending: PendingRecord | undefined): HarEntry {
  const wait = a ? (a.latencyMs ?? Math.max(0, a.time - q.time)) : pending ? pending.ageMs : 0;
  const status = a ? (a.error ? 500 : 200) : 0;
  const statusText = !a ? 'No response' : a.error ? `JSON-RPC error ${a.error.code}: ${a.error.message}` : a.isError ? 'Tool error' : 'OK';
  const url = `mcp+${q.channel}://${encodeURIComponent(q.label)}/${q.method.split('/').map(encodeURIComponent).join('/')}${q.tool !== undefined ? `?name=${encodeURIComponent(q.tool)}` : ''}`;
  return {
    startedDateTime: new Date(q.time).toISOString(),
    time: ms(wait),
    request: {
      method: 'POST',
      url,
      httpVersion: 'JSON-RPC 2.0',
      cookies: [],
      headers: [],
      queryString: q.tool !== undefined ? [{ name: 'name', value: q.tool }] : [],
      postData: {
        mimeType: 'application/json',
        text: q.raw,
        ...(q.truncated ? { comment: `only the first part of the ${q.bytes}-byte message was logged (sha256 ${q.sha256 ?? '?'})` } : {}),
      },
      headersSize: -1,
      bodySize: q.bytes,
    },
    response: {
      status,
      statusText,
      httpVersion: 'JSON-RPC 2.0',
      cookies: [],
      headers: [],
      content: a
        ? {
            size: a.bytes,
            mimeType: 'application/json',
            text: a.raw,
            ...(a.rawEncoding === 'base64' ? { encoding: 'base64' } : {}),
            ...(a.truncated ? { comment: `only the first part of the ${a.bytes}-byte message was logged` } : {}),
          }
        : { size: 0, mimeType: 'application/json' },
      redirectURL: '',
      headersSize: -1,
      bodySize: a ? a.bytes : -1,
    },
    cache: {},
    timings: { blocked: -1, dns: -1, connect: -1, send: 0, wait: ms(wait), receive: 0, ssl: -1 },
    ...(pending ? { comment: pendingComment(pending) } : a?.afterPending ? { comment: LATE_ANSWER_COMMENT } : {}),
    _mcptap: {
      session: q.session,
      label: q.label,
      channel: q.channel,
      dir: q.dir,
      id: q.id,
      method: q.method,
      ...(q.tool !== undefined ? { tool: q.tool } : {}),
      seq: q.seq,
      ...(a?.isError ? { isError: true } : {}),
      ...(a?.error ? { error: a.error } : {}),
      ...revisionFields(q),
      ...(a ? revisionFields(a) : {}),
    },
  };
}

/** A late answer's entry says why the log has a `pending` record for a call that was answered. */
const LATE_ANSWER_COMMENT = 'Answered after mcptap had stopped tracking the request (more requests were waiting than it tracks); the log says both.';

/** Why a request has no response; the record says which only by its flags, so the rest is said for both cases. */
function pendingComment(p: PendingRecord): string {
  const age = `${Math.round(p.ageMs)} ms`;
  if (p.cancelled) return `No response: its sender cancelled it after ${age}, and MCP says none is due then.`;
  if (p.subscription) return `No response: a subscription whose stream ended after ${age}.`;
  return `No response: the request had waited ${age} when mcptap stopped waiting (the session ended, or the tap let it go to bound its memory).`;
}

/**
 * What MCP 2026-07-28 adds to a message: its revision, the client's and the server's identity (where the log says
 * them, on the first message of a session that carries them), its result type, and for a multi-round-trip call the
 * round and the call it belongs to (`firstSeq`, the seq of the call's first request; `callLatencyMs` from there).
 */
function revisionFields(r: LogRecord): Record<string, unknown> {
  const out: Record<string, unknown> = {};
  if (r.kind === 'request') {
    if (r.protocolVersion !== undefined) out.protocolVersion = r.protocolVersion;
    if (r.client !== undefined) out.client = r.client;
    if (r.round !== undefined) out.round = r.round;
    if (r.firstSeq !== undefined) out.firstSeq = r.firstSeq;
  } else if (r.kind === 'response') {
    if (r.resultType !== undefined) out.resultType = r.resultType;
    if (r.server !== undefined) out.server = r.server;
    if (r.supportedVersions !== undefined) out.supportedVersions = r.supportedVersions;
    if (r.round !== undefined) out.round = r.round;
    if (r.firstSeq !== undefined) out.firstSeq = r.firstSeq;
    if (r.callLatencyMs !== undefined) out.callLatencyMs = r.callLatencyMs;
    if (r.inputRequests !== undefined) out.inputRequests = r.inputRequests;
  }
  return out;
}

function urlOf(target: string | undefined, headers: LoggedHeaders, path: string): string {
  const base = target ?? `http://${headerValue(headers, 'host') ?? 'unknown.invalid'}`;
  // The tap logs the path the client sent (the proxy prefixes the target's own path, which is part of `target`).
  try {
    const t = new URL(base);
    return `${t.origin}${t.pathname.replace(/\/$/, '')}${path.startsWith('/') ? path : `/${path}`}`;
  } catch {
    return `${base}${path}`;
  }
}

function queryOf(url: string): HarNameValue[] {
  try {
    return [...new URL(url).searchParams].map(([name, value]) => ({ name, value }));
  } catch {
    return [];
  }
}

function harHeaders(headers: LoggedHeaders): HarNameValue[] {
  const out: HarNameValue[] = [];
  for (const [name, value] of Object.entries(headers)) {
    for (const v of Array.isArray(value) ? value : [value]) out.push({ name, value: String(v) });
  }
  return out;
}

function headerValue(headers: LoggedHeaders | undefined, name: string): string | undefined {
  const v = headers?.[name];
  return Array.isArray(v) ? v[0] : v;
}

function statusText(status: number, end: HttpEndRecord | undefined): string {
  if (status === 0) return end ? end.outcome : 'No response';
  return STATUS_CODES[status] ?? '';
}

/** Milliseconds to three decimals, never negative. */
function ms(value: number): number {
  return Math.max(0, Math.round(value * 1000) / 1000);
}
