/**
 * The views that stream: `view` (pretty: every record, then the round-trip tables) and `view --format json`
 * (the trace lines), written from a stream of records with the linker's window held, not the logs. What can be
 * printed only at the end (the label column's width, the sessions that come first) waits in a spool (memory,
 * then a temporary file), so the memory does not grow with the log.
 */
import type { LogRecord } from '../log/schema.js';
import { Spool } from '../log/spool.js';
import type { LinkOptions } from './link.js';
import { TraceLinker, type LinkEnd } from './linker.js';
import { joinPretty, prettyLabelWidth, prettyParts, type PrettyOptions } from './pretty.js';
import { SummaryTables } from './summary.js';

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
    let blank = true;
    for await (const line of tables.lines(end.diagnostics)) {
      if (blank) await out.line('');
      blank = false;
      await out.line(fit(line));
    }
    return { ...end, records: n };
  } finally {
    lines.dispose();
  }
}

/** The trace lines (`traceLines`' order): sessions, then each turn with its round trips, round trips outside turns, diagnostics. */
export async function writeJsonView(records: AsyncIterable<LogRecord>, out: LineSink, options: WriteViewOptions): Promise<ViewDone> {
  const turns = new Spool();
  const loose = new Spool();
  const linker = new TraceLinker(options.link, {
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
    for (const s of end.sessions) await out.line(JSON.stringify(s));
    for await (const line of turns.lines()) await out.line(line);
    for await (const line of loose.lines()) await out.line(line);
    for (const d of end.diagnostics) await out.line(JSON.stringify(d));
    return { ...end, records: n };
  } finally {
    turns.dispose();
    loose.dispose();
  }
}
