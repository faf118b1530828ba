/**
 * What the trace linker takes from each record as it streams by (linker.ts): the sessions, the LLM exchanges,
 * the MCP `tools/call`s, and the model's tool calls found in the replies. Pure: records in, these objects out.
 */
import type { HttpRequestRecord, LlmErrorRecord, LlmRequestRecord, LlmResponseRecord, LlmToolCall, LogRecord, RequestRecord, ResponseRecord } from '../log/schema.js';
import { asObject, asString, peerInfo, toolNames } from '../protocols/mcp.js';
import { parseRawObject } from '../log/reader.js';
import { requestHead, type RequestHead } from '../log/request-head.js';
import { canonicalJson, parseTextToolCalls, toolResultText, type RoundTripRound, type TraceSession } from './link.js';

/** One LLM HTTP exchange: its request, and its reply or error. */
export interface LlmExchange {
  key: string;
  /** Order in which the linker first met it: ties in time are broken by it, as the whole-log linker did. */
  ord: number;
  request?: LlmRequestRecord;
  response?: LlmResponseRecord;
  error?: LlmErrorRecord;
  body?: string;
  /** Its turn: fixed once `committed`, a guess before. */
  turn?: number;
  /** Its turn is decided for good. */
  committed?: boolean;
  /** The tool calls of its reply are linked for good (their round trips are out). */
  callsDone?: boolean;
  /** Model calls linked for good whose result this request carries back. */
  fedBy?: ModelCall[];
}

/** A tool call as the model made it, with where it came from. */
export interface ModelCall {
  call: LlmToolCall;
  exchange: LlmExchange;
  /** When the model had decided: the chunk that completed the call (streams), else the end of the reply. */
  decidedAt: number;
  /** Request → decision, when the request is in the logs. */
  decisionMs?: number;
  viaText: boolean;
  serverName?: string;
  canonical: string;
  /** Position among the reply's calls. */
  index: number;
}

/** One MCP `tools/call` and its answer. */
export interface McpCall {
  request: RequestHead;
  response?: McpCallResponse;
  name: string;
  arguments: unknown;
  canonical: string;
  resultText: string | null;
  used: boolean;
  /** Order in which the linker met it. */
  ord: number;
  /** A multi-round-trip call's rounds, once a second one is seen. */
  rounds?: RoundTripRound[];
  /** No answer will be paired with it: a `pending` record gave it up (an eviction's, once no longer held for a late one). */
  givenUp?: boolean;
}

/** What a call keeps of its answer (the round trip says no more of it; its request: RequestHead). */
export type McpCallResponse = Pick<ResponseRecord, 'time' | 'seq' | 'error' | 'isError' | 'resultType' | 'latencyMs' | 'callLatencyMs'>;

/** The order the model decided in, which the linker's first-come matching follows (ties: reply end, exchange, position). */
export function byDecision(a: ModelCall, b: ModelCall): number {
  return a.decidedAt - b.decidedAt || a.exchange.response!.time - b.exchange.response!.time || a.exchange.ord - b.exchange.ord || a.index - b.index;
}

/** Fold one record into its session's summary (who it was, what it offered), making the session when new. */
export function noteSession(sessions: Map<string, TraceSession>, r: LogRecord): TraceSession {
  let s = sessions.get(r.session);
  if (!s) {
    s = { type: 'session', session: r.session, label: r.label, role: 'http', channel: r.channel, time: r.time, endTime: r.time, records: 0 };
    sessions.set(r.session, s);
  }
  s.records++;
  s.time = Math.min(s.time, r.time);
  s.endTime = Math.max(s.endTime, r.time);
  if (r.kind === 'request' || r.kind === 'response' || r.kind === 'notification') {
    if (s.role !== 'llm') {
      s.role = 'mcp';
      s.channel = r.channel;
    }
  }
  if (r.kind === 'llm-request') noteLlmRequest(s, r);
  else if (r.kind === 'request' && r.dir === 'c2s') noteClientRequest(s, r);
  else if (r.kind === 'response') noteResponse(s, r);
  return s;
}

function noteLlmRequest(s: TraceSession, r: LlmRequestRecord): void {
  s.role = 'llm';
  s.channel = r.channel;
  if (r.model !== undefined && !(s.models ??= []).includes(r.model)) s.models.push(r.model);
  for (const t of r.tools) if (!(s.tools ??= []).includes(t)) s.tools.push(t);
}

/** 2026-07-28: the revision and the client from each request's _meta; before, the client from initialize. */
function noteClientRequest(s: TraceSession, r: RequestRecord): void {
  if (r.protocolVersion !== undefined) s.protocolVersion = r.protocolVersion;
  if (r.client) s.client = r.client;
  if (r.method === 'initialize') {
    const client = peerInfo(asObject(parseRawObject(r.raw)?.params)?.clientInfo);
    if (client) s.client = client;
  }
}

/** The server from discover or any result (2026-07-28), or from initialize; the tools it listed. */
function noteResponse(s: TraceSession, r: ResponseRecord): void {
  if (r.server) s.server = r.server;
  if (r.supportedVersions) s.supportedVersions = r.supportedVersions;
  if (r.method === 'initialize') {
    const result = asObject(parseRawObject(r.raw)?.result);
    const server = peerInfo(result?.serverInfo);
    if (server) s.server = server;
    const version = asString(result?.protocolVersion);
    if (version !== undefined) s.protocolVersion = version;
  }
  if (r.method === 'tools/list' && r.dir === 's2c') {
    const names = toolNames(parseRawObject(r.raw)?.result);
    for (const t of names) if (!(s.tools ??= []).includes(t)) s.tools.push(t);
    s.tools ??= [];
  }
}

/** The text body of an HTTP request (what a host that feeds results back as text sent), if the log kept it. */
export function requestBody(r: HttpRequestRecord): string | undefined {
  if (r.body === undefined || r.bodyEncoding === 'base64') return undefined;
  return r.body;
}

/** A client's `tools/call` request as a call to link, or undefined for a later round of a multi-round-trip call (noted on its first). */
export function mcpCallOf(r: RequestRecord, open: Map<string, McpCall>, ord: number): McpCall | undefined {
  const params = asObject(parseRawObject(r.raw)?.params);
  const args = params?.arguments ?? {};
  // A later round of a multi-round-trip call is the same call, not another one.
  const first = r.firstSeq !== undefined ? open.get(`${r.session}\u0000${r.firstSeq}`) : undefined;
  if (first) {
    open.set(`${r.session}\u0000${r.seq}`, first);
    (first.rounds ??= []).push({ seq: r.seq, latencyMs: null, resultType: null });
    return undefined;
  }
  const call: McpCall = { request: requestHead(r), name: r.tool ?? asString(params?.name) ?? '(unknown tool)', arguments: args, canonical: canonicalJson(args), resultText: null, used: false, ord };
  open.set(`${r.session}\u0000${r.seq}`, call);
  return call;
}

/** A `tools/call` answer onto its call. */
export function noteMcpAnswer(call: McpCall, r: ResponseRecord): void {
  if (r.round !== undefined) noteRound(call, r);
  call.response = { time: r.time, seq: r.seq, error: r.error, isError: r.isError, resultType: r.resultType, latencyMs: r.latencyMs, callLatencyMs: r.callLatencyMs };
  call.resultText = r.error ? r.error.message : toolResultText(parseRawObject(r.raw)?.result);
}

/** A round's answer: the first round's entry is made here, later ones when their request was seen. */
function noteRound(call: McpCall, r: ResponseRecord): void {
  const rounds = (call.rounds ??= []);
  if (rounds.length === 0 || rounds[0]!.seq !== call.request.seq) rounds.unshift({ seq: call.request.seq, latencyMs: null, resultType: null });
  const round = rounds.find((x) => x.seq === r.requestSeq) ?? rounds[rounds.length - 1]!;
  round.latencyMs = r.latencyMs ?? null;
  round.resultType = r.resultType ?? null;
  if (r.inputRequests) round.inputRequests = r.inputRequests;
}

/** The tool calls of the replies of these exchanges, in the order the model decided on them. */
export function collectModelCalls(exchanges: Iterable<LlmExchange>): ModelCall[] {
  const calls: ModelCall[] = [];
  for (const x of exchanges) {
    const response = x.response;
    if (!response || x.callsDone) continue;
    const whole = x.request ? { decidedAt: response.time, decisionMs: response.durationMs } : { decidedAt: response.time };
    response.toolCalls.forEach((call, index) => calls.push({ call, exchange: x, viaText: false, canonical: canonicalJson(call.arguments), index, ...decision(x, call) }));
    if (response.toolCalls.length === 0 && response.content.includes('<use_mcp_tool>')) {
      parseTextToolCalls(response.content).forEach(({ server, call }, index) => {
        calls.push({ call, exchange: x, viaText: true, canonical: canonicalJson(call.arguments), index, ...whole, ...(server !== undefined ? { serverName: server } : {}) });
      });
    }
  }
  return calls.sort(byDecision);
}

/** When the model decided on a call: at the chunk that completed it when the stream says, else at the reply's end. */
function decision(x: LlmExchange, call: LlmToolCall): { decidedAt: number; decisionMs?: number } {
  const response = x.response!;
  if (!x.request) return { decidedAt: response.time };
  if (call.completedMs === undefined || call.completedMs > response.durationMs) return { decidedAt: response.time, decisionMs: response.durationMs };
  return { decidedAt: x.request.time + call.completedMs, decisionMs: call.completedMs };
}
