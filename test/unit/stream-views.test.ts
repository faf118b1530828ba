/**
 * The streamed outputs are the whole-log ones, byte for byte: `view` (pretty, timeline, mermaid, json, html), `export --format har` and
 * `check` written from a stream of records, against the functions over the whole list, on the captures and the
 * odd-frames log (U+2028 inside a string: a regex's `^` would have indented after it). And a spool past its
 * memory bound gives its lines back in order from disk, and leaves no file.
 */
import { existsSync } from 'node:fs';
import { join } from 'node:path';
import { describe, expect, it } from 'vitest';
import { readAllRecords } from '../../src/log/reader.js';
import type { LogRecord } from '../../src/log/schema.js';
import { Spool } from '../../src/log/spool.js';
import { linkTrace } from '../../src/trace/link.js';
import { formatPretty } from '../../src/trace/pretty.js';
import { formatRoundTripSummary } from '../../src/trace/summary.js';
import { formatTraceJson } from '../../src/trace/json.js';
import { writeHtmlView, writeJsonView, writeMermaidView, writePrettyView, writeTimelineView } from '../../src/trace/write-view.js';
import { formatHtml } from '../../src/trace/html.js';
import { buildTimeline, formatTimeline } from '../../src/trace/timeline.js';
import { formatMermaid } from '../../src/trace/mermaid.js';
import { formatHar, writeHar } from '../../src/export/har.js';
import { checkRecords, checkStream } from '../../src/check/check.js';

const FIXTURES = join(import.meta.dirname, '../../fixtures');

async function* stream(records: readonly LogRecord[]): AsyncGenerator<LogRecord> {
  yield* records;
}

/** A sink that keeps what is written. */
function collector(): { text: string; line(t: string): Promise<void>; write(t: string): Promise<void> } {
  const out = {
    text: '',
    line: async (t: string) => void (out.text += `${t}\n`),
    write: async (t: string) => void (out.text += t),
  };
  return out;
}

describe.each(['captures/roundtrip', 'captures/broken-roundtrip', 'captures/mcp-stdio', 'captures/openai', 'logs'])('streamed outputs of fixtures/%s', (name) => {
  it('are the whole-log outputs', async () => {
    const records = await readAllRecords([join(FIXTURES, name)]);
    const trace = linkTrace(records);
    const pretty = collector();
    await writePrettyView(stream(records), pretty, { link: {}, color: false });
    const summary = formatRoundTripSummary(trace, { color: false });
    expect(pretty.text).toBe(`${[...formatPretty(records, { color: false }), ...(summary.length ? ['', ...summary] : [])].join('\n')}\n`);
    const timeline = collector();
    await writeTimelineView(stream(records), timeline, { link: {}, color: false });
    expect(timeline.text).toBe(`${[...formatTimeline(buildTimeline(records, trace), { color: false }), ...(summary.length ? ['', ...summary] : [])].join('\n')}\n`);
    const mermaid = collector();
    await writeMermaidView(stream(records), mermaid, { link: {} });
    expect(mermaid.text).toBe(formatMermaid(buildTimeline(records, trace)));
    const json = collector();
    await writeJsonView(stream(records), json, { link: {} });
    expect(json.text).toBe(`${formatTraceJson(trace).join('\n')}\n`);
    const html = collector();
    await writeHtmlView(stream(records), html, { link: {} });
    expect(html.text).toBe(formatHtml(records, trace, buildTimeline(records, trace)));
    // The caps: the first records listed, the first arrows drawn, the rest counted.
    const capped = collector();
    await writeHtmlView(stream(records), capped, { link: {}, maxRecords: 7, maxSteps: 3 });
    expect(capped.text).toBe(formatHtml(records, trace, buildTimeline(records, trace), { maxRecords: 7, maxSteps: 3 }));
    const har = collector();
    await writeHar(stream(records), har);
    expect(har.text).toBe(formatHar(records));
    expect(JSON.stringify((await checkStream(stream(records))).report)).toBe(JSON.stringify(checkRecords(records)));
  });
});

describe('Spool', () => {
  it('gives its lines back in order once they went to disk, and removes its file', async () => {
    const spool = new Spool(1000);
    const lines = Array.from({ length: 5000 }, (_, i) => `line ${i} ${'·'.repeat(i % 50)}`);
    for (const line of lines) spool.add(line);
    expect(() => spool.linesNow()).toThrow(/on disk/);
    const dir = (spool as unknown as { dir: string }).dir;
    expect(existsSync(dir)).toBe(true);
    const back: string[] = [];
    for await (const line of spool.lines()) back.push(line);
    expect(back).toEqual(lines);
    expect(existsSync(dir)).toBe(false);
  });
});

describe('view --format html of a log of thousands of sessions', () => {
  it('lists the first 250 sessions and every server, and says how many more the logs hold', async () => {
    const one = await readAllRecords([join(FIXTURES, 'captures/mcp-stdio/everything-sdk.ndjson')]);
    const span = one.at(-1)!.time - one[0]!.time + 60_000;
    // 350 sessions of one server, then one session of a server first met after them.
    const copies = Array.from({ length: 351 }, (_, n) =>
      one.map((r) => ({ ...r, session: `${r.session}-${n}`, time: r.time + n * span, ...(n === 350 ? { label: 'late' } : {}) }) as LogRecord),
    );
    const html = collector();
    await writeHtmlView(stream(copies.flat()), html, { link: {} });
    expect(html.text).toContain('351 sessions');
    expect(html.text).toContain('The first part only: 100 more sessions are in the logs');
    // One row per server, its records counted over all its sessions, listed or not.
    const row = (label: string): string | undefined => html.text.match(new RegExp(`<tr><td>${label}</td>.*?</tr>`))?.[0];
    expect(row('everything')).toContain(`<td>${350 * one.length}</td>`);
    expect(row('everything')).toContain(' and 100 more</td>');
    expect(row('late')).toContain(`<td>${one.length}</td>`);
    // A server is named by its first session, which the linker let go long before the end.
    const participants = async (records: LogRecord[]): Promise<string[]> => {
      const out = collector();
      await writeMermaidView(stream(records), out, { link: {} });
      return out.text.split('\n').filter((l) => l.trimStart().startsWith('participant'));
    };
    const named = (await participants(one)).find((l) => !/User|Host/.test(l));
    expect(named).toBeDefined();
    expect(await participants(copies.flat())).toContain(named);
  });
});
