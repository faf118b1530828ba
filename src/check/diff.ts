/**
 * `diff A B`: what changed between two captures of an MCP server — its tools, the outcome of the same calls, and
 * how long things took. Pure: two record lists (or streams) in, a report out.
 *
 * - Tools come from the last `tools/list` answer seen for each name; a tool is changed when its description,
 *   inputSchema or outputSchema differs (compared as canonical JSON, so key order does not count).
 * - Calls are paired by tool and canonical arguments, not by position: the n-th `get_forecast {"city":"Paris"}`
 *   of A with the n-th of B. An outcome is the kind (ok / isError / JSON-RPC error code) plus the result.
 * - Latency: the median per method the server answers (per tool for tools/call); a regression is B's median above A's by more than
 *   `thresholdPct` percent and at least `minMs` milliseconds (small absolute jitters are not regressions).
 */
import { createHash } from 'node:crypto';
import type { LogRecord } from '../log/schema.js';
import { canonicalJson } from '../replay/match.js';
import { parseRawObject } from '../log/reader.js';

/** Thresholds and fields to ignore. */
export interface DiffOptions {
  /** Percent by which B's median latency must exceed A's to count (default 50). */
  thresholdPct?: number;
  /** Milliseconds by which it must exceed it too (default 20). */
  minMs?: number;
  /** JSON fields left out when comparing results (timestamps, generated ids). */
  ignore?: readonly string[];
}

/** The three fields of a tool definition whose change is reported. */
export type ToolField = 'description' | 'inputSchema' | 'outputSchema';

/** A tool present in both captures whose definition changed. */
export interface ToolChange {
  name: string;
  fields: ToolField[];
}

/** A call made in both captures (same tool and arguments) that ended differently. */
export interface OutcomeChange {
  tool: string;
  arguments: unknown;
  /** Which of the calls with these arguments (1 for the first). */
  occurrence: number;
  before: string;
  after: string;
}

/** Calls with the same tool and arguments that one capture holds more of than the other. */
export interface OneSidedCall {
  tool: string;
  arguments: unknown;
  count: number;
}

/** A method or tool whose median latency grew past the threshold. */
export interface LatencyRegression {
  /** `tools/call get_forecast`, or a method. */
  what: string;
  beforeMs: number;
  afterMs: number;
  /** Calls measured on each side. */
  samples: [number, number];
}

/** Everything `diff` found. */
export interface DiffReport {
  toolsAdded: string[];
  toolsRemoved: string[];
  toolsChanged: ToolChange[];
  outcomesChanged: OutcomeChange[];
  latencyRegressions: LatencyRegression[];
  /** Calls of A that have no twin (same tool and arguments) in B, and the other way round. */
  unpairedCalls: [number, number];
  /** Those calls, by tool and arguments: a call that vanished, or one that is new. */
  callsOnlyIn: [OneSidedCall[], OneSidedCall[]];
  /** Whether each side held a tools/list answer at all (tool changes are only reported when both did). */
  toolLists: [boolean, boolean];
}

/** How a call ended, as compared (a digest of the whole outcome) and as shown (its start). */
interface Outcome {
  digest: string;
  shown: string;
}

interface Side {
  tools: Map<string, Record<string, unknown>> | undefined;
  calls: Map<string, { tool: string; arguments: unknown; outcomes: Outcome[] }>;
  latencies: Map<string, number[]>;
}

/** Compare capture A (before) with capture B (after). */
export function diffRecords(a: readonly LogRecord[], b: readonly LogRecord[], options: DiffOptions = {}): DiffReport {
  const ignore = new Set(options.ignore ?? []);
  const [before, after] = [a, b].map((records) => {
    const side = new SideReader(ignore);
    for (const r of records) side.push(r);
    return side.side;
  }) as [Side, Side];
  return compareSides(before, after, options);
}

/**
 * The same over two streams of records, read one after the other: what is held is each side's tools, its calls'
 * outcomes (a digest and the start of each) and latencies, not its records.
 */
export async function diffStreams(a: AsyncIterable<LogRecord>, b: AsyncIterable<LogRecord>, options: DiffOptions = {}): Promise<DiffReport> {
  const ignore = new Set(options.ignore ?? []);
  const sides: Side[] = [];
  for (const records of [a, b]) {
    const side = new SideReader(ignore);
    for await (const r of records) side.push(r);
    sides.push(side.side);
  }
  return compareSides(sides[0]!, sides[1]!, options);
}

function compareSides(before: Side, after: Side, options: DiffOptions): DiffReport {
  const report: DiffReport = {
    toolsAdded: [],
    toolsRemoved: [],
    toolsChanged: [],
    outcomesChanged: [],
    latencyRegressions: [],
    unpairedCalls: [0, 0],
    callsOnlyIn: [[], []],
    toolLists: [before.tools !== undefined, after.tools !== undefined],
  };
  if (before.tools && after.tools) {
    for (const name of [...after.tools.keys()].sort()) if (!before.tools.has(name)) report.toolsAdded.push(name);
    for (const name of [...before.tools.keys()].sort()) {
      const old = before.tools.get(name)!;
      const now = after.tools.get(name);
      if (!now) {
        report.toolsRemoved.push(name);
        continue;
      }
      const fields = (['description', 'inputSchema', 'outputSchema'] as const).filter((f) => canonicalJson(old[f]) !== canonicalJson(now[f]));
      if (fields.length) report.toolsChanged.push({ name, fields });
    }
  }
  for (const [key, call] of before.calls) {
    const twin = after.calls.get(key);
    const paired = Math.min(call.outcomes.length, twin?.outcomes.length ?? 0);
    report.unpairedCalls[0] += call.outcomes.length - paired;
    if (call.outcomes.length > paired) report.callsOnlyIn[0].push({ tool: call.tool, arguments: call.arguments, count: call.outcomes.length - paired });
    for (let i = 0; i < paired; i++) {
      if (call.outcomes[i]!.digest !== twin!.outcomes[i]!.digest) {
        // Compared whole, shown short.
        report.outcomesChanged.push({ tool: call.tool, arguments: call.arguments, occurrence: i + 1, before: call.outcomes[i]!.shown, after: twin!.outcomes[i]!.shown });
      }
    }
  }
  for (const [key, call] of after.calls) {
    const extra = call.outcomes.length - Math.min(call.outcomes.length, before.calls.get(key)?.outcomes.length ?? 0);
    report.unpairedCalls[1] += extra;
    if (extra > 0) report.callsOnlyIn[1].push({ tool: call.tool, arguments: call.arguments, count: extra });
  }
  const pct = options.thresholdPct ?? 50;
  const minMs = options.minMs ?? 20;
  for (const [what, samples] of after.latencies) {
    const old = before.latencies.get(what);
    if (!old?.length || !samples.length) continue;
    const beforeMs = median(old);
    const afterMs = median(samples);
    if (afterMs > beforeMs * (1 + pct / 100) && afterMs - beforeMs >= minMs) {
      report.latencyRegressions.push({ what, beforeMs, afterMs, samples: [old.length, samples.length] });
    }
  }
  report.latencyRegressions.sort((x, y) => y.afterMs - y.beforeMs - (x.afterMs - x.beforeMs));
  return report;
}

/** True when the report shows any difference: --exit-code fails on everything the report prints as one. */
export function hasDifferences(report: DiffReport): boolean {
  return (
    report.toolsAdded.length +
      report.toolsRemoved.length +
      report.toolsChanged.length +
      report.outcomesChanged.length +
      report.latencyRegressions.length +
      report.unpairedCalls[0] +
      report.unpairedCalls[1] >
      0 || report.toolLists[0] !== report.toolLists[1]
  );
}

/** The human report. */
export function formatDiff(report: DiffReport, names: [string, string] = ['A', 'B']): string {
  const lines: string[] = [];
  if (!report.toolLists[0] || !report.toolLists[1]) {
    const missing = [!report.toolLists[0] ? names[0] : undefined, !report.toolLists[1] ? names[1] : undefined].filter(Boolean).join(' and ');
    lines.push(`Tools: not compared — ${missing} holds no tools/list answer.`);
  } else if (!report.toolsAdded.length && !report.toolsRemoved.length && !report.toolsChanged.length) {
    lines.push('Tools: the same.');
  } else {
    lines.push('Tools:');
    for (const t of report.toolsAdded) lines.push(`  + ${t} (added)`);
    for (const t of report.toolsRemoved) lines.push(`  - ${t} (removed)`);
    for (const t of report.toolsChanged) lines.push(`  ~ ${t.name}: ${t.fields.join(', ')} changed`);
  }
  if (report.outcomesChanged.length) {
    lines.push('Calls whose outcome changed:');
    for (const o of report.outcomesChanged) {
      const args = canonicalJson(o.arguments);
      lines.push(`  ~ ${o.tool} ${args.length > 80 ? `${args.slice(0, 79)}…` : args}${o.occurrence > 1 ? ` (call ${o.occurrence})` : ''}`);
      lines.push(`      before: ${o.before}`);
      lines.push(`      after:  ${o.after}`);
    }
  } else {
    lines.push('Calls: every call made in both captures has the same outcome.');
  }
  for (const [side, calls] of report.callsOnlyIn.entries()) {
    if (!calls.length) continue;
    lines.push(`Calls only in ${names[side]} (no twin with the same tool and arguments in ${names[1 - side]}):`);
    for (const c of calls) {
      const args = canonicalJson(c.arguments);
      lines.push(`  ${side === 0 ? '-' : '+'} ${c.tool} ${args.length > 80 ? `${args.slice(0, 79)}…` : args}${c.count > 1 ? ` (×${c.count})` : ''}`);
    }
  }
  if (report.latencyRegressions.length) {
    lines.push('Latency regressions (median):');
    for (const l of report.latencyRegressions) lines.push(`  ! ${l.what}: ${fmt(l.beforeMs)} → ${fmt(l.afterMs)} (${l.samples[0]} vs ${l.samples[1]} calls)`);
  } else {
    lines.push('Latency: no regressions past the threshold.');
  }
  return `${lines.join('\n')}\n`;
}

function short(text: string): string {
  return text.length > 200 ? `${text.slice(0, 199)}…` : text;
}

function fmt(ms: number): string {
  return ms >= 1000 ? `${(ms / 1000).toFixed(2)} s` : `${Math.round(ms * 100) / 100} ms`;
}

/** One capture's side of the comparison, taken record by record. */
class SideReader {
  readonly side: Side = { tools: undefined, calls: new Map(), latencies: new Map() };
  /** Requests not yet answered, by session and seq. */
  private readonly requests = new Map<string, { method: string; tool?: string; params?: Record<string, unknown> }>();

  constructor(private readonly ignore: ReadonlySet<string>) {}

  push(r: LogRecord): void {
    if (r.kind === 'request') {
      const json = parseRawObject(r.raw);
      const params = json?.params as Record<string, unknown> | undefined;
      this.requests.set(`${r.session}#${r.seq}`, { method: r.method, ...(r.tool !== undefined ? { tool: r.tool } : {}), ...(params ? { params } : {}) });
      return;
    }
    if (r.kind !== 'response' || r.requestSeq === undefined) return;
    const request = this.requests.get(`${r.session}#${r.requestSeq}`);
    if (!request) return;
    // A multi-round-trip call's rounds answer one request each: the request is done with once answered.
    this.requests.delete(`${r.session}#${r.requestSeq}`);
    const side = this.side;
    // Only the server's own latency: how fast a client answers sampling or elicitation says nothing about the server.
    if (r.latencyMs !== undefined && r.dir === 's2c') {
      const what = request.method === 'tools/call' && request.tool ? `tools/call ${request.tool}` : request.method;
      const list = side.latencies.get(what) ?? [];
      list.push(r.latencyMs);
      side.latencies.set(what, list);
    }
    const json = parseRawObject(r.raw);
    if (request.method === 'tools/list' && json) {
      const tools = (json.result as { tools?: unknown } | undefined)?.tools;
      if (Array.isArray(tools)) {
        side.tools ??= new Map();
        for (const tool of tools) if (tool && typeof (tool as { name?: unknown }).name === 'string') side.tools.set((tool as { name: string }).name, tool as Record<string, unknown>);
      }
    } else if (request.method === 'tools/call' && request.tool !== undefined) {
      const args = request.params?.arguments ?? {};
      const key = `${request.tool} ${canonicalJson(args)}`;
      const entry = side.calls.get(key) ?? { tool: request.tool, arguments: args, outcomes: [] };
      const outcome = outcomeOf(r, json, this.ignore);
      entry.outcomes.push({ digest: createHash('sha256').update(outcome).digest('base64'), shown: short(outcome) });
      side.calls.set(key, entry);
    }
  }
}

/** One line that says how a call ended, detailed enough that two different endings read differently. */
function outcomeOf(r: Extract<LogRecord, { kind: 'response' }>, json: Record<string, unknown> | undefined, ignore: ReadonlySet<string>): string {
  if (r.error) return `JSON-RPC error ${r.error.code}: ${r.error.message}`;
  if (r.truncated || !json) return 'a result too long to compare (truncated in the log)';
  const result = (json.result ?? {}) as Record<string, unknown>;
  const { isError, _meta: _m, ...rest } = result;
  const text = canonicalJson(rest, ignore);
  return `${isError === true ? 'isError' : 'ok'} ${text}`;
}

function median(values: readonly number[]): number {
  const sorted = [...values].sort((x, y) => x - y);
  const mid = Math.floor(sorted.length / 2);
  return sorted.length % 2 ? sorted[mid]! : (sorted[mid - 1]! + sorted[mid]!) / 2;
}
