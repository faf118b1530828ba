import { describe, expect, it } from 'vitest';
import { linkTrace } from '../../src/trace/link.js';
import { buildTimeline } from '../../src/trace/timeline.js';
import { esc, formatHtml, renderSequenceSvg } from '../../src/trace/html.js';
import { weatherRoundTrip } from './trace-fixture.js';

describe('formatHtml', () => {
  const records = weatherRoundTrip();
  const trace = linkTrace(records);
  const timeline = buildTimeline(records, trace);
  const html = formatHtml(records, trace, timeline);

  it('is one self-contained page: no script, no external reference, a CSP that forbids fetching', () => {
    expect(html.startsWith('<!doctype html>')).toBe(true);
    expect(html).not.toMatch(/<script/i);
    expect(html).not.toMatch(/(src|href)=["']?(https?:)?\/\//i);
    expect(html).toContain(`content="default-src 'none'; style-src 'unsafe-inline'; img-src data:"`);
  });

  it('holds the round-trip table, the diagram and one collapsible entry per record with its frame', () => {
    expect(html).toContain('<section id="round-trips">');
    expect(html).toMatch(/<td><b>get_weather<\/b><\/td>/);
    expect(html.match(/<li( class="warn")?><details>/g)).toHaveLength(records.length);
    // The tools/call frame, pretty-printed and escaped.
    expect(html).toContain('&#34;method&#34;: &#34;tools/call&#34;');
    expect(html).toContain('<svg xmlns="http://www.w3.org/2000/svg" class="sequence"');
  });

  it('escapes what the traffic says', () => {
    expect(esc(`<b a="1">'&`)).toBe('&#60;b a=&#34;1&#34;&#62;&#39;&#38;');
    const evil = weatherRoundTrip().map((r) => (r.kind === 'llm-response' && r.content ? { ...r, content: '<script>alert(1)</script>' } : r));
    const page = formatHtml(evil, linkTrace(evil), buildTimeline(evil, linkTrace(evil)));
    expect(page).not.toContain('<script>');
  });
});

describe('a page of a big log', () => {
  it('holds frames up to its budget, then says where the rest are', () => {
    const big = 'x'.repeat(60 * 1024);
    const base = weatherRoundTrip();
    const last = base.at(-1)!;
    const noisy = Array.from({ length: 400 }, (_, i) => ({ ...last, seq: last.seq + 1 + i, time: last.time + 1 + i, kind: 'stderr', dir: 's2c', text: big, msg: 'Server stderr: x' }) as never);
    const records = [...base, ...noisy];
    const page = formatHtml(records, linkTrace(records), buildTimeline(records, linkTrace(records)));
    expect(page.length).toBeLessThan(20 * 1024 * 1024);
    expect(page.match(/<li( class="warn")?><details>/g)).toHaveLength(records.length);
    expect(page).toContain('Frame and record left out: this page already holds 16 MB of them. <code>mcptap view --format json</code> has every one.');
  });
});

describe('renderSequenceSvg', () => {
  const records = weatherRoundTrip();
  const timeline = buildTimeline(records, linkTrace(records));
  const svg = renderSequenceSvg(timeline);

  it('draws a box (top and bottom) and a lifeline per participant, an arrow per step', () => {
    expect(svg.match(/<g class="participant /g)).toHaveLength(timeline.participants.length * 2);
    expect(svg.match(/class="lifeline"/g)).toHaveLength(timeline.participants.length);
    expect(svg.match(/<line class="arrow"/g)).toHaveLength(timeline.steps.length);
    expect(svg.match(/<g class="message request"/g)!.length).toBe(timeline.steps.filter((s) => s.style === 'request').length);
  });

  it('points each arrow from the sender column to the receiver column', () => {
    const step = timeline.steps.findIndex((s) => s.text.startsWith('tools/call'));
    const m = new RegExp(`data-step="${step}"><title>[^<]*</title><line class="arrow" x1="(\\d+)" y1="\\d+" x2="(\\d+)"`).exec(svg);
    // host is column 1, weather column 3: x = 20 + 250 * i + 125.
    expect([Number(m![1]), Number(m![2])]).toEqual([395, 895]);
  });
});

describe('formatHtml on big traces', () => {
  it('keeps the page to the first records and arrows, and says how many are left off', () => {
    const records = weatherRoundTrip();
    const trace = linkTrace(records);
    const html = formatHtml(records, trace, buildTimeline(records, trace), { maxRecords: 4, maxSteps: 3 });
    expect(html.match(/<li( class="warn")?><details>/g)).toHaveLength(4);
    expect(html.match(/<line class="arrow"/g)).toHaveLength(3);
    expect(html).toContain(`The first part only: ${(records.length - 4).toLocaleString('en')} more records are in the logs`);
    expect(html).toContain('more arrows are in the logs (see them all with <code>mcptap view --format mermaid</code>)');
  });

  it('writes the count left off with thousands separated', () => {
    const one = weatherRoundTrip();
    const records = Array.from({ length: Math.ceil(1200 / one.length) }, (_, n) => one.map((r) => ({ ...r, seq: r.seq + n * 1000, time: r.time + n * 60_000 }))).flat();
    const trace = linkTrace(records);
    const html = formatHtml(records, trace, buildTimeline(records, trace), { maxRecords: 4, maxSteps: 3 });
    expect(records.length - 4).toBeGreaterThan(1000);
    expect(html).toContain(`The first part only: ${Math.floor((records.length - 4) / 1000)},${String((records.length - 4) % 1000).padStart(3, '0')} more records are in the logs`);
  });
});
