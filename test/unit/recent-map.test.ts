import { describe, expect, test } from 'vitest';
import { RecentMap } from '../../src/session/recent-map.js';

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
