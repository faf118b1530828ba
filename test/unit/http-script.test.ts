import { describe, expect, test } from 'vitest';
import { buildHttpExchanges, HttpMatcher, IdTable, planChunks, planExchange, replayHeaders, rewriteRpcIds, type RecordedExchange } from '../../src/replay/http-script.js';
import type { LogRecord } from '../../src/log/schema.js';

let seq = 0;
const rec = (kind: string, extra: Record<string, unknown>): { record: LogRecord; file: string } => ({
  record: { v: 1, time: 1000 + seq, seq: seq++, session: 's', channel: 'ollama', label: 'l', msg: '', kind, ...extra } as LogRecord,
  file: 'a.ndjson',
});

/** The three records of one exchange. */
function exchange(id: string, method: string, path: string, body: string | undefined, status: number, resBody: string, extra: Record<string, unknown> = {}) {
  return [
    rec('http-request', { dir: 'c2s', exchange: id, method, path, headers: {}, bodyBytes: body?.length ?? 0, ...(body !== undefined ? { body } : {}) }),
    rec('http-response', { dir: 's2c', exchange: id, status, headers: { 'content-type': 'application/json', 'content-length': '99' }, ttfbMs: 3 }),
    rec('http-end', { exchange: id, method, path, status, outcome: 'complete', reqBytes: 0, resBytes: resBody.length, durationMs: 5, body: resBody, ...extra }),
  ];
}

describe('buildHttpExchanges', () => {
  test('joins request, response and end by exchange id, in request order; incomplete exchanges and WebSocket upgrades are left out', () => {
    seq = 0;
    const records = [
      ...exchange('x1', 'POST', '/api/chat', '{"a":1}', 200, 'one'),
      rec('http-request', { dir: 'c2s', exchange: 'x2', method: 'GET', path: '/never-ended', headers: {}, bodyBytes: 0 }),
      ...exchange('x3', 'GET', '/api/tags', undefined, 200, 'two', { chunks: [[0, 3]] }),
      ...exchange('x4', 'GET', '/ws', undefined, 101, '', { outcome: 'upgraded' }),
    ];
    const built = buildHttpExchanges(records);
    expect(built.map((e) => [e.ref, e.method, e.path, e.status, e.ttfbMs, e.body.toString(), e.chunks])).toEqual([
      ['a.ndjson#x1', 'POST', '/api/chat', 200, 3, 'one', undefined],
      ['a.ndjson#x3', 'GET', '/api/tags', 200, 3, 'two', [[0, 3]]],
    ]);
  });

  test('reads base64 bodies and JSON-RPC ids', () => {
    seq = 0;
    const records = exchange('x1', 'POST', '/mcp', '{"jsonrpc":"2.0","id":4,"method":"tools/call","params":{"_meta":{"progressToken":4}}}', 200, '', {
      body: Buffer.from([0xff, 0x00]).toString('base64'),
      bodyEncoding: 'base64',
    });
    const [e] = buildHttpExchanges(records);
    expect([...e!.body]).toEqual([0xff, 0x00]);
    expect([e!.rpcId, e!.rpcMethod, e!.progressToken]).toEqual([4, 'tools/call', 4]);
  });
});

describe('event streams', () => {
  test('each SSE event waits for the client message recorded just before it (a sampling answer POSTed meanwhile)', () => {
    seq = 0;
    const stream = 'event: message\ndata: {"jsonrpc":"2.0","id":1,"method":"sampling/createMessage"}\n\nevent: message\ndata: {"jsonrpc":"2.0","id":5,"result":{}}\n\n';
    const records = [
      rec('http-request', { dir: 'c2s', exchange: 'x1', method: 'POST', path: '/mcp', headers: {}, bodyBytes: 1, body: '{"jsonrpc":"2.0","id":5,"method":"tools/call"}' }),
      rec('request', { dir: 'c2s', exchange: 'x1', id: 5, method: 'tools/call', raw: '{}', bytes: 2 }),
      rec('http-response', { dir: 's2c', exchange: 'x1', status: 200, headers: { 'content-type': 'text/event-stream' }, ttfbMs: 1 }),
      rec('request', { dir: 's2c', exchange: 'x1', id: 1, method: 'sampling/createMessage', raw: '{}', bytes: 2 }),
      rec('http-request', { dir: 'c2s', exchange: 'x2', method: 'POST', path: '/mcp', headers: {}, bodyBytes: 1, body: '{"jsonrpc":"2.0","id":1,"result":{}}' }),
      rec('response', { dir: 'c2s', exchange: 'x2', id: 1, raw: '{}', bytes: 2 }),
      rec('http-response', { dir: 's2c', exchange: 'x2', status: 202, headers: {}, ttfbMs: 1 }),
      rec('http-end', { exchange: 'x2', method: 'POST', path: '/mcp', status: 202, outcome: 'complete', reqBytes: 1, resBytes: 0, durationMs: 1 }),
      rec('response', { dir: 's2c', exchange: 'x1', id: 5, raw: '{}', bytes: 2 }),
      rec('http-end', { exchange: 'x1', method: 'POST', path: '/mcp', status: 200, outcome: 'complete', reqBytes: 1, resBytes: stream.length, durationMs: 9, body: stream, chunks: [[0, stream.length]] }),
    ];
    const [x1, x2] = buildHttpExchanges(records);
    expect(x2!.events).toBeUndefined();
    // The sampling request goes out at once; the result only once exchange 1 (the client's answer) has arrived.
    expect(planExchange(x1!, { noDelay: true }).map((p) => [p.gate, p.bytes.toString().split('\n')[1]])).toEqual([
      [undefined, 'data: {"jsonrpc":"2.0","id":1,"method":"sampling/createMessage"}'],
      [1, 'data: {"jsonrpc":"2.0","id":5,"result":{}}'],
    ]);
    // Recorded times come from the records (ms after the headers), divided by speed.
    expect(planExchange(x1!, { speed: 2 }).map((p) => p.atMs)).toEqual([0.5, 3]);
  });
});

describe('HttpMatcher', () => {
  let index = 0;
  const ex = (path: string, body: string | undefined, answer: string, rpc?: { id: number; method: string }): RecordedExchange => ({
    index: index++,
    ref: answer,
    method: 'POST',
    path,
    ...(body !== undefined ? { requestBody: body } : {}),
    status: 200,
    headers: {},
    ttfbMs: 0,
    body: Buffer.from(answer),
    bodyTruncated: false,
    outcome: 'complete',
    ...(rpc ? { rpcId: rpc.id, rpcMethod: rpc.method } : {}),
  });

  test('repeats are served in recorded order, then the last one again', () => {
    const m = new HttpMatcher([ex('/api/chat', '{"q":1}', 'first'), ex('/api/chat', '{"q":1}', 'second'), ex('/api/chat', '{"q":2}', 'other')]);
    const ask = (body: string) => (m.pick({ method: 'POST', path: '/api/chat', body }) as RecordedExchange).ref;
    expect([ask('{"q":1}'), ask('{"q":2}'), ask('{"q":1}'), ask('{"q":1}')]).toEqual(['first', 'other', 'second', 'second']);
  });

  test('bodies match as canonical JSON; --ignore fields are left out', () => {
    const m = new HttpMatcher([ex('/v1/chat/completions', '{"model":"m","user":"u1","n":1}', 'ok')], ['user']);
    expect(m.pick({ method: 'POST', path: '/v1/chat/completions', body: '{"n":1,"user":"u2","model":"m"}' })).toMatchObject({ ref: 'ok' });
  });

  test('a miss says what was asked and whether the path was recorded at all', () => {
    const m = new HttpMatcher([ex('/api/chat', '{"q":1}', 'x')]);
    expect(m.pick({ method: 'POST', path: '/api/chat', body: '{"q":9}' })).toEqual({
      miss: true,
      message: 'POST /api/chat with this body is not in the capture: the recorded requests to /api/chat had other bodies (--ignore FIELD leaves out fields such as timestamps).',
    });
    expect(m.pick({ method: 'GET', path: '/api/tags' })).toEqual({ miss: true, message: 'GET /api/tags is not in the capture: nothing was recorded for that method and path.' });
  });

  test('JSON-RPC: ids never count, a client answer matches by id, a changed request falls back to its method', () => {
    const init = '{"jsonrpc":"2.0","id":0,"method":"initialize","params":{"clientInfo":{"version":"1"}}}';
    const answer = '{"jsonrpc":"2.0","id":3,"result":{"roots":[]}}';
    const m = new HttpMatcher([ex('/mcp', init, 'init', { id: 0, method: 'initialize' }), ex('/mcp', answer, 'roots-answer')]);
    expect(m.pick({ method: 'POST', path: '/mcp', body: '{"jsonrpc":"2.0","id":3,"result":{"roots":[{"uri":"file:///x"}]}}' })).toMatchObject({ ref: 'roots-answer' });
    expect(m.pick({ method: 'POST', path: '/mcp', body: '{"jsonrpc":"2.0","id":"z","method":"initialize","params":{"clientInfo":{"version":"2"}}}' })).toMatchObject({
      ref: 'init',
    });
    expect(m.pick({ method: 'POST', path: '/mcp', body: '{"jsonrpc":"2.0","id":9,"method":"tools/list"}' })).toMatchObject({
      miss: true,
      message: 'POST /mcp (JSON-RPC tools/list) with this body is not in the capture: the recorded requests to /mcp had other bodies (--ignore FIELD leaves out fields such as timestamps).',
    });
  });
});

describe('planChunks', () => {
  const body = Buffer.from('aaabbbbcc');
  test('cuts along recorded boundaries with recorded times, divided by speed', () => {
    expect(planChunks(body, [[0, 3], [10, 4], [30, 2]], { speed: 2 }).map((p) => [p.atMs, p.bytes.toString()])).toEqual([
      [0, 'aaa'],
      [5, 'bbbb'],
      [15, 'cc'],
    ]);
  });
  test('noDelay sends every piece at 0; no boundaries sends the body whole', () => {
    expect(planChunks(body, [[0, 3], [10, 6]], { noDelay: true }).map((p) => p.atMs)).toEqual([0, 0]);
    expect(planChunks(body, undefined).map((p) => p.bytes.toString())).toEqual(['aaabbbbcc']);
    expect(planChunks(Buffer.alloc(0), undefined)).toEqual([]);
  });
  test('boundaries that do not add up (a body logged decompressed) are scaled to the body', () => {
    expect(planChunks(Buffer.from('0123456789'), [[0, 2], [5, 3]]).map((p) => p.bytes.toString())).toEqual(['0123', '456789']);
  });
});

describe('rewriteRpcIds', () => {
  test('a JSON body: the response id becomes the live one', () => {
    const out = rewriteRpcIds(Buffer.from('{"jsonrpc":"2.0","id":1,"result":{}}'), { id: 1 }, { id: 'live-1' }, false);
    expect(JSON.parse(out.toString())).toEqual({ jsonrpc: '2.0', id: 'live-1', result: {} });
  });
  test('SSE: data lines of the response and of progress are rewritten, everything else kept byte for byte', () => {
    const piece = Buffer.from(
      'event: message\nid: ev-1\ndata: {"jsonrpc":"2.0","method":"notifications/progress","params":{"progressToken":7,"progress":1}}\n\n' +
        'event: message\ndata: {"jsonrpc":"2.0","id":7,"result":{"ok":true}}\n\n',
    );
    const out = rewriteRpcIds(piece, { id: 7, token: 7 }, { id: 12, token: 12 }, true).toString();
    expect(out).toBe(
      'event: message\nid: ev-1\ndata: {"jsonrpc":"2.0","method":"notifications/progress","params":{"progressToken":12,"progress":1}}\n\n' +
        'event: message\ndata: {"jsonrpc":"2.0","id":12,"result":{"ok":true}}\n\n',
    );
  });
  test('nothing to rewrite: the same buffer comes back', () => {
    const piece = Buffer.from('data: {"jsonrpc":"2.0","id":1,"result":{}}\n\n');
    expect(rewriteRpcIds(piece, { id: 1 }, { id: 1 }, true)).toBe(piece);
    // A server request on the stream keeps its own id.
    const request = Buffer.from('data: {"jsonrpc":"2.0","id":1,"method":"sampling/createMessage"}\n\n');
    expect(rewriteRpcIds(request, { id: 1 }, { id: 5 }, true)).toBe(request);
  });
});

describe('IdTable', () => {
  test('a response on another exchange (the legacy SSE GET stream) gets the live id of its request, per session', () => {
    const table = new IdTable();
    table.set('s1', { id: 3, token: 3 }, { id: 'a', token: 'ta' });
    table.set('s2', { id: 3 }, { id: 'b' });
    const event = Buffer.from('event: message\ndata: {"jsonrpc":"2.0","id":3,"result":{}}\n\n');
    expect(table.rewrite(event, 's1', true).toString()).toBe('event: message\ndata: {"jsonrpc":"2.0","id":"a","result":{}}\n\n');
    expect(table.rewrite(event, 's2', true).toString()).toBe('event: message\ndata: {"jsonrpc":"2.0","id":"b","result":{}}\n\n');
    // The string id "3" is not the number 3.
    const other = Buffer.from('data: {"jsonrpc":"2.0","id":"3","result":{}}\n\n');
    expect(table.rewrite(other, 's1', true)).toBe(other);
  });
});

describe('replayHeaders', () => {
  test('drops length, encoding and hop-by-hop headers; keeps the rest (session ids included)', () => {
    expect(
      replayHeaders({ 'content-type': 'text/event-stream', 'content-length': '10', 'content-encoding': 'gzip', connection: 'keep-alive', 'mcp-session-id': 'abc' }),
    ).toEqual({ 'content-type': 'text/event-stream', 'mcp-session-id': 'abc' });
  });
});

describe('parseListen', () => {
  test('PORT, HOST:PORT and [IPv6]:PORT; loopback by default', async () => {
    const { parseListen } = await import('../../src/replay/http-server.js');
    expect(parseListen('11434')).toEqual({ host: '127.0.0.1', port: 11434 });
    expect(parseListen('0.0.0.0:8080')).toEqual({ host: '0.0.0.0', port: 8080 });
    expect(parseListen('[::1]:0')).toEqual({ host: '::1', port: 0 });
    expect(() => parseListen('localhost')).toThrow('--listen takes [HOST:]PORT, for example 11434 or 127.0.0.1:8080, not "localhost".');
    expect(() => parseListen('70000')).toThrow(/--listen takes/);
  });
});
