/**
 * The cross-channel trace: links what the model asked for, what the MCP server ran, and what went back to the
 * model, across logs written by separate mcptap processes (one HTTP proxy in front of the LLM, one stdio wrapper
 * per MCP server).
 *
 * The chain of one round trip:
 *   LLM reply with a tool call  →  MCP `tools/call` (in whichever server's log)  →  its result
 *   →  the later LLM request that carries the result back  →  the model's reply to that request (the answer).
 *
 * How links are made, strongest evidence first:
 * - model tool call ↔ `tools/call`: the MCP request carries no LLM tool-call id, so by tool name, through the
 *   host's renaming (`weather__get_weather`, `mcp__weather__get_weather`, `weather_get_weather`, a name cut to 64
 *   characters: tool-names.ts), then identical canonical arguments (keys sorted), inside a time window that
 *   opens when the model was asked; a same-name call with other arguments is taken only when nothing better is
 *   there, and then flagged `arguments-changed`.
 * - tool call ↔ fed-back result: by tool-call id (OpenAI always, newer Ollama); else by the result text the MCP
 *   server returned; else by tool name (`tool_name` in Ollama); else by the request's own history (an unnamed
 *   `role: tool` message after an assistant message with the same call, as in older Ollama); else, for hosts that
 *   feed results back as plain text (Cline), by finding the result text in the request body.
 *
 * Pure: records in (as readAllRecords gives them, ordered by time), plain objects out.
 */
import type {
  HttpRequestRecord,
  LlmErrorRecord,
  LlmRequestRecord,
  LlmResponseRecord,
  LlmToolCall,
  LogRecord,
  RequestRecord,
  ResponseRecord,
} from '../log/schema.js';
import type { Channel, JsonRpcId } from '../types.js';
import { asObject, asString, peerInfo, preview, toolNames, type PeerInfo } from '../protocols/mcp.js';
import { parseRawObject } from '../log/reader.js';
import { ToolNameMap, type ToolTarget } from './tool-names.js';

/** Default time window after the model's reply within which the MCP call that ran its tool call must start. */
export const DEFAULT_LINK_WINDOW_MS = 120_000;
/** Longest preview of a result or answer in trace lines. */
const PREVIEW_CHARS = 160;

/** What a diagnostic is about. */
export type DiagnosticCode =
  /** The model asked for a tool call that no MCP server in the logs ran. */
  | 'tool-not-run'
  /** A tool ran, but its result never went back to the model in the logs. */
  | 'result-not-fed-back'
  /** The server received other arguments than the model wrote. */
  | 'arguments-changed'
  /** A server offers a tool that no request to the model listed. */
  | 'tool-not-offered-to-model'
  /** The model was offered a tool that no MCP server in the logs offers. */
  | 'tool-not-on-any-server'
  /** The model wrote the tool call as text (Cline's `<use_mcp_tool>`), not as a structured tool call. */
  | 'tool-call-as-text'
  /** An MCP `tools/call` that no model tool call asked for (the user or the host called it directly). */
  | 'call-without-model'
  /** The host offers a server's tool to the model under another name (`mcp__weather__get_weather`): which mapping linked it. */
  | 'tool-name-mapped';

/** One finding, as a trace line. */
export interface TraceDiagnostic {
  type: 'diagnostic';
  code: DiagnosticCode;
  /** `warn` for something likely wrong, `info` for something worth knowing. */
  level: 'warn' | 'info';
  time: number;
  tool?: string;
  /** The session the finding is about (an MCP server's or the LLM proxy's). */
  session?: string;
  /** `seq` of the record it points at, within that session's log. */
  seq?: number;
  msg: string;
}

/** Per-round timings in milliseconds; a field is absent when its two ends are not both in the logs. */
export interface RoundTiming {
  /** The model's decision: from the LLM request to the chunk that completed the call (without one: the complete reply). */
  decisionMs?: number;
  /** From the model's decision (the chunk that completed the call) to the host sending `tools/call`; never negative. */
  dispatchMs?: number;
  /** The tool's execution as seen on the wire: `tools/call` request to its response. */
  toolMs?: number;
  /** From the tool result to the LLM request that carries it back (the host's own work). */
  feedBackMs?: number;
  /** The model's answer to the fed-back request: request to complete reply. */
  answerMs?: number;
  /** From the first LLM request of the round to the answer's last byte. */
  totalMs?: number;
}

/** The LLM side of a round trip. */
export interface RoundTripLlm {
  channel: Channel;
  session: string;
  label: string;
  /** HTTP exchange id of the LLM call whose reply held the tool call. */
  exchange: string;
  endpoint: string;
  model: string | null;
  toolCallId: string | null;
  /** Milliseconds the model took to decide on the call (request → the chunk that completed it), as `timing.decisionMs`. */
  decidedMs: number | null;
  /** True when the model wrote the call as text in its content rather than as a structured tool call. */
  viaText?: boolean;
  /** For text tool calls: the server the model named (`<server_name>`). */
  serverName?: string;
}

/** The MCP side of a round trip. */
export interface RoundTripMcp {
  session: string;
  /** The server's name from its `initialize` answer, else the tap's label. */
  server: string;
  label: string;
  id: JsonRpcId;
  /** `seq` of the `tools/call` request record in that session's log. */
  seq: number;
  latencyMs: number | null;
  isError: boolean;
  /** Arguments as the server received them, present only when they differ from the model's. */
  arguments?: unknown;
  /** The tool's name on the server, present only when the host offered it to the model under another name. */
  tool?: string;
  /** How the host's name maps to the server's (`mcp__server__tool`, `server_tool`, `shortened to 64 characters`, …), with `tool`. */
  mapping?: string;
  /** JSON-RPC error message, when the call failed that way. */
  error?: string;
  /** A multi-round-trip call (2026-07-28 `input_required`): each round, in order; `latencyMs` is then the whole call's. */
  rounds?: RoundTripRound[];
}

/** One round of a multi-round-trip call. */
export interface RoundTripRound {
  /** `seq` of the round's request. */
  seq: number;
  latencyMs: number | null;
  /** `input_required` for the rounds that asked, `complete` (or what the server said) for the last. */
  resultType: string | null;
  /** What an `input_required` round asked for (the keys of its `inputRequests`). */
  inputRequests?: string[];
}

/** One tool call, from the model's decision to its answer: the `tool-round-trip` trace line. */
export interface ToolRoundTrip {
  type: 'tool-round-trip';
  /** When the model decided on the call: the chunk that completed it, else its reply's end (without a model call: when `tools/call` was sent). */
  time: number;
  /** Number of the turn (see TraceTurn) it belongs to, or null when no model call asked for it. */
  turn: number | null;
  tool: string;
  /** Arguments as the model wrote them (or as the server got them, when no model call is known). */
  arguments: unknown;
  llm: RoundTripLlm | null;
  mcp: RoundTripMcp | null;
  /** Preview of the tool's result text (or of what was fed back, when the MCP side is not in the logs). */
  result: string | null;
  fedBack: boolean;
  /** The LLM exchange that carried the result back. */
  fedBackIn?: { session: string; exchange: string; time: number };
  /** Preview of the model's reply to the request that carried the result back; null when it replied with more tool calls only. */
  answerPreview: string | null;
  timing: RoundTiming;
  /** Codes of the diagnostics about this round trip. */
  diagnostics: DiagnosticCode[];
}

/** One user turn: the first LLM request with a new question, and every later request that feeds results back into it. */
export interface TraceTurn {
  type: 'turn';
  turn: number;
  time: number;
  endTime: number;
  session: string;
  label: string;
  channel: Channel;
  model: string | null;
  /** Preview of the user's message that started the turn. */
  prompt: string | null;
  /** HTTP exchange ids of the turn's LLM calls, in order. */
  exchanges: string[];
  llmCalls: number;
  toolCalls: number;
  /** The model's last reply text in the turn. */
  answerPreview: string | null;
  timing: {
    /** First request to last reply. */
    totalMs: number;
    /** Sum of the turn's LLM call durations. */
    llmMs: number;
    /** Sum of its tools' execution times. */
    toolMs: number;
    /** The rest: what the host spent between calls (totalMs − llmMs − toolMs, never below 0). */
    hostMs: number;
  };
}

/** One log session (an MCP server wrapper or an LLM proxy run): who it was and what it offered. */
export interface TraceSession {
  type: 'session';
  session: string;
  label: string;
  /** `mcp` for MCP traffic, `llm` for a proxy that saw LLM calls, `http` for other HTTP traffic. */
  role: 'mcp' | 'llm' | 'http';
  channel: Channel;
  time: number;
  endTime: number;
  records: number;
  /**
   * MCP: `serverInfo` and `clientInfo` from the handshake, and the agreed protocol version; for 2026-07-28, the
   * client and the revision from the requests' `_meta`, the server from server/discover or a result's `_meta`.
   */
  server?: PeerInfo;
  client?: PeerInfo;
  protocolVersion?: string;
  /** MCP 2026-07-28: the revisions the server's server/discover listed. */
  supportedVersions?: string[];
  /** MCP: tools the server listed. LLM: every tool name offered to the model. */
  tools?: string[];
  /** LLM: the models asked. */
  models?: string[];
  llmCalls?: number;
  toolCalls?: number;
}

/** Everything the linker found. */
export interface Trace {
  sessions: TraceSession[];
  turns: TraceTurn[];
  roundTrips: ToolRoundTrip[];
  diagnostics: TraceDiagnostic[];
}

export interface LinkOptions {
  /** How long after the model's reply the matching `tools/call` may start. */
  windowMs?: number;
}

/** A tool call as the model made it, with where it came from. */
interface ModelCall {
  call: LlmToolCall;
  exchange: LlmExchange;
  /** When the model had decided: the chunk that completed the call (streams), else the end of the reply. */
  decidedAt: number;
  /** Request → decision, when the request is in the logs. */
  decisionMs?: number;
  viaText: boolean;
  serverName?: string;
  canonical: string;
}

/** One LLM HTTP exchange: its request, and its reply or error. */
interface LlmExchange {
  key: string;
  request?: LlmRequestRecord;
  response?: LlmResponseRecord;
  error?: LlmErrorRecord;
  body?: string;
  turn?: number;
}

/** One MCP `tools/call` and its answer. */
interface McpCall {
  request: RequestRecord;
  response?: ResponseRecord;
  name: string;
  arguments: unknown;
  canonical: string;
  resultText: string | null;
  server: string;
  used: boolean;
  /** A multi-round-trip call's rounds, once a second one is seen. */
  rounds?: RoundTripRound[];
}

/** Link the records of one or more logs into sessions, turns, round trips and diagnostics. */
export function linkTrace(records: readonly LogRecord[], options: LinkOptions = {}): Trace {
  const windowMs = options.windowMs ?? DEFAULT_LINK_WINDOW_MS;
  const sessions = collectSessions(records);
  const exchanges = collectExchanges(records);
  const mcpCalls = collectMcpCalls(records, sessions);
  const modelCalls = collectModelCalls(exchanges);
  const diagnostics: TraceDiagnostic[] = [];
  const names = toolNameMap(sessions, mcpCalls);

  // 1. Each model call → the MCP call that ran it. Exact arguments first, over all calls, so that a changed
  //    call cannot take the place of an exact one that comes later.
  // MCP calls by tool name, in time order, so each model call looks only at its window.
  const byName = new Map<string, McpCall[]>();
  for (const c of mcpCalls) {
    const list = byName.get(c.name);
    if (list) list.push(c);
    else byName.set(c.name, [c]);
  }
  const ran = new Map<ModelCall, McpCall>();
  const mappingOf = new Map<ModelCall, ToolTarget>();
  const targetsOf = new Map<ModelCall, ToolTarget[]>();
  for (const m of modelCalls) targetsOf.set(m, names.resolve(m.call.name, m.exchange.request?.tools));
  for (const exact of [true, false]) {
    for (const m of modelCalls) {
      if (ran.has(m)) continue;
      const from = m.exchange.request?.time ?? m.exchange.response!.time;
      const until = m.exchange.response!.time + windowMs;
      // The best mapping that finds a call wins; within it, the earliest call.
      for (const t of targetsOf.get(m)!) {
        const list = byName.get(t.tool) ?? [];
        let found: McpCall | undefined;
        for (let i = lowerBound(list, from, (c) => c.request.time); i < list.length && list[i]!.request.time <= until; i++) {
          const c = list[i]!;
          if (c.used || !t.sessions.has(c.request.session) || (exact && c.canonical !== m.canonical)) continue;
          found = c;
          break;
        }
        if (found) {
          found.used = true;
          ran.set(m, found);
          mappingOf.set(m, t);
          break;
        }
      }
    }
  }

  // 2. Each model call → the first later LLM request that carries its result back.
  const ordered = [...exchanges.values()].filter((x) => x.request).sort((a, b) => a.request!.time - b.request!.time);
  const fedBackIn = new Map<ModelCall, LlmExchange>();
  for (const m of modelCalls) {
    const mcp = ran.get(m);
    // A host that acts on the completing chunk may feed the result back before the reply's response has ended.
    const after = m.decidedAt;
    const start = lowerBound(ordered, after, (x) => x.request!.time);
    const carries = (x: LlmExchange): boolean => x !== m.exchange && carriesResult(x, m, mcp?.resultText ?? null);
    // The conversation goes on through the same proxy and API; look elsewhere only when it did not.
    const own = (x: LlmExchange): boolean => x.request!.session === m.exchange.response!.session && x.request!.channel === m.exchange.response!.channel;
    const carrier = findFrom(ordered, start, (x) => own(x) && carries(x)) ?? findFrom(ordered, start, carries);
    if (carrier) fedBackIn.set(m, carrier);
  }

  // 3. Turns: a request that feeds a result back continues the turn of the call it answers; any other starts one.
  const turns: TraceTurn[] = [];
  const feeds = new Map<LlmExchange, ModelCall[]>();
  for (const [m, x] of fedBackIn) {
    const list = feeds.get(x);
    if (list) list.push(m);
    else feeds.set(x, [m]);
  }
  for (const x of ordered) {
    const parent = feeds.get(x)?.find((m) => m.exchange.turn !== undefined)?.exchange.turn;
    if (parent !== undefined) {
      x.turn = parent;
      const t = turns[parent - 1]!;
      t.exchanges.push(x.request!.exchange);
      continue;
    }
    const r = x.request!;
    x.turn = turns.length + 1;
    turns.push({
      type: 'turn',
      turn: x.turn,
      time: r.time,
      endTime: r.time,
      session: r.session,
      label: r.label,
      channel: r.channel,
      model: r.model ?? null,
      prompt: r.prompt !== undefined ? preview(r.prompt, PREVIEW_CHARS) : null,
      exchanges: [r.exchange],
      llmCalls: 0,
      toolCalls: 0,
      answerPreview: null,
      timing: { totalMs: 0, llmMs: 0, toolMs: 0, hostMs: 0 },
    });
  }
  // A reply whose request is not in the logs (a log cut at its start) belongs to no turn; its tool calls still link.

  // 4. Round trips, from the model's side.
  const roundTrips: ToolRoundTrip[] = [];
  const haveMcp = [...sessions.values()].some((s) => s.role === 'mcp');
  for (const m of modelCalls) {
    const mcp = ran.get(m);
    const carrier = fedBackIn.get(m);
    const x = m.exchange;
    const request = x.request;
    const response = x.response!;
    const codes: DiagnosticCode[] = [];
    const timing: RoundTiming = {};
    if (m.decisionMs !== undefined) timing.decisionMs = m.decisionMs;
    const trip: ToolRoundTrip = {
      type: 'tool-round-trip',
      time: m.decidedAt,
      turn: x.turn ?? null,
      tool: m.call.name,
      arguments: m.call.arguments,
      llm: {
        channel: response.channel,
        session: response.session,
        label: response.label,
        exchange: response.exchange,
        endpoint: response.endpoint,
        model: response.model ?? request?.model ?? null,
        toolCallId: m.call.id ?? null,
        decidedMs: m.decisionMs ?? null,
        ...(m.viaText ? { viaText: true } : {}),
        ...(m.serverName !== undefined ? { serverName: m.serverName } : {}),
      },
      mcp: mcp ? mcpSide(mcp, m.canonical, mappingOf.get(m)) : null,
      result: mcp?.resultText != null ? preview(mcp.resultText, PREVIEW_CHARS) : null,
      fedBack: carrier !== undefined,
      // Placed here so it prints next to fedBack; JSON leaves it out while undefined.
      fedBackIn: undefined,
      answerPreview: null,
      timing,
      diagnostics: codes,
    };
    if (m.viaText) {
      codes.push('tool-call-as-text');
      diagnostics.push({
        type: 'diagnostic',
        code: 'tool-call-as-text',
        level: 'info',
        time: response.time,
        tool: m.call.name,
        session: response.session,
        seq: response.seq,
        msg: `The model wrote the call to ${m.call.name} as text (<use_mcp_tool>) in its answer, not as a structured tool call; the host has to parse it.`,
      });
    }
    if (mcp) {
      const sent = mcp.request.time;
      // Wall clocks of two processes, to the millisecond: a host that dispatched at once may look a hair early.
      timing.dispatchMs = Math.max(0, sent - m.decidedAt);
      const toolMs = callLatency(mcp.response);
      if (toolMs !== undefined) timing.toolMs = toolMs;
      if (trip.mcp?.arguments !== undefined) {
        codes.push('arguments-changed');
        diagnostics.push({
          type: 'diagnostic',
          code: 'arguments-changed',
          level: 'warn',
          time: sent,
          tool: mcp.name,
          session: mcp.request.session,
          seq: mcp.request.seq,
          msg: `The model called ${m.call.name} with ${short(m.call.arguments)}, but the server ${mcp.server} received ${short(mcp.arguments)}.`,
        });
      }
    } else {
      codes.push('tool-not-run');
      // With no MCP log at all there is nothing to find it in: worth knowing, not a sign that something broke.
      // Nor is a tool no server in the logs has, whose result the host fed back: the host ran it itself.
      const hostTool = haveMcp && targetsOf.get(m)!.length === 0 && carrier !== undefined;
      diagnostics.push({
        type: 'diagnostic',
        code: 'tool-not-run',
        level: haveMcp && !hostTool ? 'warn' : 'info',
        time: response.time,
        tool: m.call.name,
        session: response.session,
        seq: response.seq,
        msg: !haveMcp
          ? `The model asked for ${m.call.name} ${short(m.call.arguments)}; no MCP server log was given, so where it ran is not known (add the wrapped servers' logs to link it).`
          : hostTool
            ? `The model asked for ${m.call.name} ${short(m.call.arguments)}, a tool no MCP server in these logs has under any host naming; the host fed a result back, so it ran it itself or through a server mcptap did not wrap.`
            : `The model asked for ${m.call.name} ${short(m.call.arguments)}, but no MCP server in these logs ran it within ${Math.round(windowMs / 1000)} s (the host refused it, ran it elsewhere, or its server was not wrapped by mcptap).`,
      });
    }
    if (carrier) {
      const back = carrier.request!;
      trip.fedBackIn = { session: back.session, exchange: back.exchange, time: back.time };
      const resultTime = mcp?.response?.time;
      if (resultTime !== undefined) timing.feedBackMs = Math.max(0, back.time - resultTime);
      if (trip.result === null) {
        const carried = back.toolResults.find((r) => resultMatchesCall(r, m));
        if (carried) trip.result = preview(carried.content, PREVIEW_CHARS);
      }
      const answer = carrier.response;
      if (answer) {
        timing.answerMs = answer.durationMs;
        trip.answerPreview = answer.content.trim() !== '' ? preview(answer.content, PREVIEW_CHARS) : null;
        if (request) timing.totalMs = answer.time - request.time;
      }
    } else if (mcp) {
      codes.push('result-not-fed-back');
      diagnostics.push({
        type: 'diagnostic',
        code: 'result-not-fed-back',
        level: 'warn',
        time: mcp.response?.time ?? mcp.request.time,
        tool: mcp.name,
        session: mcp.request.session,
        seq: mcp.response?.seq ?? mcp.request.seq,
        msg: `${mcp.server} answered ${mcp.name} #${String(mcp.request.id)}, but no later request to the model carries that result back.`,
      });
    }
    roundTrips.push(trip);
  }

  // 5. MCP calls no model call asked for.
  const haveLlm = exchanges.size > 0;
  for (const c of mcpCalls) {
    if (c.used) continue;
    const codes: DiagnosticCode[] = [];
    if (haveLlm) {
      codes.push('call-without-model');
      diagnostics.push({
        type: 'diagnostic',
        code: 'call-without-model',
        level: 'info',
        time: c.request.time,
        tool: c.name,
        session: c.request.session,
        seq: c.request.seq,
        msg: `${c.server} ran ${c.name} #${String(c.request.id)}, but no model reply in these logs asked for it (the user or the host called it directly).`,
      });
    }
    roundTrips.push({
      type: 'tool-round-trip',
      time: c.request.time,
      turn: null,
      tool: c.name,
      arguments: c.arguments,
      llm: null,
      mcp: mcpSide(c, c.canonical),
      result: c.resultText !== null ? preview(c.resultText, PREVIEW_CHARS) : null,
      fedBack: false,
      answerPreview: null,
      timing: callLatency(c.response) !== undefined ? { toolMs: callLatency(c.response)! } : {},
      diagnostics: codes,
    });
  }
  roundTrips.sort((a, b) => a.time - b.time);

  // 6. Turn totals.
  for (const x of ordered) {
    const t = turns[x.turn! - 1]!;
    t.llmCalls++;
    const end = x.response?.time ?? x.error?.time ?? x.request!.time;
    t.endTime = Math.max(t.endTime, end);
    if (x.response) {
      t.timing.llmMs += x.response.durationMs;
      if (x.response.content.trim() !== '') t.answerPreview = preview(x.response.content, PREVIEW_CHARS);
    }
  }
  for (const trip of roundTrips) {
    if (trip.turn === null) continue;
    const t = turns[trip.turn - 1]!;
    t.toolCalls++;
    t.timing.toolMs += trip.timing.toolMs ?? 0;
  }
  for (const t of turns) {
    t.timing.totalMs = round(t.endTime - t.time);
    t.timing.llmMs = round(t.timing.llmMs);
    t.timing.toolMs = round(t.timing.toolMs);
    t.timing.hostMs = round(Math.max(0, t.timing.totalMs - t.timing.llmMs - t.timing.toolMs));
  }

  // 7. Tools offered on one side and not the other, and the names hosts gave them.
  diagnostics.push(...offerDiagnostics(records, sessions, exchanges, names));
  diagnostics.push(...mappingDiagnostics(modelCalls, ran, mappingOf));
  diagnostics.sort((a, b) => a.time - b.time);

  // Counted in one pass each: a filter per session made a log of thousands of sessions quadratic.
  const llmCalls = countBy(ordered, (x) => x.request!.session);
  const toolCalls = countBy(mcpCalls, (c) => c.request.session);
  for (const s of sessions.values()) {
    if (s.role === 'llm') s.llmCalls = llmCalls.get(s.session) ?? 0;
    if (s.role === 'mcp') s.toolCalls = toolCalls.get(s.session) ?? 0;
  }
  return { sessions: [...sessions.values()], turns, roundTrips, diagnostics };
}

/**
 * The trace as the lines `view --format json` prints, in this order: sessions, then turns each followed by
 * their round trips, then round trips outside any turn, then diagnostics.
 */
export function traceLines(trace: Trace): (TraceSession | TraceTurn | ToolRoundTrip | TraceDiagnostic)[] {
  const lines: (TraceSession | TraceTurn | ToolRoundTrip | TraceDiagnostic)[] = [...trace.sessions];
  const ofTurn = new Map<number, ToolRoundTrip[]>();
  for (const r of trace.roundTrips) {
    if (r.turn === null) continue;
    const list = ofTurn.get(r.turn);
    if (list) list.push(r);
    else ofTurn.set(r.turn, [r]);
  }
  for (const turn of trace.turns) {
    lines.push(turn);
    for (const r of ofTurn.get(turn.turn) ?? []) lines.push(r);
  }
  for (const r of trace.roundTrips) if (r.turn === null) lines.push(r);
  for (const d of trace.diagnostics) lines.push(d);
  return lines;
}

/** Keys sorted at every level, so `{b:1,a:2}` and `{a:2,b:1}` compare equal. Strings stay as they are. */
export function canonicalJson(value: unknown): string {
  return JSON.stringify(sortKeys(value)) ?? 'undefined';
}

function sortKeys(value: unknown): unknown {
  if (Array.isArray(value)) return value.map(sortKeys);
  const o = asObject(value);
  if (!o) return value;
  const sorted: Record<string, unknown> = {};
  for (const key of Object.keys(o).sort()) sorted[key] = sortKeys(o[key]);
  return sorted;
}

/**
 * Tool calls a model wrote as text the way Cline asks for them:
 * `<use_mcp_tool><server_name>…</server_name><tool_name>…</tool_name><arguments>{…}</arguments></use_mcp_tool>`.
 * Arguments that are not valid JSON are kept as the raw string.
 */
export function parseTextToolCalls(content: string): { server?: string; call: LlmToolCall }[] {
  const found: { server?: string; call: LlmToolCall }[] = [];
  for (const block of content.matchAll(/<use_mcp_tool>([\s\S]*?)<\/use_mcp_tool>/g)) {
    const inner = block[1]!;
    const name = tag(inner, 'tool_name');
    if (!name) continue;
    const server = tag(inner, 'server_name');
    const rawArgs = tag(inner, 'arguments') ?? '{}';
    const call: LlmToolCall = { name, arguments: rawArgs };
    try {
      call.arguments = JSON.parse(rawArgs);
    } catch {
      call.argumentsRaw = rawArgs;
    }
    found.push(server !== undefined ? { server, call } : { call });
  }
  return found;
}

function tag(text: string, name: string): string | undefined {
  const m = new RegExp(`<${name}>([\\s\\S]*?)</${name}>`).exec(text);
  return m ? m[1]!.trim() : undefined;
}

/** The text of a `tools/call` result: its text blocks joined, other blocks named; or the error's message. */
export function toolResultText(result: unknown): string | null {
  const o = asObject(result);
  const content = o?.content;
  if (!Array.isArray(content)) return o && 'structuredContent' in o ? JSON.stringify(o.structuredContent) : null;
  return content
    .map((block) => {
      const b = asObject(block);
      return b?.type === 'text' && typeof b.text === 'string' ? b.text : `[${asString(b?.type) ?? 'content'}]`;
    })
    .join('\n');
}

/** A model's tool name and a server's tool name are the same tool (hosts may prefix the server: `weather__get_weather`). */
export function sameTool(modelName: string, serverName: string): boolean {
  if (modelName === serverName) return true;
  if (!modelName.endsWith(serverName)) return false;
  // `__`, `.`, `:` or `/` only: a single `_` would make `get_weather` a prefixed `weather`.
  return /(__|[.:/])$/.test(modelName.slice(0, modelName.length - serverName.length));
}

/** The first item from index `start` on that passes the test. */
function findFrom<T>(list: readonly T[], start: number, test: (item: T) => boolean): T | undefined {
  for (let i = start; i < list.length; i++) if (test(list[i]!)) return list[i];
  return undefined;
}

/** First index whose key is >= value, in a list sorted by key. */
function lowerBound<T>(list: readonly T[], value: number, key: (item: T) => number): number {
  let lo = 0;
  let hi = list.length;
  while (lo < hi) {
    const mid = (lo + hi) >> 1;
    if (key(list[mid]!) < value) lo = mid + 1;
    else hi = mid;
  }
  return lo;
}

function collectSessions(records: readonly LogRecord[]): Map<string, TraceSession> {
  const sessions = new Map<string, TraceSession>();
  for (const r of records) {
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
    if (r.kind === 'llm-request') {
      s.role = 'llm';
      s.channel = r.channel;
      if (r.model !== undefined && !(s.models ??= []).includes(r.model)) s.models.push(r.model);
      for (const t of r.tools) if (!(s.tools ??= []).includes(t)) s.tools.push(t);
    }
    // 2026-07-28: the revision and the client from each request's _meta, the server from discover or any result.
    if (r.kind === 'request' && r.dir === 'c2s') {
      if (r.protocolVersion !== undefined) s.protocolVersion = r.protocolVersion;
      if (r.client) s.client = r.client;
    }
    if (r.kind === 'response' && r.server) s.server = r.server;
    if (r.kind === 'response' && r.supportedVersions) s.supportedVersions = r.supportedVersions;
    if (r.kind === 'request' && r.method === 'initialize' && r.dir === 'c2s') {
      const client = peerInfo(asObject(parseRawObject(r.raw)?.params)?.clientInfo);
      if (client) s.client = client;
    }
    if (r.kind === 'response' && r.method === 'initialize') {
      const result = asObject(parseRawObject(r.raw)?.result);
      const server = peerInfo(result?.serverInfo);
      if (server) s.server = server;
      const version = asString(result?.protocolVersion);
      if (version !== undefined) s.protocolVersion = version;
    }
    if (r.kind === 'response' && r.method === 'tools/list' && r.dir === 's2c') {
      const names = toolNames(parseRawObject(r.raw)?.result);
      for (const t of names) if (!(s.tools ??= []).includes(t)) s.tools.push(t);
      s.tools ??= [];
    }
  }
  return sessions;
}

function collectExchanges(records: readonly LogRecord[]): Map<string, LlmExchange> {
  const exchanges = new Map<string, LlmExchange>();
  const bodies = new Map<string, string>();
  const get = (session: string, exchange: string): LlmExchange => {
    const key = `${session}\u0000${exchange}`;
    let x = exchanges.get(key);
    if (!x) {
      x = { key };
      exchanges.set(key, x);
    }
    return x;
  };
  for (const r of records) {
    if (r.kind === 'llm-request') get(r.session, r.exchange).request = r;
    else if (r.kind === 'llm-response') get(r.session, r.exchange).response = r;
    else if (r.kind === 'llm-error') get(r.session, r.exchange).error = r;
    else if (r.kind === 'http-request') {
      const body = requestBody(r);
      if (body !== undefined) bodies.set(`${r.session}\u0000${r.exchange}`, body);
    }
  }
  for (const [key, body] of bodies) {
    const x = exchanges.get(key);
    if (x) x.body = body;
  }
  return exchanges;
}

function requestBody(r: HttpRequestRecord): string | undefined {
  if (r.body === undefined || r.bodyEncoding === 'base64') return undefined;
  return r.body;
}

function collectModelCalls(exchanges: Map<string, LlmExchange>): ModelCall[] {
  const calls: ModelCall[] = [];
  const withReplies = [...exchanges.values()].filter((x) => x.response).sort((a, b) => a.response!.time - b.response!.time);
  for (const x of withReplies) {
    const response = x.response!;
    const whole = x.request ? { decidedAt: response.time, decisionMs: response.durationMs } : { decidedAt: response.time };
    for (const call of response.toolCalls) calls.push({ call, exchange: x, viaText: false, canonical: canonicalJson(call.arguments), ...decision(x, call) });
    if (response.toolCalls.length === 0 && response.content.includes('<use_mcp_tool>')) {
      for (const { server, call } of parseTextToolCalls(response.content)) {
        calls.push({ call, exchange: x, viaText: true, canonical: canonicalJson(call.arguments), ...whole, ...(server !== undefined ? { serverName: server } : {}) });
      }
    }
  }
  // In the order the model decided, which the linker's first-come matching follows.
  return calls.sort((a, b) => a.decidedAt - b.decidedAt);
}

/** When the model decided on a call: at the chunk that completed it when the stream says, else at the reply's end. */
function decision(x: LlmExchange, call: LlmToolCall): { decidedAt: number; decisionMs?: number } {
  const response = x.response!;
  if (!x.request) return { decidedAt: response.time };
  if (call.completedMs === undefined || call.completedMs > response.durationMs) return { decidedAt: response.time, decisionMs: response.durationMs };
  return { decidedAt: x.request.time + call.completedMs, decisionMs: call.completedMs };
}

function collectMcpCalls(records: readonly LogRecord[], sessions: Map<string, TraceSession>): McpCall[] {
  const calls: McpCall[] = [];
  const open = new Map<string, McpCall>();
  for (const r of records) {
    if (r.kind === 'request' && r.method === 'tools/call' && r.dir === 'c2s') {
      const params = asObject(parseRawObject(r.raw)?.params);
      const args = params?.arguments ?? {};
      const s = sessions.get(r.session);
      const call: McpCall = {
        request: r,
        name: r.tool ?? asString(params?.name) ?? '(unknown tool)',
        arguments: args,
        canonical: canonicalJson(args),
        resultText: null,
        server: s?.server?.name ?? r.label,
        used: false,
      };
      // A later round of a multi-round-trip call is the same call, not another one.
      const first = r.firstSeq !== undefined ? open.get(`${r.session}\u0000${r.firstSeq}`) : undefined;
      if (first) {
        open.set(`${r.session}\u0000${r.seq}`, first);
        (first.rounds ??= []).push({ seq: r.seq, latencyMs: null, resultType: null });
        continue;
      }
      calls.push(call);
      open.set(`${r.session}\u0000${r.seq}`, call);
    } else if (r.kind === 'response' && r.method === 'tools/call' && r.requestSeq !== undefined) {
      const call = open.get(`${r.session}\u0000${r.requestSeq}`);
      if (!call) continue;
      if (r.round !== undefined) noteRound(call, r);
      call.response = r;
      call.resultText = r.error ? r.error.message : toolResultText(parseRawObject(r.raw)?.result);
    }
  }
  // The server's name is known only once its initialize answer was read; fill it in now.
  for (const c of calls) c.server = sessions.get(c.request.session)?.server?.name ?? c.request.label;
  return calls;
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

/** A call's latency: from its first request to its final answer, over all its rounds. */
export function callLatency(response: ResponseRecord | undefined): number | undefined {
  return response?.callLatencyMs ?? response?.latencyMs;
}

function mcpSide(c: McpCall, modelCanonical: string, mapping?: ToolTarget): RoundTripMcp {
  const side: RoundTripMcp = {
    session: c.request.session,
    server: c.server,
    label: c.request.label,
    id: c.request.id,
    seq: c.request.seq,
    latencyMs: callLatency(c.response) ?? null,
    isError: c.response?.isError === true || c.response?.error !== undefined,
  };
  if (c.rounds && c.rounds.length > 1) side.rounds = c.rounds;
  if (c.canonical !== modelCanonical) side.arguments = c.arguments;
  if (mapping && mapping.scheme !== 'same name') {
    side.tool = c.name;
    side.mapping = mapping.scheme;
  }
  if (c.response?.error) side.error = c.response.error.message;
  return side;
}

/** The servers of the logs as the tool-name map needs them: their names, and the tools they listed or ran. */
function toolNameMap(sessions: Map<string, TraceSession>, mcpCalls: readonly McpCall[]): ToolNameMap {
  const ran = new Map<string, Set<string>>();
  for (const c of mcpCalls) {
    const set = ran.get(c.request.session) ?? new Set<string>();
    set.add(c.name);
    ran.set(c.request.session, set);
  }
  const servers = [...sessions.values()]
    .filter((s) => s.role === 'mcp')
    .map((s) => ({
      session: s.session,
      names: [s.server?.name, s.label].filter((n): n is string => n !== undefined),
      tools: [...new Set([...(s.tools ?? []), ...(ran.get(s.session) ?? [])])],
    }));
  return new ToolNameMap(servers);
}

/** One `tool-name-mapped` note per host name that linked to a server tool under another name. */
function mappingDiagnostics(modelCalls: readonly ModelCall[], ran: Map<ModelCall, McpCall>, mappingOf: Map<ModelCall, ToolTarget>): TraceDiagnostic[] {
  const out: TraceDiagnostic[] = [];
  const seen = new Set<string>();
  for (const m of modelCalls) {
    const mapping = mappingOf.get(m);
    const mcp = ran.get(m);
    if (!mapping || !mcp || mapping.scheme === 'same name') continue;
    const key = `${m.call.name}\u0000${mcp.request.session}`;
    if (seen.has(key)) continue;
    seen.add(key);
    out.push({
      type: 'diagnostic',
      code: 'tool-name-mapped',
      level: 'info',
      time: mcp.request.time,
      tool: mcp.name,
      session: mcp.request.session,
      seq: mcp.request.seq,
      msg: `The host offers ${mcp.server}'s tool ${mcp.name} to the model as ${m.call.name} (${mapping.scheme}); its calls are linked by that mapping.`,
    });
  }
  return out;
}

/** Does this LLM request carry the result of model call `m` back to the model? */
function carriesResult(x: LlmExchange, m: ModelCall, resultText: string | null): boolean {
  const request = x.request!;
  for (const r of request.toolResults) {
    if (resultMatchesCall(r, m, resultText)) return true;
  }
  // An unnamed, id-less tool message after an assistant message holding the same call (older Ollama clients).
  if (request.toolResults.some((r) => r.toolCallId === undefined && r.name === undefined)) {
    if ((request.historyToolCalls ?? []).some((h) => h.name === m.call.name && canonicalJson(h.arguments) === m.canonical)) return true;
  }
  // Results fed back as plain text (Cline): look for the result in the request body itself.
  if (request.toolResults.length === 0 && x.body !== undefined && resultText !== null && resultText.trim().length >= 4) {
    const needle = resultText.trim().slice(0, 200);
    return x.body.includes(needle) || x.body.includes(JSON.stringify(needle).slice(1, -1));
  }
  return false;
}

/**
 * Does a tool result in a request answer model call `m`? An id on both sides decides; then a name that differs
 * rules it out; then, when the server's result is known, the content decides (so another call of the same tool
 * is not taken for this one); only without it does a matching name suffice.
 */
function resultMatchesCall(r: LlmRequestRecord['toolResults'][number], m: ModelCall, resultText: string | null = null): boolean {
  if (m.call.id !== undefined && r.toolCallId !== undefined) return r.toolCallId === m.call.id;
  if (r.name !== undefined && !sameTool(r.name, m.call.name) && !sameTool(m.call.name, r.name)) return false;
  if (resultText !== null) return sameText(r.content, resultText);
  return r.name !== undefined;
}

function sameText(a: string, b: string): boolean {
  const x = a.replace(/\s+/g, ' ').trim();
  const y = b.replace(/\s+/g, ' ').trim();
  if (x === '' || y === '') return false;
  return x === y || x.includes(y) || y.includes(x);
}

function countBy<T>(items: readonly T[], key: (item: T) => string): Map<string, number> {
  const counts = new Map<string, number>();
  for (const item of items) counts.set(key(item), (counts.get(key(item)) ?? 0) + 1);
  return counts;
}

function offerDiagnostics(records: readonly LogRecord[], sessions: Map<string, TraceSession>, exchanges: Map<string, LlmExchange>, names: ToolNameMap): TraceDiagnostic[] {
  const out: TraceDiagnostic[] = [];
  const offeredToModel = new Set<string>();
  /** `session\0tool` of every server tool some request offered the model, under whatever name; the names that map to one. */
  const reached = new Set<string>();
  const mapped = new Set<string>();
  let firstOffer: LlmRequestRecord | undefined;
  // An agent offers the same tools on every call: each distinct list is mapped once (once per call, with
  // thousands of servers, was quadratic).
  const mappedLists = new Set<string>();
  for (const x of exchanges.values()) {
    const tools = x.request?.tools ?? [];
    if (x.request && x.request.tools.length > 0 && (!firstOffer || x.request.time < firstOffer.time)) firstOffer = x.request;
    const list = tools.join('\u0000');
    if (mappedLists.has(list)) continue;
    mappedLists.add(list);
    for (const t of tools) offeredToModel.add(t);
    for (const [name, targets] of names.mapOffered(tools)) {
      if (targets.length > 0) mapped.add(name);
      for (const target of targets) for (const s of target.sessions) reached.add(`${s}\u0000${target.tool}`);
    }
  }
  const servers = [...sessions.values()].filter((s) => s.role === 'mcp' && s.tools !== undefined);
  // Without structured tools sent to the model (no LLM log, or a host that describes tools in text) there is
  // nothing to compare.
  if (!firstOffer || servers.length === 0) return out;
  // The first tools/list answer of each session, found in one pass (a search per server was quadratic).
  let listedSeq: Map<string, number> | undefined;
  const listed = (s: TraceSession): number => {
    if (!listedSeq) {
      listedSeq = new Map();
      for (const rec of records) if (rec.kind === 'response' && rec.method === 'tools/list' && !listedSeq.has(rec.session)) listedSeq.set(rec.session, rec.seq);
    }
    return listedSeq.get(s.session) ?? 0;
  };
  for (const s of servers) {
    for (const tool of s.tools!) {
      if (reached.has(`${s.session}\u0000${tool}`)) continue;
      out.push({
        type: 'diagnostic',
        code: 'tool-not-offered-to-model',
        level: 'warn',
        time: s.time,
        tool,
        session: s.session,
        seq: listed(s),
        msg: `${s.server?.name ?? s.label} offers the tool ${tool}, but no request to the model listed it, so the model could never call it.`,
      });
    }
  }
  for (const tool of offeredToModel) {
    if (mapped.has(tool)) continue;
    out.push({
      type: 'diagnostic',
      code: 'tool-not-on-any-server',
      level: 'info',
      time: firstOffer.time,
      tool,
      session: firstOffer.session,
      seq: firstOffer.seq,
      msg: `The model was offered the tool ${tool}, but no MCP server in these logs lists it (a server mcptap did not wrap, or a tool of the host itself).`,
    });
  }
  return out;
}

function short(value: unknown): string {
  return preview(typeof value === 'string' ? value : (JSON.stringify(value) ?? ''), 120);
}

function round(ms: number): number {
  return Math.round(ms * 10) / 10;
}
