/**
 * The round trips of a trace as a table, with turn totals and diagnostics: what `view` prints after the merged
 * timeline and what `mcptap demo` ends with. Pure: a Trace in, text lines out.
 */
import { preview } from '../protocols/mcp.js';
import type { Trace, TraceDiagnostic } from './link.js';
import { Spool } from '../log/spool.js';

export interface SummaryOptions {
  color: boolean;
}

type Trip = Trace['roundTrips'][number];
type Turn = Trace['turns'][number];

const MCP_ONLY_HEADER = ['#', 'tool', 'arguments', 'MCP', 'tool', 'result'];
const MODEL_HEADER = ['#', 'turn', 'tool', 'arguments', 'model decided', 'MCP', 'tool', 'fed back', 'answer'];
const TURN_HEADER = ['turn', 'prompt', 'LLM calls', 'tool calls', 'total', 'LLM', 'tools', 'host'];

/** Table lines (no trailing newlines); empty when the trace holds no tool calls, turns or diagnostics. */
export function formatRoundTripSummary(trace: Trace, options: SummaryOptions): string[] {
  const tables = new SummaryTables(options, () => new Spool(Infinity));
  for (const trip of trace.roundTrips) tables.addTrip(trip);
  for (const turn of trace.turns) tables.addTurn(turn);
  return [...tables.linesNow(trace.diagnostics)];
}

/**
 * The summary built as the linker hands on round trips and turns: each row is made and its cells' widths noted
 * as it comes, the rows put aside (a spool: memory, then disk), and the tables printed at the end.
 */
export class SummaryTables {
  private readonly trips: Spool;
  private readonly turns: Spool;
  private withModel = false;
  private readonly widths = { mcpOnly: MCP_ONLY_HEADER.map(width), model: MODEL_HEADER.map(width), turn: TURN_HEADER.map(width) };

  constructor(
    private readonly options: SummaryOptions,
    spool: () => Spool = () => new Spool(),
  ) {
    this.trips = spool();
    this.turns = spool();
  }

  addTrip(r: Trip): void {
    const n = String(this.trips.count + 1);
    const args = preview(typeof r.arguments === 'string' ? r.arguments : (JSON.stringify(r.arguments) ?? ''), 40);
    // No MCP call in the logs is not proof the tool never ran (a host's own tool, an unwrapped server): say what is known.
    const mcp = r.mcp ? `${r.mcp.server} tools/call${r.mcp.tool !== undefined ? ` ${r.mcp.tool}` : ''} #${String(r.mcp.id)}${r.mcp.rounds ? ` in ${r.mcp.rounds.length} rounds` : ''}${r.mcp.isError ? ' ERROR' : ''}` : '(not in logs)';
    const toolMs = r.timing.toolMs !== undefined ? ms(r.timing.toolMs) : '-';
    const mcpOnly = [n, r.tool, args, mcp, toolMs, r.result !== null ? preview(r.result, 48) : '-'];
    const model = [
      n,
      r.turn === null ? '-' : String(r.turn),
      r.tool,
      args,
      r.llm ? `${r.llm.channel} ${r.llm.model ?? ''}${r.llm.decidedMs !== null ? ` ${ms(r.llm.decidedMs)}` : ''}`.replace(/\s+/g, ' ') : '(no model call)',
      mcp,
      toolMs,
      r.fedBack ? `yes${r.timing.feedBackMs !== undefined ? ` +${ms(r.timing.feedBackMs)}` : ''}` : 'no',
      // A trip the model followed with another tool call has no answer of its own: its result is the MCP column's.
      r.answerPreview !== null ? preview(r.answerPreview, 48) : '-',
    ];
    if (r.llm !== null) this.withModel = true;
    widen(this.widths.mcpOnly, mcpOnly);
    widen(this.widths.model, model);
    this.trips.add(JSON.stringify([mcpOnly, model]));
  }

  addTurn(t: Turn): void {
    const row = [String(t.turn), preview(t.prompt ?? '', 40), String(t.llmCalls), String(t.toolCalls), ms(t.timing.totalMs), ms(t.timing.llmMs), ms(t.timing.toolMs), ms(t.timing.hostMs)];
    widen(this.widths.turn, row);
    this.turns.add(JSON.stringify(row));
  }

  /** Remove the spools' files, if the tables are not printed (an error, the output closed). */
  dispose(): void {
    this.trips.dispose();
    this.turns.dispose();
  }

  /** The summary's lines, the diagnostics (in time order) last. */
  async *lines(diagnostics: readonly TraceDiagnostic[]): AsyncGenerator<string> {
    for (const part of this.parts(diagnostics)) {
      if (typeof part === 'string') yield part;
      else for await (const row of part.rows.lines()) yield part.format(row);
    }
  }

  /** The same, from spools that never went to disk. */
  *linesNow(diagnostics: readonly TraceDiagnostic[]): Generator<string> {
    for (const part of this.parts(diagnostics)) {
      if (typeof part === 'string') yield part;
      else for (const row of part.rows.linesNow()) yield part.format(row);
    }
  }

  /** The summary as lines and tables of spooled rows. */
  private parts(diagnostics: readonly TraceDiagnostic[]): (string | { rows: Spool; format: (row: string) => string })[] {
    const bold = (text: string): string => (this.options.color ? `\u001b[1m${text}\u001b[0m` : text);
    const paint = (code: number, text: string): string => (this.options.color ? `\u001b[${code}m${text}\u001b[0m` : text);
    const parts: (string | { rows: Spool; format: (row: string) => string })[] = [];
    if (this.trips.count > 0) {
      // Logs of MCP servers only: the model's columns would say "no model call" on every row.
      const model = this.withModel;
      const widths = model ? this.widths.model : this.widths.mcpOnly;
      parts.push(bold(model ? 'Tool round trips (model → MCP server → result fed back → answer)' : 'Tool calls (no model call in these logs)'));
      parts.push(paint(90, line(model ? MODEL_HEADER : MCP_ONLY_HEADER, widths)));
      parts.push({ rows: this.trips, format: (row) => line((JSON.parse(row) as string[][])[model ? 1 : 0]!, widths) });
    }
    if (this.turns.count > 0) {
      if (parts.length > 0) parts.push('');
      parts.push(bold('Turns'), paint(90, line(TURN_HEADER, this.widths.turn)));
      parts.push({ rows: this.turns, format: (row) => line(JSON.parse(row) as string[], this.widths.turn) });
    }
    if (diagnostics.length > 0) {
      if (parts.length > 0) parts.push('');
      parts.push(bold('Findings'));
      for (const d of diagnostics) parts.push(`${d.level === 'warn' ? paint(33, 'warn') : paint(36, 'info')} ${d.code}: ${d.msg}`);
    }
    return parts;
  }
}

function ms(value: number): string {
  return value >= 10_000 ? `${(value / 1000).toFixed(1)} s` : `${Math.round(value)} ms`;
}

function widen(widths: number[], cells: readonly string[]): void {
  cells.forEach((c, i) => (widths[i] = Math.max(widths[i]!, width(c))));
}

function line(cells: readonly string[], widths: readonly number[]): string {
  return cells.map((c, i) => c + ' '.repeat(widths[i]! - width(c))).join('  ').trimEnd();
}

/** Terminal columns a string takes: East Asian wide characters (CJK, full-width forms) take two. */
export function width(text: string): number {
  // Most cells are ASCII: one column a character.
  if (/^[\x00-\u10ff]*$/.test(text)) return text.length;
  let n = 0;
  for (const ch of text) n += /[\u1100-\u115f\u2e80-\ua4cf\uac00-\ud7a3\uf900-\ufaff\ufe30-\ufe4f\uff00-\uff60\uffe0-\uffe6]/.test(ch) ? 2 : 1;
  return n;
}
