/**
 * A stream's body left to its llm-chunk records: an NDJSON body (log format v3) when the chunks' raws, each
 * with its newline, are exactly the body; an SSE body (v4) when the chunks' events, written as sseEventText
 * writes them, are. The reader puts the body back only when it has every chunk.
 */
import { readFileSync } from 'node:fs';
import { describe, expect, it } from 'vitest';
import { ChunkedBody, ChunkedEvents } from '../../src/session/chunked-body.js';
import { ChunkBodies } from '../../src/log/chunk-bodies.js';
import { SseFramer, type SseEvent } from '../../src/framing/sse.js';
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

/**
 * How many chunks carry an SSE body, its events as the tap's framer gives them (each carried by a chunk unless
 * said), and how its lines end; 0 when they do not carry it.
 */
function eventCarriers(body: string, carried: (event: SseEvent) => boolean = () => true): number | [number, string] {
  const framer = new SseFramer({ maxEventBytes: 1 << 20 });
  const chunked = new ChunkedEvents(1 << 20);
  for (const item of [...framer.push(Buffer.from(body)), ...framer.end()]) {
    if (item.type === 'event') chunked.event(item.data ?? '', item.event, carried(item));
    else chunked.broken();
  }
  const events = chunked.carriers(body);
  return events === undefined ? 0 : events.lineEnd === '\n' ? events.events : [events.events, events.lineEnd];
}

const fixture = (name: string) => readFileSync(new URL(`../../fixtures/${name}`, import.meta.url), 'utf8');

describe('ChunkedEvents: are the chunks the whole SSE body?', () => {
  it('yes, for the streams OpenAI, Anthropic (named events) and Gemini (CRLF) send', () => {
    for (const name of ['openai/turn1.response.sse', 'anthropic/turn1.response.sse']) {
      const body = fixture(name);
      expect(eventCarriers(body), name).toBe(body.split('\n\n').length - 1);
    }
    const gemini = fixture('gemini/turn2.response.sse');
    expect(eventCarriers(gemini)).toEqual([gemini.split('\r\n\r\n').length - 1, '\r\n']);
    expect(eventCarriers('data: line one\ndata: line two\n\n')).toBe(1);
  });

  it('no, for any other form of the same events, an event no chunk carries, or a comment', () => {
    for (const body of ['data: {"a":1}\r\n\n', 'data: {"a":1}\r\r', 'data:{"a":1}\n\n', 'id: 7\ndata: {"a":1}\n\n', 'retry: 10\ndata: {"a":1}\n\n', 'data: {"a":1}\n', ': keep-alive\n\ndata: {"a":1}\n\n', 'data: {"a":1}\n\n\n']) {
      expect(eventCarriers(body), JSON.stringify(body)).toBe(0);
    }
    expect(eventCarriers('data: {"a":1}\n\ndata: {"b":2}\n\n', (event) => event.data !== '{"b":2}')).toBe(0);
    expect(eventCarriers('')).toBe(0);
  });

  it('no, once the events outgrow what a kept body holds (they are let go, not kept)', () => {
    const chunked = new ChunkedEvents(10);
    chunked.event('0123456789', undefined, true);
    chunked.event('x', undefined, true);
    expect(chunked.carriers('data: 0123456789\n\ndata: x\n\n')).toBeUndefined();
  });
});

const record = (fields: Record<string, unknown>): LogRecord => ({ v: 3, seq: 0, level: 30, time: 1, session: 's', channel: 'ollama', label: 'l', ...fields }) as unknown as LogRecord;
const chunk = (raw: string, exchange = 'x1') => record({ kind: 'llm-chunk', dir: 's2c', exchange, sinceMs: 1, raw, msg: 'm' });
const end = (bodyInChunks: number, exchange = 'x1') => record({ kind: 'http-end', exchange, method: 'POST', path: '/api/chat', outcome: 'complete', reqBytes: 1, resBytes: 90, durationMs: 2, msg: 'm', bodyInChunks });
const sseEnd = (bodyInEvents: number, eventLineEnd?: string) => record({ kind: 'http-end', exchange: 'x1', method: 'POST', path: '/v1/messages', outcome: 'complete', reqBytes: 1, resBytes: 90, durationMs: 2, msg: 'm', bodyInEvents, ...(eventLineEnd ? { eventLineEnd } : {}) });

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

  it('for an SSE stream, from each chunk\u2019s event and data, as the stream sent them', () => {
    const bodies = new ChunkBodies();
    const last = sseEnd(2);
    const records = [record({ kind: 'llm-chunk', dir: 's2c', exchange: 'x1', sinceMs: 1, raw: '{"type":"ping"}', event: 'ping', msg: 'm' }), chunk('[DONE]'), last];
    for (const r of records) bodies.see(r);
    expect((last as { body?: string }).body).toBe('event: ping\ndata: {"type":"ping"}\n\ndata: [DONE]\n\n');
  });

  it('for an SSE stream whose lines end in CRLF, with CRLF', () => {
    const bodies = new ChunkBodies();
    const last = sseEnd(1, '\r\n');
    for (const r of [chunk('{"candidates":[]}'), last]) bodies.see(r);
    expect((last as { body?: string }).body).toBe('data: {"candidates":[]}\r\n\r\n');
  });

  it('for an SSE stream, not at all when a chunk is missing or its line end is one this reader does not know', () => {
    const bodies = new ChunkBodies();
    const last = sseEnd(2);
    for (const r of [chunk('[DONE]'), last]) bodies.see(r);
    expect(last).not.toHaveProperty('body');
    const odd = sseEnd(1, '\r');
    for (const r of [chunk('[DONE]'), odd]) bodies.see(r);
    expect(odd).not.toHaveProperty('body');
  });
});
