/**
 * A Map of the last `capacity` entries set, the oldest overwritten first: what is worth remembering a while but
 * not without bound (the requests the correlator evicted, for a late answer). The order is a ring, not the Map's
 * own: V8 walks every entry deleted at a Map's head on each look at its first key.
 */
export class RecentMap<K, V> {
  private readonly byKey = new Map<K, V>();
  private readonly keys: K[] = [];
  private readonly stored: V[] = [];
  private next = 0;
  private readonly capacity: number;

  constructor(capacity: number) {
    this.capacity = Math.max(1, capacity);
  }

  /** Remember `value` under `key`; returns the oldest value when it had to go to make room (and was still held). */
  set(key: K, value: V): V | undefined {
    let gone: V | undefined;
    if (this.next < this.keys.length) {
      const oldKey = this.keys[this.next]!;
      const oldValue = this.stored[this.next]!;
      if (this.byKey.get(oldKey) === oldValue) {
        this.byKey.delete(oldKey);
        gone = oldValue;
      }
    }
    this.keys[this.next] = key;
    this.stored[this.next] = value;
    this.next = (this.next + 1) % this.capacity;
    this.byKey.set(key, value);
    return gone;
  }

  /** How many entries are held. */
  get size(): number {
    return this.byKey.size;
  }

  /** The entries held, in no particular order. */
  entries(): IterableIterator<[K, V]> {
    return this.byKey.entries();
  }

  /** The value under `key`, which is forgotten. */
  take(key: K): V | undefined {
    const value = this.byKey.get(key);
    if (value !== undefined) this.byKey.delete(key);
    return value;
  }
}

/**
 * Set `key` in `map`, a Map kept to at most `max` entries by dropping its oldest, a tenth of them at once when
 * it is full. Dropped one at a time, each would look at the Map's first key, and V8 walks every entry deleted at
 * a Map's head since its last rehash on each such look.
 */
export function setBounded<K, V>(map: Map<K, V>, key: K, value: V, max: number): void {
  map.set(key, value);
  if (map.size <= max) return;
  let excess = map.size - Math.max(1, Math.floor(max * 0.9));
  for (const oldest of map.keys()) {
    map.delete(oldest);
    if (--excess <= 0) return;
  }
}
