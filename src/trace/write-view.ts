/**
 * The views that stream: `view` (pretty: every record, then the round-trip tables) and `view --format json`
 * (the trace lines), written from a stream of records with the linker's window held, not the logs. What can be
 * printed only at the end (the label column's width, the sessions that come first) waits in a spool (memory,
 * then a temporary file), so the memory does not grow with the log.
 */
import type { LogRecord } from '../log/schema.js';
import { Spool } from '../log/spool.js';
import type { LinkOptions, ToolRoundTrip, TraceSession, TraceTurn } from './link.js';
import { TraceLinker, type LinkEnd } from './linker.js';
import { joinPretty, prettyLabelWidth, prettyParts, type PrettyOptions } from './pretty.js';
import { SummaryTables } from './summary.js';
import { arrowOf, timelineLine, TimelineStream, type Participant, type TimelineArrow, type TimelineStep } from './timeline.js';
import { aliasOf, mermaidParticipant, mermaidStep } from './mermaid.js';
import { DEFAULT_HTML_MAX_RECORDS, DEFAULT_HTML_MAX_STEPS, htmlPageParts, RecordItems, type HtmlOptions } from './html.js';

/** Where a view's lines go (cli/output.ts), and how a line is fitted to the terminal. */
export interface LineSink {
  line(text: string): Promise<void>;
}

export interface WriteViewOptions {
  link: LinkOptions;
  /** A line as printed (cut to the terminal's width); as it is by default. */
  fit?: (line: string) => string;
}

/** What a written view saw: how many records, and what the linker's end said. */
export interface ViewDone extends LinkEnd {
  records: number;
}

/** Every record as a line (pretty.ts), then the round trips, turns and findings (summary.ts). */
export async function writePrettyView(records: AsyncIterable<LogRecord>, out: LineSink, options: WriteViewOptions & PrettyOptions): Promise<ViewDone> {
  const fit = options.fit ?? ((line: string) => line);
  const lines = new Spool();
  const tables = new SummaryTables({ color: options.color });
  const linker = new TraceLinker(options.link, { roundTrip: (trip) => tables.addTrip(trip), turn: (turn) => tables.addTurn(turn) });
  let first: number | undefined;
  let longest = 0;
  let n = 0;
  try {
    for await (const r of records) {
      n++;
      first ??= r.time;
      linker.push(r);
      const parts = prettyParts(r, first, options);
      if (parts.label.length > longest) longest = parts.label.length;
      lines.add(JSON.stringify([parts.time, parts.label, parts.rest]));
    }
    const end = linker.end();
    const labelWidth = prettyLabelWidth(longest);
    for await (const line of lines.lines()) {
      const [time, label, rest] = JSON.parse(line) as [string, string, string];
      await out.line(fit(joinPretty({ time, label, rest }, labelWidth, options)));
    }
    await writeTables(out, tables, end, fit);
    return { ...end, records: n };
  } finally {
    lines.dispose();
    tables.dispose();
  }
}

/** The round-trip tables and findings after a view's lines, a blank line between (none when there are none). */
async function writeTables(out: LineSink, tables: SummaryTables, end: LinkEnd, fit: (line: string) => string): Promise<void> {
  let blank = true;
  for await (const line of tables.lines(end.diagnostics)) {
    if (blank) await out.line('');
    blank = false;
    await out.line(fit(line));
  }
}

/** The trace lines (`traceLines`' order): sessions, then each turn with its round trips, round trips outside turns, diagnostics. */
export async function writeJsonView(records: AsyncIterable<LogRecord>, out: LineSink, options: WriteViewOptions): Promise<ViewDone> {
  const turns = new Spool();
  const loose = new Spool();
  const letGo = new Spool();
  const linker = new TraceLinker(options.link, {
    session: (s) => letGo.add(JSON.stringify(s)),
    roundTrip: (trip) => {
      if (trip.turn === null) loose.add(JSON.stringify(trip));
    },
    turn: (turn, trips) => {
      turns.add(JSON.stringify(turn));
      for (const trip of trips) turns.add(JSON.stringify(trip));
    },
  });
  let n = 0;
  try {
    for await (const r of records) {
      n++;
      linker.push(r);
    }
    const end = linker.end();
    // Sessions let go before the end (a log of thousands) come first, in the order they were let go.
    for await (const line of letGo.lines()) await out.line(line);
    for (const s of end.sessions) await out.line(JSON.stringify(s));
    for await (const line of turns.lines()) await out.line(line);
    for await (const line of loose.lines()) await out.line(line);
    for (const d of end.diagnostics) await out.line(JSON.stringify(d));
    return { ...end, records: n };
  } finally {
    turns.dispose();
    loose.dispose();
    letGo.dispose();
  }
}

/** A stream's arrows, put aside in time order until the participants are known (at the end). */
class StepSpool {
  readonly steps = new Spool();
  readonly used = new Set<string>();
  /** The pairs an arrow goes between, for the arrow column's width. */
  readonly pairs = new Map<string, { from: string; to: string }>();
  first: number | undefined;

  add = (s: TimelineArrow): void => {
    this.first ??= s.time;
    this.used.add(s.from);
    this.used.add(s.to);
    this.pairs.set(`${s.from}\u0000${s.to}`, { from: s.from, to: s.to });
    this.steps.add(JSON.stringify([s.time, s.from, s.to, s.text, s.style]));
  };

  async *read(): AsyncGenerator<Pick<TimelineStep, 'time' | 'from' | 'to' | 'text' | 'style'>> {
    for await (const line of this.steps.lines()) {
      const [time, from, to, text, style] = JSON.parse(line) as [number, string, string, string, TimelineStep['style']];
      yield { time, from, to, text, style };
    }
  }
}

/** The timeline's arrows from a stream, and the linker's end; `more` also takes what the linker hands on. */
async function streamSteps(records: AsyncIterable<LogRecord>, options: WriteViewOptions, more: { roundTrip?: (t: ToolRoundTrip) => void; turn?: (t: TraceTurn) => void } = {}): Promise<{ spool: StepSpool; end: LinkEnd; participants: Participant[]; records: number }> {
  const spool = new StepSpool();
  const timeline = new TimelineStream(spool.add);
  const linker = new TraceLinker(options.link, {
    session: (s) => timeline.letGo(s),
    roundTrip: (trip) => {
      more.roundTrip?.(trip);
      timeline.roundTrip(trip);
    },
    turn: (turn) => {
      more.turn?.(turn);
      timeline.turn(turn);
    },
  });
  let n = 0;
  for await (const r of records) {
    n++;
    timeline.push(r);
    linker.push(r);
  }
  const end = linker.end();
  const participants = timeline.end(end.sessions, spool.used);
  return { spool, end, participants, records: n };
}

/** `view --format timeline`: the round trip as arrows between participants, then the round-trip tables. */
export async function writeTimelineView(records: AsyncIterable<LogRecord>, out: LineSink, options: WriteViewOptions & { color: boolean }): Promise<ViewDone> {
  const fit = options.fit ?? ((line: string) => line);
  const tables = new SummaryTables({ color: options.color });
  const { spool, end, participants, records: n } = await streamSteps(records, options, { roundTrip: (t) => tables.addTrip(t), turn: (t) => tables.addTurn(t) });
  try {
    const names = new Map(participants.map((p) => [p.id, p.name]));
    let width = 0;
    for (const pair of spool.pairs.values()) width = Math.max(width, arrowOf(pair, names).length);
    const at = { names, first: spool.first ?? 0, width: Math.min(40, width), color: options.color };
    for await (const step of spool.read()) await out.line(fit(timelineLine(step, at)));
    await writeTables(out, tables, end, fit);
    return { ...end, records: n };
  } finally {
    spool.steps.dispose();
    tables.dispose();
  }
}

/** `view --format mermaid`: the timeline as a Mermaid sequenceDiagram. */
export async function writeMermaidView(records: AsyncIterable<LogRecord>, out: LineSink, options: WriteViewOptions): Promise<ViewDone> {
  const { spool, end, participants, records: n } = await streamSteps(records, options);
  try {
    const alias = new Map(participants.map((p, i) => [p.id, aliasOf(p.kind, i)]));
    await out.line('sequenceDiagram');
    for (const p of participants) await out.line(mermaidParticipant(p, alias.get(p.id)!));
    for await (const step of spool.read()) await out.line(mermaidStep(step, alias));
    return { ...end, records: n };
  } finally {
    spool.steps.dispose();
  }
}

/**
 * `view --format html`: the page (html.ts) from a stream. It lists the first records and draws the first arrows;
 * the trace is whole, but no record is kept beyond the ones the page lists, and those as their list items.
 */
export async function writeHtmlView(records: AsyncIterable<LogRecord>, out: LineSink & { write(text: string): Promise<void> }, options: WriteViewOptions & HtmlOptions): Promise<ViewDone> {
  const items = new RecordItems(options.maxRecords ?? DEFAULT_HTML_MAX_RECORDS);
  const maxSteps = options.maxSteps ?? DEFAULT_HTML_MAX_STEPS;
  const steps: TimelineArrow[] = [];
  const used = new Set<string>();
  let moreSteps = 0;
  const timeline = new TimelineStream((s) => {
    used.add(s.from);
    used.add(s.to);
    if (steps.length < maxSteps) steps.push(s);
    else moreSteps++;
  });
  // The page's tables list the first rows of each kind, and say how many more the logs hold.
  const sessions = new PageSessions(HTML_MAX_SESSIONS);
  const turns = new FirstRows<TraceTurn>(HTML_MAX_TRIPS);
  const roundTrips = new FirstRows<ToolRoundTrip>(HTML_MAX_TRIPS);
  const linker = new TraceLinker(options.link, {
    session: (s) => {
      sessions.add(s);
      timeline.letGo(s);
    },
    roundTrip: (trip) => {
      roundTrips.add(trip);
      timeline.roundTrip(trip);
    },
    turn: (turn) => {
      turns.add(turn);
      timeline.turn(turn);
    },
  });
  for await (const r of records) {
    items.add(r);
    timeline.push(r);
    linker.push(r);
  }
  const end = linker.end();
  for (const s of end.sessions) sessions.add(s);
  const participants = timeline.end(end.sessions, used);
  const trace = { sessions: sessions.rows, turns: turns.rows, roundTrips: roundTrips.rows, diagnostics: end.diagnostics };
  const left = { sessions: sessions.left, turns: turns.left, roundTrips: roundTrips.left, byLabel: sessions.leftByLabel };
  // Written in parts of about 64 K characters: the page of a big log is megabytes, and one string of it was a copy more.
  let part = '';
  for (const piece of htmlPageParts({ title: options.title, items, trace, drawn: { participants, steps }, moreSteps, left })) {
    part += piece;
    if (part.length < 65_536) continue;
    await out.write(part);
    part = '';
  }
  if (part !== '') await out.write(part);
  return { ...end, records: items.total };
}

/** Most sessions, and most round trips and turns, one page's tables list (a log of thousands stays one page). */
const HTML_MAX_SESSIONS = 250;
const HTML_MAX_TRIPS = 500;

/** The first `max` of a stream of rows, and how many came after them. */
class FirstRows<T> {
  readonly rows: T[] = [];
  left = 0;

  constructor(private readonly max: number) {}

  add(row: T): void {
    if (this.rows.length < this.max) this.rows.push(row);
    else this.left++;
  }
}

/** FirstRows of sessions, but a server's first session always (one row per server), and what is left out by server. */
class PageSessions extends FirstRows<TraceSession> {
  private readonly labels = new Set<string>();
  readonly leftByLabel = new Map<string, { sessions: number; records: number }>();

  override add(s: TraceSession): void {
    if (!this.labels.has(s.label)) {
      this.labels.add(s.label);
      this.rows.push(s);
      return;
    }
    const before = this.left;
    super.add(s);
    if (this.left === before) return;
    const left = this.leftByLabel.get(s.label) ?? { sessions: 0, records: 0 };
    left.sessions++;
    left.records += s.records;
    this.leftByLabel.set(s.label, left);
  }
}
