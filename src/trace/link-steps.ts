/**
 * The steps of linking, each over what the linker holds at one moment (linker.ts decides when, and which of
 * the answers are final): model calls → the MCP calls that ran them (`matchToolCalls`), → the requests that
 * carried their results back (`findCarriers`), the round trip and its findings (`modelTrip`, `mcpOnlyTrip`),
 * turns (`startTurn`, `finishTurn`), and what was offered on one side and not the other (`offerDiagnostics`).
 * Pure.
 */
import type { LlmRequestRecord, ResponseRecord } from '../log/schema.js';
import { preview } from '../protocols/mcp.js';
import type { ToolNameMap, ToolTarget } from './tool-names.js';
import type { LlmExchange, McpCall, ModelCall } from './link-items.js';
import { callLatency, canonicalJson, sameTool, type DiagnosticCode, type RoundTiming, type RoundTripMcp, type ToolRoundTrip, type TraceDiagnostic, type TraceSession, type TraceTurn } from './link.js';

/** Longest preview of a result or answer in trace lines. */
const PREVIEW_CHARS = 160;

/** What step 1 found: the MCP call that ran each model call, and through which naming of its tool. */
export interface Matches {
  ran: Map<ModelCall, McpCall>;
  mappingOf: Map<ModelCall, ToolTarget>;
}

/**
 * Each model call → the MCP call that ran it: by tool name (through the host's renaming), then identical
 * canonical arguments, inside `windowMs` after the reply. Exact arguments first, over all calls, so that a
 * changed call cannot take the place of an exact one that comes later; within a mapping, the earliest call.
 */
export function matchToolCalls(modelCalls: readonly ModelCall[], mcpCalls: readonly McpCall[], targetsOf: Map<ModelCall, ToolTarget[]>, windowMs: number): Matches {
  // MCP calls by tool name, in time order, so each model call looks only at its window.
  const byName = new Map<string, McpCall[]>();
  for (const c of mcpCalls) {
    const list = byName.get(c.name);
    if (list) list.push(c);
    else byName.set(c.name, [c]);
  }
  const ran = new Map<ModelCall, McpCall>();
  const mappingOf = new Map<ModelCall, ToolTarget>();
  for (const exact of [true, false]) {
    for (const m of modelCalls) {
      if (ran.has(m)) continue;
      const from = m.exchange.request?.time ?? m.exchange.response!.time;
      const until = m.exchange.response!.time + windowMs;
      // The best mapping that finds a call wins.
      for (const t of targetsOf.get(m)!) {
        const found = firstCall(byName.get(t.tool) ?? [], from, until, (c) => !c.used && t.sessions.has(c.request.session) && (!exact || c.canonical === m.canonical));
        if (!found) continue;
        found.used = true;
        ran.set(m, found);
        mappingOf.set(m, t);
        break;
      }
    }
  }
  return { ran, mappingOf };
}

function firstCall(list: readonly McpCall[], from: number, until: number, ok: (c: McpCall) => boolean): McpCall | undefined {
  for (let i = lowerBound(list, from, (c) => c.request.time); i < list.length && list[i]!.request.time <= until; i++) if (ok(list[i]!)) return list[i];
  return undefined;
}

/**
 * Each model call → the first later LLM request (by `ordered`, requests by time) that carries its result back,
 * sent before `deadline(m)`. The conversation goes on through the same proxy and API; look elsewhere only when
 * it did not.
 */
export function findCarriers(modelCalls: readonly ModelCall[], ran: Map<ModelCall, McpCall>, ordered: readonly LlmExchange[], deadline: (m: ModelCall) => number): Map<ModelCall, LlmExchange> {
  const fedBackIn = new Map<ModelCall, LlmExchange>();
  for (const m of modelCalls) {
    const mcp = ran.get(m);
    // A host that acts on the completing chunk may feed the result back before the reply's response has ended.
    const start = lowerBound(ordered, m.decidedAt, (x) => x.request!.time);
    const end = deadline(m);
    const carries = (x: LlmExchange): boolean => x !== m.exchange && carriesResult(x, m, mcp?.resultText ?? null);
    const reply = m.exchange.response!;
    const own = (x: LlmExchange): boolean => x.request!.session === reply.session && x.request!.channel === reply.channel;
    const carrier = findFrom(ordered, start, end, (x) => own(x) && carries(x)) ?? findFrom(ordered, start, end, carries);
    if (carrier) fedBackIn.set(m, carrier);
  }
  return fedBackIn;
}

/** Does this LLM request carry the result of model call `m` back to the model? */
export function carriesResult(x: LlmExchange, m: ModelCall, resultText: string | null): boolean {
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

/** What a model call's round trip is judged against. */
export interface TripContext {
  /** The MCP call that ran it, and the naming that linked them. */
  mcp?: McpCall;
  mapping?: ToolTarget;
  /** The request that carried its result back. */
  carrier?: LlmExchange;
  /** The server tools its name can stand for. */
  targets: readonly ToolTarget[];
  windowMs: number;
  serverName: (c: McpCall) => string;
}

/**
 * A finding, or one that can be written only once it is known whether the logs hold any MCP server's log (at
 * the end of them).
 */
export type TripFinding = TraceDiagnostic | { time: number; session: string; write: (haveMcp: boolean) => TraceDiagnostic };

/** The round trip of one model call, and the findings about it (in the order the whole-log linker made them). */
export function modelTrip(m: ModelCall, ctx: TripContext): { trip: ToolRoundTrip; diagnostics: TripFinding[] } {
  const { mcp, carrier } = ctx;
  const x = m.exchange;
  const response = x.response!;
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
      model: response.model ?? x.request?.model ?? null,
      toolCallId: m.call.id ?? null,
      decidedMs: m.decisionMs ?? null,
      ...(m.viaText ? { viaText: true } : {}),
      ...(m.serverName !== undefined ? { serverName: m.serverName } : {}),
    },
    mcp: mcp ? mcpSide(mcp, ctx.serverName(mcp), m.canonical, ctx.mapping) : null,
    result: mcp?.resultText != null ? preview(mcp.resultText, PREVIEW_CHARS) : null,
    fedBack: carrier !== undefined,
    // Placed here so it prints next to fedBack; JSON leaves it out while undefined.
    fedBackIn: undefined,
    answerPreview: null,
    timing,
    diagnostics: [],
  };
  const diagnostics: TripFinding[] = [];
  const say = (code: DiagnosticCode, d: TripFinding): void => {
    trip.diagnostics.push(code);
    diagnostics.push(d);
  };
  if (m.viaText) say('tool-call-as-text', textCallFinding(m));
  if (mcp) {
    // Wall clocks of two processes, to the millisecond: a host that dispatched at once may look a hair early.
    timing.dispatchMs = Math.max(0, mcp.request.time - m.decidedAt);
    const toolMs = callLatency(mcp.response);
    if (toolMs !== undefined) timing.toolMs = toolMs;
    if (trip.mcp?.arguments !== undefined) say('arguments-changed', changedArgumentsFinding(m, mcp, ctx.serverName(mcp)));
  } else {
    const { targets, carrier: fed, windowMs } = ctx;
    say('tool-not-run', { time: response.time, session: response.session, write: (haveMcp) => notRunFinding(m, { targets, carrier: fed, windowMs }, haveMcp) });
  }
  if (carrier) noteFeedBack(trip, m, mcp, carrier);
  else if (mcp) say('result-not-fed-back', notFedBackFinding(mcp, ctx.serverName(mcp)));
  return { trip, diagnostics };
}

/** Where the result went back, how long that took, and the model's answer to it. */
function noteFeedBack(trip: ToolRoundTrip, m: ModelCall, mcp: McpCall | undefined, carrier: LlmExchange): void {
  const back = carrier.request!;
  trip.fedBackIn = { session: back.session, exchange: back.exchange, time: back.time };
  const resultTime = mcp?.response?.time;
  if (resultTime !== undefined) trip.timing.feedBackMs = Math.max(0, back.time - resultTime);
  if (trip.result === null) {
    const carried = back.toolResults.find((r) => resultMatchesCall(r, m));
    if (carried) trip.result = preview(carried.content, PREVIEW_CHARS);
  }
  const answer = carrier.response;
  if (answer) {
    trip.timing.answerMs = answer.durationMs;
    trip.answerPreview = answer.content.trim() !== '' ? preview(answer.content, PREVIEW_CHARS) : null;
    if (m.exchange.request) trip.timing.totalMs = answer.time - m.exchange.request.time;
  }
}

function textCallFinding(m: ModelCall): TraceDiagnostic {
  const response = m.exchange.response!;
  return {
    type: 'diagnostic',
    code: 'tool-call-as-text',
    level: 'info',
    time: response.time,
    tool: m.call.name,
    session: response.session,
    seq: response.seq,
    msg: `The model wrote the call to ${m.call.name} as text (<use_mcp_tool>) in its answer, not as a structured tool call; the host has to parse it.`,
  };
}

function changedArgumentsFinding(m: ModelCall, mcp: McpCall, server: string): TraceDiagnostic {
  return {
    type: 'diagnostic',
    code: 'arguments-changed',
    level: 'warn',
    time: mcp.request.time,
    tool: mcp.name,
    session: mcp.request.session,
    seq: mcp.request.seq,
    msg: `The model called ${m.call.name} with ${short(m.call.arguments)}, but the server ${server} received ${short(mcp.arguments)}.`,
  };
}

function notRunFinding(m: ModelCall, ctx: Pick<TripContext, 'targets' | 'carrier' | 'windowMs'>, haveMcp: boolean): TraceDiagnostic {
  const response = m.exchange.response!;
  // With no MCP log at all there is nothing to find it in: worth knowing, not a sign that something broke.
  // Nor is a tool no server in the logs has, whose result the host fed back: the host ran it itself.
  const hostTool = haveMcp && ctx.targets.length === 0 && ctx.carrier !== undefined;
  const call = `${m.call.name} ${short(m.call.arguments)}`;
  return {
    type: 'diagnostic',
    code: 'tool-not-run',
    level: haveMcp && !hostTool ? 'warn' : 'info',
    time: response.time,
    tool: m.call.name,
    session: response.session,
    seq: response.seq,
    msg: !haveMcp
      ? `The model asked for ${call}; no MCP server log was given, so where it ran is not known (add the wrapped servers' logs to link it).`
      : hostTool
        ? `The model asked for ${call}, a tool no MCP server in these logs has under any host naming; the host fed a result back, so it ran it itself or through a server mcptap did not wrap.`
        : `The model asked for ${call}, but no MCP server in these logs ran it within ${Math.round(ctx.windowMs / 1000)} s (the host refused it, ran it elsewhere, or its server was not wrapped by mcptap).`,
  };
}

function notFedBackFinding(mcp: McpCall, server: string): TraceDiagnostic {
  return {
    type: 'diagnostic',
    code: 'result-not-fed-back',
    level: 'warn',
    time: mcp.response?.time ?? mcp.request.time,
    tool: mcp.name,
    session: mcp.request.session,
    seq: mcp.response?.seq ?? mcp.request.seq,
    msg: `${server} answered ${mcp.name} #${String(mcp.request.id)}, but no later request to the model carries that result back.`,
  };
}

/** The round trip of an MCP call no model call asked for; with LLM logs given, a finding says so. */
export function mcpOnlyTrip(c: McpCall, server: string, haveLlm: boolean): { trip: ToolRoundTrip; diagnostics: TraceDiagnostic[] } {
  const diagnostics: TraceDiagnostic[] = [];
  if (haveLlm) {
    diagnostics.push({
      type: 'diagnostic',
      code: 'call-without-model',
      level: 'info',
      time: c.request.time,
      tool: c.name,
      session: c.request.session,
      seq: c.request.seq,
      msg: `${server} ran ${c.name} #${String(c.request.id)}, but no model reply in these logs asked for it (the user or the host called it directly).`,
    });
  }
  const toolMs = callLatency(c.response);
  const trip: ToolRoundTrip = {
    type: 'tool-round-trip',
    time: c.request.time,
    turn: null,
    tool: c.name,
    arguments: c.arguments,
    llm: null,
    mcp: mcpSide(c, server, c.canonical),
    result: c.resultText !== null ? preview(c.resultText, PREVIEW_CHARS) : null,
    fedBack: false,
    answerPreview: null,
    timing: toolMs !== undefined ? { toolMs } : {},
    diagnostics: diagnostics.map((d) => d.code),
  };
  return { trip, diagnostics };
}

function mcpSide(c: McpCall, server: string, modelCanonical: string, mapping?: ToolTarget): RoundTripMcp {
  const side: RoundTripMcp = {
    session: c.request.session,
    server,
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

/** The `tool-name-mapped` note for a host name that linked to a server tool under another name. */
export function mappingFinding(m: ModelCall, mcp: McpCall, mapping: ToolTarget, server: string): TraceDiagnostic {
  return {
    type: 'diagnostic',
    code: 'tool-name-mapped',
    level: 'info',
    time: mcp.request.time,
    tool: mcp.name,
    session: mcp.request.session,
    seq: mcp.request.seq,
    msg: `The host offers ${server}'s tool ${mcp.name} to the model as ${m.call.name} (${mapping.scheme}); its calls are linked by that mapping.`,
  };
}

/** A new turn, started by a request that feeds no result back. */
export function startTurn(number: number, r: LlmRequestRecord): TraceTurn {
  return {
    type: 'turn',
    turn: number,
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
  };
}

/** A turn's totals, from its LLM calls (in request order) and its round trips (in time order). */
export function finishTurn(t: TraceTurn, exchanges: readonly LlmExchange[], trips: readonly ToolRoundTrip[]): void {
  for (const x of exchanges) {
    t.llmCalls++;
    const end = x.response?.time ?? x.error?.time ?? x.request!.time;
    t.endTime = Math.max(t.endTime, end);
    if (x.response) {
      t.timing.llmMs += x.response.durationMs;
      if (x.response.content.trim() !== '') t.answerPreview = preview(x.response.content, PREVIEW_CHARS);
    }
  }
  for (const trip of trips) {
    t.toolCalls++;
    t.timing.toolMs += trip.timing.toolMs ?? 0;
  }
  t.timing.totalMs = round(t.endTime - t.time);
  t.timing.llmMs = round(t.timing.llmMs);
  t.timing.toolMs = round(t.timing.toolMs);
  t.timing.hostMs = round(Math.max(0, t.timing.totalMs - t.timing.llmMs - t.timing.toolMs));
}

/** What the tools offered to the model were, gathered as the logs are read (offerDiagnostics judges it at the end). */
export interface Offers {
  /** Every tool name offered to the model, in the order first offered. */
  offeredToModel: Set<string>;
  /** `session\0tool` of every server tool some request offered the model, under whatever name. */
  reached: Set<string>;
  /** The offered names that map to some server tool. */
  mapped: Set<string>;
  /** The earliest request that offered tools. */
  firstOffer?: LlmRequestRecord;
  /** `seq` of each session's first tools/list answer. */
  listedSeq: Map<string, number>;
}

/** Map one request's offered tools with the servers known now, into `offers`. */
export function noteOffered(offers: Offers, names: ToolNameMap, tools: readonly string[]): void {
  for (const [name, targets] of names.mapOffered(tools)) {
    if (targets.length > 0) offers.mapped.add(name);
    for (const target of targets) for (const s of target.sessions) offers.reached.add(`${s}\u0000${target.tool}`);
  }
}

/**
 * Tools offered on one side and not the other. `moreServers`: servers the linker let go before the end (their
 * findings come from `unofferedTools` when they were let go).
 */
export function offerDiagnostics(sessions: Iterable<TraceSession>, offers: Offers, moreServers = false): TraceDiagnostic[] {
  const out: TraceDiagnostic[] = [];
  const servers = [...sessions].filter((s) => s.role === 'mcp' && s.tools !== undefined);
  const firstOffer = offers.firstOffer;
  // Without structured tools sent to the model (no LLM log, or a host that describes tools in text) there is
  // nothing to compare.
  if (!firstOffer || (servers.length === 0 && !moreServers)) return out;
  for (const s of servers) out.push(...unofferedTools(s, offers));
  for (const tool of offers.offeredToModel) {
    if (offers.mapped.has(tool)) continue;
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

/** A server's tools that no request to the model listed (worth saying only if some request offered tools). */
export function unofferedTools(s: TraceSession, offers: Offers): TraceDiagnostic[] {
  return (s.tools ?? [])
    .filter((tool) => !offers.reached.has(`${s.session}\u0000${tool}`))
    .map((tool): TraceDiagnostic => ({
      type: 'diagnostic',
      code: 'tool-not-offered-to-model',
      level: 'warn',
      time: s.time,
      tool,
      session: s.session,
      seq: offers.listedSeq.get(s.session) ?? 0,
      msg: `${s.server?.name ?? s.label} offers the tool ${tool}, but no request to the model listed it, so the model could never call it.`,
    }));
}

function short(value: unknown): string {
  return preview(typeof value === 'string' ? value : (JSON.stringify(value) ?? ''), 120);
}

function round(ms: number): number {
  return Math.round(ms * 10) / 10;
}

/** The first item from index `start` on, whose request is sent by `end`, that passes the test. */
function findFrom(list: readonly LlmExchange[], start: number, end: number, test: (item: LlmExchange) => boolean): LlmExchange | undefined {
  for (let i = start; i < list.length && list[i]!.request!.time <= end; i++) if (test(list[i]!)) return list[i];
  return undefined;
}

/** First index whose key is >= value, in a list sorted by key. */
export function lowerBound<T>(list: readonly T[], value: number, key: (item: T) => number): number {
  let lo = 0;
  let hi = list.length;
  while (lo < hi) {
    const mid = (lo + hi) >> 1;
    if (key(list[mid]!) < value) lo = mid + 1;
    else hi = mid;
  }
  return lo;
}
