import { describe, expect, it } from 'vitest';
import { buildHar, formatHar, HarBuilder } from '../../src/export/har.js';
import type { LogRecord } from '../../src/log/schema.js';
import { harProblems } from '../support/har-1.2.js';

const T0 = 1_780_000_000_000;
let seq = 0;
const base = (session: string, channel: LogRecord['channel'], label: string, time: number) => ({ v: 1, time: T0 + time, seq: seq++, session, channel, label, msg: 'm' });

const ollamaBody = '{"model":"qwen2.5:3b","messages":[{"role":"user","content":"Weather in Paris?"}],"stream":false}';
const ollamaReply = '{"model":"qwen2.5:3b","message":{"role":"assistant","content":"Sunny."},"done":true}';

function records(): LogRecord[] {
  seq = 0;
  const H = (t: number) => base('proxy-1', 'ollama', 'ollama', t);
  const W = (t: number) => base('weather-1', 'stdio', 'weather', t);
  return [
    { ...base('proxy-1', 'http', 'ollama', 0), kind: 'lifecycle', event: 'listen', target: 'http://127.0.0.1:11435', listen: 'http://127.0.0.1:11434' },
    { ...H(10), kind: 'http-request', dir: 'c2s', exchange: 'x1', method: 'POST', path: '/api/chat?debug=1', headers: { host: '127.0.0.1:11434', 'content-type': 'application/json', authorization: '[redacted]', accept: ['a', 'b'] }, body: ollamaBody, bodyBytes: ollamaBody.length },
    { ...H(10), kind: 'llm-request', dir: 'c2s', exchange: 'x1', endpoint: '/api/chat', model: 'qwen2.5:3b', stream: false, messageCount: 1, tools: [], toolResults: [] },
    { ...H(210), kind: 'http-response', dir: 's2c', exchange: 'x1', status: 200, headers: { 'content-type': 'application/json; charset=utf-8' }, ttfbMs: 200 },
    { ...H(215), kind: 'llm-response', dir: 's2c', exchange: 'x1', endpoint: '/api/chat', model: 'qwen2.5:3b', status: 200, content: 'Sunny.', toolCalls: [], usage: { promptTokens: 10, completionTokens: 2 }, durationMs: 205 },
    { ...H(215), kind: 'http-end', exchange: 'x1', method: 'POST', path: '/api/chat?debug=1', status: 200, outcome: 'complete', reqBytes: ollamaBody.length, resBytes: ollamaReply.length, durationMs: 207, body: ollamaReply },
    // An upstream that was not there: no response record, a 502-less failure.
    { ...H(300), kind: 'http-request', dir: 'c2s', exchange: 'x2', method: 'GET', path: '/api/tags', headers: { host: '127.0.0.1:11434' }, bodyBytes: 0 },
    { ...H(305), kind: 'http-end', exchange: 'x2', method: 'GET', path: '/api/tags', outcome: 'upstream-unreachable', reqBytes: 0, resBytes: 0, durationMs: 5, error: { name: 'Error', code: 'ECONNREFUSED', message: 'connect ECONNREFUSED' } },
    // stdio MCP: an answered call, a JSON-RPC error, a tool error, and a request never answered.
    { ...W(400), kind: 'request', dir: 'c2s', id: 1, method: 'tools/call', tool: 'get_weather', bytes: 60, raw: '{"jsonrpc":"2.0","id":1,"method":"tools/call","params":{"name":"get_weather","arguments":{"city":"Paris"}}}' },
    { ...W(430), kind: 'response', dir: 's2c', id: 1, method: 'tools/call', tool: 'get_weather', requestSeq: seq - 2, latencyMs: 30, bytes: 70, raw: '{"jsonrpc":"2.0","id":1,"result":{"content":[{"type":"text","text":"Sunny"}]}}' },
    { ...W(500), kind: 'request', dir: 'c2s', id: 2, method: 'resources/read', bytes: 40, raw: '{"jsonrpc":"2.0","id":2,"method":"resources/read","params":{"uri":"file:///x"}}' },
    { ...W(502), kind: 'response', dir: 's2c', id: 2, method: 'resources/read', requestSeq: seq - 2, latencyMs: 2, bytes: 50, error: { code: -32002, message: 'Resource not found' }, raw: '{"jsonrpc":"2.0","id":2,"error":{"code":-32002,"message":"Resource not found"}}' },
    { ...W(600), kind: 'request', dir: 'c2s', id: 3, method: 'tools/call', tool: 'get weather/2', bytes: 40, raw: '{"jsonrpc":"2.0","id":3,"method":"tools/call","params":{"name":"get weather/2"}}' },
    { ...W(610), kind: 'response', dir: 's2c', id: 3, method: 'tools/call', tool: 'get weather/2', requestSeq: seq - 2, latencyMs: 10, isError: true, bytes: 50, raw: '{"jsonrpc":"2.0","id":3,"result":{"content":[],"isError":true}}' },
    { ...W(700), kind: 'request', dir: 'c2s', id: 4, method: 'ping', bytes: 30, raw: '{"jsonrpc":"2.0","id":4,"method":"ping"}' },
    { ...W(900), kind: 'pending', dir: 'c2s', id: 4, method: 'ping', requestSeq: seq - 2, ageMs: 200 },
  ] as LogRecord[];
}

describe('buildHar', () => {
  const har = buildHar(records());
  const entries = har.log.entries;

  it('has the HAR 1.2 structure', () => {
    expect(harProblems(har)).toEqual([]);
    expect(har.log.version).toBe('1.2');
    expect(har.log.creator.name).toBe('mcptap');
    expect(entries).toHaveLength(6);
  });

  it('keeps an HTTP exchange as it was: URL on the target, headers, bodies, status, timings', () => {
    const e = entries[0]!;
    expect(e.request.method).toBe('POST');
    expect(e.request.url).toBe('http://127.0.0.1:11435/api/chat?debug=1');
    expect(e.request.queryString).toEqual([{ name: 'debug', value: '1' }]);
    expect(e.request.headers).toContainEqual({ name: 'authorization', value: '[redacted]' });
    expect(e.request.headers.filter((h) => h.name === 'accept').map((h) => h.value)).toEqual(['a', 'b']);
    expect(e.request.postData).toEqual({ mimeType: 'application/json', text: ollamaBody });
    expect(e.response.status).toBe(200);
    expect(e.response.statusText).toBe('OK');
    expect(e.response.content).toEqual({ size: ollamaReply.length, mimeType: 'application/json; charset=utf-8', text: ollamaReply });
    // Started 207 ms before the end (T0+8), request ended at T0+10, headers 200 ms later, end 5 ms after them.
    expect(e.startedDateTime).toBe(new Date(T0 + 8).toISOString());
    expect(e.timings).toMatchObject({ send: 2, wait: 200, receive: 5 });
    expect(e.time).toBe(207);
    expect(e._llm).toMatchObject({ model: 'qwen2.5:3b', content: 'Sunny.', usage: { promptTokens: 10, completionTokens: 2 } });
  });

  it('marks an exchange that failed: status 0, the outcome, and why', () => {
    const e = entries[1]!;
    expect(e.response.status).toBe(0);
    expect(e.response.statusText).toBe('upstream-unreachable');
    expect(e.comment).toContain('connect ECONNREFUSED');
    expect(e._mcptap).toMatchObject({ outcome: 'upstream-unreachable' });
  });

  it('maps a stdio MCP call to one entry with the documented URL, body, status and wait', () => {
    const [call, error, toolError, pending] = entries.slice(2);
    expect(call!.request.url).toBe('mcp+stdio://weather/tools/call?name=get_weather');
    expect(call!.request.postData?.text).toContain('"city":"Paris"');
    expect(call!.response.status).toBe(200);
    expect(call!.response.content.text).toContain('Sunny');
    expect(call!.timings.wait).toBe(30);
    expect(call!.time).toBe(30);
    expect(error!.response.status).toBe(500);
    expect(error!.response.statusText).toBe('JSON-RPC error -32002: Resource not found');
    expect(toolError!.request.url).toBe('mcp+stdio://weather/tools/call?name=get%20weather%2F2');
    expect(toolError!.response.status).toBe(200);
    expect(toolError!.response.statusText).toBe('Tool error');
    expect(pending!.response.status).toBe(0);
    expect(pending!.comment).toContain('200 ms');
  });

  it('writes JSON a reader can parse back', () => {
    expect(JSON.parse(formatHar(records()))).toEqual(JSON.parse(JSON.stringify(har)));
  });
});

describe('the HAR 1.2 checker', () => {
  it('finds what a broken archive lacks', () => {
    const good = buildHar(records());
    const broken = JSON.parse(JSON.stringify(good)) as { log: { version: string; entries: Record<string, unknown>[] } };
    broken.log.version = '2.0';
    delete (broken.log.entries[0]!.request as Record<string, unknown>).headers;
    (broken.log.entries[1]!.timings as Record<string, number>).wait = -1;
    broken.log.entries[2]!.extra = 1;
    (broken.log.entries[3]!.request as Record<string, unknown>).url = 'not a url';
    expect(harProblems(broken)).toEqual([
      'log.version: must be "1.2"',
      'log.entries[0].request.headers: must be an array',
      'log.entries[1].timings.wait: must be a number ≥ 0',
      'log.entries[1].time: must equal the sum of its timings (0)',
      'log.entries[2].extra: is not a HAR field (custom fields must start with _)',
      'log.entries[3].request.url: must be an absolute URL',
    ]);
  });
});

describe('HarBuilder on a flood', () => {
  // 20,000 stdio calls within 200 ms, each answered 1 ms later: a flood the archive must not hold to its end.
  function flood(): LogRecord[] {
    seq = 0;
    const out: LogRecord[] = [];
    for (let i = 0; i < 20_000; i++) {
      const t = i / 100;
      out.push({ ...base('cat-1', 'stdio', 'cat', t), kind: 'request', dir: 'c2s', id: i, method: 'ping', bytes: 40, raw: `{"jsonrpc":"2.0","id":${i},"method":"ping"}` } as LogRecord);
      out.push({ ...base('cat-1', 'stdio', 'cat', t + 1), kind: 'response', dir: 's2c', id: i, method: 'ping', requestSeq: seq - 2, latencyMs: 1, bytes: 36, raw: `{"jsonrpc":"2.0","id":${i},"result":{}}` } as LogRecord);
    }
    return out.sort((a, b) => a.time - b.time);
  }

  it('hands stdio entries on as they are made, in start order, the same archive as the whole-log one', () => {
    const records = flood();
    const builder = new HarBuilder();
    const out = [];
    let early = 0;
    for (const r of records) {
      const entries = builder.push(r);
      early += entries.length;
      out.push(...entries);
    }
    out.push(...builder.end());
    expect(early).toBeGreaterThan(15_000);
    expect(out).toEqual(buildHar(records).log.entries);
  });

  it('with an HTTP tap in the logs, waits the minute an exchange may start before its record', () => {
    const records = [{ ...base('proxy-1', 'http', 'ollama', -5), kind: 'lifecycle', event: 'listen', target: 'http://127.0.0.1:11435', listen: 'http://127.0.0.1:11434' } as LogRecord, ...flood()];
    const builder = new HarBuilder();
    let early = 0;
    for (const r of records) early += builder.push(r).length;
    expect(early).toBe(0);
    expect(builder.end()).toHaveLength(20_000);
  });
});
