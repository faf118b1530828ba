/**
 * `export --format otlp` streams: spans are joined into the trace as the linker hands its answers on and written
 * in batches once final, each batch its own `resourceSpans` groups. Checked against the whole-log join
 * (buildSpans over linkTrace): the same spans, each once, with the same trace and parent ids.
 */
import { readFileSync } from 'node:fs';
import { join } from 'node:path';
import { describe, expect, it } from 'vitest';
import type { LogRecord } from '../../src/log/schema.js';
import { linkTrace, type LinkOptions } from '../../src/trace/link.js';
import { buildSpans } from '../../src/export/otlp-spans.js';
import { SPAN_BATCH, SpanStream } from '../../src/export/otlp-stream.js';
import { formatOtlp, serializeOtlpJson, writeOtlp } from '../../src/export/otlp.js';

const ROUNDTRIP = join(import.meta.dirname, '../../fixtures/captures/roundtrip');
/** The captured round trip: the Ollama proxy's log (two chat calls, the tool call and its feed-back) and the weather server's. */
const trip = ['ollama', 'weather'].flatMap((name) =>
  readFileSync(join(ROUNDTRIP, `${name}.ndjson`), 'utf8')
    .split('\n')
    .filter(Boolean)
    .map((line) => JSON.parse(line) as LogRecord),
);
const start = Math.min(...trip.map((r) => r.time));

/** `copies` round trips, `gapMs` apart, each with sessions and exchanges of its own, merged by time. */
function roundTrips(copies: number, gapMs: number): LogRecord[] {
  const records: LogRecord[] = [];
  for (let n = 0; n < copies; n++) {
    for (const r of trip) {
      const o = { ...r, time: r.time - start + 1_800_000_000_000 + n * gapMs, session: `${r.session}-${n}` } as LogRecord & { exchange?: string };
      if (o.exchange !== undefined) o.exchange = `${o.exchange}-${n}`;
      records.push(o);
    }
  }
  return records.sort((a, b) => a.time - b.time || a.seq - b.seq);
}

interface OtlpSpan {
  traceId: string;
  spanId: string;
  parentSpanId?: string;
  name: string;
}
interface OtlpDocument {
  resourceSpans: { resource: { attributes: { key: string; value: { stringValue?: string } }[] }; scopeSpans: { spans: OtlpSpan[] }[] }[];
}

/** Each span of a document with its resource, as one string per span (the comparison ignores the grouping). */
function flat(doc: OtlpDocument): string[] {
  return doc.resourceSpans.flatMap((rs) => rs.scopeSpans.flatMap((ss) => ss.spans.map((s) => JSON.stringify({ resource: rs.resource, s })))).sort();
}

async function* streamOf(records: readonly LogRecord[]): AsyncGenerator<LogRecord> {
  yield* records;
}

describe('export --format otlp, streamed', () => {
  // A window and horizon of 5 s: the linker holds some 10 s of the 67 minutes, so spans leave as the stream moves.
  const options: LinkOptions = { windowMs: 5000, horizonMs: 5000, haveLlm: true };
  const records = roundTrips(400, 10_000);
  const whole = buildSpans(records, linkTrace(records, options));

  it('writes several resourceSpans batches that together hold every span once, joined as the whole log joins them', async () => {
    const writes: string[] = [];
    const done = await writeOtlp(streamOf(records), { write: async (text) => void writes.push(text) }, options);
    const doc = JSON.parse(writes.join('')) as OtlpDocument;
    expect(done).toEqual({ records: records.length, spans: whole.length });
    // Several batches, and a resource in more than one of them: its LLM calls wait for their turn, its MCP calls do not.
    expect(whole.length).toBeGreaterThan(3 * SPAN_BATCH);
    expect(writes.length).toBeGreaterThan(4);
    const resources = doc.resourceSpans.map((rs) => JSON.stringify(rs.resource));
    expect(new Set(resources).size).toBeLessThan(resources.length);
    const spans = flat(doc);
    expect(spans).toEqual(flat(JSON.parse(serializeOtlpJson(whole)) as OtlpDocument));
    expect(new Set(spans.map((s) => (JSON.parse(s) as { s: OtlpSpan }).s.spanId)).size).toBe(whole.length);

    // The parents, said plainly: each round trip's tools/call under the LLM call that asked for it, in its turn's trace.
    const all = doc.resourceSpans.flatMap((rs) => rs.scopeSpans.flatMap((ss) => ss.spans));
    const byId = new Map(all.map((s) => [s.spanId, s]));
    const calls = all.filter((s) => s.name === 'tools/call get_weather');
    expect(calls).toHaveLength(400);
    for (const call of calls) {
      const asker = byId.get(call.parentSpanId!)!;
      expect(asker.name).toMatch(/^chat /);
      expect(asker.traceId).toBe(call.traceId);
      const turn = byId.get(asker.parentSpanId!)!;
      expect(turn.name).toMatch(/^turn /);
      expect(turn.traceId).toBe(call.traceId);
    }
  });

  it('hands spans on as the stream moves, holding a window of them', () => {
    const stream = new SpanStream(options);
    let before = 0;
    let firstAt = -1;
    records.forEach((r, i) => {
      const batch = stream.push(r);
      if (batch.length > 0 && firstAt === -1) firstAt = i;
      before += batch.length;
    });
    const last = stream.end();
    expect(before + last.length).toBe(whole.length);
    expect(firstAt).toBeGreaterThan(0);
    expect(firstAt).toBeLessThan(records.length / 3);
    // What is left for the end is less than one batch and the window's spans.
    expect(last.length).toBeLessThan(SPAN_BATCH + 20);
  });

  it('joins a tools/call whose answer comes long after its round trip was handed on', () => {
    // Copy 5's answer comes 10 minutes late, beyond the horizon: the round trip is out before the span is built.
    const late = records.map((r) => (r.kind === 'response' && r.method === 'tools/call' && r.session.endsWith('-5') ? { ...r, time: r.time + 600_000 } : r)).sort((a, b) => a.time - b.time);
    const spans = buildSpans(late, linkTrace(late, options));
    const stream = new SpanStream(options);
    const streamed = late.flatMap((r) => stream.push(r));
    streamed.push(...stream.end());
    const key = (s: { spanId: string }): string => s.spanId;
    expect([...streamed].sort((a, b) => key(a).localeCompare(key(b)))).toEqual([...spans].sort((a, b) => key(a).localeCompare(key(b))));
    const call = streamed.find((s) => s.name === 'tools/call get_weather' && s.resource.session.endsWith('-5'))!;
    expect(call.parentSpanId).toBeDefined();
  });

  it('formatOtlp gives the document writeOtlp writes', async () => {
    const writes: string[] = [];
    await writeOtlp(streamOf(records), { write: async (text) => void writes.push(text) }, options);
    expect(`${formatOtlp(records, options)}\n`).toBe(writes.join(''));
  });
});
