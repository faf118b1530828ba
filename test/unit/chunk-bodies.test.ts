/**
 * An NDJSON stream's body left to its llm-chunk records (log format v3): the tap leaves it out only when the
 * chunks' raws, each with its newline, are exactly the body; the reader puts it back only when it has them all.
 */
import { describe, expect, it } from 'vitest';
import { ChunkedBody } from '../../src/session/chunked-body.js';
import { ChunkBodies } from '../../src/log/chunk-bodies.js';
import { parseRecordLine } from '../../src/log/reader.js';
import type { LogRecord } from '../../src/log/schema.js';

const A = '{"message":{"content":"Hel"},"done":false}';
const B = '{"message":{"content":"lo"},"done":true}';

function carriers(body: string, lines: string[], carried = lines.map(() => true), broken = false): number {
  const chunked = new ChunkedBody();
  lines.forEach((line, i) => chunked.line(line, carried[i]!));
  if (broken) chunked.broken();
  return chunked.carriers(body);
}

describe('ChunkedBody: are the chunks the whole body?', () => {
  it('yes, when every line is a chunk and the lines make the body', () => {
    expect(carriers(`${A}\n${B}\n`, [A, B])).toBe(2);
  });

  it('no, when a line is no chunk, the last line has no newline, or a CR was taken off', () => {
    expect(carriers(`${A}\n\n${B}\n`, [A, '', B], [true, false, true])).toBe(0);
    expect(carriers(`${A}\n${B}`, [A, B], undefined, true)).toBe(0);
    // A CR taken off before a newline makes the body longer than its lines. With an unended last line too
    // (`a\r\nb` framed as `a` and `b`) the lengths agree, and broken() is what refuses it.
    expect(carriers(`${A}\r\n${B}`, [A, B], undefined, true)).toBe(0);
    expect(carriers(`${A}\r\n${B}\n`, [A, B])).toBe(0);
    expect(carriers('', [])).toBe(0);
  });
});

const record = (fields: Record<string, unknown>): LogRecord => ({ v: 3, seq: 0, level: 30, time: 1, session: 's', channel: 'ollama', label: 'l', ...fields }) as unknown as LogRecord;
const chunk = (raw: string, exchange = 'x1') => record({ kind: 'llm-chunk', dir: 's2c', exchange, sinceMs: 1, raw, msg: 'm' });
const end = (bodyInChunks: number, exchange = 'x1') => record({ kind: 'http-end', exchange, method: 'POST', path: '/api/chat', outcome: 'complete', reqBytes: 1, resBytes: 90, durationMs: 2, msg: 'm', bodyInChunks });

describe('ChunkBodies: the reader puts the body back', () => {
  it('from the raws of its own exchange, in order, each with its newline', () => {
    const bodies = new ChunkBodies();
    const records = [chunk(A), chunk('{"other":1}', 'x2'), chunk(B), end(2)];
    for (const r of records) bodies.see(r);
    expect((records[3] as { body?: string }).body).toBe(`${A}\n${B}\n`);
  });

  it('not at all when a chunk is missing (dropped, or in a part of the log not read)', () => {
    const bodies = new ChunkBodies();
    const last = end(2);
    for (const r of [chunk(B), last]) bodies.see(r);
    expect(last).not.toHaveProperty('body');
  });

  it('not for a stream let go to keep the streams held within their bound', () => {
    const bodies = new ChunkBodies(10);
    const kept = end(1, 'x10');
    const first = end(1, 'x0');
    for (let i = 0; i <= 10; i++) bodies.see(chunk(A, `x${i}`));
    for (const r of [first, kept]) bodies.see(r);
    expect(first).not.toHaveProperty('body');
    expect((kept as { body?: string }).body).toBe(`${A}\n`);
  });

  it('from raws as a v3 line carries them: the frame\u2019s exact text, JSON or not', () => {
    const line = (raw: string, asJson: boolean) => `{"v":3,"seq":1,"level":30,"session":"s","channel":"ollama","label":"l","time":1,"kind":"llm-chunk","dir":"s2c","exchange":"x1","sinceMs":1,"msg":"m","raw":${asJson ? raw : JSON.stringify(raw)}}`;
    const spaced = '{ "done" : true }';
    const parsed = [line(A, true), line(spaced, true), line('not json', false)].map((l) => (parseRecordLine(l) as { record: LogRecord }).record);
    const bodies = new ChunkBodies();
    const last = end(3);
    for (const r of [...parsed, last]) bodies.see(r);
    expect((last as { body?: string }).body).toBe(`${A}\n${spaced}\nnot json\n`);
  });
});
