/**
 * HttpObserver and HttpExchange fed literal HTTP pieces, in the order the proxy sees them, with an array for a
 * sink: which records come out, in which session, correlated across exchanges.
 */
import { describe, expect, it } from 'vitest';
import { HttpObserver, MAX_CHUNK_MARKS, type HttpExchange } from '../../src/session/http-exchange.js';
import type { RecordDraft } from '../../src/log/schema.js';

type Draft = RecordDraft & Record<string, unknown>;

function setup(chunks = true, maxBody = 1 << 20) {
  const records: Draft[] = [];
  let seq = 0;
  const observer = new HttpObserver({ sink: { write: (d) => (records.push({ ...d, seq } as Draft), seq++) }, session: 'proxy', maxBody, chunks });
  let clock = 1000;
  const t = (): [number, number] => [(clock += 1), clock];
  /** One whole exchange: request head + body, response head, body pieces, end. */
  const exchange = (
    method: string,
    path: string,
    reqHeaders: Record<string, string>,
    body: string,
    status: number,
    resHeaders: Record<string, string>,
    pieces: string[],
    end = true,
  ): HttpExchange => {
    const x = observer.begin({ method, path, headers: reqHeaders }, ...t());
    if (body) x.requestData(Buffer.from(body));
    x.requestEnd(...t());
    x.responseHead(status, resHeaders, ...t());
    for (const piece of pieces) x.responseData(Buffer.from(piece), ...t());
    if (end) x.responseEnd(...t());
    return x;
  };
  return { records, observer, exchange, t };
}

const SSE = { 'content-type': 'text/event-stream' };
const JSON_TYPE = { 'content-type': 'application/json' };

describe('HttpExchange: legacy MCP over SSE', () => {
  it('opens the session at the endpoint event and matches a server request on the stream with the answer POSTed later', () => {
    const { records, exchange, t } = setup();
    const stream = exchange('GET', '/sse', { accept: 'text/event-stream' }, '', 200, SSE, ['event: endpoint\ndata: /message?sessionId=s1\n\n'], false);
    exchange('POST', '/message?sessionId=s1', JSON_TYPE, '{"jsonrpc":"2.0","id":0,"method":"tools/call","params":{"name":"trigger-sampling-request"}}', 202, {}, ['Accepted']);
    stream.responseData(Buffer.from('event: message\ndata: {"jsonrpc":"2.0","id":0,"method":"sampling/createMessage","params":{}}\n\n'), ...t());
    exchange('POST', '/message?sessionId=s1', JSON_TYPE, '{"jsonrpc":"2.0","id":0,"result":{"content":{"type":"text","text":"blue"}}}', 202, {}, ['Accepted']);
    stream.responseData(Buffer.from('event: message\ndata: {"jsonrpc":"2.0","id":0,"result":{"content":[]}}\n\n: ping\n\n'), ...t());
    stream.fail('client-aborted', undefined, ...t());

    const mcp = records.filter((r) => ['request', 'response', 'notification', 'invalid'].includes(r.kind as string));
    expect(mcp.map((r) => `${r.kind} ${r.dir} ${r.method ?? ''} ${r.exchange}`)).toEqual([
      'request c2s tools/call x2',
      'request s2c sampling/createMessage x1',
      'response c2s sampling/createMessage x3',
      'response s2c tools/call x1',
    ]);
    // One MCP session, not the proxy's, on the legacy channel.
    expect(new Set(mcp.map((r) => r.session)).size).toBe(1);
    expect(mcp[0]!.session).not.toBe('proxy');
    for (const r of mcp) expect(r.channel).toBe('mcp-sse');
    expect(mcp[2]!.requestSeq).toBe(mcp[1]!.seq);
    expect(mcp[3]!.requestSeq).toBe(mcp[0]!.seq);
    // The endpoint event and the keep-alive are logged as sse records.
    const sse = records.filter((r) => r.kind === 'sse');
    expect(sse.map((r) => r.event ?? `comment:${String(r.comment)}`)).toEqual(['endpoint', 'comment:ping']);
    // The stream closing ends the session; its http-end says the client left.
    expect(records.at(-1)).toMatchObject({ kind: 'http-end', exchange: 'x1', outcome: 'client-aborted' });
  });
});

describe('HttpExchange: MCP Streamable HTTP', () => {
  it('registers the session id the initialize response assigns, and finds the session again by it', () => {
    const { records, exchange } = setup();
    exchange(
      'POST',
      '/mcp',
      { ...JSON_TYPE, accept: 'application/json, text/event-stream' },
      '{"jsonrpc":"2.0","id":0,"method":"initialize","params":{"protocolVersion":"2025-11-25","capabilities":{},"clientInfo":{"name":"c","version":"1"}}}',
      200,
      { ...SSE, 'mcp-session-id': 'abc' },
      ['id: e1\nevent: message\ndata: {"jsonrpc":"2.0","id":0,"result":{"protocolVersion":"2025-11-25","capabilities":{},"serverInfo":{"name":"s","version":"2"}}}\n\n'],
    );
    exchange('POST', '/mcp', { ...JSON_TYPE, 'mcp-session-id': 'abc' }, '{"jsonrpc":"2.0","method":"notifications/initialized"}', 202, {}, []);
    exchange('POST', '/mcp', { ...JSON_TYPE, 'mcp-session-id': 'abc' }, '{"jsonrpc":"2.0","id":1,"method":"tools/list"}', 200, JSON_TYPE, ['{"jsonrpc":"2.0","id":1,', '"result":{"tools":[]}}']);
    exchange('DELETE', '/mcp', { 'mcp-session-id': 'abc' }, '', 200, {}, []);
    const mcp = records.filter((r) => ['request', 'response', 'notification'].includes(r.kind as string));
    expect(mcp.map((r) => `${r.kind} ${r.method}`)).toEqual(['request initialize', 'response initialize', 'notification notifications/initialized', 'request tools/list', 'response tools/list']);
    expect(new Set(mcp.map((r) => r.session)).size).toBe(1);
    expect(mcp[1]!.sseId).toBe('e1');
    expect(mcp[4]!.requestSeq).toBe(mcp[3]!.seq);
    // HTTP records of the session's exchanges carry its session too.
    const http = records.filter((r) => r.kind === 'http-request');
    expect(new Set(http.map((r) => r.session))).toEqual(new Set([mcp[0]!.session]));
    expect(records.find((r) => r.kind === 'http-response' && r.status === 202)!.msg).toContain('accepted, no body');
  });

  it('writes pending records for requests a session never answered when it is deleted', () => {
    const { records, exchange } = setup();
    exchange('POST', '/mcp', { ...JSON_TYPE, 'mcp-session-id': 'zz' }, '{"jsonrpc":"2.0","id":5,"method":"tools/call","params":{"name":"slow"}}', 200, SSE, [': keepalive\n\n'], false);
    exchange('DELETE', '/mcp', { 'mcp-session-id': 'zz' }, '', 200, {}, []);
    expect(records.find((r) => r.kind === 'pending')).toMatchObject({ method: 'tools/call', tool: 'slow', id: 5 });
  });

  it('keeps 401 with its WWW-Authenticate visible, and redacts the bearer token', () => {
    const { records, exchange } = setup();
    exchange('POST', '/mcp', { ...JSON_TYPE, authorization: 'Bearer sk-live-123' }, '{"jsonrpc":"2.0","id":0,"method":"initialize","params":{}}', 401, { 'www-authenticate': 'Bearer resource_metadata="http://x/.well-known/oauth-protected-resource"' }, []);
    const request = records.find((r) => r.kind === 'http-request')!;
    expect((request.headers as Record<string, string>).authorization).toBe('[redacted]');
    const response = records.find((r) => r.kind === 'http-response')!;
    expect(response.msg).toContain('WWW-Authenticate: Bearer resource_metadata=');
    expect(response.level).toBe(40);
  });
});

describe('HttpExchange: LLM calls', () => {
  it('turns an Ollama NDJSON stream cut anywhere into chunks and one reassembled reply', () => {
    const { records, exchange } = setup();
    const body = '{"model":"m","message":{"role":"assistant","content":"Hel"},"done":false}\n{"model":"m","message":{"role":"assistant","content":"lo"},"done":false}\n{"model":"m","message":{"role":"assistant","content":""},"done":true,"done_reason":"stop","eval_count":2,"eval_duration":1000000}\n';
    exchange('POST', '/api/chat', JSON_TYPE, '{"model":"m","messages":[{"role":"user","content":"hi"}]}', 200, { 'content-type': 'application/x-ndjson' }, [body.slice(0, 50), body.slice(50, 51), body.slice(51)]);
    expect(records.filter((r) => r.kind === 'llm-chunk').map((r) => r.delta ?? '')).toEqual(['Hel', 'lo', '']);
    const reply = records.find((r) => r.kind === 'llm-response')!;
    expect(reply).toMatchObject({ channel: 'ollama', content: 'Hello', finishReason: 'stop', chunkCount: 3, usage: { completionTokens: 2, tokensPerSecond: 2000 } });
    const end = records.find((r) => r.kind === 'http-end')!;
    expect(end.chunks).toHaveLength(3);
    expect(end.resBytes).toBe(Buffer.byteLength(body));
  });

  it('leaves out chunk records with chunks off, and logs an error status as llm-error', () => {
    const { records, exchange } = setup(false);
    exchange('POST', '/v1/chat/completions', JSON_TYPE, '{"model":"gpt","stream":true,"messages":[]}', 200, SSE, ['data: {"choices":[{"index":0,"delta":{"content":"ok"}}]}\n\n', 'data: [DONE]\n\n']);
    exchange('POST', '/v1/chat/completions', JSON_TYPE, '{"model":"gpt","messages":[]}', 429, JSON_TYPE, ['{"error":{"message":"Rate limit reached","type":"requests"}}']);
    expect(records.filter((r) => r.kind === 'llm-chunk')).toEqual([]);
    expect(records.find((r) => r.kind === 'llm-response')).toMatchObject({ content: 'ok', chunkCount: 2 });
    expect(records.find((r) => r.kind === 'llm-error')).toMatchObject({ phase: 'before-stream', status: 429, error: 'Rate limit reached' });
  });

  it('records plain HTTP as plain HTTP', () => {
    const { records, exchange } = setup();
    exchange('GET', '/health', {}, '', 200, { 'content-type': 'text/plain' }, ['ok']);
    expect(records.map((r) => `${r.kind} ${r.channel}`)).toEqual(['http-request http', 'http-response http', 'http-end http']);
  });
});

describe('HttpExchange: compressed request bodies', () => {
  it('logs and decodes the decoded copy of a gzip request body', async () => {
    const { gzipSync } = await import('node:zlib');
    const { records, observer, t } = setup();
    const body = gzipSync('{"jsonrpc":"2.0","id":3,"method":"tools/list"}');
    const x = observer.begin({ method: 'POST', path: '/mcp', headers: { 'content-type': 'application/json', 'content-encoding': 'gzip', 'mcp-session-id': 'g' } }, ...t());
    x.requestData(body.subarray(0, 5));
    x.requestData(body.subarray(5));
    x.requestEnd(...t());
    expect(records.find((r) => r.kind === 'http-request')).toMatchObject({ body: '{"jsonrpc":"2.0","id":3,"method":"tools/list"}', bodyBytes: body.length });
    expect(records.find((r) => r.kind === 'request')).toMatchObject({ method: 'tools/list', id: 3 });
  });
});

describe('HttpExchange: a server without sessions', () => {
  it('keeps initialize and the later traffic in one session when no Mcp-Session-Id is ever assigned', () => {
    const { records, exchange } = setup();
    exchange('POST', '/mcp', JSON_TYPE, '{"jsonrpc":"2.0","id":0,"method":"initialize","params":{}}', 200, JSON_TYPE, ['{"jsonrpc":"2.0","id":0,"result":{}}']);
    exchange('POST', '/mcp', JSON_TYPE, '{"jsonrpc":"2.0","id":1,"method":"tools/list"}', 200, JSON_TYPE, ['{"jsonrpc":"2.0","id":1,"result":{"tools":[]}}']);
    const mcp = records.filter((r) => r.kind === 'request' || r.kind === 'response');
    expect(mcp).toHaveLength(4);
    expect(new Set(mcp.map((r) => r.session)).size).toBe(1);
    expect(mcp[3]!.requestSeq).toBe(mcp[2]!.seq);
  });
});

describe('HttpExchange: frames over --max-body', () => {
  it('correlates a response cut at the cap from its end, where the SDK writes the id (JSON body and SSE event)', () => {
    const { records, exchange } = setup(true, 200);
    const big = (id: number): string => `{"result":{"content":[{"type":"text","text":"${'w'.repeat(1000)}"}]},"jsonrpc":"2.0","id":${id}}`;
    exchange('POST', '/mcp', { ...JSON_TYPE, 'mcp-session-id': 'm' }, '{"jsonrpc":"2.0","id":1,"method":"tools/call","params":{"name":"a"}}', 200, JSON_TYPE, [big(1)]);
    exchange('POST', '/mcp', { ...JSON_TYPE, 'mcp-session-id': 'm' }, '{"jsonrpc":"2.0","id":2,"method":"tools/call","params":{"name":"b"}}', 200, SSE, [`event: message\ndata: ${big(2)}\n\n`]);
    const responses = records.filter((r) => r.kind === 'response');
    expect(responses.map((r) => [r.id, r.tool, r.truncated, r.bytes])).toEqual([
      [1, 'a', true, big(1).length],
      [2, 'b', true, big(2).length],
    ]);
    for (const r of responses) expect(r.requestSeq).toBeTypeOf('number');
  });
});

describe('HttpObserver: many sessions', () => {
  it('ends the session idle longest once it follows MAX_MCP_SESSIONS, writing its open requests as pending', async () => {
    const { MAX_MCP_SESSIONS } = await import('../../src/session/http-exchange.js');
    const { records, exchange } = setup();
    exchange('POST', '/mcp', { ...JSON_TYPE, 'mcp-session-id': 'first' }, '{"jsonrpc":"2.0","id":1,"method":"tools/call","params":{"name":"slow"}}', 200, SSE, [], false);
    for (let i = 1; i < MAX_MCP_SESSIONS; i++) exchange('POST', '/mcp', { ...JSON_TYPE, 'mcp-session-id': `s${i}` }, '{"jsonrpc":"2.0","method":"notifications/initialized"}', 202, {}, []);
    expect(records.filter((r) => r.kind === 'pending')).toEqual([]);
    exchange('POST', '/mcp', { ...JSON_TYPE, 'mcp-session-id': 'one-too-many' }, '{"jsonrpc":"2.0","method":"notifications/initialized"}', 202, {}, []);
    expect(records.filter((r) => r.kind === 'pending').map((r) => r.tool)).toEqual(['slow']);
  });
});

describe('HttpExchange: model calls bigger than --max-body', () => {
  it('still summarizes a request whose body the log cuts (a chat with an image)', () => {
    const { records, exchange } = setup(true, 100);
    const request = JSON.stringify({ model: 'llava', stream: false, messages: [{ role: 'user', content: 'what is in this picture?', images: ['A'.repeat(5000)] }], tools: [{ type: 'function', function: { name: 'zoom' } }] });
    exchange('POST', '/api/chat', JSON_TYPE, request, 200, JSON_TYPE, ['{"model":"llava","message":{"role":"assistant","content":"a cat"},"done":true}']);
    expect(records.find((r) => r.kind === 'http-request')).toMatchObject({ bodyTruncated: true, bodyBytes: request.length });
    expect(records.find((r) => r.kind === 'llm-request')).toMatchObject({ model: 'llava', messageCount: 1, tools: ['zoom'], prompt: 'what is in this picture?' });
    expect(records.find((r) => r.kind === 'llm-response')).toMatchObject({ content: 'a cat' });
  });
});

describe('HttpExchange: chunk marks', () => {
  it('marks each chunk as [ms since the head, bytes] up to MAX_CHUNK_MARKS, the rest counted into the last', () => {
    const { records, exchange } = setup(false);
    const pieces = Array.from({ length: MAX_CHUNK_MARKS + 3 }, (_, i) => (i === 0 ? 'ab' : 'c'));
    exchange('GET', '/plain', {}, '', 200, { 'content-type': 'text/plain' }, pieces);
    const chunks = records.find((r) => r.kind === 'http-end')!.chunks as [number, number][];
    expect(chunks).toHaveLength(MAX_CHUNK_MARKS);
    expect(chunks[0]).toEqual([1, 2]);
    expect(chunks[1]).toEqual([2, 1]);
    expect(chunks.at(-1)![1]).toBe(4);
  });
});
