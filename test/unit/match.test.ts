import { describe, expect, test } from 'vitest';
import { canonicalBody, canonicalJson, canonicalParams, RequestMatcher, type Candidate } from '../../src/replay/match.js';

describe('canonicalJson', () => {
  test('sorts keys at every depth and keeps array order', () => {
    expect(canonicalJson({ b: 1, a: { d: [2, 1], c: null } })).toBe('{"a":{"c":null,"d":[2,1]},"b":1}');
  });
  test('drops ignored keys at any depth', () => {
    expect(canonicalJson({ model: 'm', created_at: 'x', messages: [{ created_at: 'y', role: 'user' }] }, new Set(['created_at']))).toBe(
      '{"messages":[{"role":"user"}],"model":"m"}',
    );
  });
});

describe('canonicalParams', () => {
  test('drops _meta (progress tokens, trace context) but not other fields', () => {
    const a = canonicalParams({ name: 'echo', arguments: { message: 'hi' }, _meta: { progressToken: 7 } });
    const b = canonicalParams({ arguments: { message: 'hi' }, name: 'echo', _meta: { progressToken: 9, traceparent: '00-…' } });
    expect(a).toBe(b);
    expect(canonicalParams({ name: 'echo', arguments: { message: 'ho' } })).not.toBe(a);
  });
  test('missing params and {} are the same question', () => {
    expect(canonicalParams(undefined)).toBe(canonicalParams({}));
  });
});

describe('canonicalBody', () => {
  test('a JSON-RPC request body loses its id and params._meta', () => {
    const a = canonicalBody('{"jsonrpc":"2.0","id":3,"method":"tools/call","params":{"name":"x","_meta":{"progressToken":3}}}');
    const b = canonicalBody('{"method":"tools/call","params":{"name":"x"},"jsonrpc":"2.0","id":"abc"}');
    expect(a).toBe(b);
  });
  test('a JSON-RPC response body keeps its id (it names the server request it answers)', () => {
    expect(canonicalBody('{"jsonrpc":"2.0","id":1,"result":{}}')).not.toBe(canonicalBody('{"jsonrpc":"2.0","id":2,"result":{}}'));
  });
  test('non-JSON bodies compare as text; empty is empty', () => {
    expect(canonicalBody('a=1&b=2')).toBe('text:a=1&b=2');
    expect(canonicalBody('')).toBe('');
    expect(canonicalBody(undefined)).toBe('');
  });
  test('--ignore fields leave JSON bodies', () => {
    const ignore = new Set(['seed']);
    expect(canonicalBody('{"model":"m","seed":1}', ignore)).toBe(canonicalBody('{"seed":2,"model":"m"}', ignore));
  });
});

describe('RequestMatcher', () => {
  const list = (): Candidate[] => [
    { method: 'tools/call', key: 'A' },
    { method: 'tools/call', key: 'B' },
    { method: 'tools/list', key: '{}' },
  ];
  test('params: exact params first, whatever the order', () => {
    expect(new RequestMatcher(list()).pick('tools/call', 'B', 'params')).toBe(1);
  });
  test('params: falls back to the first unused of the same method', () => {
    const m = new RequestMatcher(list());
    expect(m.pick('tools/call', 'A', 'params')).toBe(0);
    expect(m.pick('tools/call', 'Z', 'params')).toBe(1);
    expect(m.pick('tools/call', 'A', 'params')).toBe('no-match');
  });
  test('params: a method never recorded is unknown; one used up is no-match', () => {
    const m = new RequestMatcher(list());
    expect(m.pick('prompts/list', '{}', 'params')).toBe('unknown-method');
    expect(m.pick('tools/list', '{}', 'params')).toBe(2);
    expect(m.pick('tools/list', '{}', 'params')).toBe('no-match');
  });
  test('params: repeats of the same question are answered in recorded order', () => {
    const m = new RequestMatcher([{ method: 'm', key: 'k' }, { method: 'm', key: 'x' }, { method: 'm', key: 'k' }]);
    expect([m.pick('m', 'k', 'params'), m.pick('m', 'k', 'params'), m.pick('m', 'k', 'params')]).toEqual([0, 2, 1]);
  });
  test('sequential: recorded order of the method, params ignored', () => {
    expect(new RequestMatcher(list()).pick('tools/call', 'B', 'sequential')).toBe(0);
  });
  test('strict: the next of the method must have the same params', () => {
    const m = new RequestMatcher(list());
    expect(m.pick('tools/call', 'B', 'strict')).toBe('no-match');
    expect(m.pick('tools/call', 'A', 'strict')).toBe(0);
    expect(m.pick('tools/call', 'B', 'strict')).toBe(1);
  });
  test('a candidate with unknown params (a truncated frame) matches by method', () => {
    expect(new RequestMatcher([{ method: 'tools/call', key: undefined }]).pick('tools/call', 'X', 'strict')).toBe(0);
  });
});
