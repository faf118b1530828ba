import { readFileSync } from 'node:fs';
import fc from 'fast-check';
import { describe, expect, test } from 'vitest';
import { McpSession } from '../../src/session/mcp-session.js';
import { LineFramer } from '../../src/framing/lines.js';
import type { RecordDraft, RecordSink } from '../../src/log/schema.js';
import type { Direction, Frame } from '../../src/types.js';

type Rec = RecordDraft & Record<string, unknown>;

/** A sink that keeps records in an array and numbers them like the writer does. */
class ArraySink implements RecordSink {
  readonly records: Rec[] = [];
  write(draft: RecordDraft): number {
    this.records.push(draft as Rec);
    return this.records.length - 1;
  }
}

let clock = 0;
function frame(dir: Direction, text: string | Buffer, over: Partial<Frame> = {}): Frame {
  const bytes = typeof text === 'string' ? Buffer.from(text) : text;
  clock += 5;
  return { dir, bytes, size: bytes.length, truncated: false, time: 1_800_000_000_000 + clock, mono: clock, ...over };
}

function session(maxPending?: number) {
  const sink = new ArraySink();
  const mcp = new McpSession({ sink, stdio: true, ...(maxPending ? { maxPending } : {}) });
  return { sink, mcp };
}

describe('McpSession on the real Cline ↔ FastMCP weather capture', () => {
  const lines = readFileSync(new URL('../../fixtures/mcp-stdio/cline-weather.ndjson', import.meta.url), 'utf8')
    .split('\n')
    .filter(Boolean)
    .map((l) => JSON.parse(l) as { dir: Direction; line: string });
  const { sink, mcp } = session();
  // Through the real framer, line by line with its newline, as the stdio tap does.
  const framers = { c2s: new LineFramer({ dir: 'c2s', maxFrameBytes: 1 << 20 }), s2c: new LineFramer({ dir: 's2c', maxFrameBytes: 1 << 20 }) };
  lines.forEach(({ dir, line }, i) => {
    for (const f of framers[dir].push(Buffer.from(`${line}\n`), 1_800_000_000_000 + i * 10, i * 10)) mcp.observe(f);
  });
  mcp.end(1_800_000_001_000, 1000);
  const records = sink.records;

  test('one record per line, raw and bytes exact', () => {
    expect(records).toHaveLength(lines.length);
    records.forEach((r, i) => {
      expect(r.raw).toBe(lines[i]!.line);
      expect(r.bytes).toBe(Buffer.byteLength(lines[i]!.line));
      expect(r.dir).toBe(lines[i]!.dir);
    });
    expect(records.map((r) => r.kind)).toEqual([
      'request', 'response', 'notification', 'request', 'response', 'request', 'response', 'request', 'response', 'request', 'response', 'request', 'response',
    ]);
  });

  test('every response gets its method, latency and request seq; nothing is left pending', () => {
    const responses = records.filter((r) => r.kind === 'response');
    expect(responses.map((r) => r.method)).toEqual(['initialize', 'tools/list', 'resources/list', 'resources/templates/list', 'prompts/list', 'tools/call']);
    for (const r of responses) {
      expect(r.latencyMs).toBe(10);
      expect(records[r.requestSeq as number]!.id).toBe(r.id);
      expect(records[r.requestSeq as number]!.kind).toBe('request');
    }
    expect(records.some((r) => r.kind === 'pending')).toBe(false);
    expect(mcp.openRequests).toBe(0);
  });

  test('the handshake reads well', () => {
    expect(records[0]!.msg).toBe('Handshake: client Cline 3.82.0 offers protocol 2025-11-25 with no capabilities.');
    expect(records[1]!.msg).toBe(
      'Handshake: server weather 1.27.2 answers with protocol 2025-11-25; capabilities experimental, prompts, resources, tools (10 ms).',
    );
    expect(records[2]!.msg).toBe('Client confirms the handshake; the session is ready.');
    expect(mcp.handshake).toEqual({ client: 'Cline 3.82.0', offeredVersion: '2025-11-25', server: 'weather 1.27.2', agreedVersion: '2025-11-25' });
  });

  test('tools/list names the tools', () => {
    expect(records[4]!.msg).toBe('Server offers 2 tools: get_alerts, get_forecast (10 ms).');
  });

  test('empty lists say so', () => {
    expect(records[6]!.msg).toBe('Server lists 0 resources (10 ms).');
    expect(records[8]!.msg).toBe('Server lists 0 resource templates (10 ms).');
    expect(records[10]!.msg).toBe('Server lists 0 prompts (10 ms).');
  });

  test('tools/call get_forecast is annotated with tool, arguments, content and latency', () => {
    const call = records[11]!;
    expect(call).toMatchObject({ kind: 'request', method: 'tools/call', tool: 'get_forecast', id: 5 });
    expect(call.msg).toBe('Client calls tool get_forecast with {"latitude":40.7128,"longitude":-74.006}.');
    const result = records[12]!;
    expect(result).toMatchObject({ kind: 'response', method: 'tools/call', tool: 'get_forecast', id: 5, isError: false, latencyMs: 10, requestSeq: 11 });
    expect(result.msg).toBe('Tool get_forecast returned 1 text, structured content (10 ms).');
    expect(result.level).toBeUndefined();
  });
});

describe('McpSession: correlation and edge cases', () => {
  test('server-initiated requests are answered c2s; progress and cancellation link to their request', () => {
    const { sink, mcp } = session();
    mcp.observe(frame('c2s', '{"jsonrpc":"2.0","id":0,"method":"tools/call","params":{"name":"slow","arguments":{},"_meta":{"progressToken":"p0"}}}'));
    mcp.observe(frame('s2c', '{"jsonrpc":"2.0","id":0,"method":"sampling/createMessage","params":{"messages":[{}],"maxTokens":5}}'));
    mcp.observe(frame('s2c', '{"jsonrpc":"2.0","method":"notifications/progress","params":{"progressToken":"p0","progress":1,"total":4,"message":"warming up"}}'));
    mcp.observe(frame('c2s', '{"jsonrpc":"2.0","id":0,"result":{"role":"assistant","content":{"type":"text","text":"hi"},"model":"m1"}}'));
    mcp.observe(frame('c2s', '{"jsonrpc":"2.0","method":"notifications/cancelled","params":{"requestId":0,"reason":"user pressed stop"}}'));
    mcp.observe(frame('s2c', '{"jsonrpc":"2.0","id":0,"error":{"code":-32800,"message":"cancelled"}}'));
    const r = sink.records;
    expect(r[0]).toMatchObject({ kind: 'request', progressToken: 'p0', tool: 'slow' });
    expect(r[1]!.msg).toBe('Server asks the client\u2019s LLM for a completion (sampling): 1 message, at most 5 tokens.');
    expect(r[2]).toMatchObject({ kind: 'notification', relatedId: 0, relatedMethod: 'tools/call', requestSeq: 0, progressToken: 'p0' });
    expect(r[2]!.msg).toBe('Progress for tools/call slow #0: 1 of 4 \u2014 "warming up".');
    expect(r[3]).toMatchObject({ kind: 'response', dir: 'c2s', method: 'sampling/createMessage', requestSeq: 1, latencyMs: 10 });
    expect(r[3]!.msg).toBe('Client returns the LLM\u2019s completion from m1: "hi" (10 ms).');
    expect(r[4]).toMatchObject({ kind: 'notification', relatedId: 0, relatedMethod: 'tools/call', requestSeq: 0 });
    expect(r[4]!.msg).toBe('Client cancels request tools/call slow #0: user pressed stop.');
    expect(r[5]).toMatchObject({ kind: 'response', method: 'tools/call', error: { code: -32800 }, level: 40, latencyMs: 25 });
    expect(mcp.openRequests).toBe(0);
  });

  test('the same progress token used by both peers links each progress to the right request', () => {
    const { sink, mcp } = session();
    mcp.observe(frame('c2s', '{"jsonrpc":"2.0","id":1,"method":"tools/call","params":{"name":"slow","_meta":{"progressToken":1}}}'));
    mcp.observe(frame('s2c', '{"jsonrpc":"2.0","id":1,"method":"sampling/createMessage","params":{"messages":[],"_meta":{"progressToken":1}}}'));
    mcp.observe(frame('c2s', '{"jsonrpc":"2.0","method":"notifications/progress","params":{"progressToken":1,"progress":1}}'));
    mcp.observe(frame('s2c', '{"jsonrpc":"2.0","method":"notifications/progress","params":{"progressToken":1,"progress":2}}'));
    expect(sink.records.slice(2).map((r) => [r.dir, r.relatedMethod, r.requestSeq])).toEqual([
      ['c2s', 'sampling/createMessage', 1],
      ['s2c', 'tools/call', 0],
    ]);
  });

  test('a version mismatch is said plainly', () => {
    const { sink, mcp } = session();
    mcp.observe(frame('c2s', '{"jsonrpc":"2.0","id":0,"method":"initialize","params":{"protocolVersion":"2026-07-28","capabilities":{},"clientInfo":{"name":"c"}}}'));
    mcp.observe(frame('s2c', '{"jsonrpc":"2.0","id":0,"result":{"protocolVersion":"2025-06-18","capabilities":{"tools":{}},"serverInfo":{"name":"s","version":"1"}}}'));
    expect(sink.records[1]!.msg).toMatch(/The client offered 2026-07-28 but the server answers 2025-06-18/);
  });

  test('errors say what the code means; isError is a warning', () => {
    const { sink, mcp } = session();
    mcp.observe(frame('c2s', '{"jsonrpc":"2.0","id":1,"method":"tools/call","params":{"name":"w","arguments":{"x":1}}}'));
    mcp.observe(frame('s2c', '{"jsonrpc":"2.0","id":1,"result":{"content":[{"type":"text","text":"bad city"}],"isError":true}}'));
    mcp.observe(frame('s2c', '{"jsonrpc":"2.0","id":null,"error":{"code":-32700,"message":"Parse error"}}'));
    expect(sink.records[1]).toMatchObject({ isError: true, level: 40 });
    expect(sink.records[1]!.msg).toBe('Tool w failed (isError: true): "bad city" (5 ms).');
    expect(sink.records[2]).toMatchObject({ kind: 'response', id: null, level: 40 });
    expect(sink.records[2]!.msg).toBe('Error -32700 (parse error: the receiver could not parse the JSON): "Parse error".');
    expect(sink.records[2]!.method).toBeUndefined();
  });

  test('a response to a request mcptap did not see', () => {
    const { sink, mcp } = session();
    mcp.observe(frame('s2c', '{"jsonrpc":"2.0","id":42,"result":{}}'));
    expect(sink.records[0]!.msg).toBe('Response to a request mcptap did not see.');
    expect(sink.records[0]!.latencyMs).toBeUndefined();
  });

  test('stdout pollution, empty lines, partial lines and invalid UTF-8 are invalid records', () => {
    const { sink, mcp } = session();
    mcp.observe(frame('s2c', 'Server listening on stdio'));
    mcp.observe(frame('s2c', ''));
    mcp.observe(frame('c2s', '{"jsonrpc":"2.0","id":1', { partial: true }));
    const bad = Buffer.from([0x7b, 0xff, 0xfe, 0x7d]);
    mcp.observe(frame('s2c', bad));
    const [plain, empty, partial, binary] = sink.records;
    expect(plain).toMatchObject({ kind: 'invalid', reason: 'plain text, not JSON', level: 40, raw: 'Server listening on stdio' });
    expect(plain!.msg).toBe(
      'The server wrote a line that is not JSON-RPC to stdout (plain text, not JSON); MCP clients will fail on it. Send logs to stderr instead: "Server listening on stdio".',
    );
    expect(empty).toMatchObject({ kind: 'invalid', reason: 'an empty line', bytes: 0, raw: '' });
    expect(partial).toMatchObject({ kind: 'invalid', partial: true, dir: 'c2s' });
    expect(partial!.msg).toMatch(/^The client\u2019s stream ended in the middle of a line/);
    expect(binary).toMatchObject({ kind: 'invalid', rawEncoding: 'base64', raw: bad.toString('base64'), bytes: 4 });
  });

  test('a frame that holds U+FFFD itself is UTF-8 text; one whose bytes decode to U+FFFD is base64', () => {
    const { sink, mcp } = session();
    const replacement = '{"jsonrpc":"2.0","method":"notifications/message","params":{"data":"\ufffd"}}';
    mcp.observe(frame('s2c', Buffer.from(replacement)));
    const broken = Buffer.concat([Buffer.from('{"jsonrpc":"2.0","method":"notifications/message","params":{"data":"'), Buffer.from([0xc3]), Buffer.from('"}}')]);
    mcp.observe(frame('s2c', broken));
    const [text, base64] = sink.records;
    expect(text).toMatchObject({ kind: 'notification', raw: replacement });
    expect(text).not.toHaveProperty('rawEncoding');
    expect(base64).toMatchObject({ rawEncoding: 'base64', raw: broken.toString('base64') });
  });

  test('long frames read the same whether all ASCII, UTF-8 beyond it, Latin-1 bytes or cut by the cap', () => {
    const { sink, mcp } = session();
    const note = (data: string) => `{"jsonrpc":"2.0","method":"notifications/message","params":{"data":"${data}"}}`;
    const ascii = note('a'.repeat(10_000));
    const utf8 = note(`${'a'.repeat(10_000)}\u00e9\u20ac`);
    // 0xe9 alone is é in Latin-1 and no UTF-8 at all: base64, never a latin1 reading of it.
    const latin1 = Buffer.from(note(`${'a'.repeat(10_000)}\u00e9`), 'latin1');
    const cut = Buffer.from(utf8);
    for (const bytes of [Buffer.from(ascii), Buffer.from(utf8), latin1]) mcp.observe(frame('s2c', bytes));
    mcp.observe(frame('s2c', cut.subarray(0, cut.length - 4), { truncated: true, size: cut.length }));
    const [a, u, l, c] = sink.records;
    expect(a).toMatchObject({ kind: 'notification', raw: ascii });
    expect(u).toMatchObject({ kind: 'notification', raw: utf8 });
    expect(l).toMatchObject({ rawEncoding: 'base64', raw: latin1.toString('base64') });
    // The cap cut the euro sign: the head keeps the rest, as text.
    expect(c).toMatchObject({ raw: utf8.slice(0, utf8.length - 4), truncated: true });
    expect(c).not.toHaveProperty('rawEncoding');
  });

  test('a client message that is not JSON-RPC is not blamed on stdout', () => {
    const { sink, mcp } = session();
    mcp.observe(frame('c2s', 'hello'));
    expect(sink.records[0]!.msg).toBe('The client sent something that is not JSON-RPC (plain text, not JSON): "hello".');
  });

  test('batches are logged element by element', () => {
    const { sink, mcp } = session();
    mcp.observe(frame('c2s', '[{"jsonrpc":"2.0","id":1,"method":"ping"},{"jsonrpc":"2.0","method":"notifications/initialized"}]'));
    mcp.observe(frame('s2c', '[{"jsonrpc":"2.0","id":1,"result":{}}]'));
    const r = sink.records;
    expect(r.map((x) => [x.kind, x.batch])).toEqual([
      ['request', { index: 0, count: 2 }],
      ['notification', { index: 1, count: 2 }],
      ['response', { index: 0, count: 1 }],
    ]);
    expect(r[0]!.raw).toBe('{"jsonrpc":"2.0","id":1,"method":"ping"}');
    expect(r[2]).toMatchObject({ method: 'ping', latencyMs: 5 });
  });

  test('crlf is recorded', () => {
    const { sink, mcp } = session();
    mcp.observe(frame('c2s', '{"jsonrpc":"2.0","method":"x"}', { crlf: true }));
    expect(sink.records[0]).toMatchObject({ crlf: true, kind: 'notification' });
  });

  test('unanswered requests are evicted past the bound, and become pending at the end', () => {
    const { sink, mcp } = session(2);
    for (let i = 0; i < 3; i++) mcp.observe(frame('c2s', `{"jsonrpc":"2.0","id":${i},"method":"tools/call","params":{"name":"t${i}"}}`));
    const evicted = sink.records.find((r) => r.kind === 'evicted');
    expect(evicted).toMatchObject({ level: 40, requests: [{ dir: 'c2s', id: 0, method: 'tools/call', tool: 't0', requestSeq: 0, ageMs: 10 }] });
    expect(evicted!.msg).toBe("The client's request tools/call t0 #0 has waited 10 ms without an answer; mcptap stops tracking it to bound memory.");
    mcp.end(1_900_000_000_000, clock + 100);
    const pending = sink.records.filter((r) => r.kind === 'pending');
    expect(pending.map((p) => p.id)).toEqual([1, 2]);
    expect(pending[1]!.msg).toMatch(/^The client's request tools\/call t2 #2 was never answered \(waited 100 ms/);
    expect(pending[1]!.ageMs).toBe(100);
  });

  test('past the bound the oldest tenth goes at once, in one record that counts them by sender', () => {
    const { sink, mcp } = session(20);
    for (let i = 0; i < 20; i++) mcp.observe(frame(i % 4 === 0 ? 's2c' : 'c2s', `{"jsonrpc":"2.0","id":${i},"method":"ping"}`));
    expect(sink.records.filter((r) => r.kind === 'evicted')).toEqual([]);
    mcp.observe(frame('c2s', '{"jsonrpc":"2.0","id":20,"method":"ping"}'));
    const evicted = sink.records.filter((r) => r.kind === 'evicted');
    // 21 open, 18 kept: the three oldest, #0 from the server and #1, #2 from the client.
    expect(evicted).toHaveLength(1);
    expect(evicted[0]).toMatchObject({ level: 40, requests: [{ dir: 's2c', id: 0 }, { dir: 'c2s', id: 1 }, { dir: 'c2s', id: 2 }] });
    expect(evicted[0]!.msg).toBe("mcptap stops tracking 2 of the client's and 1 of the server's requests, the oldest it held, to bound memory: they had waited 90 ms to 100 ms without an answer.");
    expect(mcp.openRequests).toBe(18);
  });

  test('an answer to an evicted request is paired with it all the same, and says its eviction came first', () => {
    const { sink, mcp } = session(2);
    for (let i = 0; i < 3; i++) mcp.observe(frame('c2s', `{"jsonrpc":"2.0","id":${i},"method":"tools/call","params":{"name":"t${i}"}}`));
    mcp.observe(frame('s2c', '{"jsonrpc":"2.0","id":0,"result":{"content":[]}}'));
    mcp.observe(frame('s2c', '{"jsonrpc":"2.0","id":0,"error":{"code":-32603,"message":"again"}}'));
    const [pending, late, unpaired] = sink.records.filter((r) => r.kind !== 'request');
    expect(pending).toMatchObject({ kind: 'evicted', requests: [{ id: 0, requestSeq: 0 }] });
    expect(late).toMatchObject({ kind: 'response', id: 0, requestSeq: 0, method: 'tools/call', tool: 't0', latencyMs: 15, afterPending: true });
    expect(late!.msg).toBe('Tool t0 returned no content (15 ms). It answers a request mcptap had stopped tracking to bound memory (its evicted record is earlier in the log).');
    // Answered once: a second answer with the id pairs with nothing.
    expect(unpaired).toMatchObject({ kind: 'response', id: 0 });
    expect(unpaired!.requestSeq).toBeUndefined();
    expect(unpaired!.afterPending).toBeUndefined();
  });

  test('an answer to no request, once evicted requests were forgotten, says it may be one of them', () => {
    const { sink, mcp } = session(1);
    for (let i = 0; i < 4; i++) mcp.observe(frame('c2s', `{"jsonrpc":"2.0","id":${i},"method":"ping"}`));
    mcp.observe(frame('s2c', '{"jsonrpc":"2.0","id":0,"result":{}}'));
    expect(sink.records.at(-1)!.msg).toBe(
      'Response to a request mcptap did not see. It may answer one of the requests mcptap stopped tracking to bound memory: too many were waiting to remember them all.',
    );
  });

  test('an id reused while its request is still open is said plainly (ids must be unique in flight)', () => {
    const { sink, mcp } = session();
    mcp.observe(frame('c2s', '{"jsonrpc":"2.0","id":3,"method":"tools/call","params":{"name":"first"}}'));
    mcp.observe(frame('c2s', '{"jsonrpc":"2.0","id":3,"method":"tools/call","params":{"name":"second"}}'));
    mcp.observe(frame('s2c', '{"jsonrpc":"2.0","id":3,"result":{"content":[]}}'));
    const [, second, pending, response] = sink.records;
    expect(second).toMatchObject({ kind: 'request', tool: 'second' });
    expect(pending).toMatchObject({ kind: 'pending', id: 3, tool: 'first', requestSeq: 0, level: 40 });
    expect(pending!.msg).toBe(
      'The client sent another request with id #3 while its request tools/call first #3 was still unanswered; JSON-RPC ids must be unique among requests in flight, so answers cannot be told apart.',
    );
    expect(response).toMatchObject({ kind: 'response', tool: 'second', requestSeq: 1 });
  });

  test('a cancelled request left unanswered is pending without a warning, and says why', () => {
    const { sink, mcp } = session();
    mcp.observe(frame('c2s', '{"jsonrpc":"2.0","id":4,"method":"tools/call","params":{"name":"slow"}}'));
    mcp.observe(frame('c2s', '{"jsonrpc":"2.0","method":"notifications/cancelled","params":{"requestId":4,"reason":"AbortError"}}'));
    mcp.observe(frame('c2s', '{"jsonrpc":"2.0","id":5,"method":"tools/call","params":{"name":"other"}}'));
    mcp.end(1_900_000_000_000, clock + 10);
    const pending = sink.records.filter((r) => r.kind === 'pending');
    expect(pending.map((p) => [p.id, p.cancelled, p.level])).toEqual([
      [4, true, 30],
      [5, undefined, 40],
    ]);
    expect(pending[0]!.msg).toBe('The client cancelled its request tools/call slow #4 and, as MCP says, got no answer (20 ms after it was sent).');
  });

  test('an eviction of cancelled requests alone is no warning; one with an owed request among them is', () => {
    const { sink, mcp } = session(1);
    mcp.observe(frame('c2s', '{"jsonrpc":"2.0","id":4,"method":"tools/call","params":{"name":"slow"}}'));
    mcp.observe(frame('c2s', '{"jsonrpc":"2.0","method":"notifications/cancelled","params":{"requestId":4,"reason":"AbortError"}}'));
    mcp.observe(frame('c2s', '{"jsonrpc":"2.0","id":5,"method":"tools/call","params":{"name":"other"}}'));
    mcp.observe(frame('c2s', '{"jsonrpc":"2.0","id":6,"method":"ping"}'));
    const evicted = sink.records.filter((r) => r.kind === 'evicted');
    expect(evicted.map((r) => [r.level, r.requests.map((e) => [e.id, e.cancelled])])).toEqual([
      [30, [[4, true]]],
      [40, [[5, undefined]]],
    ]);
    expect(evicted[0]!.msg).toBe('The client cancelled its request tools/call slow #4 and, as MCP says, got no answer (10 ms after it was sent; mcptap stops tracking it).');
  });

  describe('frames over the cap', () => {
    const big = 'x'.repeat(4000);
    function truncated(dir: Direction, text: string, cap = 1000): Frame {
      const framer = new LineFramer({ dir, maxFrameBytes: cap });
      return framer.push(Buffer.from(`${text}\n`), 1_800_000_000_000 + (clock += 5), clock)[0]!;
    }

    test('a TypeScript-SDK tools/call with id after the payload, and its result, are correlated', () => {
      const { sink, mcp } = session();
      mcp.observe(truncated('c2s', `{"method":"tools/call","params":{"name":"echo","arguments":{"message":"${big}"}},"jsonrpc":"2.0","id":2}`));
      mcp.observe(truncated('s2c', `{"result":{"content":[{"type":"text","text":"Echo: ${big}"}]},"jsonrpc":"2.0","id":2}`));
      const [request, response] = sink.records;
      expect(request).toMatchObject({ kind: 'request', id: 2, method: 'tools/call', tool: 'echo', truncated: true });
      expect(request!.raw).toHaveLength(1000);
      expect(request!.sha256).toMatch(/^[0-9a-f]{64}$/);
      expect(request!.msg).toMatch(/^Client calls tool echo; the frame \(\d+ bytes\) is too long to keep whole/);
      expect(response).toMatchObject({ kind: 'response', id: 2, method: 'tools/call', tool: 'echo', requestSeq: 0, latencyMs: 5, truncated: true });
      expect(response!.msg).toMatch(/^Response to tools\/call echo \(5 ms\); the frame/);
      expect(mcp.openRequests).toBe(0);
    });

    test('a Python-SDK response with the id first; an error response', () => {
      const { sink, mcp } = session();
      mcp.observe(frame('c2s', '{"jsonrpc":"2.0","id":"r1","method":"resources/read","params":{"uri":"a"}}'));
      mcp.observe(truncated('s2c', `{"jsonrpc":"2.0","id":"r1","result":{"contents":[{"text":"${big}"}]}}`));
      mcp.observe(frame('c2s', '{"jsonrpc":"2.0","id":"r2","method":"resources/read","params":{"uri":"b"}}'));
      mcp.observe(truncated('s2c', `{"jsonrpc":"2.0","id":"r2","error":{"code":-32603,"message":"${big}"}}`));
      expect(sink.records[1]).toMatchObject({ kind: 'response', method: 'resources/read', id: 'r1' });
      expect(sink.records[3]).toMatchObject({ kind: 'response', method: 'resources/read', id: 'r2', level: 40 });
      expect(sink.records[3]!.msg).toMatch(/^Error response to resources\/read/);
    });

    test('long JSON with nothing to go by is invalid, without blaming the server for breaking clients', () => {
      const { sink, mcp } = session();
      mcp.observe(truncated('s2c', `{"data":"${big}"}`));
      expect(sink.records[0]).toMatchObject({ kind: 'invalid', truncated: true, bytes: 4011 });
      expect(sink.records[0]!.msg).not.toMatch(/MCP clients will fail/);
    });

    test('a head cut inside a UTF-8 character stays readable text, without the cut character', () => {
      const { sink, mcp } = session();
      // "°" is two bytes (c2 b0); a cap of 41 cuts it in half.
      const line = `{"jsonrpc":"2.0","id":9,"result":{"t":"7°F ${'°'.repeat(100)}"}}`;
      expect(Buffer.from(line).subarray(0, 41).toString()).toMatch(/\ufffd$/);
      mcp.observe(truncated('s2c', line, 41));
      const [record] = sink.records;
      expect(record!.rawEncoding).toBeUndefined();
      expect(record!.raw).toBe('{"jsonrpc":"2.0","id":9,"result":{"t":"7');
      expect(record).toMatchObject({ truncated: true, bytes: Buffer.byteLength(line), id: 9 });
    });

    test('long plain text on stdout is pollution', () => {
      const { sink, mcp } = session();
      mcp.observe(truncated('s2c', big));
      expect(sink.records[0]).toMatchObject({ kind: 'invalid', truncated: true, bytes: 4000, reason: 'plain text, not JSON' });
      expect(sink.records[0]!.msg).toMatch(/MCP clients will fail/);
    });
  });
});

describe('McpSession never throws (fast-check)', () => {
  test('any frame, whole, partial or cut off: no exception, and every record has a sentence', () => {
    // Fragments of JSON-RPC so that generated frames are often almost valid.
    const piece = fc.constantFrom('{', '}', '[', ']', ',', ':', '"', '\\', '"id"', '"method"', '"result"', '"error"', '"jsonrpc":"2.0"', '1', 'null', '"tools/call"', '"params"', '"name"', '\u00e9', '\ud83d\ude00', 'x');
    const text = fc.array(piece, { maxLength: 40 }).map((parts) => parts.join(''));
    fc.assert(
      fc.property(fc.array(fc.tuple(fc.constantFrom<Direction>('c2s', 's2c'), text, fc.integer({ min: 0, max: 60 }), fc.boolean()), { maxLength: 12 }), (frames) => {
        const { sink, mcp } = session(4);
        for (const [dir, body, cap, partial] of frames) {
          const framer = new LineFramer({ dir, maxFrameBytes: cap });
          const out = [...framer.push(Buffer.from(partial ? body : `${body}\n`), 1, 1)];
          const tail = framer.end(2, 2);
          if (tail) out.push(tail);
          for (const frame of out) expect(() => mcp.observe(frame)).not.toThrow();
        }
        expect(() => mcp.end(3, 3)).not.toThrow();
        for (const r of sink.records) {
          expect(typeof r.msg).toBe('string');
          expect(r.msg.length).toBeGreaterThan(0);
        }
      }),
      { numRuns: 400 },
    );
  });
});
