/**
 * The trace linker over a stream of records in time order, holding a window of time, not the log: a round
 * trip (reply → tools/call → answer → feed-back → next reply) happens within seconds, so it is linked once the
 * stream is `lagMs` (twice the horizon) past the model's reply, and what no later record can change is let go.
 * At each cut link-steps.ts runs over what is held; answers older than the lag are final. A log shorter than
 * the lag is linked in one cut, as the whole-log linker did; links the window missed are counted in `notes`.
 */
import type { LogRecord } from '../log/schema.js';
import { pendingOfEvicted } from '../log/evicted.js';
import { DEFAULT_MAX_PENDING } from '../session/correlator.js';
import { RecentMap } from '../session/recent-map.js';
import { ToolNameMap, type ToolTarget } from './tool-names.js';
import { byDecision, collectModelCalls, mcpCallOf, noteMcpAnswer, noteSession, requestBody, type LlmExchange, type McpCall, type ModelCall } from './link-items.js';
import {
  carriesResult,
  findCarriers,
  finishTurn,
  mappingFinding,
  matchToolCalls,
  mcpOnlyTrip,
  modelTrip,
  noteOffered,
  offerDiagnostics,
  unofferedTools,
  startTurn,
  type TripFinding,
  type Matches,
  type Offers,
} from './link-steps.js';
import { DEFAULT_LINK_WINDOW_MS, type LinkOptions, type ToolRoundTrip, type TraceDiagnostic, type TraceSession, type TraceTurn } from './link.js';

/** How long after the model's reply a round trip's result, its feed-back and the answer may come: tools and models take seconds. */
export const DEFAULT_LINK_HORIZON_MS = 10 * 60_000;
/** Unfed round trips watched for a feed-back that comes too late to be linked (for the note that says so). */
const MAX_WATCHED = 1000;
/** For how many lags after its reply such a round trip is watched. */
const WATCH_LAGS = 3;
/** Calls done between two looks for them in logs with no model (linkAlone). */
const LINK_ALONE_EVERY = 512;
/** Most LLM exchanges and MCP calls held at once: past it, dense traffic, the oldest are linked early. */
export const MAX_HELD = 20_000;
/** Sessions held before those over long ago are let go (handed on with their totals): a log of thousands of sessions. */
export const MAX_SESSIONS = 1000;

/** Where the linker's results go as they become final. */
export interface TraceSink {
  /** Each round trip, once final, in time order. */
  roundTrip?(trip: ToolRoundTrip): void;
  /** Each turn, once its totals are known, in turn order, with its round trips. */
  turn?(turn: TraceTurn, trips: readonly ToolRoundTrip[]): void;
  /**
   * A session let go before the end, with its totals: more than `maxSessions` were held, and this one ended
   * (its `exit` or `close`) more than WATCH_LAGS lags ago. `LinkEnd.sessions` holds the rest.
   */
  session?(s: TraceSession): void;
}

/** What is known only at the end: every session, every finding (by time), and what the window kept from linking. */
export interface LinkEnd {
  sessions: TraceSession[];
  diagnostics: TraceDiagnostic[];
  /** Sentences about links the window could not make; empty when there were none. */
  notes: string[];
}

/** A committed turn, until its totals are known and it is handed on. */
interface OpenTurn {
  turn: TraceTurn;
  exchanges: LlmExchange[];
  /** Round trips committed to it, and those handed on (in time order). */
  trips: number;
  released: ToolRoundTrip[];
}

/** A result with the order the whole-log linker would have given it (compared element by element). */
interface Keyed<T> {
  item: T;
  key: number[];
}

/** Links records as they stream by; see the file's comment. */
export class TraceLinker {
  private readonly windowMs: number;
  private readonly horizonMs: number;
  private readonly lagMs: number;
  /** Whether the logs hold any LLM call, when the caller knows before the stream is read (else: seen so far). */
  private readonly haveLlm: boolean | undefined;
  private now = -Infinity;
  private lastCut = -Infinity;
  private ord = 0;
  private readonly sessions = new Map<string, TraceSession>();
  private readonly ranTools = new Map<string, Set<string>>();
  private readonly llmCalls = new Map<string, number>();
  private readonly toolCalls = new Map<string, number>();
  private readonly exchanges = new Map<string, LlmExchange>();
  /** Request bodies whose LLM exchange is not known yet, by exchange key. */
  private readonly bodies = new Map<string, { body: string; time: number }>();
  private mcpCalls: McpCall[] = [];
  private readonly openCalls = new Map<string, McpCall>();
  /** Calls let go before their answer came, by their open keys. */
  private unanswered = new Set<string>();
  private sawLlm = false;
  private readonly offers: Offers = { offeredToModel: new Set(), reached: new Set(), mapped: new Set(), listedSeq: new Map() };
  private committedTurns = 0;
  private readonly turns = new Map<number, OpenTurn>();
  private nextTurn = 1;
  private pending: Keyed<ToolRoundTrip>[] = [];
  private readonly diagnostics: Keyed<TripFinding>[] = [];
  private readonly mappings = new Map<string, Keyed<TraceDiagnostic>>();
  /** Committed model calls whose result was not fed back, watched for a feed-back beyond the horizon. */
  private unfed: { m: ModelCall; resultText: string | null }[] = [];
  private late = { answers: 0, feedBacks: 0, early: 0 };
  private readonly maxHeld: number;
  private readonly maxSessions: number;
  /** Sessions whose `exit` or `close` was read, until they are let go. */
  private readonly ended = new Set<string>();
  /** What the sessions let go leave for the end: whether any was an MCP server, and its tools no request offered. */
  private readonly letGoSessions = { mcp: false, servers: false, unoffered: [] as TraceDiagnostic[] };
  /** Records before this time are linked for good: no later finding names them. */
  private settledUntil = -Infinity;
  /** Sessions a finding of a broken round trip names (tool-not-run, result-not-fed-back). */
  private readonly brokenIn = new Set<string>();
  /** When the last early cut was made: one a millisecond of the stream at most. */
  private lastEarly = -Infinity;
  /** Whether the cut under way is an early one (what it links counts as linked early). */
  private early = false;
  /**
   * Calls the tap evicted, kept open for the late answer it may pair (`afterPending`): as many as it pairs late
   * one way. One pushed out of here is given up, as a `pending` record of any other kind gives a call up.
   */
  private readonly evicted = new RecentMap<string, string>(DEFAULT_MAX_PENDING);
  /** Calls answered (or given up) since they were last linked alone, in logs with no model (see linkAlone). */
  private doneAlone = 0;

  constructor(
    options: LinkOptions = {},
    private readonly sink: TraceSink = {},
  ) {
    this.windowMs = options.windowMs ?? DEFAULT_LINK_WINDOW_MS;
    this.horizonMs = Math.max(options.horizonMs ?? DEFAULT_LINK_HORIZON_MS, this.windowMs);
    this.lagMs = 2 * this.horizonMs;
    this.haveLlm = options.haveLlm;
    this.maxHeld = options.maxHeld ?? MAX_HELD;
    this.maxSessions = options.maxSessions ?? MAX_SESSIONS;
  }

  /** Take the next record (records come in time order). */
  push(r: LogRecord): void {
    if (r.time > this.now) this.now = r.time;
    noteSession(this.sessions, r);
    if (r.kind === 'lifecycle' && (r.event === 'exit' || r.event === 'close')) this.ended.add(r.session);
    switch (r.kind) {
      case 'llm-request':
        this.noteLlmRequest(r);
        break;
      case 'llm-response':
        this.exchange(r).response = r;
        break;
      case 'llm-error':
        this.exchange(r).error = r;
        break;
      case 'http-request': {
        const body = requestBody(r);
        const key = `${r.session}\u0000${r.exchange}`;
        const x = this.exchanges.get(key);
        if (body !== undefined && x) {
          if (!x.request || x.request.toolResults.length === 0) x.body = body;
        }
        else if (body !== undefined) this.bodies.set(key, { body, time: r.time });
        break;
      }
      case 'request':
        if (r.method === 'tools/call' && r.dir === 'c2s') this.noteMcpCall(r);
        break;
      case 'response':
        if (r.method === 'tools/list' && !this.offers.listedSeq.has(r.session)) this.offers.listedSeq.set(r.session, r.seq);
        if (r.method === 'tools/call' && r.requestSeq !== undefined) this.noteMcpAnswer(r);
        break;
      case 'pending':
        if (r.method === 'tools/call') this.noteMcpGivenUp(r);
        break;
      case 'evicted':
        for (const p of pendingOfEvicted(r)) if (p.method === 'tools/call') this.noteMcpGivenUp(p);
        break;
      default:
        break;
    }
    if (this.doneAlone >= LINK_ALONE_EVERY) this.linkAlone();
    if (this.now - this.lastCut >= this.lagMs / 4) this.cut(false);
    else if (this.exchanges.size + this.mcpCalls.length > this.maxHeld && this.now > this.lastEarly) this.cutEarly();
  }

  /** More held than the bound: link the older half of the held time now, as if the lag were shorter. */
  private cutEarly(): void {
    this.lastEarly = this.now;
    let oldest = this.now;
    for (const x of this.exchanges.values()) if (!x.callsDone) oldest = Math.min(oldest, x.request?.time ?? x.response?.time ?? x.error?.time ?? oldest);
    for (const c of this.mcpCalls) oldest = Math.min(oldest, c.request.time);
    this.early = true;
    try {
      this.cut(false, oldest + (this.now - oldest) / 2);
    } finally {
      this.early = false;
    }
  }

  /**
   * What the linker holds now: LLM exchanges, MCP calls, round trips, turns and sessions not yet handed on, and
   * the calls let go whose late answer it still watches for.
   */
  get held(): { exchanges: number; mcpCalls: number; roundTrips: number; turns: number; sessions: number; watched: number } {
    return { exchanges: this.exchanges.size, mcpCalls: this.mcpCalls.length, roundTrips: this.pending.length, turns: this.turns.size, sessions: this.sessions.size, watched: this.unanswered.size };
  }

  /** Records before this time are linked for good, their findings made (check folds the sessions before it). */
  get settled(): number {
    return this.settledUntil;
  }

  /** Whether a finding of a broken round trip made so far names this session. */
  brokenInSession(session: string): boolean {
    return this.brokenIn.has(session);
  }

  /** Link what is left, and say what only the end can tell. */
  end(): LinkEnd {
    this.cut(true);
    for (const s of this.sessions.values()) this.totals(s);
    // Whether the logs hold an MCP server's log is known for sure only now.
    const haveMcp = this.letGoSessions.mcp || [...this.sessions.values()].some((s) => s.role === 'mcp');
    const written = this.diagnostics.map(({ item, key }) => ({ item: 'write' in item ? item.write(haveMcp) : item, key }));
    const offered = offerDiagnostics(this.sessions.values(), this.offers, this.letGoSessions.servers).map((d, i) => ({ item: d, key: [d.time, 2, i] }));
    // Those of sessions let go count only if some request offered the model tools at all (known now).
    const unoffered = this.offers.firstOffer ? this.letGoSessions.unoffered.map((d, i) => ({ item: d, key: [d.time, 2, -1, i] })) : [];
    const found = [...written, ...unoffered, ...offered, ...this.mappings.values()];
    found.sort((a, b) => compareKeys(a.key, b.key));
    return { sessions: [...this.sessions.values()], diagnostics: found.map((d) => d.item), notes: this.notes() };
  }

  private totals(s: TraceSession): void {
    if (s.role === 'llm') s.llmCalls = this.llmCalls.get(s.session) ?? 0;
    if (s.role === 'mcp') s.toolCalls = this.toolCalls.get(s.session) ?? 0;
  }

  /** Past `maxSessions` held, hand on the sessions that ended before `before` and let go of what is kept of them. */
  private letGoOfSessions(before: number): void {
    if (this.sessions.size <= this.maxSessions) return;
    for (const session of this.ended) {
      const s = this.sessions.get(session);
      if (s && s.endTime >= before) continue;
      this.ended.delete(session);
      if (!s) continue;
      this.totals(s);
      if (s.role === 'mcp') this.letGoSessions.mcp = true;
      if (s.role === 'mcp' && s.tools !== undefined) {
        this.letGoSessions.servers = true;
        this.letGoSessions.unoffered.push(...unofferedTools(s, this.offers));
        for (const tool of s.tools) this.offers.reached.delete(`${session}\u0000${tool}`);
      }
      this.sessions.delete(session);
      this.llmCalls.delete(session);
      this.toolCalls.delete(session);
      this.ranTools.delete(session);
      this.offers.listedSeq.delete(session);
      this.sink.session?.(s);
    }
  }

  private exchange(r: LogRecord & { exchange: string }): LlmExchange {
    const key = `${r.session}\u0000${r.exchange}`;
    let x = this.exchanges.get(key);
    if (!x) {
      x = { key, ord: this.ord++ };
      this.exchanges.set(key, x);
      this.sawLlm = true;
      const body = this.bodies.get(key);
      if (body) {
        x.body = body.body;
        this.bodies.delete(key);
      }
    }
    return x;
  }

  private noteLlmRequest(r: Extract<LogRecord, { kind: 'llm-request' }>): void {
    const x = this.exchange(r);
    if (!x.request) this.llmCalls.set(r.session, (this.llmCalls.get(r.session) ?? 0) + 1);
    x.request = r;
    // The body is searched only for results fed back as text, in a request without tool results: the rest let go.
    if (r.toolResults.length > 0) delete x.body;
    for (const t of r.tools) this.offers.offeredToModel.add(t);
    if (r.tools.length > 0 && (!this.offers.firstOffer || r.time < this.offers.firstOffer.time)) this.offers.firstOffer = r;
  }

  private noteMcpCall(r: Extract<LogRecord, { kind: 'request' }>): void {
    const call = mcpCallOf(r, this.openCalls, this.ord++);
    if (!call) return;
    this.mcpCalls.push(call);
    this.toolCalls.set(r.session, (this.toolCalls.get(r.session) ?? 0) + 1);
    const ran = this.ranTools.get(r.session) ?? new Set<string>();
    ran.add(call.name);
    this.ranTools.set(r.session, ran);
  }

  private noteMcpAnswer(r: Extract<LogRecord, { kind: 'response' }>): void {
    const key = `${r.session}\u0000${r.requestSeq}`;
    const call = this.openCalls.get(key);
    if (call) noteMcpAnswer(call, r);
    else if (this.unanswered.delete(key)) this.late.answers++;
    if (r.afterPending) this.evicted.take(key);
    if (call && this.haveLlm === false && r.resultType !== 'input_required') this.doneAlone++;
  }

  /**
   * The tap stopped waiting for this call's answer. One it evicted (more calls were open than it tracks) may
   * still be answered: the tap pairs that answer by requestSeq (`afterPending`), so the call stays open for it.
   */
  private noteMcpGivenUp(r: Extract<LogRecord, { kind: 'pending' }>): void {
    const key = `${r.session}\u0000${r.requestSeq}`;
    if (!r.evicted || r.cancelled) return this.giveUp(key);
    if (!this.openCalls.has(key)) return;
    // Keyed by itself: what set() returns is the key pushed out.
    const gone = this.evicted.set(key, key);
    if (gone !== undefined) this.giveUp(gone);
  }

  /** No answer will be paired with this call: it is done, and no late answer is watched for. */
  private giveUp(key: string): void {
    const call = this.openCalls.get(key);
    if (call) call.givenUp = true;
    if (call && this.haveLlm === false) this.doneAlone++;
    this.openCalls.delete(key);
    this.unanswered.delete(key);
  }

  /**
   * In logs with no model (the caller knows: `haveLlm: false`) no reply can claim an MCP call, so a call answered
   * or given up is its own round trip at once: a busy server's calls are not held for the whole window.
   */
  private linkAlone(): void {
    this.doneAlone = 0;
    const done = new Set<McpCall>();
    for (const c of this.mcpCalls) {
      if (!c.givenUp && (!c.response || c.response.resultType === 'input_required')) continue;
      this.commitMcpOnlyTrip(c, false);
      done.add(c);
    }
    if (done.size > 0) this.letGo(done);
    this.release(this.watermark(), this.settledUntil, false);
  }

  /** Link what is held; make final what is older than the lag (everything, at the end). */
  private cut(final: boolean, early?: number): void {
    if (early === undefined) this.lastCut = this.now;
    const settled = final ? Infinity : Math.max(early ?? -Infinity, this.now - this.lagMs);
    if (!final) this.settledUntil = Math.max(this.settledUntil, settled);
    const names = this.toolNameMap();
    const modelCalls = collectModelCalls(this.exchanges.values());
    for (const c of this.mcpCalls) c.used = false;
    const targetsOf = new Map(modelCalls.map((m) => [m, names.resolve(m.call.name, m.exchange.request?.tools)]));
    const matches = matchToolCalls(modelCalls, this.mcpCalls, targetsOf, this.windowMs);
    const ordered = [...this.exchanges.values()].filter((x) => x.request).sort((a, b) => a.request!.time - b.request!.time);
    const fedBackIn = findCarriers(modelCalls, matches.ran, ordered, (m) => m.exchange.response!.time + this.horizonMs);
    this.guessTurns(ordered, fedBackIn);
    this.commitTurns(ordered, settled, names);
    this.commitModelTrips(modelCalls, settled, matches, fedBackIn, targetsOf);
    this.commitMcpOnlyTrips(settled);
    const watermark = final ? Infinity : this.watermark();
    this.release(watermark, settled, final);
    if (!final) this.evict(watermark, settled);
  }

  /**
   * The servers of the time the held records cover (from a lag before the oldest), as the tool-name map needs
   * them: their names, and the tools they listed or ran. Relative to what is held, not to now: a log that
   * resumes after hours must not lose the servers of the records still to be linked.
   */
  private toolNameMap(): ToolNameMap {
    let oldest = this.now;
    for (const x of this.exchanges.values()) oldest = Math.min(oldest, x.request?.time ?? x.response?.time ?? x.error?.time ?? oldest);
    for (const c of this.mcpCalls) oldest = Math.min(oldest, c.request.time);
    const since = oldest - this.lagMs;
    const servers = [];
    for (const s of this.sessions.values()) {
      if (s.role !== 'mcp' || s.endTime < since) continue;
      const names = [s.server?.name, s.label].filter((n): n is string => n !== undefined);
      servers.push({ session: s.session, names, tools: [...new Set([...(s.tools ?? []), ...(this.ranTools.get(s.session) ?? [])])] });
    }
    return new ToolNameMap(servers);
  }

  /** Turns of the requests not yet committed: a request that feeds a result back continues the turn of the call it answers. */
  private guessTurns(ordered: readonly LlmExchange[], fedBackIn: Map<ModelCall, LlmExchange>): void {
    const feeds = new Map<LlmExchange, ModelCall[]>();
    for (const [m, x] of fedBackIn) {
      const list = feeds.get(x);
      if (list) list.push(m);
      else feeds.set(x, [m]);
    }
    for (const x of ordered) if (!x.committed) delete x.turn;
    let next = this.committedTurns + 1;
    for (const x of ordered) {
      if (x.committed) continue;
      const parents = x.fedBy ? [...x.fedBy, ...(feeds.get(x) ?? [])].sort(byDecision) : feeds.get(x);
      const parent = parents?.find((m) => m.exchange.turn !== undefined)?.exchange.turn;
      x.turn = parent ?? next++;
    }
  }

  /** Fix the turns of the requests sent before `settled`, in order; map the tools they offered with the servers of now. */
  private commitTurns(ordered: readonly LlmExchange[], settled: number, names: ToolNameMap): void {
    const mappedLists = new Set<string>();
    for (const x of ordered) {
      if (x.committed) continue;
      if (x.request!.time >= settled) break;
      x.committed = true;
      const r = x.request!;
      const open = this.turns.get(x.turn!);
      if (x.turn === this.committedTurns + 1) {
        this.committedTurns++;
        this.turns.set(x.turn, { turn: startTurn(x.turn, r), exchanges: [x], trips: 0, released: [] });
      } else if (open) {
        open.turn.exchanges.push(r.exchange);
        open.exchanges.push(x);
      }
      // An agent offers the same tools on every call: each distinct list is mapped once a cut.
      const list = r.tools.join('\u0000');
      if (!mappedLists.has(list)) {
        mappedLists.add(list);
        noteOffered(this.offers, names, r.tools);
      }
      this.watchLateFeedBack(x);
    }
  }

  /** The round trips of the model calls whose replies ended before `settled`. */
  private commitModelTrips(modelCalls: readonly ModelCall[], settled: number, matches: Matches, fedBackIn: Map<ModelCall, LlmExchange>, targetsOf: Map<ModelCall, ToolTarget[]>): void {
    const claimed = new Set<McpCall>();
    for (const m of modelCalls) {
      const x = m.exchange;
      if (x.response!.time >= settled) continue;
      const mcp = matches.ran.get(m);
      const mapping = matches.mappingOf.get(m);
      const carrier = fedBackIn.get(m);
      const ctx = { mcp, mapping, carrier, targets: targetsOf.get(m)!, windowMs: this.windowMs, serverName: (c: McpCall) => this.serverName(c) };
      const { trip, diagnostics } = modelTrip(m, ctx);
      const order = [m.decidedAt, x.response!.time, x.ord, m.index];
      this.pending.push({ item: trip, key: [trip.time, 0, ...order] });
      if (this.early) this.late.early++;
      diagnostics.forEach((d, i) => this.diagnostics.push({ item: d, key: [d.time, 0, ...order, i] }));
      for (const d of diagnostics) this.noteBroken(d);
      if (mcp) claimed.add(mcp);
      if (mcp && mapping && mapping.scheme !== 'same name') this.noteMapping(mappingFinding(m, mcp, mapping, this.serverName(mcp)), `${m.call.name}\u0000${mcp.request.session}`, order);
      if (carrier) (carrier.fedBy ??= []).push(m);
      else if (mcp) this.watchUnfed(m, mcp.resultText);
      if (x.turn !== undefined) {
        const open = this.turns.get(x.turn);
        if (open) open.trips++;
      }
    }
    for (const x of this.exchanges.values()) if (x.response && x.response.time < settled) x.callsDone = true;
    if (claimed.size > 0) this.letGo(claimed);
  }

  /** MCP calls before `settled` that no model call took: round trips of their own. */
  private commitMcpOnlyTrips(settled: number): void {
    const done = new Set<McpCall>();
    for (const c of this.mcpCalls) {
      if (c.used || c.request.time >= settled) continue;
      this.commitMcpOnlyTrip(c, this.early);
      done.add(c);
    }
    if (done.size > 0) this.letGo(done);
  }

  private commitMcpOnlyTrip(c: McpCall, early: boolean): void {
    const haveLlm = this.haveLlm ?? this.sawLlm;
    const { trip, diagnostics } = mcpOnlyTrip(c, this.serverName(c), haveLlm);
    this.pending.push({ item: trip, key: [trip.time, 1, c.ord] });
    // Without a model there is no feed-back that linking early could miss.
    if (early && haveLlm) this.late.early++;
    diagnostics.forEach((d, i) => this.diagnostics.push({ item: d, key: [d.time, 1, c.ord, i] }));
    for (const d of diagnostics) this.noteBroken(d);
  }

  private noteBroken(d: TripFinding): void {
    if ('write' in d || d.code === 'tool-not-run' || d.code === 'result-not-fed-back') this.brokenIn.add(d.session ?? '');
  }

  /** The first `tool-name-mapped` note per host name and server, in the order the model decided. */
  private noteMapping(d: TraceDiagnostic, key: string, order: number[]): void {
    const seen = this.mappings.get(key);
    if (seen && compareKeys(seen.key.slice(2), order) <= 0) return;
    this.mappings.set(key, { item: d, key: [d.time, 3, ...order] });
  }

  /** MCP calls linked for good: no longer held, and an answer that comes after this is counted as late. */
  private letGo(calls: Set<McpCall>): void {
    this.mcpCalls = this.mcpCalls.filter((c) => !calls.has(c));
    for (const c of calls) {
      for (const seq of [c.request.seq, ...(c.rounds ?? []).map((r) => r.seq)]) {
        const key = `${c.request.session}\u0000${seq}`;
        if (!this.openCalls.delete(key) || c.response) continue;
        this.unanswered.add(key);
        // Only a note counts late answers: past twice the bound, the older half is no longer watched for (at once:
        // deleting the oldest one at a time walks a Set's deleted entries from its head each time).
        if (this.unanswered.size > 2 * this.maxHeld) this.unanswered = new Set([...this.unanswered].slice(this.maxHeld));
      }
    }
  }

  /** The earliest time a round trip not yet made final can have: round trips before it are handed on. */
  private watermark(): number {
    let low = this.now;
    for (const x of this.exchanges.values()) {
      if (x.callsDone) continue;
      const t = x.request?.time ?? x.response?.time ?? x.error?.time ?? this.now;
      if (t < low) low = t;
    }
    for (const c of this.mcpCalls) if (c.request.time < low) low = c.request.time;
    return low;
  }

  /** Hand on the round trips before the watermark, in time order, then every turn whose totals are known. */
  private release(watermark: number, settled: number, final: boolean): void {
    this.pending.sort((a, b) => compareKeys(a.key, b.key));
    let n = 0;
    while (n < this.pending.length && this.pending[n]!.key[0]! < watermark) {
      const trip = this.pending[n++]!.item;
      this.sink.roundTrip?.(trip);
      if (trip.turn !== null) this.turns.get(trip.turn)?.released.push(trip);
    }
    this.pending = this.pending.slice(n);
    for (let open = this.turns.get(this.nextTurn); open; open = this.turns.get(this.nextTurn)) {
      if (!final && !this.closable(open, settled)) break;
      finishTurn(open.turn, open.exchanges, open.released);
      this.sink.turn?.(open.turn, open.released);
      this.turns.delete(this.nextTurn++);
    }
  }

  /** A turn no request can join any more, whose calls and round trips are all out. */
  private closable(open: OpenTurn, settled: number): boolean {
    if (open.trips !== open.released.length) return false;
    let latest = -Infinity;
    for (const x of open.exchanges) {
      const answered = x.response ? x.callsDone : x.error !== undefined || x.request!.time < settled - this.lagMs;
      if (!answered) return false;
      latest = Math.max(latest, x.response?.time ?? x.error?.time ?? x.request!.time);
    }
    // A request joins a turn by carrying back a result of one of its calls, within the horizon of the reply.
    return latest + this.horizonMs < settled;
  }

  /** Let go of what no later link can use: exchanges before the watermark, bodies no exchange claimed. */
  private evict(watermark: number, settled: number): void {
    const old = settled;
    for (const [key, x] of this.exchanges) {
      // A request whose reply never came (a log cut off) stops holding the others back after two lags.
      if (!x.response && !x.callsDone && (x.request?.time ?? x.error?.time ?? this.now) < old - this.lagMs) x.callsDone = true;
      const t = x.request?.time ?? x.response?.time ?? x.error?.time ?? this.now;
      if (x.callsDone && (x.committed || !x.request) && t < watermark && t < old) this.exchanges.delete(key);
    }
    for (const [key, b] of this.bodies) {
      if (b.time >= old) break;
      this.bodies.delete(key);
    }
    // The tools a session ran count for the tool-name map while it is in the held time; a session idle for
    // longer than that (a log of thousands of short sessions) need not keep them.
    for (const [session, s] of this.sessions) if (s.endTime < old - WATCH_LAGS * this.lagMs) this.ranTools.delete(session);
    this.letGoOfSessions(old - WATCH_LAGS * this.lagMs);
    // A feed-back is watched for long enough to be told about (an hour, at the default horizon), not for ever.
    this.unfed = this.unfed.filter((u) => u.m.exchange.response!.time >= this.now - WATCH_LAGS * this.lagMs);
  }

  private serverName(c: McpCall): string {
    return this.sessions.get(c.request.session)?.server?.name ?? c.request.label;
  }

  /** Remember a round trip whose result was not fed back, to count a feed-back that comes after the horizon. */
  private watchUnfed(m: ModelCall, resultText: string | null): void {
    this.unfed.push({ m, resultText });
    if (this.unfed.length > MAX_WATCHED) this.unfed.shift();
  }

  private watchLateFeedBack(x: LlmExchange): void {
    if (this.unfed.length === 0 || x.request!.toolResults.length === 0) return;
    const i = this.unfed.findIndex((u) => u.m.decidedAt <= x.request!.time && carriesResult(x, u.m, u.resultText));
    if (i === -1) return;
    this.late.feedBacks++;
    this.unfed.splice(i, 1);
  }

  private notes(): string[] {
    const minutes = duration(this.horizonMs);
    const notes: string[] = [];
    if (this.late.answers > 0) {
      notes.push(`${this.late.answers} tools/call answer${this.late.answers === 1 ? '' : 's'} came more than ${minutes} after the model's tool call, beyond the linker's window: ${this.late.answers === 1 ? 'its round trip shows' : 'their round trips show'} no result.`);
    }
    if (this.late.feedBacks > 0) {
      notes.push(`${this.late.feedBacks} tool result${this.late.feedBacks === 1 ? ' was' : 's were'} fed back to the model more than ${minutes} after the call, beyond the linker's window: ${this.late.feedBacks === 1 ? 'its round trip says' : 'their round trips say'} not fed back.`);
    }
    if (this.late.early > 0) {
      const lag = duration(this.lagMs);
      notes.push(`${this.late.early} round trip${this.late.early === 1 ? ' was' : 's were'} linked before ${this.late.early === 1 ? 'its' : 'their'} window was over: more than ${this.maxHeld.toLocaleString('en')} LLM and tool calls came within ${lag}, so the oldest were linked early (a result fed back after that shows as not fed back).`);
    }
    return notes;
  }
}

function compareKeys(a: readonly number[], b: readonly number[]): number {
  for (let i = 0; i < Math.min(a.length, b.length); i++) if (a[i] !== b[i]) return a[i]! - b[i]!;
  return a.length - b.length;
}

/** `10 min`, `20 s`. */
function duration(ms: number): string {
  return ms >= 60_000 ? `${Math.round(ms / 60_000)} min` : `${Math.round(ms / 1000)} s`;
}
