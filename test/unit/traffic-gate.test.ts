/**
 * The inspection thread's gate: it works in the traffic's pauses, and never waits past its bounds.
 */
import { describe, expect, test } from 'vitest';
import { MAX_WAIT_MS, MAX_WAITING_CALLS, QUIET_MS, TrafficGate, type TrafficNow } from '../../src/capture/traffic-gate.js';

/** The copies a gate lets wait for a pause (a tap's holdBackBytes). */
const HOLD_BACK = 4096;

const busy = (now: number, extra: Partial<TrafficNow> = {}): TrafficNow => ({ now, sinceLastPost: 0, pendingBytes: 1000, pendingCalls: 10, urgent: false, ...extra });

describe('TrafficGate', () => {
  test('works at once when the relay has posted nothing for QUIET_MS', () => {
    expect(new TrafficGate(HOLD_BACK).waitBeforeWork(busy(0, { sinceLastPost: QUIET_MS }))).toBe(0);
  });

  test('waits while calls keep coming, looking again less and less often, and no longer than MAX_WAIT_MS in all', () => {
    const gate = new TrafficGate(HOLD_BACK);
    const waits: number[] = [];
    let now = 0;
    for (let wait = gate.waitBeforeWork(busy(now)); wait > 0; wait = gate.waitBeforeWork(busy(now))) {
      waits.push(wait);
      now += wait;
    }
    expect(waits[0]).toBe(QUIET_MS);
    expect(waits.slice(0, 4)).toEqual([QUIET_MS, 2 * QUIET_MS, 4 * QUIET_MS, 8 * QUIET_MS]);
    expect(now).toBe(MAX_WAIT_MS);
  });

  test('once a wait ran out, everything pending is carried out before it waits again', () => {
    const gate = new TrafficGate(HOLD_BACK);
    let now = 0;
    for (let wait = gate.waitBeforeWork(busy(now)); wait > 0; wait = gate.waitBeforeWork(busy(now))) now += wait;
    // Still busy, but catching up: slice after slice goes ahead.
    expect(gate.waitBeforeWork(busy(now + 1))).toBe(0);
    expect(gate.waitBeforeWork(busy(now + 2))).toBe(0);
    gate.caughtUp();
    expect(gate.waitBeforeWork(busy(now + 3))).toBe(QUIET_MS);
  });

  test('a pause ends a wait: the first look after QUIET_MS without a call works', () => {
    const gate = new TrafficGate(HOLD_BACK);
    expect(gate.waitBeforeWork(busy(0))).toBe(QUIET_MS);
    // Looked again after 5 ms: a call came 2 ms ago, so the traffic goes on; the next look is later still.
    expect(gate.waitBeforeWork(busy(5, { sinceLastPost: 2 }))).toBe(2 * QUIET_MS);
    expect(gate.waitBeforeWork(busy(15, { sinceLastPost: QUIET_MS + 1 }))).toBe(0);
  });

  test('a look that comes late (a busy thread) still ends the wait at MAX_WAIT_MS, not after it', () => {
    const gate = new TrafficGate(HOLD_BACK);
    gate.waitBeforeWork(busy(0));
    // The timer fired 3 ms before the end of the wait: 3 ms are left.
    expect(gate.waitBeforeWork(busy(MAX_WAIT_MS - 3, { sinceLastPost: 0 }))).toBe(3);
    expect(gate.waitBeforeWork(busy(MAX_WAIT_MS, { sinceLastPost: 0 }))).toBe(0);
  });

  test('an urgent call, or copies of the tap\'s holdBackBytes or more, do not wait', () => {
    expect(new TrafficGate(HOLD_BACK).waitBeforeWork(busy(0, { urgent: true }))).toBe(0);
    expect(new TrafficGate(HOLD_BACK).waitBeforeWork(busy(0, { pendingBytes: HOLD_BACK - 1 }))).toBe(QUIET_MS);
    expect(new TrafficGate(HOLD_BACK).waitBeforeWork(busy(0, { pendingBytes: HOLD_BACK }))).toBe(0);
  });

  test('nor do MAX_WAITING_CALLS calls, however few bytes they carry', () => {
    expect(new TrafficGate(HOLD_BACK).waitBeforeWork(busy(0, { pendingCalls: MAX_WAITING_CALLS - 1 }))).toBe(QUIET_MS);
    expect(new TrafficGate(HOLD_BACK).waitBeforeWork(busy(0, { pendingCalls: MAX_WAITING_CALLS }))).toBe(0);
  });

  test('work begun in a pause stops once the traffic starts again, and the thread looks again a pause later', () => {
    const gate = new TrafficGate(HOLD_BACK);
    expect(gate.waitBeforeWork(busy(0, { sinceLastPost: QUIET_MS }))).toBe(0);
    expect(gate.stopsFor({ sinceLastPost: QUIET_MS + 1, urgent: false })).toBe(false);
    // A call was posted 1 ms ago: the slice stops, and the next look comes QUIET_MS later.
    expect(gate.stopsFor({ sinceLastPost: 1, urgent: false })).toBe(true);
    expect(gate.waitBeforeWork(busy(1, { sinceLastPost: 1 }))).toBe(QUIET_MS);
  });

  test('catching up, or a call someone waits on, does not stop for the traffic', () => {
    const gate = new TrafficGate(HOLD_BACK);
    expect(gate.stopsFor({ sinceLastPost: 0, urgent: true })).toBe(false);
    expect(gate.waitBeforeWork(busy(0, { pendingBytes: HOLD_BACK }))).toBe(0);
    expect(gate.stopsFor({ sinceLastPost: 0, urgent: false })).toBe(false);
    gate.caughtUp();
    expect(gate.stopsFor({ sinceLastPost: 0, urgent: false })).toBe(true);
  });

  test('waits cut short by pauses add up: MAX_WAIT_MS after the first, the thread catches up anyway', () => {
    const gate = new TrafficGate(HOLD_BACK);
    expect(gate.waitBeforeWork(busy(0))).toBe(QUIET_MS);
    // The traffic pauses for QUIET_MS again and again; each time work begins, and the traffic's return stops it.
    for (let now = QUIET_MS; now + 1 < MAX_WAIT_MS; now += QUIET_MS + 1) {
      expect(gate.waitBeforeWork(busy(now, { sinceLastPost: QUIET_MS }))).toBe(0);
      expect(gate.stopsFor({ sinceLastPost: 0, urgent: false })).toBe(true);
      expect(gate.waitBeforeWork(busy(now + 1))).toBeGreaterThan(0);
    }
    // MAX_WAIT_MS since the first wait: everything pending is carried out, the traffic notwithstanding.
    expect(gate.waitBeforeWork(busy(MAX_WAIT_MS))).toBe(0);
    expect(gate.stopsFor({ sinceLastPost: 0, urgent: false })).toBe(false);
  });
});
