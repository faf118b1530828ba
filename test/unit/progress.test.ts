/** The progress line: nothing for short work or off a terminal; after two seconds, how far, then wiped. */
import { afterEach, describe, expect, it, vi } from 'vitest';
import { startProgress } from '../../src/cli/progress.js';

afterEach(() => vi.useRealTimers());

function stream(isTTY: boolean): { isTTY: boolean; text: string; write(s: string): boolean } {
  return { isTTY, text: '', write(s: string) { this.text += s; return true; } };
}

describe('startProgress', () => {
  it('says nothing for work under two seconds', () => {
    vi.useFakeTimers();
    const s = stream(true);
    const p = startProgress(s as unknown as NodeJS.WriteStream);
    vi.advanceTimersByTime(1900);
    p.done();
    expect(s.text).toBe('');
  });

  it('on a terminal, shows how much is read, then the phase, then wipes the line', () => {
    vi.useFakeTimers();
    const s = stream(true);
    const p = startProgress(s as unknown as NodeJS.WriteStream);
    p.read.total = 100 * 1024 * 1024;
    p.read.read = 45 * 1024 * 1024;
    vi.advanceTimersByTime(2000);
    expect(s.text).toBe('\r\u001b[Kmcptap: reading logs: 45% of 100 MB…');
    p.phase('linking 245,000 records');
    expect(s.text.endsWith('\r\u001b[Kmcptap: linking 245,000 records…')).toBe(true);
    p.done();
    expect(s.text.endsWith('\r\u001b[K')).toBe(true);
  });

  it('never off a terminal', () => {
    vi.useFakeTimers();
    const s = stream(false);
    const p = startProgress(s as unknown as NodeJS.WriteStream);
    vi.advanceTimersByTime(10_000);
    p.done();
    expect(s.text).toBe('');
  });
});
