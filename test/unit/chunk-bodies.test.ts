/**
 * A stream's body left to its llm-chunk records: an NDJSON body (log format v3) when the chunks' raws, each
 * with its newline, are exactly the body; an SSE body (v4) when the chunks' events, written as sseEventText
 * writes them, are. An MCP answer left to its frame records (v5): the body is their raws with the text around
 * them. The reader puts the body back only when it has every chunk, or every frame.
 */
import { readFileSync } from 'node:fs';
import { describe, expect, it } from 'vitest';
import { ChunkedBody, ChunkedEvents, FramedBody } from '../../src/session/chunked-body.js';
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

/** A real answer to an MCP POST (server-everything, SDK v1): its http-end and its frames, as captured. */
function capturedAnswer(exchange: string): { body: string; raws: string[]; session: string } {
  const lines = readFileSync('fixtures/captures/mcp-http/everything-sdk.ndjson', 'utf8').trim().split('\n').map((l) => JSON.parse(l) as Record<string, unknown>);
  const of = lines.filter((r) => r.exchange === exchange);
  const end = of.find((r) => r.kind === 'http-end')!;
  return { body: String(end.body), raws: of.filter((r) => r.dir === 's2c' && typeof r.raw === 'string').map((r) => String(r.raw)), session: String(end.session) };
}

function framed(body: string, raws: unknown[], session = 's', maxChars = 1 << 20, endSession = session): { frames: number; around: string[] } | undefined {
  const answer = new FramedBody(session, maxChars);
  for (const raw of raws) answer.frame(raw, session);
  return answer.around(body, endSession);
}

describe('FramedBody: is an MCP answer its frames with the text around them?', () => {
  it('yes, for an SSE answer with its priming event and ids, and the body is the pieces and raws in turn', () => {
    const { body, raws } = capturedAnswer('x4');
    const result = framed(body, raws)!;
    expect(result.frames).toBe(1);
    expect(result.around[0]).toMatch(/^id: [0-9a-f-]{36}\ndata: \n\nevent: message\nid: [0-9a-f-]{36}\ndata: $/);
    expect(result.around.map((piece, i) => `${piece}${raws[i] ?? ''}`).join('')).toBe(body);
  });

  it('yes, for a JSON answer: one frame with nothing around it', () => {
    expect(framed('{"jsonrpc":"2.0","id":1,"result":{}}', ['{"jsonrpc":"2.0","id":1,"result":{}}'])).toEqual({ frames: 1, around: ['', ''] });
  });

  it('no, when a raw is not in the body, a frame has no string raw, or frames and answer are of other sessions', () => {
    const body = 'event: message\ndata: [{"id":1},{"id":2}]\n\n';
    // A batch's elements are logged one by one, each written again: where that is the body's own text, the
    // pieces still make the body; written otherwise, it is not found.
    expect(framed(body, ['{"id":1}', '{"id":2}'])).toEqual({ frames: 2, around: ['event: message\ndata: [', ',', ']\n\n'] });
    expect(framed(body, ['{"id": 1}'])).toBeUndefined();
    expect(framed(body, [undefined])).toBeUndefined();
    expect(framed(body, ['{"id":1}'], 's', 1 << 20, 'other')).toBeUndefined();
    const other = new FramedBody('s', 1 << 20);
    other.frame('{"id":1}', 'another');
    expect(other.around(body, 's')).toBeUndefined();
    expect(framed(body, [])).toBeUndefined();
  });

  it('no, once the frames outgrow what a kept body holds', () => {
    expect(framed('data: 0123456789\n\n', ['0123456789'], 's', 9)).toBeUndefined();
  });
});

const frameRecord = (raw: unknown, exchange = 'x1', dir = 's2c') => record({ kind: 'response', channel: 'mcp-http', dir, exchange, id: 1, method: 'tools/list', msg: 'm', bytes: 1, raw });
const mcpPost = (exchange = 'x1', method = 'POST') => record({ kind: 'http-request', channel: 'mcp-http', dir: 'c2s', exchange, method, path: '/mcp', headers: {}, bodyBytes: 1, msg: 'm' });
const framedEnd = (bodyInFrames: number, bodyAround: string[], exchange = 'x1') => record({ kind: 'http-end', channel: 'mcp-http', exchange, method: 'POST', path: '/mcp', outcome: 'complete', reqBytes: 1, resBytes: 90, durationMs: 2, msg: 'm', bodyInFrames, bodyAround });

describe('ChunkBodies: an MCP answer put back from its frames', () => {
  const R = '{"jsonrpc":"2.0","id":1,"result":{"tools":[]}}';
  const around = ['id: a\ndata: \n\nevent: message\nid: b\ndata: ', '\n\n'];

  it('from the raws of its own POST, with the text around them', () => {
    const bodies = new ChunkBodies();
    const last = framedEnd(1, around);
    for (const r of [mcpPost(), frameRecord('{"other":1}', 'x2'), frameRecord(R, 'x1', 'c2s'), frameRecord(R), last]) bodies.see(r);
    expect((last as { body?: string }).body).toBe(`${around[0]}${R}${around[1]}`);
  });

  it('not at all when a frame is missing, its raw is not text, or the exchange was no MCP POST', () => {
    const missing = framedEnd(2, ['', '', '']);
    const bodies = new ChunkBodies();
    for (const r of [mcpPost(), frameRecord(R), missing]) bodies.see(r);
    expect(missing).not.toHaveProperty('body');
    const notText = framedEnd(1, ['', '']);
    for (const r of [mcpPost(), frameRecord({ jsonrpc: '2.0' }), notText]) bodies.see(r);
    expect(notText).not.toHaveProperty('body');
    const get = framedEnd(1, ['', '']);
    for (const r of [mcpPost('x1', 'GET'), frameRecord(R), get]) bodies.see(r);
    expect(get).not.toHaveProperty('body');
  });

  it('from raws as a v5 line carries them: a frame of JSON written as JSON comes back as its exact text', () => {
    const spaced = '{ "jsonrpc" : "2.0", "id" : 1, "result" : {} }';
    const line = `{"v":5,"seq":2,"level":30,"session":"s","channel":"mcp-http","label":"l","time":1,"bytes":47,"exchange":"x1","kind":"response","dir":"s2c","id":1,"msg":"m","raw":${spaced}}`;
    const parsed = (parseRecordLine(line) as { record: LogRecord }).record;
    const bodies = new ChunkBodies();
    const last = framedEnd(1, ['', '']);
    for (const r of [mcpPost(), parsed, last]) bodies.see(r);
    expect((last as { body?: string }).body).toBe(spaced);
  });
});
