/**
 * The readable timeline: one line per record — time, label, direction arrow, kind, method and id, latency, and
 * the record's sentence. Pure: records in, text out; colour is an option so pipes get plain text.
 */
import type { LogRecord } from '../log/schema.js';
import { widest } from './widest.js';

export interface PrettyOptions {
  color: boolean;
  /** Show times relative to the first record (`+12.345s`) instead of wall-clock times. */
  relative?: boolean;
}

const CODES = { dim: 2, red: 31, green: 32, yellow: 33, blue: 34, magenta: 35, cyan: 36, gray: 90 } as const;
type Colour = keyof typeof CODES;

/** Format records as timeline lines (no trailing newline on each). */
export function formatPretty(records: readonly LogRecord[], options: PrettyOptions): string[] {
  const first = records[0]?.time ?? 0;
  const labelWidth = prettyLabelWidth(widest(records, (r) => (r.label ?? '').length));
  return records.map((r) => joinPretty(prettyParts(r, first, options), labelWidth, options));
}

/** One record's line before the label column's width is known: its time, label, and the rest (coloured). */
export interface PrettyParts {
  time: string;
  label: string;
  rest: string;
}

/** The label column is as wide as the longest label, at most 16. */
export function prettyLabelWidth(longestLabel: number): number {
  return Math.min(16, longestLabel);
}

/** A record's line, in parts: `first` is the first record's time (for --relative). */
export function prettyParts(r: LogRecord, first: number, options: PrettyOptions): PrettyParts {
  const paint = painter(options);
  const time = options.relative ? `+${((r.time - first) / 1000).toFixed(3)}s` : clock(r.time);
  const arrow = r.dir === 'c2s' ? '\u2192' : r.dir === 's2c' ? '\u2190' : '\u00b7';
  const what = [methodColumn(r), latencyColumn(r)].filter(Boolean).join(' ');
  const rest = [arrow, paint(colourOf(r), kindColumn(r).padEnd(12)), what ? paint('magenta', what) : '', r.msg].filter((part) => part !== '').join(' ');
  return { time, label: r.label ?? '', rest };
}

/** The line of `prettyParts`, its label cut or padded to the column. */
export function joinPretty(parts: PrettyParts, labelWidth: number, options: PrettyOptions): string {
  const paint = painter(options);
  return [paint('gray', parts.time), paint('cyan', parts.label.padEnd(labelWidth).slice(0, labelWidth)), parts.rest].filter((part) => part !== '').join(' ');
}

function painter(options: PrettyOptions): (colour: Colour, text: string) => string {
  return (colour, text) => (options.color ? `\u001b[${CODES[colour]}m${text}\u001b[0m` : text);
}

function clock(epochMs: number): string {
  const d = new Date(epochMs);
  const pad = (n: number, w = 2): string => String(n).padStart(w, '0');
  return `${pad(d.getHours())}:${pad(d.getMinutes())}:${pad(d.getSeconds())}.${pad(d.getMilliseconds(), 3)}`;
}

function kindColumn(r: LogRecord): string {
  if (r.kind === 'response' && 'error' in r && r.error) return 'error';
  if (r.kind === 'lifecycle' && 'event' in r) return `${r.event}`;
  return r.kind;
}

function methodColumn(r: LogRecord): string {
  // An HTTP record's sentence starts with its method and path already.
  if (r.kind.startsWith('http-')) return '';
  const o = r as unknown as Record<string, unknown>;
  const method = typeof o.method === 'string' ? o.method : typeof o.model === 'string' ? o.model : undefined;
  const id = o.id;
  const tool = typeof o.tool === 'string' ? ` ${o.tool}` : '';
  if (method === undefined && id === undefined) return '';
  // A round of a multi-round-trip call (2026-07-28) says which.
  const round = typeof o.round === 'number' ? ` round ${o.round}` : '';
  return `${method ?? ''}${tool}${id !== undefined && id !== null ? ` #${String(id)}` : ''}${round}`.trim();
}

function latencyColumn(r: LogRecord): string {
  const o = r as unknown as Record<string, unknown>;
  return typeof o.latencyMs === 'number' ? `${o.latencyMs}ms` : '';
}

function colourOf(r: LogRecord): Colour {
  const o = r as unknown as Record<string, unknown>;
  // A subscription that ended and a 2025 server's answer to a version probe are how those go, not failures.
  if (o.subscription === true || o.versionFallback === true) return 'dim';
  if (r.kind === 'invalid' || r.kind === 'pending' || r.kind === 'evicted' || o.error !== undefined || o.isError === true || r.kind === 'llm-error') return 'red';
  if (r.kind === 'stderr') return 'gray';
  if (r.kind === 'lifecycle') return 'yellow';
  if (r.kind === 'request' || r.kind === 'llm-request' || r.kind === 'http-request') return 'blue';
  if (r.kind === 'response' || r.kind === 'llm-response' || r.kind === 'http-response') return 'green';
  return 'dim';
}
