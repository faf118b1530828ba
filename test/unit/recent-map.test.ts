import { describe, expect, test } from 'vitest';
import { RecentMap, setBounded } from '../../src/session/recent-map.js';

describe('RecentMap', () => {
  test('keeps the last `capacity` entries set; the oldest still held is handed back as it goes', () => {
    const m = new RecentMap<string, number>(2);
    expect(m.set('a', 1)).toBeUndefined();
    expect(m.set('b', 2)).toBeUndefined();
    expect(m.set('c', 3)).toBe(1);
    expect(m.take('a')).toBeUndefined();
    expect(m.take('b')).toBe(2);
    // b was taken: its slot goes quietly.
    expect(m.set('d', 4)).toBeUndefined();
    expect([m.take('c'), m.take('d')]).toEqual([3, 4]);
  });
});

describe('setBounded', () => {
  test('keeps a Map to its bound by dropping the oldest, and always keeps what was just set', () => {
    for (const max of [1, 2, 3, 10, 100]) {
      const m = new Map<number, number>();
      for (let i = 0; i < 5 * max + 7; i++) {
        setBounded(m, i, i, max);
        expect(m.size).toBeLessThanOrEqual(max);
        expect(m.get(i)).toBe(i);
        // What is kept is the newest, in order: nothing older survives something newer dropped.
        const keys = [...m.keys()];
        expect(keys).toEqual(Array.from({ length: keys.length }, (_, k) => i - keys.length + 1 + k));
      }
    }
  });

  test('setting a key again keeps its first place, as Map.set does', () => {
    const m = new Map([['a', 1], ['b', 2]]);
    setBounded(m, 'a', 3, 2);
    expect([...m.entries()]).toEqual([['a', 3], ['b', 2]]);
  });
});
