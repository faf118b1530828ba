import { describe, expect, test } from 'vitest';
import { Correlator, opposite, roundMs, type OpenRequest } from '../../src/session/correlator.js';

const req = (over: Partial<OpenRequest> & Pick<OpenRequest, 'dir' | 'id'>): OpenRequest => ({ method: 'ping', seq: 0, mono: 0, ...over });

describe('Correlator', () => {
  test('a response travels the other way from its request', () => {
    const c = new Correlator();
    c.request(req({ dir: 'c2s', id: 1, method: 'tools/call', tool: 'echo', seq: 4, mono: 10 }));
    expect(c.respond('c2s', 1, 20)).toBeUndefined(); // same direction: not an answer
    const answered = c.respond('s2c', 1, 22.345);
    expect(answered).toEqual({ request: expect.objectContaining({ method: 'tools/call', tool: 'echo', seq: 4 }), latencyMs: 12.35 });
    expect(c.size).toBe(0);
    expect(c.respond('s2c', 1, 30)).toBeUndefined(); // answered once only
  });

  test('both peers count from 0: the same id in both directions are two requests', () => {
    const c = new Correlator();
    c.request(req({ dir: 'c2s', id: 0, method: 'initialize', seq: 1 }));
    c.request(req({ dir: 's2c', id: 0, method: 'roots/list', seq: 2 }));
    expect(c.size).toBe(2);
    expect(c.respond('c2s', 0, 5)?.request.method).toBe('roots/list'); // the client answers the server's request
    expect(c.respond('s2c', 0, 6)?.request.method).toBe('initialize');
  });

  test('the string id "1" and the number id 1 are different requests', () => {
    const c = new Correlator();
    c.request(req({ dir: 'c2s', id: 1, method: 'a' }));
    c.request(req({ dir: 'c2s', id: '1', method: 'b' }));
    expect(c.size).toBe(2);
    expect(c.respond('s2c', '1', 1)?.request.method).toBe('b');
    expect(c.respond('s2c', '1', 1)).toBeUndefined();
    expect(c.respond('s2c', 1, 1)?.request.method).toBe('a');
  });

  test('a null id answers nothing', () => {
    const c = new Correlator();
    c.request(req({ dir: 'c2s', id: 0 }));
    expect(c.respond('s2c', null, 1)).toBeUndefined();
    expect(c.size).toBe(1);
  });

  test('a request reusing an open id pushes the old one out, so it can be logged as pending', () => {
    const c = new Correlator();
    c.request(req({ dir: 'c2s', id: 3, method: 'old', seq: 1 }));
    const pushed = c.request(req({ dir: 'c2s', id: 3, method: 'new', seq: 2 }));
    expect(pushed.map((p) => p.method)).toEqual(['old']);
    expect(c.respond('s2c', 3, 1)?.request.method).toBe('new');
  });

  test('progress tokens find their request, typed, and stop once it is answered', () => {
    const c = new Correlator();
    c.request(req({ dir: 'c2s', id: 5, method: 'tools/call', progressToken: 'tok' }));
    c.request(req({ dir: 'c2s', id: 6, method: 'tools/call', progressToken: 6 }));
    expect(c.progress('tok', 's2c')?.id).toBe(5);
    expect(c.progress(6, 's2c')?.id).toBe(6);
    expect(c.progress('6', 's2c')).toBeUndefined();
    expect(c.progress('nope', 's2c')).toBeUndefined();
    c.respond('s2c', 5, 1);
    expect(c.progress('tok', 's2c')).toBeUndefined();
  });

  test('both peers may use the same progress token (the SDK uses its request id): progress finds the right one', () => {
    const c = new Correlator();
    c.request(req({ dir: 'c2s', id: 5, method: 'tools/call', progressToken: 5 }));
    c.request(req({ dir: 's2c', id: 5, method: 'sampling/createMessage', progressToken: 5 }));
    // Progress travels against its request: the server reports on the client's call, and the other way round.
    expect(c.progress(5, 's2c')?.method).toBe('tools/call');
    expect(c.progress(5, 'c2s')?.method).toBe('sampling/createMessage');
    c.respond('c2s', 5, 1); // the client answers the sampling request
    expect(c.progress(5, 'c2s')).toBeUndefined();
    expect(c.progress(5, 's2c')?.method).toBe('tools/call');
  });

  test('a replaced request does not steal the token of the one that replaced it', () => {
    const c = new Correlator();
    c.request(req({ dir: 'c2s', id: 1, progressToken: 'a' }));
    c.request(req({ dir: 'c2s', id: 2, progressToken: 'a', method: 'second' }));
    c.respond('s2c', 1, 1); // the first one's answer
    expect(c.progress('a', 's2c')?.method).toBe('second');
  });

  test('cancelled: the canceller names its own request', () => {
    const c = new Correlator();
    c.request(req({ dir: 'c2s', id: 9, method: 'tools/call' }));
    c.request(req({ dir: 's2c', id: 9, method: 'sampling/createMessage' }));
    expect(c.cancelled('c2s', 9)?.method).toBe('tools/call');
    expect(c.cancelled('s2c', 9)?.method).toBe('sampling/createMessage');
    expect(c.cancelled('c2s', '9')).toBeUndefined();
    // Cancelling does not close the request: a late response may still come, and is still correlated.
    expect(c.size).toBe(2);
    expect(c.drain().map((r) => r.cancelled)).toEqual([true, true]);
  });

  test('eviction past maxPending hands back the oldest, in order', () => {
    const c = new Correlator(3);
    const pushed: OpenRequest[] = [];
    for (let i = 0; i < 6; i++) pushed.push(...c.request(req({ dir: 'c2s', id: i, seq: i, progressToken: `t${i}` })));
    expect(pushed.map((p) => p.id)).toEqual([0, 1, 2]);
    expect(c.size).toBe(3);
    expect(c.progress('t0', 's2c')).toBeUndefined();
    expect(c.progress('t5', 's2c')?.id).toBe(5);
    expect(c.respond('s2c', 4, 1)?.request.id).toBe(4);
  });

  test('an answer that comes after its request was evicted still finds it, once, and says so', () => {
    const c = new Correlator(2);
    for (let i = 0; i < 4; i++) c.request(req({ dir: 'c2s', id: i, seq: i, mono: i, params: { big: 'x' } }));
    const late = c.respond('s2c', 0, 10);
    expect(late).toEqual({ request: expect.objectContaining({ id: 0, seq: 0 }), latencyMs: 10, afterPending: true });
    // What only a retry needs is not kept for a late answer.
    expect(late!.request.params).toBeUndefined();
    expect(c.respond('s2c', 0, 11)).toBeUndefined();
    expect(c.respond('c2s', 1, 11)).toBeUndefined(); // the same direction is still no answer
    expect(c.respond('s2c', 2, 12)).toMatchObject({ request: { id: 2 } });
    expect(c.respond('s2c', 2, 12)).toBeUndefined();
    expect(c.forgotEvicted).toBe(false);
  });

  test('the last maxPending evicted each way are remembered; older ones are forgotten, and that is known', () => {
    const c = new Correlator(2);
    for (let i = 0; i < 6; i++) c.request(req({ dir: 'c2s', id: i, seq: i })); // 0–3 evicted; 2 and 3 remembered
    expect(c.forgotEvicted).toBe(true);
    expect(c.respond('s2c', 0, 1)).toBeUndefined();
    expect(c.respond('s2c', 1, 1)).toBeUndefined();
    expect(c.respond('s2c', 3, 1)?.afterPending).toBe(true);
  });

  test('a new request with the id of an evicted one lets the evicted one go: the answer is the new request', () => {
    const c = new Correlator(1);
    c.request(req({ dir: 'c2s', id: 0, seq: 0 }));
    c.request(req({ dir: 'c2s', id: 1, seq: 1 })); // evicts 0
    c.request(req({ dir: 'c2s', id: 0, seq: 2 })); // evicts 1, and 0 is asked again
    expect(c.respond('s2c', 0, 5)).toEqual({ request: expect.objectContaining({ seq: 2 }), latencyMs: 5 });
    expect(c.respond('s2c', 0, 6)).toBeUndefined();
  });

  test('eviction passes requests answered or replaced since they arrived, across queue compactions', () => {
    const c = new Correlator(1000);
    const pushed: OpenRequest[] = [];
    // Answer all but every 7th; reuse id 3 late (its first request is pushed out as replaced, not evicted later).
    for (let i = 0; i < 5000; i++) {
      pushed.push(...c.request(req({ dir: 'c2s', id: i, seq: i })));
      if (i % 7 !== 0) c.respond('s2c', i, 1);
    }
    pushed.push(...c.request(req({ dir: 'c2s', id: 7, seq: 4999.5 })));
    for (let i = 5000; i < 6100; i++) pushed.push(...c.request(req({ dir: 'c2s', id: i, seq: i })));
    const ids = pushed.map((p) => p.seq);
    expect(ids[0]).toBe(7);
    expect(ids.slice(1)).toEqual([...ids.slice(1)].sort((a, b) => a - b));
    expect(new Set(ids).size).toBe(ids.length);
    // Past the bound the oldest tenth goes at once: between 900 and 1,000 stay.
    expect(c.size).toBeGreaterThanOrEqual(900);
    expect(c.size).toBeLessThanOrEqual(1000);
    expect(ids.every((seq) => seq % 7 === 0 || seq >= 4999)).toBe(true);
  });

  test('openFrom counts the open requests each peer sent', () => {
    const c = new Correlator();
    c.request(req({ dir: 'c2s', id: 1 }));
    c.request(req({ dir: 'c2s', id: 2 }));
    c.request(req({ dir: 's2c', id: 1 }));
    expect([c.openFrom('c2s'), c.openFrom('s2c')]).toEqual([2, 1]);
    c.respond('s2c', 1, 1);
    expect([c.openFrom('c2s'), c.openFrom('s2c')]).toEqual([1, 1]);
  });

  test('drain hands back every open request, oldest first, and forgets them', () => {
    const c = new Correlator();
    c.request(req({ dir: 'c2s', id: 'b', progressToken: 1 }));
    c.request(req({ dir: 's2c', id: 'a' }));
    expect(c.drain().map((r) => r.id)).toEqual(['b', 'a']);
    expect(c.size).toBe(0);
    expect(c.progress(1, 's2c')).toBeUndefined();
    expect(c.drain()).toEqual([]);
  });

  test('helpers', () => {
    expect(opposite('c2s')).toBe('s2c');
    expect(opposite('s2c')).toBe('c2s');
    expect(roundMs(1.23456)).toBe(1.23);
    expect(roundMs(0.005)).toBe(0.01);
  });
});
