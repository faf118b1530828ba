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

  it('gives an http-end that leaves its body to its chunks (log format v3) that body, as readLogs does', async () => {
    const dir = mkdtempSync(join(tmpdir(), 'mcptap-tail-'));
    dirs.push(dir);
    const base = { v: 3, level: 30, session: 's', channel: 'ollama', label: 'x', exchange: 'x1', msg: 'm' };
    const line = (seq: number, fields: Record<string, unknown>, raw?: string) => `${JSON.stringify({ ...base, seq, time: 1_780_000_000_000 + seq, ...fields }).slice(0, -1)}${raw === undefined ? '' : `,"raw":${raw}`}}\n`;
    const raws = ['{"message":{"content":"Hi"},"done":false}', '{"message":{"content":""},"done":true}'];
    const chunk = (seq: number) => line(seq, { kind: 'llm-chunk', dir: 's2c', sinceMs: seq }, raws[seq]);
    writeFileSync(join(dir, 'a.ndjson'), chunk(0));
    const tail = new LogTail(dir);
    await tail.poll();
    appendFileSync(join(dir, 'a.ndjson'), chunk(1) + line(2, { kind: 'http-end', method: 'POST', path: '/api/chat', outcome: 'complete', reqBytes: 2, resBytes: 80, durationMs: 3, bodyInChunks: 2 }));
    const end = (await tail.poll()).find((r) => r.kind === 'http-end') as { body?: string };
    expect(end.body).toBe(`${raws.join('\n')}\n`);
  });

  it('waits for a folder that does not exist yet', async () => {
    const dir = mkdtempSync(join(tmpdir(), 'mcptap-tail-'));
    dirs.push(dir);
    const tail = new LogTail(join(dir, 'later'));
    expect(await tail.poll()).toEqual([]);
  });
});
