/**
 * Log records → OpenTelemetry spans, as plain data (no OpenTelemetry objects here, so the live exporter can load
 * this on a tap's start without the SDK). Follows the MCP and GenAI semantic conventions (shared PROTOCOLS.md,
 * "OpenTelemetry names"):
 *
 * - one CLIENT span per MCP request, named `{mcp.method.name} {target}` (target: the tool or prompt name), from
 *   the request's last byte to the response's; `mcp.method.name`, `jsonrpc.request.id`, `mcp.protocol.version`,
 *   `mcp.session.id` (Streamable HTTP), `gen_ai.tool.name` + `gen_ai.operation.name = execute_tool` for
 *   `tools/call`, `error.type` (the JSON-RPC code, `tool_error` for `isError`, `no_response` for a request never
 *   answered), `network.transport` (`pipe` on stdio, `tcp` over HTTP). Progress and cancellation notifications
 *   become span events.
 * - one CLIENT span per LLM call, named `{gen_ai.operation.name} {gen_ai.request.model}`, with the model, token
 *   usage, finish reason and the tool calls the model asked for (`gen_ai.tool.call.id` / names).
 * - `params._meta.traceparent` (W3C) on an MCP request puts its span in that trace, under that parent.
 *
 * Ids are derived from the logs (a hash of session and seq or exchange), so exporting the same logs twice gives
 * the same spans, and the live exporter and `mcptap export` agree on span ids.
 *
 * Arguments, results and prompts are not attributes: the conventions make them opt-in because they may hold
 * secrets, and the log already has them.
 */
import type {
  LlmErrorRecord,
  LlmRequestRecord,
  LlmResponseRecord,
  LogRecord,
  NotificationRecord,
  PendingRecord,
  RequestRecord,
  ResponseRecord,
} from '../log/schema.js';
import { pendingOfEvicted } from '../log/evicted.js';
import type { ToolRoundTrip, Trace, TraceTurn } from '../trace/link.js';
import { asObject, asString } from '../protocols/mcp.js';
import { parseRawObject } from '../log/reader.js';
import { requestHead, type RequestHead } from '../log/request-head.js';
import { DEFAULT_MAX_PENDING } from '../session/correlator.js';
import { RecentMap, setBounded } from '../session/recent-map.js';

/** An attribute value as OTLP carries it. */
export type SpanAttributeValue = string | number | boolean | string[];

/** A span, as plain data: what the OTLP serializer needs and nothing else. */
export interface SpanData {
  /** 32 lower-case hex digits. */
  traceId: string;
  /** 16 lower-case hex digits. */
  spanId: string;
  parentSpanId?: string;
  name: string;
  kind: 'client' | 'server' | 'internal';
  /** Epoch milliseconds (fractions allowed). */
  startTime: number;
  endTime: number;
  attributes: Record<string, SpanAttributeValue>;
  status: { code: 'unset' | 'ok' | 'error'; message?: string };
  events: { name: string; time: number; attributes: Record<string, SpanAttributeValue> }[];
  links: { traceId: string; spanId: string; attributes: Record<string, SpanAttributeValue> }[];
  /** Who saw it: becomes the span's resource (`service.name` is `mcptap`). */
  resource: { label: string; session: string; channel: string };
  /**
   * For a `tools/call` span: the tool and the arguments the server got, so the live exporter can find the model's
   * tool call it ran (never exported: arguments are not attributes).
   */
  toolCall?: { name: string; arguments: unknown };
}

/** Span id of the MCP request at `seq` of `session` (deterministic, so live and offline exports agree). */
export function mcpSpanId(session: string, seq: number): string {
  return hex(`mcp\u0000${session}\u0000${seq}`, 16);
}

/**
 * Span id of one round of a multi-round-trip call (MCP 2026-07-28 `input_required`): the call itself takes the id
 * of its first request (mcpSpanId), so a round trip links to the whole call; its rounds are its children.
 */
export function roundSpanId(session: string, seq: number): string {
  return hex(`mcp-round\u0000${session}\u0000${seq}`, 16);
}

/** Span id of the LLM call `exchange` of `session`. */
export function llmSpanId(session: string, exchange: string): string {
  return hex(`llm\u0000${session}\u0000${exchange}`, 16);
}

/** Trace id of the LLM call `exchange` of `session` as a live tap sends it (the export groups calls by turn instead). */
export function liveLlmTraceId(session: string, exchange: string): string {
  return hex(`trace\u0000llm\u0000${session}\u0000${exchange}`, 32);
}

/** A W3C `traceparent` (`00-<32 hex>-<16 hex>-<2 hex>`), parsed; undefined when it is not one. */
export function parseTraceparent(value: unknown): { traceId: string; spanId: string; sampled: boolean } | undefined {
  if (typeof value !== 'string') return undefined;
  const m = /^([0-9a-f]{2})-([0-9a-f]{32})-([0-9a-f]{16})-([0-9a-f]{2})$/.exec(value.trim().toLowerCase());
  if (!m || m[1] === 'ff' || /^0+$/.test(m[2]!) || /^0+$/.test(m[3]!)) return undefined;
  return { traceId: m[2]!, spanId: m[3]!, sampled: (parseInt(m[4]!, 16) & 1) === 1 };
}

interface OpenRequest {
  record: RequestHead;
  /** The request's params, parsed only when a span attribute needs them. */
  params?: Record<string, unknown>;
  events: SpanData['events'];
  traceparent?: { traceId: string; spanId: string };
  mcpSessionId?: string;
}

/**
 * What is remembered of sessions and HTTP exchanges (their revision, their Mcp-Session-Id) is kept for this many
 * of the newest, whatever `maxOpen` says: nothing closes them, so a streamed export of a long log would grow
 * with its sessions and exchanges.
 */
const MAX_RECENT = 10_000;

/**
 * Requests held open by default (the live exporter's bound): more than a session's tap tracks both ways, so that
 * its `pending` record, not this bound, lets a request go; the bound drops a tenth at once (setBounded).
 */
const DEFAULT_MAX_OPEN = 3 * DEFAULT_MAX_PENDING;

/**
 * Builds spans from records as they come (in time order): a span is complete when its request is answered (or
 * declared pending, or the builder ends). Used record by record by the live exporter and over a whole log by
 * `buildSpans`.
 */
export class SpanBuilder {
  private readonly open = new Map<string, OpenRequest>();
  private readonly bySeq = new Map<string, OpenRequest>();
  private readonly llmRequests = new Map<string, LlmRequestRecord>();
  /** The revision `initialize` agreed, by session (the newest MAX_RECENT sessions). */
  private readonly protocolVersions = new Map<string, string>();
  /** Multi-round-trip calls whose last round is still to come, by session and the seq of their first request. */
  private readonly calls = new Map<string, { first: OpenRequest; rounds: number }>();
  /**
   * Requests the tap evicted (more were open than it tracks), by session and seq, with their `pending` record's
   * time: it may still pair a late answer (`afterPending`). As many as it pairs late of one way's requests.
   */
  private readonly evicted = new RecentMap<string, { o: OpenRequest; time: number }>(DEFAULT_MAX_PENDING);
  /** Mcp-Session-Id of HTTP exchanges, by session and exchange: MCP records over HTTP name only the exchange. */
  private readonly mcpSessionIds = new Map<string, string>();
  /** Bounds on what is held open, so a peer that never answers cannot grow memory without end. */
  private readonly maxOpen: number;

  constructor(options: { maxOpen?: number } = {}) {
    this.maxOpen = options.maxOpen ?? DEFAULT_MAX_OPEN;
  }

  /** Take one record; returns the spans it completes (often none). */
  push(r: LogRecord): SpanData[] {
    switch (r.kind) {
      case 'request':
        this.request(r);
        return [];
      case 'response':
        return this.response(r);
      case 'notification':
        this.notification(r);
        return [];
      case 'pending':
        return this.pending(r);
      case 'evicted':
        return pendingOfEvicted(r).flatMap((p) => this.pending(p));
      case 'llm-request':
        this.remember(this.llmRequests, `${r.session}\u0000${r.exchange}`, r);
        return [];
      case 'llm-response':
      case 'llm-error':
        return [this.llmSpan(r)];
      case 'http-request': {
        const sid = r.headers['mcp-session-id'];
        if (sid !== undefined) this.remember(this.mcpSessionIds, `${r.label}\u0000${r.exchange}`, Array.isArray(sid) ? sid[0]! : sid, MAX_RECENT);
        return [];
      }
      case 'http-response': {
        const sid = r.headers['mcp-session-id'];
        if (sid !== undefined) this.remember(this.mcpSessionIds, `${r.label}\u0000${r.exchange}`, Array.isArray(sid) ? sid[0]! : sid, MAX_RECENT);
        return [];
      }
      default:
        return [];
    }
  }

  /** The logs ended: requests still open become spans without an answer. */
  end(time: number): SpanData[] {
    const spans: SpanData[] = [];
    for (const o of this.open.values()) spans.push(this.mcpSpan(o, undefined, time));
    // A call the server asked for input on, whose next round never came: its span ends with the logs.
    for (const call of this.calls.values()) spans.push(this.callSpan(call.first, undefined, time, call.rounds));
    // Evicted requests no late answer came for end where the tap let them go.
    for (const [key, { o, time: pendingTime }] of this.evicted.entries()) {
      this.evicted.take(key);
      spans.push(this.mcpSpan(o, undefined, pendingTime));
    }
    this.open.clear();
    this.bySeq.clear();
    this.calls.clear();
    return spans;
  }

  private request(r: RequestRecord): void {
    const o: OpenRequest = { record: requestHead(r), events: [] };
    // Parsing every request again would double the JSON work of the tap: only when an attribute needs params.
    const needsParams = r.raw.includes('traceparent') || r.method === 'initialize' || r.method === 'prompts/get' || r.method.startsWith('resources/') || r.method === 'tools/call';
    if (needsParams) {
      const params = asObject(parseRawObject(r.raw)?.params);
      if (params) o.params = params;
      const tp = parseTraceparent(asObject(params?.['_meta'])?.['traceparent']);
      if (tp) o.traceparent = { traceId: tp.traceId, spanId: tp.spanId };
    }
    const sid = r.exchange !== undefined ? this.mcpSessionIds.get(`${r.label}\u0000${r.exchange}`) : undefined;
    if (sid !== undefined) o.mcpSessionId = sid;
    this.remember(this.open, `${r.session}\u0000${r.dir}\u0000${String(r.id)}`, o);
    this.remember(this.bySeq, `${r.session}\u0000${r.seq}`, o);
  }

  private response(r: ResponseRecord): SpanData[] {
    if (r.method === 'initialize') {
      const version = asString(asObject(parseRawObject(r.raw)?.result)?.protocolVersion);
      if (version !== undefined) this.remember(this.protocolVersions, r.session, version, MAX_RECENT);
    }
    // The request the tap paired it with (stateless HTTP reuses ids across exchanges); else the same id, the
    // other way, for a log that does not say.
    const key = `${r.session}\u0000${r.dir === 's2c' ? 'c2s' : 's2c'}\u0000${String(r.id)}`;
    const seqKey = `${r.session}\u0000${r.requestSeq}`;
    const o = r.requestSeq !== undefined ? (this.bySeq.get(seqKey) ?? this.evicted.take(seqKey)?.o) : this.open.get(key);
    if (!o) return [];
    if (this.open.get(key) === o) this.open.delete(key);
    this.bySeq.delete(`${r.session}\u0000${o.record.seq}`);
    if (o.mcpSessionId === undefined && r.exchange !== undefined) {
      const sid = this.mcpSessionIds.get(`${r.label}\u0000${r.exchange}`);
      if (sid !== undefined) o.mcpSessionId = sid;
    }
    if (r.round === undefined || r.firstSeq === undefined) return [this.mcpSpan(o, r, r.time)];
    return this.roundSpans(o, r);
  }

  /**
   * A round of a multi-round-trip call: its own span, a child of the call's, and once the last round is in, the
   * call's span from its first request to its final answer.
   */
  private roundSpans(o: OpenRequest, r: ResponseRecord): SpanData[] {
    const key = `${r.session}\u0000${r.firstSeq}`;
    const call = this.calls.get(key) ?? { first: o, rounds: 0 };
    call.rounds = Math.max(call.rounds, r.round!);
    const round = this.mcpSpan(o, r, r.time);
    round.spanId = roundSpanId(r.session, o.record.seq);
    round.parentSpanId = mcpSpanId(r.session, r.firstSeq!);
    round.traceId = call.first.traceparent?.traceId ?? hex(`trace\u0000${r.session}\u0000${r.firstSeq}`, 32);
    round.name = `${round.name} (round ${r.round})`;
    round.attributes['mcptap.round'] = r.round!;
    if (r.resultType !== undefined) round.attributes['mcp.result.type'] = r.resultType;
    if (r.resultType === 'input_required') {
      this.remember(this.calls, key, call);
      return [round];
    }
    this.calls.delete(key);
    return [round, this.callSpan(call.first, r, r.time, call.rounds)];
  }

  /** The whole multi-round-trip call, as one span over its rounds. */
  private callSpan(first: OpenRequest, last: ResponseRecord | undefined, endTime: number, rounds: number): SpanData {
    const span = this.mcpSpan(first, last, endTime);
    span.attributes['mcptap.rounds'] = rounds;
    if (last?.callLatencyMs !== undefined) span.attributes['mcptap.call_latency_ms'] = last.callLatencyMs;
    if (!last) span.status = { code: 'unset' };
    return span;
  }

  private notification(r: NotificationRecord): void {
    if (r.requestSeq === undefined) return;
    const o = this.bySeq.get(`${r.session}\u0000${r.requestSeq}`);
    if (!o) return;
    const params = asObject(parseRawObject(r.raw)?.params);
    const attributes: Record<string, SpanAttributeValue> = {};
    for (const k of ['progress', 'total'] as const) if (typeof params?.[k] === 'number') attributes[`mcp.progress.${k}`] = params[k] as number;
    const message = asString(params?.message) ?? asString(params?.reason);
    if (message !== undefined) attributes['mcp.notification.message'] = message;
    if (o.events.length < 128) o.events.push({ name: r.method, time: r.time, attributes });
  }

  /** The tap let a request go: its span ends there, unless it was evicted and a late answer may still come. */
  private pending(r: PendingRecord): SpanData[] {
    const key = `${r.session}\u0000${r.requestSeq}`;
    const o = this.bySeq.get(key);
    if (!o) return [];
    this.bySeq.delete(key);
    this.open.delete(`${r.session}\u0000${o.record.dir}\u0000${String(o.record.id)}`);
    if (!r.evicted || r.cancelled) return [this.mcpSpan(o, undefined, r.time)];
    const gone = this.evicted.set(key, { o, time: r.time });
    return gone ? [this.mcpSpan(gone.o, undefined, gone.time)] : [];
  }

  private mcpSpan(o: OpenRequest, response: ResponseRecord | undefined, endTime: number): SpanData {
    const r = o.record;
    const params = o.params;
    const attributes: Record<string, SpanAttributeValue> = {
      'mcp.method.name': r.method,
      'jsonrpc.request.id': String(r.id),
      'network.transport': r.channel === 'stdio' ? 'pipe' : 'tcp',
      'mcptap.direction': r.dir,
    };
    // 2026-07-28 names the revision on each request; before, the handshake agreed on one per session.
    const version = r.protocolVersion ?? this.protocolVersions.get(r.session) ?? (r.method === 'initialize' ? asString(params?.protocolVersion) : undefined);
    if (version !== undefined) attributes['mcp.protocol.version'] = version;
    if (o.mcpSessionId !== undefined) attributes['mcp.session.id'] = o.mcpSessionId;
    let target: string | undefined;
    if (r.method === 'tools/call') {
      target = r.tool ?? asString(params?.name);
      attributes['gen_ai.operation.name'] = 'execute_tool';
      if (target !== undefined) attributes['gen_ai.tool.name'] = target;
    } else if (r.method === 'prompts/get') {
      target = asString(params?.name);
      if (target !== undefined) attributes['gen_ai.prompt.name'] = target;
    } else if (r.method.startsWith('resources/')) {
      const uri = asString(params?.uri);
      if (uri !== undefined) attributes['mcp.resource.uri'] = uri;
    }
    let status: SpanData['status'] = { code: 'unset' };
    if (!response) {
      attributes['error.type'] = 'no_response';
      status = { code: 'error', message: 'The request was never answered in the logs.' };
    } else if (response.error) {
      attributes['error.type'] = String(response.error.code);
      attributes['rpc.response.status_code'] = String(response.error.code);
      status = { code: 'error', message: response.error.message };
    } else if (response.isError === true) {
      attributes['error.type'] = 'tool_error';
      status = { code: 'error', message: 'The tool returned isError: true.' };
    }
    const spanId = mcpSpanId(r.session, r.seq);
    const span: SpanData = {
      traceId: o.traceparent?.traceId ?? hex(`trace\u0000${r.session}\u0000${r.seq}`, 32),
      spanId,
      name: target !== undefined ? `${r.method} ${target}` : r.method,
      kind: 'client',
      startTime: r.time,
      endTime: Math.max(r.time, endTime),
      attributes,
      status,
      events: o.events,
      links: [],
      resource: { label: r.label, session: r.session, channel: r.channel },
    };
    if (r.method === 'tools/call' && target !== undefined) span.toolCall = { name: target, arguments: params?.arguments ?? {} };
    if (o.traceparent) {
      span.parentSpanId = o.traceparent.spanId;
      attributes['mcptap.traceparent'] = 'params._meta';
    }
    return span;
  }

  private llmSpan(r: LlmResponseRecord | LlmErrorRecord): SpanData {
    const key = `${r.session}\u0000${r.exchange}`;
    const request = this.llmRequests.get(key);
    this.llmRequests.delete(key);
    const model = request?.model ?? (r.kind === 'llm-response' ? r.model : undefined);
    const operation = operationOf(r.endpoint);
    const attributes: Record<string, SpanAttributeValue> = {
      'gen_ai.operation.name': operation,
      'gen_ai.provider.name': PROVIDER_NAMES[r.channel] ?? 'openai',
      'http.route': r.endpoint,
      'mcptap.exchange': r.exchange,
    };
    if (model !== undefined) attributes['gen_ai.request.model'] = model;
    if (request) {
      attributes['gen_ai.request.stream'] = request.stream;
      if (request.tools.length > 0) attributes['mcptap.tools.offered'] = request.tools;
      if (request.toolResults.length > 0) attributes['mcptap.tool_results'] = request.toolResults.length;
    }
    let status: SpanData['status'] = { code: 'unset' };
    let startTime: number;
    if (r.kind === 'llm-response') {
      startTime = request?.time ?? r.time - r.durationMs;
      if (r.model !== undefined) attributes['gen_ai.response.model'] = r.model;
      attributes['http.response.status_code'] = r.status;
      if (r.finishReason !== undefined) attributes['gen_ai.response.finish_reasons'] = [r.finishReason];
      if (r.usage?.promptTokens !== undefined) attributes['gen_ai.usage.input_tokens'] = r.usage.promptTokens;
      if (r.usage?.completionTokens !== undefined) attributes['gen_ai.usage.output_tokens'] = r.usage.completionTokens;
      if (r.ttftMs !== undefined) attributes['mcptap.ttft_ms'] = r.ttftMs;
      if (r.toolCalls.length > 0) {
        attributes['mcptap.tool_calls'] = r.toolCalls.map((c) => c.name);
        const ids = r.toolCalls.map((c) => c.id).filter((id): id is string => id !== undefined);
        if (ids.length > 0) attributes['gen_ai.tool.call.id'] = ids.length === 1 ? ids[0]! : ids;
      }
      if (r.status >= 400) {
        attributes['error.type'] = String(r.status);
        status = { code: 'error', message: `HTTP ${r.status}` };
      }
    } else {
      startTime = request?.time ?? r.time;
      attributes['http.response.status_code'] = r.status;
      attributes['error.type'] = r.status >= 400 ? String(r.status) : 'stream_error';
      status = { code: 'error', message: r.error };
    }
    return {
      traceId: liveLlmTraceId(r.session, r.exchange),
      spanId: llmSpanId(r.session, r.exchange),
      name: model !== undefined ? `${operation} ${model}` : operation,
      kind: 'client',
      startTime: Math.min(startTime, r.time),
      endTime: r.time,
      attributes,
      status,
      events: [],
      links: [],
      resource: { label: r.label, session: r.session, channel: r.channel },
    };
  }

  private remember<V>(map: Map<string, V>, key: string, value: V, max = this.maxOpen): void {
    setBounded(map, key, value, max);
  }
}

/**
 * Every span of the given records (ordered by time, as readAllRecords gives them), with the trace's links
 * applied: the LLM calls of one turn share one trace under a `turn` span, and each tool round trip's MCP
 * `tools/call` span becomes a child of the LLM call that asked for it (with a link to the call that carried
 * its result back). A `traceparent` the host put in `params._meta` wins over the round trip: the span stays in
 * the host's trace and gets a link to the LLM span instead.
 */
export function buildSpans(records: readonly LogRecord[], trace?: Trace): SpanData[] {
  const builder = new SpanBuilder({ maxOpen: Number.MAX_SAFE_INTEGER });
  const spans: SpanData[] = [];
  for (const r of records) spans.push(...builder.push(r));
  // The spans still open at the end can be many (a log cut off mid-stream): a loop, not a spread.
  for (const s of builder.end(records[records.length - 1]?.time ?? 0)) spans.push(s);
  if (trace) joinTrace(spans, trace);
  return spans.sort((a, b) => a.startTime - b.startTime);
}

function joinTrace(spans: SpanData[], trace: Trace): void {
  const byId = new Map(spans.map((s) => [s.spanId, s]));
  const join: SpanJoin = {
    at: (spanId, change) => {
      const s = byId.get(spanId);
      if (s && change) change(s);
    },
    traceOf: (spanId) => byId.get(spanId)?.traceId,
  };
  // The turns first: a round trip joins the trace its LLM call has in its turn.
  for (const turn of trace.turns) {
    const root = joinTurn(turn, join);
    if (root) spans.push(root);
  }
  for (const trip of trace.roundTrips) joinTrip(trip, join);
}

/**
 * How the trace reaches the spans it changes, whether they are all there (`buildSpans`) or stream by
 * (otlp-stream.ts): `at` is told about every span a turn or round trip settles, with the change to make, if any.
 */
export interface SpanJoin {
  at(spanId: string, change?: (span: SpanData) => void): void;
  /** The trace id of the span, as the turns have left it; undefined when there is no such span. */
  traceOf(spanId: string): string | undefined;
}

/** A turn: one trace for its LLM calls, under a span of its own (returned) that covers the whole turn. */
export function joinTurn(turn: TraceTurn, join: SpanJoin): SpanData | undefined {
  const first = turn.exchanges[0];
  if (first === undefined) return undefined;
  const traceId = hex(`turn\u0000${turn.session}\u0000${first}`, 32);
  const rootId = hex(`turn-span\u0000${turn.session}\u0000${first}`, 16);
  for (const exchange of turn.exchanges) {
    join.at(llmSpanId(turn.session, exchange), (s) => {
      s.traceId = traceId;
      s.parentSpanId = rootId;
    });
  }
  return {
    traceId,
    spanId: rootId,
    name: `turn ${turn.turn}`,
    kind: 'internal',
    startTime: turn.time,
    endTime: turn.endTime,
    attributes: {
      'gen_ai.operation.name': 'invoke_agent',
      'mcptap.turn': turn.turn,
      'mcptap.llm_calls': turn.llmCalls,
      'mcptap.tool_calls': turn.toolCalls,
      ...(turn.model !== null ? { 'gen_ai.request.model': turn.model } : {}),
    },
    status: { code: 'unset' },
    events: [],
    links: [],
    resource: { label: turn.label, session: turn.session, channel: turn.channel },
  };
}

/** A round trip: the MCP call (and its rounds) joins the trace of the LLM call that asked for it. */
export function joinTrip(trip: ToolRoundTrip, join: SpanJoin): void {
  if (!trip.mcp) return;
  const { session, seq } = trip.mcp;
  const rounds = (trip.mcp.rounds ?? []).map((round) => roundSpanId(session, round.seq));
  const llmId = trip.llm ? llmSpanId(trip.llm.session, trip.llm.exchange) : undefined;
  const llmTrace = llmId !== undefined ? join.traceOf(llmId) : undefined;
  if (llmId === undefined || llmTrace === undefined) {
    join.at(mcpSpanId(session, seq));
    for (const id of rounds) join.at(id);
    return;
  }
  const fedId = trip.fedBackIn ? llmSpanId(trip.fedBackIn.session, trip.fedBackIn.exchange) : undefined;
  const fedTrace = fedId !== undefined ? join.traceOf(fedId) : undefined;
  const toolCallId = trip.llm!.toolCallId;
  join.at(mcpSpanId(session, seq), (mcp) => {
    if (toolCallId !== null) mcp.attributes['gen_ai.tool.call.id'] = toolCallId;
    const traced = mcp.attributes['mcptap.traceparent'] !== undefined;
    // The rounds of a multi-round-trip call go with it into the LLM call's trace.
    for (const id of rounds) join.at(id, traced ? undefined : (child) => (child.traceId = llmTrace));
    if (trip.turn !== null) mcp.attributes['mcptap.turn'] = trip.turn;
    if (traced) {
      mcp.links.push({ traceId: llmTrace, spanId: llmId, attributes: { 'mcptap.link': 'model-tool-call' } });
    } else {
      mcp.traceId = llmTrace;
      mcp.parentSpanId = llmId;
    }
    if (fedId !== undefined && fedTrace !== undefined) mcp.links.push({ traceId: fedTrace, spanId: fedId, attributes: { 'mcptap.link': 'result-fed-back' } });
  });
}

/** `chat` for chat endpoints, `text_completion` for generate/completions, `embeddings`; else `chat`. */
/** `gen_ai.provider.name` of each LLM channel, as the GenAI semantic conventions name them. */
const PROVIDER_NAMES: Partial<Record<string, string>> = { ollama: 'ollama', openai: 'openai', anthropic: 'anthropic', gemini: 'gcp.gemini' };

function operationOf(endpoint: string): string {
  if (/embed/i.test(endpoint)) return 'embeddings';
  if (/:(stream)?generateContent$/i.test(endpoint)) return 'generate_content';
  if (/\/api\/generate$|\/completions$/.test(endpoint) && !/chat/.test(endpoint)) return 'text_completion';
  return 'chat';
}

/**
 * `digits` hex digits of a hash of `text`: one pass over the text into two 32-bit states (as cyrb53 does), then
 * one finalized word per 8 digits. Not cryptographic (ids need to be spread, not secret) and cheaper than a
 * sha256 per id: the live exporter computes two ids per span on the tap's own thread.
 */
function hex(text: string, digits: number): string {
  let h1 = 0xdeadbeef;
  let h2 = 0x41c6ce57;
  for (let i = 0; i < text.length; i++) {
    const c = text.charCodeAt(i);
    h1 = Math.imul(h1 ^ c, 2654435761);
    h2 = Math.imul(h2 ^ c, 1597334677);
  }
  let out = '';
  for (let k = 1; out.length < digits; k++) out += (fmix(h1 ^ fmix(h2 + Math.imul(k, 0x9e3779b9))) >>> 0).toString(16).padStart(8, '0');
  const id = out.slice(0, digits);
  // An all-zero id is invalid in OTLP; never emit one.
  return /^0+$/.test(id) ? `${'0'.repeat(digits - 1)}1` : id;
}

/** murmur3's 32-bit finalizer: every input bit affects every output bit. */
function fmix(h: number): number {
  h = Math.imul(h ^ (h >>> 16), 0x85ebca6b);
  h = Math.imul(h ^ (h >>> 13), 0xc2b2ae35);
  return h ^ (h >>> 16);
}
