import { describe, expect, test } from 'vitest';
import { canonicalBody, canonicalJson, canonicalParams, pickCandidate, type Candidate } from '../../src/replay/match.js';

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

describe('pickCandidate', () => {
  const list = (): Candidate[] => [
    { method: 'tools/call', key: 'A', used: false },
    { method: 'tools/call', key: 'B', used: false },
    { method: 'tools/list', key: '{}', used: false },
  ];
  test('params: exact params first, whatever the order', () => {
    expect(pickCandidate(list(), 'tools/call', 'B', 'params')).toBe(1);
  });
  test('params: falls back to the first unused of the same method', () => {
    const c = list();
    c[0]!.used = true;
    expect(pickCandidate(c, 'tools/call', 'Z', 'params')).toBe(1);
  });
  test('params: a method never recorded is unknown; one used up is no-match', () => {
    const c = list();
    expect(pickCandidate(c, 'prompts/list', '{}', 'params')).toBe('unknown-method');
    c[2]!.used = true;
    expect(pickCandidate(c, 'tools/list', '{}', 'params')).toBe('no-match');
  });
  test('sequential: recorded order of the method, params ignored', () => {
    expect(pickCandidate(list(), 'tools/call', 'B', 'sequential')).toBe(0);
  });
  test('strict: the next of the method must have the same params', () => {
    expect(pickCandidate(list(), 'tools/call', 'B', 'strict')).toBe('no-match');
    expect(pickCandidate(list(), 'tools/call', 'A', 'strict')).toBe(0);
  });
  test('a candidate with unknown params (a truncated frame) matches by method', () => {
    expect(pickCandidate([{ method: 'tools/call', key: undefined, used: false }], 'tools/call', 'X', 'strict')).toBe(0);
  });
});
