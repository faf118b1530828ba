/**
 * LogTail on real files: the backfill reads what is there, later looks return only what was appended, a line
 * still being written waits for its newline, new files are picked up, a truncated file is read again, and lines
 * that are not records are skipped.
 */
import { appendFileSync, mkdtempSync, rmSync, writeFileSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { afterEach, describe, expect, it } from 'vitest';
import { LogTail } from '../../src/ui/tail.js';

const dirs: string[] = [];
afterEach(() => {
  for (const d of dirs.splice(0)) rmSync(d, { recursive: true, force: true });
});

const rec = (seq: number, session = 's1') => `${JSON.stringify({ v: 1, seq, time: 1_780_000_000_000 + seq, session, channel: 'stdio', label: 'x', kind: 'stderr', dir: 's2c', text: `line ${seq}`, bytes: 6, msg: 'm' })}\n`;

describe('LogTail', () => {
  it('backfills, then follows appends, partial lines, new files and truncation', async () => {
    const dir = mkdtempSync(join(tmpdir(), 'mcptap-tail-'));
    dirs.push(dir);
    const a = join(dir, 'a.ndjson');
    writeFileSync(a, rec(0) + rec(1) + 'not json\n');
    writeFileSync(join(dir, 'notes.txt'), rec(99));
    const tail = new LogTail(dir);
    expect((await tail.poll()).map((r) => r.seq)).toEqual([0, 1]);
    expect(await tail.poll()).toEqual([]);

    const next = rec(2);
    appendFileSync(a, next.slice(0, 20));
    expect(await tail.poll()).toEqual([]);
    appendFileSync(a, next.slice(20) + rec(3));
    expect((await tail.poll()).map((r) => r.seq)).toEqual([2, 3]);

    writeFileSync(join(dir, 'b.ndjson'), rec(0, 's2'));
    expect((await tail.poll()).map((r) => [r.session, r.seq])).toEqual([['s2', 0]]);

    writeFileSync(a, rec(7));
    expect((await tail.poll()).map((r) => r.seq)).toEqual([7]);
  });

  it('waits for a folder that does not exist yet', async () => {
    const dir = mkdtempSync(join(tmpdir(), 'mcptap-tail-'));
    dirs.push(dir);
    const tail = new LogTail(join(dir, 'later'));
    expect(await tail.poll()).toEqual([]);
  });
});
