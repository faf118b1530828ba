/**
 * The round trips of a trace as a table, with turn totals and diagnostics: what `view` prints after the merged
 * timeline and what `mcptap demo` ends with. Pure: a Trace in, text lines out.
 */
import { preview } from '../protocols/mcp.js';
import type { Trace } from './link.js';
import { widest } from './widest.js';

export interface SummaryOptions {
  color: boolean;
}

/** Table lines (no trailing newlines); empty when the trace holds no tool calls, turns or diagnostics. */
export function formatRoundTripSummary(trace: Trace, options: SummaryOptions): string[] {
  const bold = (text: string): string => (options.color ? `\u001b[1m${text}\u001b[0m` : text);
  const paint = (code: number, text: string): string => (options.color ? `\u001b[${code}m${text}\u001b[0m` : text);
  const lines: string[] = [];
  const withModel = trace.roundTrips.some((r) => r.llm !== null);
  const args = (r: Trace['roundTrips'][number]): string => preview(typeof r.arguments === 'string' ? r.arguments : (JSON.stringify(r.arguments) ?? ''), 40);
  const mcp = (r: Trace['roundTrips'][number]): string =>
    // No MCP call in the logs is not proof the tool never ran (a host's own tool, an unwrapped server): say what is known.
    r.mcp ? `${r.mcp.server} tools/call${r.mcp.tool !== undefined ? ` ${r.mcp.tool}` : ''} #${String(r.mcp.id)}${r.mcp.rounds ? ` in ${r.mcp.rounds.length} rounds` : ''}${r.mcp.isError ? ' ERROR' : ''}` : '(not in logs)';
  if (trace.roundTrips.length > 0 && !withModel) {
    // Logs of MCP servers only: the model's columns would say "no model call" on every row.
    lines.push(bold('Tool calls (no model call in these logs)'));
    const rows = trace.roundTrips.map((r, i) => [String(i + 1), r.tool, args(r), mcp(r), r.timing.toolMs !== undefined ? ms(r.timing.toolMs) : '-', r.result !== null ? preview(r.result, 48) : '-']);
    table(['#', 'tool', 'arguments', 'MCP', 'tool', 'result'], rows).forEach((l, i) => lines.push(i === 0 ? paint(90, l) : l));
  }
  if (withModel) {
    lines.push(bold('Tool round trips (model → MCP server → result fed back → answer)'));
    const rows = trace.roundTrips.map((r, i) => [
      String(i + 1),
      r.turn === null ? '-' : String(r.turn),
      r.tool,
      args(r),
      r.llm ? `${r.llm.channel} ${r.llm.model ?? ''}${r.llm.decidedMs !== null ? ` ${ms(r.llm.decidedMs)}` : ''}`.replace(/\s+/g, ' ') : '(no model call)',
      mcp(r),
      r.timing.toolMs !== undefined ? ms(r.timing.toolMs) : '-',
      r.fedBack ? `yes${r.timing.feedBackMs !== undefined ? ` +${ms(r.timing.feedBackMs)}` : ''}` : 'no',
      // A trip the model followed with another tool call has no answer of its own: its result is the MCP column's.
      r.answerPreview !== null ? preview(r.answerPreview, 48) : '-',
    ]);
    table(['#', 'turn', 'tool', 'arguments', 'model decided', 'MCP', 'tool', 'fed back', 'answer'], rows).forEach((l, i) => lines.push(i === 0 ? paint(90, l) : l));
  }
  if (trace.turns.length > 0) {
    if (lines.length > 0) lines.push('');
    lines.push(bold('Turns'));
    const rows = trace.turns.map((t) => [
      String(t.turn),
      preview(t.prompt ?? '', 40),
      String(t.llmCalls),
      String(t.toolCalls),
      ms(t.timing.totalMs),
      ms(t.timing.llmMs),
      ms(t.timing.toolMs),
      ms(t.timing.hostMs),
    ]);
    table(['turn', 'prompt', 'LLM calls', 'tool calls', 'total', 'LLM', 'tools', 'host'], rows).forEach((l, i) => lines.push(i === 0 ? paint(90, l) : l));
  }
  if (trace.diagnostics.length > 0) {
    if (lines.length > 0) lines.push('');
    lines.push(bold('Findings'));
    for (const d of trace.diagnostics) lines.push(`${d.level === 'warn' ? paint(33, 'warn') : paint(36, 'info')} ${d.code}: ${d.msg}`);
  }
  return lines;
}

function ms(value: number): string {
  return value >= 10_000 ? `${(value / 1000).toFixed(1)} s` : `${Math.round(value)} ms`;
}

function table(header: string[], rows: string[][]): string[] {
  const widths = header.map((h, i) => widest(rows, (r) => width(r[i]!), width(h)));
  const line = (cells: string[]): string => cells.map((c, i) => c + ' '.repeat(widths[i]! - width(c))).join('  ').trimEnd();
  return [line(header), ...rows.map(line)];
}

/** Terminal columns a string takes: East Asian wide characters (CJK, full-width forms) take two. */
export function width(text: string): number {
  let n = 0;
  for (const ch of text) n += /[\u1100-\u115f\u2e80-\ua4cf\uac00-\ud7a3\uf900-\ufaff\ufe30-\ufe4f\uff00-\uff60\uffe0-\uffe6]/.test(ch) ? 2 : 1;
  return n;
}
