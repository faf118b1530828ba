/**
 * The story of a trace as a sequence of arrows between participants — User, Host (the agent or client), the LLM
 * and each MCP server — the picture people draw by hand when they explain MCP, built from real records.
 *
 * One model (`buildTimeline`) feeds three views: the text timeline (`formatTimeline`, what `mcptap demo` prints),
 * the Mermaid sequence diagram and the SVG in the html view. Pure: records and their trace in, plain data out.
 */
import type { LogRecord } from '../log/schema.js';
import { asObject, inputRequestsOf, preview } from '../protocols/mcp.js';
import { toolResultText, type Trace } from './link.js';
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
  // One participant per LLM proxy and API (one proxy may carry Ollama and OpenAI calls): named by the API when
  // there is one proxy, by the proxy's label when there are several.
  const llmKeys = [...new Set(records.filter(isLlm).map((r) => `${r.label}\u0000${r.channel}`))].map((k) => k.split('\u0000') as [string, string]);
  const manyLabels = new Set(llmKeys.map(([label]) => label)).size > 1;
  const llmName = (label: string, channel: string): string => {
    if (!manyLabels) return `LLM (${channel})`;
    return llmKeys.filter(([l]) => l === label).length > 1 ? `LLM ${label} (${channel})` : `LLM ${label}`;
  };
  const llmId = (r: LogRecord): string => `llm:${r.label}:${r.channel}`;
  const participants: Participant[] = [
    { id: 'user', name: 'User', kind: 'user' },
    { id: 'host', name: 'Host / client', kind: 'host' },
  ];
  const seen = new Set<string>();
  const participant = (id: string, name: string, kind: Participant['kind']): string => {
    if (!seen.has(id)) {
      seen.add(id);
      participants.push({ id, name, kind });
    }
    return id;
  };
  // LLMs first, then servers, whatever order their first records come in: the picture reads left to right.
  for (const r of records) if (isLlm(r)) participant(llmId(r), llmName(r.label, r.channel), 'llm');
  for (const r of records) if (isMcp(r)) participant(`mcp:${r.label}`, trace.sessions.find((s) => s.session === r.session)?.server?.name ?? r.label, 'mcp');

  const firstOfTurn = new Map<string, string | null>();
  const lastOfTurn = new Map<string, string | null>();
  for (const t of trace.turns) {
    firstOfTurn.set(`${t.session}\u0000${t.exchanges[0]}`, t.prompt);
    lastOfTurn.set(`${t.session}\u0000${t.exchanges[t.exchanges.length - 1]}`, t.answerPreview);
  }

  const fedInto = new Map<string, string[]>();
  for (const t of trace.roundTrips) {
    if (!t.fedBackIn) continue;
    const key = `${t.fedBackIn.session}\u0000${t.fedBackIn.exchange}`;
    fedInto.set(key, [...(fedInto.get(key) ?? []), t.tool]);
  }

  const requestTime = new Map<string, number>();
  for (const r of records) if (r.kind === 'llm-request') requestTime.set(`${r.session}\u0000${r.exchange}`, r.time);
  const steps: TimelineStep[] = [];
  const add = (record: LogRecord, from: string, to: string, text: string, style: TimelineStep['style'], time = record.time): void => {
    steps.push({ time, from, to, text: preview(text, STEP_CHARS), style, record });
  };
  for (const r of records) {
    switch (r.kind) {
      case 'llm-request': {
        const llm = llmId(r);
        const key = `${r.session}\u0000${r.exchange}`;
        const prompt = firstOfTurn.get(key);
        if (prompt) add(r, 'user', 'host', prompt, 'request');
        // Name what was fed back by the tools the linker traced into this request; ids alone say little.
        const fed = fedInto.get(`${r.session}\u0000${r.exchange}`) ?? [];
        const names = fed.length > 0 ? fed : toolResultNames(r);
        const text =
          r.toolResults.length > 0 || fed.length > 0
            ? `${names.length === 1 ? 'tool result' : `${names.length} tool results`} fed back: ${names.join(', ')}`
            : `chat ${r.model ?? ''} (${r.messageCount} message${r.messageCount === 1 ? '' : 's'}, ${r.tools.length} tool${r.tools.length === 1 ? '' : 's'})`;
        add(r, 'host', llm, text.replace(/\s+/g, ' '), 'request');
        break;
      }
      case 'llm-response': {
        const llm = llmId(r);
        // Arguments in the order the model wrote them, as the records keep them (matching compares them sorted).
        const calls = r.toolCalls.map((c) => `${c.name} ${typeof c.arguments === 'string' ? c.arguments : (JSON.stringify(c.arguments) ?? '')}`);
        // Agents act on the chunk that completes a call, before the response ends: the arrow goes there.
        if (calls.length > 0) add(r, llm, 'host', `tool call ${calls.join('; ')}`, 'reply', decidedAt(r, requestTime.get(`${r.session}\u0000${r.exchange}`)));
        else add(r, llm, 'host', r.content.includes('<use_mcp_tool>') ? `tool call as text: ${r.content}` : `answer: ${r.content}`, 'reply');
        const key = `${r.session}\u0000${r.exchange}`;
        if (calls.length === 0 && lastOfTurn.has(key) && r.content.trim() !== '' && !r.content.includes('<use_mcp_tool>')) add(r, 'host', 'user', r.content, 'reply');
        break;
      }
      case 'llm-error':
        add(r, llmId(r), 'host', `error ${r.status}: ${r.error}`, 'error');
        break;
      case 'request': {
        const server = `mcp:${r.label}`;
        const call = r.method === 'tools/call' ? `tools/call ${r.tool ?? ''} ${argumentsOf(r.raw)}` : r.method;
        const text = r.round !== undefined ? `${call} (round ${r.round}, with the answers)` : call;
        if (r.dir === 'c2s') add(r, 'host', server, text, 'request');
        else add(r, server, 'host', text, 'request');
        break;
      }
      case 'response': {
        const server = `mcp:${r.label}`;
        const [from, to] = r.dir === 's2c' ? [server, 'host'] : ['host', server];
        const ms = r.latencyMs !== undefined ? ` (${formatMs(r.latencyMs)})` : '';
        const call = r.callLatencyMs !== undefined && r.resultType !== 'input_required' ? `, round ${r.round} of a call of ${formatMs(r.callLatencyMs)}` : '';
        if (r.error) add(r, from, to, `error ${r.error.code}: ${r.error.message}${ms}`, 'error');
        else if (r.resultType === 'input_required') {
          // Multi-round-trip (2026-07-28): the server asks, the host asks the user, and calls again.
          add(r, from, to, `input required (round ${r.round ?? 1}): ${(r.inputRequests ?? []).join(', ')}${ms}`, 'reply');
          const asks = inputAsks(r.raw);
          if (asks) add(r, 'host', 'user', asks, 'request');
        } else if (r.method === 'tools/call' && call) add(r, from, to, `${r.isError ? 'tool error' : 'result'}: ${toolResultText(parseRawObject(r.raw)?.result) ?? 'no content'} (${formatMs(r.latencyMs ?? 0)}${call})`, r.isError ? 'error' : 'reply');
        else if (r.method === 'tools/call') add(r, from, to, `${r.isError ? 'tool error' : 'result'}: ${toolResultText(parseRawObject(r.raw)?.result) ?? 'no content'}${ms}`, r.isError ? 'error' : 'reply');
        else add(r, from, to, `${r.method ?? 'response'} result${ms}`, 'reply');
        break;
      }
      case 'notification': {
        const server = `mcp:${r.label}`;
        if (r.dir === 'c2s') add(r, 'host', server, r.method, 'reply');
        else add(r, server, 'host', r.method, 'reply');
        break;
      }
      case 'invalid':
        add(r, `mcp:${r.label}`, `mcp:${r.label}`, `not JSON-RPC (${r.reason})`, 'note');
        break;
      case 'pending':
        add(r, `mcp:${r.label}`, `mcp:${r.label}`, `${r.method}${r.tool ? ` ${r.tool}` : ''} #${String(r.id)} never answered`, 'note');
        break;
      default:
        break;
    }
  }
  steps.sort((a, b) => a.time - b.time);
  // Only who takes part: an MCP-only log has no User or LLM column.
  const used = new Set(steps.flatMap((s) => [s.from, s.to]));
  return { participants: participants.filter((p) => used.has(p.id)), steps };
}

export interface TimelineFormatOptions {
  color: boolean;
}

/** The timeline as text lines: `+0.012s  Host → LLM (ollama)  chat …`. */
export function formatTimeline(timeline: Timeline, options: TimelineFormatOptions): string[] {
  const names = new Map(timeline.participants.map((p) => [p.id, p.name]));
  const first = timeline.steps[0]?.time ?? 0;
  const arrows = timeline.steps.map((s) => (s.from === s.to ? `${names.get(s.from)}` : `${names.get(s.from)} \u2192 ${names.get(s.to)}`));
  const width = Math.min(40, widest(arrows, (a) => a.length));
  const paint = (code: number, text: string): string => (options.color ? `\u001b[${code}m${text}\u001b[0m` : text);
  return timeline.steps.map((s, i) => {
    const time = `+${((s.time - first) / 1000).toFixed(3)}s`;
    const colour = s.style === 'error' ? 31 : s.style === 'note' ? 33 : s.style === 'request' ? 34 : 32;
    return `${paint(90, time)}  ${paint(36, arrows[i]!.padEnd(width))}  ${paint(colour, s.text)}`;
  });
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
  return r.kind === 'request' || r.kind === 'response' || r.kind === 'notification' || r.kind === 'invalid' || r.kind === 'pending';
}

function argumentsOf(raw: string): string {
  const params = parseRawObject(raw)?.params as Record<string, unknown> | undefined;
  return params?.arguments !== undefined ? JSON.stringify(params.arguments) : '';
}

/** `4.9 ms`, `583 ms`: whole milliseconds once the decimals stop mattering. */
export function formatMs(ms: number): string {
  return ms < 10 ? `${Math.round(ms * 10) / 10} ms` : `${Math.round(ms)} ms`;
}
