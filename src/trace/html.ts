/**
 * `view --format html`: one self-contained page — round-trip table, findings, the sequence diagram, the merged
 * timeline with each frame's JSON collapsible — that opens from disk with no network access.
 *
 * The diagram is inline SVG drawn here rather than Mermaid rendered in the browser: mermaid.js is a large
 * script that would have to be inlined or fetched, and a page that needs the network (or runs scripts) to show
 * a trace fails exactly where logs get read — on a plane, in a locked-down browser, in a CI artefact. The page
 * has no script at all; `<details>` does the collapsing, and a Content-Security-Policy forbids any fetch.
 */
import type { LogRecord } from '../log/schema.js';
import { preview } from '../protocols/mcp.js';
import type { RoundTripRound, Trace } from './link.js';
import { formatMermaid } from './mermaid.js';
import { joinPretty, prettyLabelWidth, prettyParts, type PrettyParts } from './pretty.js';
import { formatRoundTripSummary } from './summary.js';
import type { DrawnTimeline, Timeline } from './timeline.js';

/** Largest piece of JSON shown for one record; the log itself keeps everything. */
const MAX_JSON_CHARS = 64 * 1024;
/** Most JSON one page holds in all (frames of big logs made pages of hundreds of MB a browser could not open). */
const MAX_PAGE_JSON_CHARS = 16 * 1024 * 1024;

/** Defaults for how much one page holds: a browser stays usable, the rest is a `mcptap view` away. */
export const DEFAULT_HTML_MAX_RECORDS = 1000;
export const DEFAULT_HTML_MAX_STEPS = 400;

export interface HtmlOptions {
  /** Page title; defaults to "mcptap trace". */
  title?: string;
  /** Show at most this many records in the timeline (default 1000). */
  maxRecords?: number;
  /** Draw at most this many arrows in the diagram (default 400). */
  maxSteps?: number;
}

/** The whole page as one string. */
export function formatHtml(records: readonly LogRecord[], trace: Trace, timeline: Timeline, options: HtmlOptions = {}): string {
  const maxRecords = options.maxRecords ?? DEFAULT_HTML_MAX_RECORDS;
  const maxSteps = options.maxSteps ?? DEFAULT_HTML_MAX_STEPS;
  const items = new RecordItems(maxRecords);
  for (const r of records) items.add(r);
  const drawn = { ...timeline, steps: timeline.steps.slice(0, maxSteps) };
  return htmlPage({ title: options.title, items, trace, drawn, moreSteps: timeline.steps.length - drawn.steps.length });
}

/** What a page is made of: the records it lists (RecordItems), the trace, and the arrows it draws. */
export interface HtmlPage {
  title?: string | undefined;
  items: RecordItems;
  trace: Trace;
  /** The diagram's participants and the arrows drawn (the first ones). */
  drawn: DrawnTimeline;
  /** Arrows of the logs not drawn. */
  moreSteps: number;
  /** Sessions, turns and round trips of the logs that the page's tables leave out (a stream's page lists the first). */
  left?: { sessions: number; turns: number; roundTrips: number; byLabel?: ReadonlyMap<string, { sessions: number; records: number }> };
}

/** The page of HtmlPage; formatHtml for records in memory, writeHtmlView (write-view.ts) for a stream. */
export function htmlPage(page: HtmlPage): string {
  return [...htmlPageParts(page)].join('');
}

/** The page of HtmlPage in parts, so that a stream's page is written without being one string first. */
export function* htmlPageParts(page: HtmlPage): Generator<string> {
  const { items, trace, drawn } = page;
  const left = page.left ?? { sessions: 0, turns: 0, roundTrips: 0 };
  const sessionCount = trace.sessions.length + left.sessions;
  const title = page.title ?? 'mcptap trace';
  const summary = formatRoundTripSummary(trace, { color: false });
  const span = items.first !== undefined && items.last !== undefined ? `${new Date(items.first).toISOString()} – ${new Date(items.last).toISOString()} (${((items.last - items.first) / 1000).toFixed(3)} s)` : 'no records';
  yield `<!doctype html>
<html lang="en">
<head>
<meta charset="utf-8">
<meta http-equiv="Content-Security-Policy" content="default-src 'none'; style-src 'unsafe-inline'; img-src data:">
<meta name="viewport" content="width=device-width, initial-scale=1">
<title>${esc(title)}</title>
<style>${STYLE}</style>
</head>
<body>
<header><h1>${esc(title)}</h1>
<p class="meta">${items.total} records from ${sessionCount} session${sessionCount === 1 ? '' : 's'} · ${esc(span)}</p></header>
<section id="sessions"><h2>Sessions</h2>${more(left.sessions, 'sessions', 'mcptap view --format json')}${sessionsTable(trace, left.byLabel)}</section>
<section id="round-trips"><h2>Tool round trips</h2>${more(left.roundTrips, 'round trips', 'mcptap view')}${roundTripTable(trace)}</section>
${trace.diagnostics.length > 0 ? `<section id="findings"><h2>Findings</h2><ul>${trace.diagnostics.map((d) => `<li class="${d.level}"><b>${esc(d.code)}</b> ${esc(d.msg)}</li>`).join('')}</ul></section>` : ''}
<section id="diagram"><h2>Sequence diagram</h2>${more(page.moreSteps, 'arrows', 'mcptap view --format mermaid')}<div class="svg-wrap">${renderSequenceSvg(drawn)}</div>
<details><summary>Mermaid source</summary><pre>${esc(formatMermaid(drawn))}</pre></details></section>
<section id="timeline"><h2>Timeline</h2><p class="hint">Every record of every log, merged by time. Open one to see its frame and the record.</p>
<ol class="records">`;
  yield* items.lines();
  yield `</ol>${more(items.total - items.shown, 'records', 'mcptap view')}</section>
<section id="summary-text"><details><summary>Summary as text</summary>${more(left.roundTrips + left.turns, 'round trips and turns', 'mcptap view')}<pre>${esc(summary.join('\n'))}</pre></details></section>
</body>
</html>
`;
}

/** Layout of the SVG sequence diagram, in pixels. */
const COL = 250;
const MARGIN = 20;
const HEAD_Y = 10;
const HEAD_H = 38;
const ROW = 34;
const FIRST_ROW = HEAD_Y + HEAD_H + 34;

/**
 * The sequence diagram as an SVG element: a box per participant with a lifeline, an arrow per step (solid for
 * requests, dashed for replies, red for errors), notes as boxes on a lifeline. Each arrow's full text is in its
 * `<title>` (shown on hover); the label is cut to fit its span.
 */
export function renderSequenceSvg(timeline: DrawnTimeline): string {
  const index = new Map(timeline.participants.map((p, i) => [p.id, i]));
  const x = (id: string): number => MARGIN + COL * (index.get(id) ?? 0) + COL / 2;
  const width = MARGIN * 2 + COL * timeline.participants.length;
  const bottom = FIRST_ROW + ROW * timeline.steps.length;
  const height = bottom + HEAD_H + HEAD_Y + 10;
  const parts: string[] = [];
  parts.push(`<svg xmlns="http://www.w3.org/2000/svg" class="sequence" width="${width}" height="${height}" viewBox="0 0 ${width} ${height}" role="img" aria-label="Sequence diagram of the trace">`);
  parts.push(
    '<defs>',
    '<marker id="arrow" viewBox="0 0 10 10" refX="10" refY="5" markerWidth="8" markerHeight="8" orient="auto-start-reverse"><path d="M0,0 L10,5 L0,10 z" fill="#334"/></marker>',
    '<marker id="cross" viewBox="0 0 10 10" refX="5" refY="5" markerWidth="10" markerHeight="10"><path d="M1,1 L9,9 M9,1 L1,9" stroke="#c0392b" stroke-width="2"/></marker>',
    '</defs>',
  );
  timeline.participants.forEach((p) => {
    const cx = x(p.id);
    parts.push(`<line class="lifeline" x1="${cx}" y1="${HEAD_Y + HEAD_H}" x2="${cx}" y2="${bottom + 4}"/>`);
    for (const y of [HEAD_Y, bottom + 4]) {
      parts.push(
        `<g class="participant participant-${p.kind}" data-id="${esc(p.id)}"><rect x="${cx - COL / 2 + 14}" y="${y}" width="${COL - 28}" height="${HEAD_H}" rx="6"/>` +
          `<text x="${cx}" y="${y + HEAD_H / 2 + 5}" text-anchor="middle">${esc(preview(p.name, 24))}</text></g>`,
      );
    }
  });
  timeline.steps.forEach((s, i) => {
    const y = FIRST_ROW + ROW * i;
    const x1 = x(s.from);
    const x2 = x(s.to);
    const title = `<title>${esc(`${new Date(s.time).toISOString()} ${s.text}`)}</title>`;
    if (s.from === s.to) {
      const text = preview(s.text, 30);
      parts.push(`<g class="message note" data-step="${i}">${title}<rect x="${x1 - COL / 2 + 10}" y="${y - 18}" width="${COL - 20}" height="24" rx="3"/><text x="${x1}" y="${y - 2}" text-anchor="middle">${esc(text)}</text></g>`);
      return;
    }
    const span = Math.abs(x2 - x1);
    const text = preview(s.text, Math.max(18, Math.floor(span / 6.3)));
    const dash = s.style === 'request' ? '' : ' stroke-dasharray="6 4"';
    const marker = s.style === 'error' ? 'url(#cross)' : 'url(#arrow)';
    parts.push(
      `<g class="message ${s.style}" data-step="${i}">${title}<line class="arrow" x1="${x1}" y1="${y}" x2="${x2}" y2="${y}"${dash} marker-end="${marker}"/>` +
        `<text x="${(x1 + x2) / 2}" y="${y - 6}" text-anchor="middle">${esc(text)}</text></g>`,
    );
  });
  parts.push('</svg>');
  return parts.join('\n');
}

/** A note that part of the trace is left off the page, and where to see all of it. */
function more(left: number, what: string, command: string): string {
  return left > 0 ? `<p class="hint">The first part only: ${left.toLocaleString('en')} more ${what} are in the logs (see them all with <code>${esc(command)}</code>).</p>` : '';
}

/**
 * One row per label (a tap, so a server): an HTTP tap in front of an MCP server logs its exchanges (`http`) and
 * the MCP session they carry (`mcp-http`) as two sessions, which are one server to the reader.
 */
function sessionsTable(trace: Trace, leftByLabel?: ReadonlyMap<string, { sessions: number; records: number }>): string {
  if (trace.sessions.length === 0) return '<p>No sessions.</p>';
  const groups = new Map<string, Trace['sessions']>();
  for (const s of trace.sessions) {
    const group = groups.get(s.label) ?? [];
    if (group.length === 0) groups.set(s.label, group);
    group.push(s);
  }
  const unique = (values: (string | undefined)[]): string => [...new Set(values.filter((v): v is string => Boolean(v)))].join(', ');
  const rows = [...groups.values()].map((group) => {
    const who = unique(group.map((s) => (s.server ? `${s.server.name ?? ''} ${s.server.version ?? ''}${s.protocolVersion ? ` (${s.protocolVersion})` : ''}${s.client?.name ? `, client ${s.client.name} ${s.client.version ?? ''}` : ''}`.trim() : (s.models ?? []).join(', '))));
    const left = leftByLabel?.get(group[0]!.label);
    const records = group.reduce((n, s) => n + s.records, left?.records ?? 0);
    const ids = group.map((s) => `<code>${esc(s.session)}</code>`).join(' ') + (left ? ` and ${left.sessions} more` : '');
    return `<tr><td>${esc(group[0]!.label)}</td><td>${esc(unique(group.map((s) => s.role)))}</td><td>${esc(unique(group.map((s) => s.channel)))}</td><td>${esc(who)}</td><td>${esc(unique(group.flatMap((s) => s.tools ?? [])))}</td><td>${records}</td><td>${ids}</td></tr>`;
  });
  return `<table><thead><tr><th>label</th><th>role</th><th>channel</th><th>server / models</th><th>tools</th><th>records</th><th>session</th></tr></thead><tbody>${rows.join('')}</tbody></table>`;
}

function roundTripTable(trace: Trace): string {
  if (trace.roundTrips.length === 0) return '<p>No tool calls in these logs.</p>';
  if (!trace.roundTrips.some((r) => r.llm !== null)) return mcpCallTable(trace);
  const ms = (v: number | undefined | null): string => (v === undefined || v === null ? '–' : `${Math.round(v)} ms`);
  const rows = trace.roundTrips.map((r) => {
    const cls = r.diagnostics.some((d) => d !== 'tool-call-as-text' && d !== 'call-without-model') ? ' class="warn"' : '';
    return (
      `<tr${cls}><td>${r.turn ?? '–'}</td><td><b>${esc(r.tool)}</b></td><td><code>${esc(preview(JSON.stringify(r.arguments) ?? '', 60))}</code></td>` +
      `<td>${r.llm ? esc(`${r.llm.channel} ${r.llm.model ?? ''}`) : '–'}</td><td>${ms(r.timing.decisionMs)}</td>` +
      `<td>${r.mcp ? esc(`${r.mcp.server} #${String(r.mcp.id)}${rounds(r.mcp.rounds)}${r.mcp.isError ? ' (error)' : ''}`) : 'not in logs'}</td><td>${ms(r.timing.toolMs)}</td>` +
      `<td>${r.fedBack ? `yes (${ms(r.timing.feedBackMs)})` : 'no'}</td><td>${ms(r.timing.answerMs)}</td>` +
      `<td>${esc(r.result ?? '')}</td><td>${esc(r.answerPreview ?? '')}</td></tr>`
    );
  });
  return (
    '<table><thead><tr><th>turn</th><th>tool</th><th>arguments</th><th>model</th><th>decision</th><th>MCP call</th><th>tool</th><th>fed back</th><th>answer time</th><th>result</th><th>answer</th></tr></thead>' +
    `<tbody>${rows.join('')}</tbody></table>`
  );
}

/** Logs of MCP servers only: the tool calls without the model's columns, which would be empty on every row. */
function mcpCallTable(trace: Trace): string {
  const rows = trace.roundTrips.map((r) => {
    const cls = r.mcp?.isError ? ' class="warn"' : '';
    const tool = r.timing.toolMs === undefined ? '–' : `${Math.round(r.timing.toolMs)} ms`;
    return `<tr${cls}><td><b>${esc(r.tool)}</b></td><td><code>${esc(preview(JSON.stringify(r.arguments) ?? '', 60))}</code></td><td>${r.mcp ? esc(`${r.mcp.server} #${String(r.mcp.id)}${rounds(r.mcp.rounds)}${r.mcp.isError ? ' (error)' : ''}`) : 'not in logs'}</td><td>${tool}</td><td>${esc(r.result ?? '')}</td></tr>`;
  });
  return `<p class="hint">No model call in these logs: the MCP tool calls alone.</p><table><thead><tr><th>tool</th><th>arguments</th><th>MCP call</th><th>tool</th><th>result</th></tr></thead><tbody>${rows.join('')}</tbody></table>`;
}

/** A multi-round-trip call's rounds, each with what it asked and its own time. */
function rounds(list: RoundTripRound[] | undefined): string {
  if (!list) return '';
  const each = list.map((x, i) => `${i + 1}: ${x.inputRequests ? `asked ${x.inputRequests.join(', ')}` : x.resultType ?? 'no answer'}${x.latencyMs !== null ? ` ${Math.round(x.latencyMs)} ms` : ''}`);
  return ` in ${list.length} rounds (${each.join('; ')})`;
}

/**
 * The timeline's list items of the first `max` records, made as the records come: a record's frame and JSON
 * are rendered at once (while the page's JSON budget lasts), so a stream keeps no record, only its item.
 */
export class RecordItems {
  private readonly items: { parts: PrettyParts; warn: boolean; json: string | undefined }[] = [];
  private budget = MAX_PAGE_JSON_CHARS;
  private longestLabel = 0;
  /** Records seen, and the first and last record's time. */
  total = 0;
  first: number | undefined;
  last: number | undefined;

  constructor(private readonly max: number) {}

  get shown(): number {
    return this.items.length;
  }

  add(r: LogRecord): void {
    this.total++;
    this.first ??= r.time;
    this.last = r.time;
    if (this.items.length >= this.max) return;
    const parts = prettyParts(r, this.first, PAGE_PRETTY);
    if (parts.label.length > this.longestLabel) this.longestLabel = parts.label.length;
    this.items.push({ parts, warn: (r.level ?? 30) >= 40, json: this.budget > 0 ? this.json(r) : undefined });
  }

  /** The list items, one after another (joined by `\n` in the page). */
  *lines(): Generator<string> {
    const width = prettyLabelWidth(this.longestLabel);
    const left = `<p class="hint">Frame and record left out: this page already holds ${MAX_PAGE_JSON_CHARS / 1024 / 1024} MB of them. <code>mcptap view --format json</code> has every one.</p>`;
    for (let i = 0; i < this.items.length; i++) {
      const item = this.items[i]!;
      yield `${i > 0 ? '\n' : ''}<li${item.warn ? ' class="warn"' : ''}><details><summary>${esc(joinPretty(item.parts, width, PAGE_PRETTY))}</summary>${item.json ?? left}</details></li>`;
    }
  }

  private json(r: LogRecord): string {
    const frame = frameJson(r);
    const json = (frame !== undefined ? `<h3>Frame</h3><pre>${esc(cap(frame))}</pre>` : '') + `<h3>Record</h3><pre>${esc(cap(JSON.stringify(r, null, 2)))}</pre>`;
    this.budget -= json.length;
    return json;
  }
}

/** The timeline's lines as `view --relative` prints them, uncoloured. */
const PAGE_PRETTY = { color: false, relative: true } as const;

/** The frame a record carries, pretty-printed when it is JSON: the JSON-RPC line, the HTTP body, the chunk. */
function frameJson(r: LogRecord): string | undefined {
  const o = r as unknown as Record<string, unknown>;
  const text = typeof o.raw === 'string' && o.rawEncoding === undefined ? o.raw : typeof o.body === 'string' && o.bodyEncoding === undefined ? o.body : undefined;
  if (text === undefined) return undefined;
  try {
    return JSON.stringify(JSON.parse(text), null, 2);
  } catch {
    return text;
  }
}

function cap(text: string): string {
  return text.length > MAX_JSON_CHARS ? `${text.slice(0, MAX_JSON_CHARS)}\n… (${text.length - MAX_JSON_CHARS} more characters in the log)` : text;
}

/** Escape text for HTML content and attribute values. */
export function esc(text: string): string {
  return text.replace(/[&<>"']/g, (c) => `&#${c.charCodeAt(0)};`);
}

const STYLE = `
body{font:14px/1.45 system-ui,-apple-system,Segoe UI,Roboto,sans-serif;margin:0 auto;padding:16px 24px;max-width:1400px;color:#1d1f24;background:#fbfbfd}
h1{font-size:22px;margin:0 0 4px}h2{font-size:17px;margin:28px 0 8px;border-bottom:1px solid #dde;padding-bottom:4px}h3{font-size:12px;margin:8px 0 2px;color:#667;text-transform:uppercase}
.meta,.hint{color:#667;margin:0 0 8px}
table{border-collapse:collapse;width:100%;font-size:13px}th,td{border:1px solid #dde;padding:4px 6px;text-align:left;vertical-align:top}th{background:#eef0f5}
tr.warn td{background:#fff6e5}
code,pre{font:12px/1.4 ui-monospace,SFMono-Regular,Menlo,Consolas,monospace}
pre{background:#f2f3f7;border:1px solid #e1e3ea;padding:8px;overflow:auto;max-height:420px;white-space:pre-wrap;word-break:break-word}
#findings li.warn b{color:#b35c00}#findings li.info b{color:#2a6bb0}
.svg-wrap{overflow-x:auto;background:#fff;border:1px solid #dde;padding:8px}
svg.sequence text{font:12px system-ui,sans-serif;fill:#1d1f24}
svg.sequence .participant rect{fill:#e8eefc;stroke:#4a6fb5;stroke-width:1.5}
svg.sequence .participant-user rect{fill:#eef8ee;stroke:#3f8f4f}svg.sequence .participant-llm rect{fill:#f6ecfb;stroke:#8a4fb5}
svg.sequence .participant-mcp rect{fill:#fff3e0;stroke:#c07a1f}
svg.sequence .participant text{font-weight:600}
svg.sequence .lifeline{stroke:#aab;stroke-width:1;stroke-dasharray:3 4}
svg.sequence .arrow{stroke:#334;stroke-width:1.5}
svg.sequence .error .arrow{stroke:#c0392b}svg.sequence .error text{fill:#c0392b}
svg.sequence .note rect{fill:#fffbd6;stroke:#c9b458}
ol.records{padding-left:0;list-style:none}ol.records li{border-bottom:1px solid #eef}ol.records summary{cursor:pointer;font:12px/1.6 ui-monospace,Menlo,Consolas,monospace;white-space:pre-wrap}
ol.records li.warn summary{color:#b35c00}
`;
