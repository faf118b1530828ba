import { describe, expect, test } from 'vitest';
import { classifyJsonRpc, decodeJsonRpc, peekIdAndMethod } from '../../src/protocols/jsonrpc.js';

const one = (text: string) => {
  const d = decodeJsonRpc(text);
  expect(d.batch).toBe(false);
  expect(d.messages).toHaveLength(1);
  return d.messages[0]!;
};

describe('decodeJsonRpc: every message kind', () => {
  test('request with params', () => {
    const m = one('{"jsonrpc":"2.0","id":1,"method":"tools/call","params":{"name":"echo","arguments":{"m":"x"}}}');
    expect(m).toMatchObject({ type: 'request', id: 1, method: 'tools/call', params: { name: 'echo' } });
  });
  test('request without params, string id, key order of the TypeScript SDK', () => {
    const m = one('{"method":"tools/list","jsonrpc":"2.0","id":"abc"}');
    expect(m).toMatchObject({ type: 'request', id: 'abc', method: 'tools/list' });
    expect('params' in m).toBe(false);
  });
  test('id 0 is a request, not a notification', () => {
    expect(one('{"jsonrpc":"2.0","id":0,"method":"initialize","params":{}}')).toMatchObject({ type: 'request', id: 0 });
  });
  test('notification (no id)', () => {
    const m = one('{"jsonrpc":"2.0","method":"notifications/progress","params":{"progressToken":5,"progress":1}}');
    expect(m).toMatchObject({ type: 'notification', method: 'notifications/progress', params: { progressToken: 5 } });
  });
  test('notification whose params is not an object keeps no params', () => {
    const m = one('{"jsonrpc":"2.0","method":"x","params":[1,2]}');
    expect(m.type).toBe('notification');
    expect('params' in m).toBe(false);
  });
  test('response', () => {
    expect(one('{"jsonrpc":"2.0","id":3,"result":{"tools":[]}}')).toMatchObject({ type: 'response', id: 3, result: { tools: [] } });
  });
  test('response with a null result is still a response', () => {
    expect(one('{"jsonrpc":"2.0","id":3,"result":null}')).toMatchObject({ type: 'response', id: 3, result: null });
  });
  test('error response', () => {
    const m = one('{"jsonrpc":"2.0","id":"7","error":{"code":-32601,"message":"Method not found","data":{"m":"x"}}}');
    expect(m).toMatchObject({ type: 'error', id: '7', error: { code: -32601, message: 'Method not found', data: { m: 'x' } } });
  });
  test('error with id null (unreadable request) and with no id at all (2025-11-25)', () => {
    expect(one('{"jsonrpc":"2.0","id":null,"error":{"code":-32700,"message":"Parse error"}}')).toMatchObject({ type: 'error', id: null });
    expect(one('{"jsonrpc":"2.0","error":{"code":-32600,"message":"Invalid Request"}}')).toMatchObject({ type: 'error', id: null });
  });
  test('the parsed value travels with the message', () => {
    const m = one('{"jsonrpc":"2.0","id":1,"result":{"a":1}}');
    expect((m as { json: unknown }).json).toEqual({ jsonrpc: '2.0', id: 1, result: { a: 1 } });
  });
});

describe('decodeJsonRpc: invalid shapes never throw', () => {
  const cases: [string, RegExp][] = [
    ['Server started on port 3000', /plain text/],
    ['\ufeff{"jsonrpc":"2.0","id":1,"method":"ping"}', /byte-order mark/],
    ['', /empty line/],
    ['   ', /empty line/],
    ['{"jsonrpc":"2.0","id":1,"meth', /does not parse/],
    ['[1,2', /does not parse/],
    ['{', /the start of a JSON message spread over several lines/],
    ['  "jsonrpc": "2.0",', /a piece of a JSON message spread over several lines/],
    ['    "id": 1', /a piece of a JSON message spread over several lines/],
    ['}', /a piece of a JSON message spread over several lines/],
    ['  },', /a piece of a JSON message spread over several lines/],
    ['"just a string"', /JSON string/],
    ['42', /JSON number/],
    ['"hello"', /JSON string/],
    ['null', /JSON null/],
    ['true', /JSON boolean/],
    ['{"id":1,"method":"ping"}', /without "jsonrpc": "2.0"/],
    ['{"jsonrpc":"1.0","id":1,"method":"ping"}', /without "jsonrpc": "2.0"/],
    ['{"jsonrpc":"2.0","id":null,"method":"ping"}', /id is neither/],
    ['{"jsonrpc":"2.0","id":{"a":1},"method":"ping"}', /id is neither/],
    ['{"jsonrpc":"2.0","id":1.5e400,"method":"ping"}', /id is neither/],
    ['{"jsonrpc":"2.0","id":null,"result":{}}', /response whose id/],
    ['{"jsonrpc":"2.0","id":1}', /neither method, result nor error/],
    ['{"jsonrpc":"2.0","id":1,"error":{"code":"x","message":"m"}}', /neither method, result nor error/],
    ['{"jsonrpc":"2.0","method":42}', /neither method, result nor error/],
  ];
  for (const [text, reason] of cases) {
    test(JSON.stringify(text), () => {
      const m = one(text);
      expect(m.type).toBe('invalid');
      expect((m as { reason: string }).reason).toMatch(reason);
    });
  }
  test('an object without jsonrpc keeps its id and method for the log', () => {
    expect(one('{"id":4,"method":"ping"}')).toMatchObject({ type: 'invalid', id: 4, method: 'ping' });
  });
  test('invalid UTF-8 decoded lossily is still just invalid', () => {
    const text = Buffer.from([0x7b, 0xff, 0xfe, 0x7d]).toString('utf8');
    expect(one(text).type).toBe('invalid');
  });
});

describe('decodeJsonRpc: batches', () => {
  test('each element becomes one message, in order', () => {
    const d = decodeJsonRpc('[{"jsonrpc":"2.0","id":1,"method":"a"},{"jsonrpc":"2.0","method":"n"},{"jsonrpc":"2.0","id":1,"result":{}},7]');
    expect(d.batch).toBe(true);
    expect(d.messages.map((m) => m.type)).toEqual(['request', 'notification', 'response', 'invalid']);
  });
  test('an empty batch is one invalid message', () => {
    const d = decodeJsonRpc('[]');
    expect(d.batch).toBe(true);
    expect(d.messages).toEqual([{ type: 'invalid', reason: 'an empty JSON-RPC batch', json: [] }]);
  });
});

describe('classifyJsonRpc', () => {
  test('arrays are not messages', () => {
    expect(classifyJsonRpc([1])).toMatchObject({ type: 'invalid', reason: expect.stringMatching(/array/) });
  });
});

describe('peekIdAndMethod: the head (and tail) of a frame too long to keep', () => {
  const filler = 'x'.repeat(5000);
  test('id and method at the front (Python SDK order)', () => {
    expect(peekIdAndMethod(`{"jsonrpc":"2.0","id":12,"method":"tools/call","params":{"name":"echo","arguments":{"m":"${filler}`)).toMatchObject({
      id: 12,
      method: 'tools/call',
      tool: 'echo',
    });
  });
  test('a string id', () => {
    expect(peekIdAndMethod(`{"jsonrpc":"2.0","id":"req-\\"1","result":{"content":[{"text":"${filler}`)).toMatchObject({ id: 'req-"1', response: true });
  });
  test('an id nested inside params is not the message id', () => {
    const head = `{"jsonrpc":"2.0","method":"tools/call","params":{"name":"save","arguments":{"id":99,"method":"fake","body":"${filler}`;
    const peek = peekIdAndMethod(head);
    expect(peek.method).toBe('tools/call');
    expect(peek.id).toBeUndefined();
  });
  test('"id" inside a string value is not the message id', () => {
    const peek = peekIdAndMethod(`{"result":{"text":"{\\"id\\":5,\\"method\\":\\"x\\"} ${filler}`);
    expect(peek.id).toBeUndefined();
    expect(peek.method).toBeUndefined();
    expect(peek.response).toBe(true);
  });
  test('id after a huge payload (TypeScript SDK order) is found in the tail', () => {
    const head = `{"method":"tools/call","params":{"name":"echo","arguments":{"message":"${filler}`;
    const tail = `${filler}"}},"jsonrpc":"2.0","id":2}`;
    expect(peekIdAndMethod(head, tail)).toMatchObject({ id: 2, method: 'tools/call', tool: 'echo' });
  });
  test('a response whose id comes last', () => {
    const head = `{"result":{"content":[{"type":"text","text":"Echo: ${filler}`;
    expect(peekIdAndMethod(head, `${filler}"}]},"jsonrpc":"2.0","id":"a,b"}`)).toMatchObject({ id: 'a,b', response: true });
    expect(peekIdAndMethod(head, `${filler}"}]},"id":7,"jsonrpc":"2.0"}\r`)).toMatchObject({ id: 7, response: true });
  });
  test('an id-like text at the end of a string value is not the id', () => {
    const peek = peekIdAndMethod(`{"result":{"t":"${filler}`, `${filler}\\",\\"id\\":3}"}}`);
    expect(peek.id).toBeUndefined();
  });
  test('an error response says so', () => {
    expect(peekIdAndMethod(`{"jsonrpc":"2.0","id":4,"error":{"code":-32603,"message":"${filler}`)).toMatchObject({ id: 4, error: true });
  });
  test('malformed escapes in the head or tail never throw', () => {
    expect(() => peekIdAndMethod('{"\\q":1,"id":"\\x","method":"m\\u12","params":{"name":"\\z"')).not.toThrow();
    expect(peekIdAndMethod('{"\\q":1,"id":3,"method":"ok"')).toMatchObject({ id: 3, method: 'ok' });
    expect(() => peekIdAndMethod('{"a":"', '","id":"\\x"}')).not.toThrow();
  });
  test('plain text has nothing', () => {
    expect(peekIdAndMethod(filler, filler)).toEqual({});
  });
});
