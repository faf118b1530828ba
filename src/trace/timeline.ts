/**
 * The story of a trace as a sequence of arrows between participants — User, Host (the agent or client), the LLM
 * and each MCP server — the picture people draw by hand when they explain MCP, built from real records.
 *
 * One model (`buildTimeline`) feeds three views: the text timeline (`formatTimeline`, what `mcptap demo` prints),
 * the Mermaid sequence diagram and the SVG in the html view. Pure: records and their trace in, plain data out.
 */
import type { LogRecord } from '../log/schema.js';
import { asObject, inputRequestsOf, preview } from '../protocols/mcp.js';
import { toolResultText, type ToolRoundTrip, type Trace, type TraceSession, type TraceTurn } from './link.js';
import { toolResultNames } from '../protocols/llm.js';
import { parseRawObject } from '../log/reader.js';
import { widest } from './widest.js';

/** Someone who sends or receives arrows. */
export interface Participant {
  /** Stable id: `user`, `host`, `llm:<label>:<channel>`, `mcp:<label>`. */
  id: string;
  /** Name shown in diagrams. */
  name: string;
  kind: 'user' | 'host' | 'llm' | 'mcp';
}

/** One arrow (or a note, when `from === to`). */
export interface TimelineStep {
  time: number;
  from: string;
  to: string;
  text: string;
  /** request: a solid arrow; reply: dashed; error: a reply that failed; note: something said about one participant. */
  style: 'request' | 'reply' | 'error' | 'note';
  /** The record the step was drawn from. */
  record: LogRecord;
}

export interface Timeline {
  participants: Participant[];
  steps: TimelineStep[];
}

/**
 * A step as a stream draws it, without its record: arrows wait in the stream to be sorted, and a record each
 * kept every flood record alive for as long.
 */
export type TimelineArrow = Omit<TimelineStep, 'record'>;

/** The participants and the arrows a page draws (a Timeline, or a stream's arrows). */
export interface DrawnTimeline {
  participants: Participant[];
  steps: readonly TimelineArrow[];
}

/** What an `input_required` result asks the user, from its elicitations' messages. */
function inputAsks(raw: string): string | undefined {
  const result = asObject(parseRawObject(raw)?.result);
  const asks = result ? inputRequestsOf(result).filter((a) => a.asks !== undefined) : [];
  return asks.length ? asks.map((a) => `asks: ${a.asks}`).join('; ') : undefined;
}

/** Longest text on one arrow. */
const STEP_CHARS = 90;

/** The arrows of a trace, in time order. */
export function buildTimeline(records: readonly LogRecord[], trace: Trace): Timeline {
  const cast = new Cast();
  for (const r of records) cast.note(r);
  const firstOfTurn = new Map<string, string | null>();
  const lastOfTurn = new Set<string>();
  for (const t of trace.turns) {
    firstOfTurn.set(`${t.session}\u0000${t.exchanges[0]}`, t.prompt);
    lastOfTurn.add(`${t.session}\u0000${t.exchanges[t.exchanges.length - 1]}`);
  }
  const fedInto = new Map<string, string[]>();
  for (const t of trace.roundTrips) noteFedInto(fedInto, t);
  const requestTime = new Map<string, number>();
  for (const r of records) if (r.kind === 'llm-request') requestTime.set(`${r.session}\u0000${r.exchange}`, r.time);
  const steps: TimelineStep[] = [];
  for (const r of records) {
    const key = 'exchange' in r ? `${r.session}\u0000${r.exchange}` : '';
    for (const arrow of stepsOf(r, { prompt: firstOfTurn.get(key), last: lastOfTurn.has(key), fed: fedInto.get(key) ?? [], requestTime: requestTime.get(key) })) steps.push(Object.assign(arrow, { record: r }));
  }
  steps.sort((a, b) => a.time - b.time);
  // Only who takes part: an MCP-only log has no User or LLM column.
  const used = new Set(steps.flatMap((s) => [s.from, s.to]));
  return { participants: cast.participants(trace.sessions).filter((p) => used.has(p.id)), steps };
}

/** The tools a round trip fed back into its carrier request, by that request's session and exchange. */
function noteFedInto(fedInto: Map<string, string[]>, t: ToolRoundTrip): void {
  if (!t.fedBackIn) return;
  const key = `${t.fedBackIn.session}\u0000${t.fedBackIn.exchange}`;
  fedInto.set(key, [...(fedInto.get(key) ?? []), t.tool]);
}

/**
 * Who takes part, in the order the picture reads left to right: User, Host, the LLMs (one per proxy and API;
 * one proxy may carry Ollama and OpenAI calls), then the servers, each in the order first met.
 */
class Cast {
  private readonly llmKeys = new Map<string, [string, string]>();
  private readonly servers = new Map<string, string>();
  /** The serverInfo names of servers' first sessions that the linker let go before the end. */
  private readonly named = new Map<string, string | undefined>();

  note(r: LogRecord): void {
    if (isLlm(r) && !this.llmKeys.has(llmId(r))) this.llmKeys.set(llmId(r), [r.label, r.channel]);
    if (isMcp(r) && !this.servers.has(`mcp:${r.label}`)) this.servers.set(`mcp:${r.label}`, r.session);
  }

  /** A session let go before the end: only a server's first session names it, so only that one is kept, by name. */
  letGo(s: TraceSession): void {
    if (this.servers.get(`mcp:${s.label}`) === s.session) this.named.set(s.session, s.server?.name);
  }

  /** Named by the API when there is one proxy, by the proxy's label when there are several; servers by serverInfo.name. */
  participants(sessions: readonly TraceSession[]): Participant[] {
    const keys = [...this.llmKeys.values()];
    const manyLabels = new Set(keys.map(([label]) => label)).size > 1;
    const llmName = (label: string, channel: string): string => {
      if (!manyLabels) return `LLM (${channel})`;
      return keys.filter(([l]) => l === label).length > 1 ? `LLM ${label} (${channel})` : `LLM ${label}`;
    };
    const participants: Participant[] = [
      { id: 'user', name: 'User', kind: 'user' },
      { id: 'host', name: 'Host / client', kind: 'host' },
    ];
    for (const [id, [label, channel]] of this.llmKeys) participants.push({ id, name: llmName(label, channel), kind: 'llm' });
    const byServer = new Map(this.named);
    for (const s of sessions) byServer.set(s.session, s.server?.name);
    for (const [id, session] of this.servers) participants.push({ id, name: byServer.get(session) ?? id.slice(4), kind: 'mcp' });
    return participants;
  }
}

/** What the trace says about one record's exchange. */
interface StepContext {
  /** The prompt of the turn this request starts (undefined: it starts none). */
  prompt: string | null | undefined;
  /** This exchange is the last of its turn. */
  last: boolean;
  /** The tools whose results the linker traced into this request. */
  fed: readonly string[];
  /** When this exchange's request was sent, if logged. */
  requestTime: number | undefined;
}

/** The arrows one record draws. */
function stepsOf(r: LogRecord, ctx: StepContext): TimelineArrow[] {
  const steps: TimelineArrow[] = [];
  const add = (from: string, to: string, text: string, style: TimelineStep['style'], time = r.time): void => {
    steps.push({ time, from, to, text: preview(text, STEP_CHARS), style });
  };
  switch (r.kind) {
    case 'llm-request': {
      if (ctx.prompt) add('user', 'host', ctx.prompt, 'request');
      // Name what was fed back by the tools the linker traced into this request; ids alone say little.
      const names = ctx.fed.length > 0 ? ctx.fed : toolResultNames(r);
      const text =
        r.toolResults.length > 0 || ctx.fed.length > 0
          ? `${names.length === 1 ? 'tool result' : `${names.length} tool results`} fed back: ${names.join(', ')}`
          : `chat ${r.model ?? ''} (${r.messageCount} message${r.messageCount === 1 ? '' : 's'}, ${r.tools.length} tool${r.tools.length === 1 ? '' : 's'})`;
      add('host', llmId(r), text.replace(/\s+/g, ' '), 'request');
      break;
    }
    case 'llm-response': {
      const llm = llmId(r);
      // Arguments in the order the model wrote them, as the records keep them (matching compares them sorted).
      const calls = r.toolCalls.map((c) => `${c.name} ${typeof c.arguments === 'string' ? c.arguments : (JSON.stringify(c.arguments) ?? '')}`);
      // Agents act on the chunk that completes a call, before the response ends: the arrow goes there.
      if (calls.length > 0) add(llm, 'host', `tool call ${calls.join('; ')}`, 'reply', decidedAt(r, ctx.requestTime));
      else add(llm, 'host', r.content.includes('<use_mcp_tool>') ? `tool call as text: ${r.content}` : `answer: ${r.content}`, 'reply');
      if (calls.length === 0 && ctx.last && r.content.trim() !== '' && !r.content.includes('<use_mcp_tool>')) add('host', 'user', r.content, 'reply');
      break;
    }
    case 'llm-error':
      add(llmId(r), 'host', `error ${r.status}: ${r.error}`, 'error');
      break;
    case 'request': {
      const server = `mcp:${r.label}`;
      const call = r.method === 'tools/call' ? `tools/call ${r.tool ?? ''} ${argumentsOf(r.raw)}` : r.method;
      const text = r.round !== undefined ? `${call} (round ${r.round}, with the answers)` : call;
      if (r.dir === 'c2s') add('host', server, text, 'request');
      else add(server, 'host', text, 'request');
      break;
    }
    case 'response':
      mcpResponseSteps(r, add);
      break;
    case 'notification': {
      const server = `mcp:${r.label}`;
      if (r.dir === 'c2s') add('host', server, r.method, 'reply');
      else add(server, 'host', r.method, 'reply');
      break;
    }
    case 'invalid':
      add(`mcp:${r.label}`, `mcp:${r.label}`, `not JSON-RPC (${r.reason})`, 'note');
      break;
    case 'pending':
      add(`mcp:${r.label}`, `mcp:${r.label}`, `${r.method}${r.tool ? ` ${r.tool}` : ''} #${String(r.id)} never answered`, 'note');
      break;
    case 'evicted': {
      const one = r.requests.length === 1 ? r.requests[0]! : undefined;
      const what = one ? `${one.method}${one.tool ? ` ${one.tool}` : ''} #${String(one.id)}` : `${r.requests.length} requests`;
      add(`mcp:${r.label}`, `mcp:${r.label}`, `${what} unanswered so far, no longer tracked`, 'note');
      break;
    }
    default:
      break;
  }
  return steps;
}

function mcpResponseSteps(r: Extract<LogRecord, { kind: 'response' }>, add: (from: string, to: string, text: string, style: TimelineStep['style']) => void): void {
  const server = `mcp:${r.label}`;
  const [from, to] = r.dir === 's2c' ? [server, 'host'] : ['host', server];
  const ms = r.latencyMs !== undefined ? ` (${formatMs(r.latencyMs)})` : '';
  const call = r.callLatencyMs !== undefined && r.resultType !== 'input_required' ? `, round ${r.round} of a call of ${formatMs(r.callLatencyMs)}` : '';
  if (r.error) add(from, to, `error ${r.error.code}: ${r.error.message}${ms}`, 'error');
  else if (r.resultType === 'input_required') {
    // Multi-round-trip (2026-07-28): the server asks, the host asks the user, and calls again.
    add(from, to, `input required (round ${r.round ?? 1}): ${(r.inputRequests ?? []).join(', ')}${ms}`, 'reply');
    const asks = inputAsks(r.raw);
    if (asks) add('host', 'user', asks, 'request');
  } else if (r.method === 'tools/call' && call) add(from, to, `${r.isError ? 'tool error' : 'result'}: ${toolResultText(parseRawObject(r.raw)?.result) ?? 'no content'} (${formatMs(r.latencyMs ?? 0)}${call})`, r.isError ? 'error' : 'reply');
  else if (r.method === 'tools/call') add(from, to, `${r.isError ? 'tool error' : 'result'}: ${toolResultText(parseRawObject(r.raw)?.result) ?? 'no content'}${ms}`, r.isError ? 'error' : 'reply');
  else add(from, to, `${r.method ?? 'response'} result${ms}`, 'reply');
}

function llmId(r: LogRecord): string {
  return `llm:${r.label}:${r.channel}`;
}

export interface TimelineFormatOptions {
  color: boolean;
}

/** The timeline as text lines: `+0.012s  Host → LLM (ollama)  chat …`. */
export function formatTimeline(timeline: Timeline, options: TimelineFormatOptions): string[] {
  const names = new Map(timeline.participants.map((p) => [p.id, p.name]));
  const first = timeline.steps[0]?.time ?? 0;
  const width = Math.min(40, widest(timeline.steps, (s) => arrowOf(s, names).length));
  return timeline.steps.map((s) => timelineLine(s, { names, first, width, color: options.color }));
}

/** The arrow column of a step: `Host → LLM (ollama)`, or the one participant of a note. */
export function arrowOf(s: Pick<TimelineStep, 'from' | 'to'>, names: ReadonlyMap<string, string>): string {
  return s.from === s.to ? `${names.get(s.from)}` : `${names.get(s.from)} \u2192 ${names.get(s.to)}`;
}

/** One step's line, given the participants' names, the first step's time and the arrow column's width. */
export function timelineLine(s: Pick<TimelineStep, 'time' | 'from' | 'to' | 'text' | 'style'>, at: { names: ReadonlyMap<string, string>; first: number; width: number; color: boolean }): string {
  const paint = (code: number, text: string): string => (at.color ? `\u001b[${code}m${text}\u001b[0m` : text);
  const time = `+${((s.time - at.first) / 1000).toFixed(3)}s`;
  const colour = s.style === 'error' ? 31 : s.style === 'note' ? 33 : s.style === 'request' ? 34 : 32;
  return `${paint(90, time)}  ${paint(36, arrowOf(s, at.names).padEnd(at.width))}  ${paint(colour, s.text)}`;
}

/**
 * The arrows of a stream of records, as the linker's results come (linker.ts): an LLM exchange's records wait
 * until its turn is known (who asked, which call is the turn's last), the rest draw at once, and the arrows
 * are handed on in time order once no earlier one can come. The same arrows `buildTimeline` draws.
 */
export class TimelineStream {
  private readonly cast = new Cast();
  /** The records of LLM exchanges whose turn is not known yet, by session and exchange. */
  private readonly held = new Map<string, { records: { r: LogRecord; ord: number }[]; requestTime?: number }>();
  private readonly fedInto = new Map<string, string[]>();
  private ready: { step: TimelineArrow; key: [number, number, number] }[] = [];
  private ord = 0;
  private now = -Infinity;
  /** Arrows gathered before the next look: sorting at every record would be quadratic behind a held exchange. */
  private nextLook = 256;

  constructor(private readonly out: (step: TimelineArrow) => void) {}

  /** Take the next record (before the linker takes it). */
  push(r: LogRecord): void {
    if (r.time > this.now) this.now = r.time;
    this.cast.note(r);
    const ord = this.ord++;
    const key = 'exchange' in r ? `${r.session}\u0000${r.exchange}` : '';
    const held = isLlm(r) ? this.held.get(key) : undefined;
    if (r.kind === 'llm-request') this.held.set(key, { records: [...(held?.records ?? []), { r, ord }], requestTime: r.time });
    else if (held) held.records.push({ r, ord });
    else this.draw(r, ord, { prompt: undefined, last: false, fed: [], requestTime: undefined });
    if (this.ready.length >= this.nextLook) {
      this.release(false);
      this.nextLook = Math.max(256, 2 * this.ready.length);
    }
  }

  /** A round trip, once final: the tools fed back into a request name its arrow. */
  roundTrip(t: ToolRoundTrip): void {
    if (t.fedBackIn && this.held.has(`${t.fedBackIn.session}\u0000${t.fedBackIn.exchange}`)) noteFedInto(this.fedInto, t);
  }

  /** A turn, once final: its exchanges' records draw. */
  turn(t: TraceTurn): void {
    t.exchanges.forEach((exchange, i) => this.drawHeld(`${t.session}\u0000${exchange}`, { prompt: i === 0 ? t.prompt : undefined, last: i === t.exchanges.length - 1 }));
    this.release(false);
  }

  /** A session the linker let go before the end (TraceSink.session): what the participants need of it. */
  letGo(s: TraceSession): void {
    this.cast.letGo(s);
  }

  /** Draw what is left; the participants who took part, named with the sessions the linker knows at the end. */
  end(sessions: readonly TraceSession[], used: ReadonlySet<string>): Participant[] {
    for (const key of [...this.held.keys()]) this.drawHeld(key, { prompt: undefined, last: false });
    this.release(true);
    return this.cast.participants(sessions).filter((p) => used.has(p.id));
  }

  private drawHeld(key: string, turn: { prompt: string | null | undefined; last: boolean }): void {
    const held = this.held.get(key);
    if (!held) return;
    this.held.delete(key);
    const fed = this.fedInto.get(key) ?? [];
    this.fedInto.delete(key);
    for (const { r, ord } of held.records) this.draw(r, ord, { ...turn, fed, requestTime: held.requestTime });
  }

  private draw(r: LogRecord, ord: number, ctx: StepContext): void {
    stepsOf(r, ctx).forEach((step, i) => this.ready.push({ step, key: [step.time, ord, i] }));
  }

  /** Hand on the arrows before the earliest one a held exchange can still draw. */
  private release(final: boolean): void {
    if (this.ready.length === 0) return;
    let before = final ? Infinity : this.now;
    if (!final) for (const h of this.held.values()) before = Math.min(before, h.records[0]!.r.time);
    this.ready.sort((a, b) => a.key[0] - b.key[0] || a.key[1] - b.key[1] || a.key[2] - b.key[2]);
    let n = 0;
    while (n < this.ready.length && this.ready[n]!.key[0] < before) this.out(this.ready[n++]!.step);
    this.ready = this.ready.slice(n);
  }
}

/** When a reply's first tool call was complete (streams say, per call), else when the reply ended. */
function decidedAt(r: Extract<LogRecord, { kind: 'llm-response' }>, requestTime: number | undefined): number {
  const first = Math.min(...r.toolCalls.map((c) => c.completedMs ?? Infinity));
  return requestTime !== undefined && first <= r.durationMs ? requestTime + first : r.time;
}

function isLlm(r: LogRecord): boolean {
  return r.kind === 'llm-request' || r.kind === 'llm-response' || r.kind === 'llm-error';
}

function isMcp(r: LogRecord): boolean {
  return r.kind === 'request' || r.kind === 'response' || r.kind === 'notification' || r.kind === 'invalid' || r.kind === 'pending' || r.kind === 'evicted';
}

function argumentsOf(raw: string): string {
  const params = parseRawObject(raw)?.params as Record<string, unknown> | undefined;
  return params?.arguments !== undefined ? JSON.stringify(params.arguments) : '';
}

/** `4.9 ms`, `583 ms`: whole milliseconds once the decimals stop mattering. */
export function formatMs(ms: number): string {
  return ms < 10 ? `${Math.round(ms * 10) / 10} ms` : `${Math.round(ms)} ms`;
}
