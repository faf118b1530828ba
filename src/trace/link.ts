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
 * The linker streams (linker.ts: a window of time, the steps in link-steps.ts); `linkTrace` is it over a list.
 * Pure: records in (ordered by time), plain objects out.
 */
import type { LlmToolCall, LogRecord, ResponseRecord } from '../log/schema.js';
import type { Channel, JsonRpcId } from '../types.js';
import { asObject, asString, type PeerInfo } from '../protocols/mcp.js';
import { TraceLinker } from './linker.js';

/** Default time window after the model's reply within which the MCP call that ran its tool call must start. */
export const DEFAULT_LINK_WINDOW_MS = 120_000;

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
  /**
   * How long after the model's reply its result, the feed-back and the answer may come (default 10 minutes; at
   * least `windowMs`): the linker holds twice this much of the logs, not all of them.
   */
  horizonMs?: number;
  /**
   * Whether the logs hold any LLM call (an MCP call no model asked for is said to be so only then). A stream
   * cannot know before its end: readers that can tell ahead (`logsHoldLlmCalls`) say; else it is what was seen
   * so far.
   */
  haveLlm?: boolean;
  /** Most LLM exchanges and MCP calls the linker holds (default 20,000): past it the oldest are linked early. */
  maxHeld?: number;
  /** Most sessions held (default 1,000): past it, those that ended long before are handed on to `TraceSink.session`. */
  maxSessions?: number;
  /** Told, once at the end, about links the window could not make (a feed-back later than the horizon). */
  onNote?: (note: string) => void;
}

/**
 * Link the records of one or more logs (in time order, as readAllRecords gives them) into sessions, turns, round
 * trips and diagnostics: the streaming linker (linker.ts) fed the whole list, its results gathered.
 */
export function linkTrace(records: readonly LogRecord[], options: LinkOptions = {}): Trace {
  const turns: TraceTurn[] = [];
  const roundTrips: ToolRoundTrip[] = [];
  const haveLlm = options.haveLlm ?? records.some(isLlmCall);
  const letGo: TraceSession[] = [];
  const linker = new TraceLinker({ ...options, haveLlm }, { roundTrip: (trip) => roundTrips.push(trip), turn: (turn) => turns.push(turn), session: (s) => letGo.push(s) });
  for (const r of records) linker.push(r);
  const { sessions, diagnostics, notes } = linker.end();
  for (const note of notes) options.onNote?.(note);
  return { sessions: [...letGo, ...sessions], turns, roundTrips, diagnostics };
}

/** An LLM call's record: what tells that the logs hold an LLM proxy's traffic. */
export function isLlmCall(r: LogRecord): boolean {
  return r.kind === 'llm-request' || r.kind === 'llm-response' || r.kind === 'llm-error';
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

/** A call's latency: from its first request to its final answer, over all its rounds. */
export function callLatency(response: Pick<ResponseRecord, 'latencyMs' | 'callLatencyMs'> | undefined): number | undefined {
  return response?.callLatencyMs ?? response?.latencyMs;
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
