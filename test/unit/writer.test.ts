import { readFileSync, statSync, writeFileSync, existsSync } from 'node:fs';
import { join } from 'node:path';
import { describe, expect, test } from 'vitest';
import { LogWriter, logsBacklogged, whenLogsDrained } from '../../src/log/writer.js';
import { unwritten } from '../../src/log/append-file.js';
import { LOG_FORMAT_VERSION, type LogRecord } from '../../src/log/schema.js';
import { checkRecords } from '../../src/check/check.js';
import { tempDir } from '../support/temp-dir.js';

const root = tempDir('mcptap-writer-');

const base = { session: 's1', channel: 'stdio' as const, label: 'weather' };
const lines = (file: string) => readFileSync(file, 'utf8').split('\n').filter(Boolean).map((l) => JSON.parse(l) as Record<string, unknown>);

describe('LogWriter', () => {
  test('stamps v, seq, session, channel, label and level; one JSON object per line', async () => {
    const file = join(root, 'a', 'b', 'one.ndjson');
    const warnings: string[] = [];
    const w = new LogWriter({ file, ...base, warn: (m) => warnings.push(m) });
    expect(w.healthy).toBe(true);
    expect(w.write({ time: 1, kind: 'lifecycle', event: 'start', msg: 'start' })).toBe(0);
    expect(w.write({ time: 2, kind: 'stderr', dir: 's2c', text: 'line\nwith newline', bytes: 17, msg: 'x', level: 40 })).toBe(1);
    expect(w.write({ time: 3, kind: 'lifecycle', event: 'warning', msg: 'other', channel: 'mcp-http', session: 's2' })).toBe(2);
    await w.close();
    const records = lines(file);
    expect(readFileSync(file, 'utf8').split('\n')).toHaveLength(4); // three lines and the final newline
    expect(records[0]).toEqual({ level: 30, v: LOG_FORMAT_VERSION, time: 1, seq: 0, session: 's1', channel: 'stdio', label: 'weather', kind: 'lifecycle', event: 'start', msg: 'start' });
    expect(records[1]).toMatchObject({ level: 40, seq: 1, text: 'line\nwith newline' });
    expect(records[2]).toMatchObject({ seq: 2, channel: 'mcp-http', session: 's2' });
    expect(warnings).toEqual([]);
  });

  test('folder 0700 when created, file 0600 even when it existed with a wider mode', async () => {
    const dir = join(root, 'private');
    const file = join(dir, 'p.ndjson');
    const w = new LogWriter({ file, ...base });
    w.write({ time: 1, kind: 'lifecycle', event: 'start', msg: 's' });
    await w.close();
    expect(statSync(dir).mode & 0o777).toBe(0o700);
    expect(statSync(file).mode & 0o777).toBe(0o600);
    const wide = join(root, 'wide.ndjson');
    writeFileSync(wide, '', { mode: 0o644 });
    const w2 = new LogWriter({ file: wide, ...base });
    await w2.close();
    expect(statSync(wide).mode & 0o777).toBe(0o600);
  });

  test('appends to an existing log rather than truncating it', async () => {
    const file = join(root, 'append.ndjson');
    for (const msg of ['first', 'second']) {
      const w = new LogWriter({ file, ...base });
      w.write({ time: 1, kind: 'lifecycle', event: 'start', msg });
      await w.close();
    }
    expect(lines(file).map((r) => r.msg)).toEqual(['first', 'second']);
  });

  test('close() waits for the write in flight and writes everything queued, in order', async () => {
    const file = join(root, 'order.ndjson');
    const w = new LogWriter({ file, ...base });
    for (let i = 0; i < 1000; i++) w.write({ time: i, kind: 'lifecycle', event: 'warning', msg: `m${i}` });
    await w.close();
    const records = lines(file);
    expect(records.map((r) => r.seq)).toEqual(Array.from({ length: 1000 }, (_, i) => i));
    // Writing after close neither throws nor reaches the file.
    expect(() => w.write({ time: 0, kind: 'lifecycle', event: 'warning', msg: 'late' })).not.toThrow();
    expect(lines(file)).toHaveLength(1000);
  });

  test('records reach the file on their own within moments, without close(), and in order', async () => {
    const file = join(root, 'live.ndjson');
    const w = new LogWriter({ file, ...base });
    w.write({ time: 1, kind: 'lifecycle', event: 'start', msg: 'one' });
    // Coalesced behind a short timer, not held until exit: a live reader (mcptap ui, tail -f) sees it soon.
    const until = Date.now() + 2000;
    while (!(existsSync(file) && readFileSync(file, 'utf8').includes('"one"')) && Date.now() < until) await new Promise((r) => setTimeout(r, 5));
    expect(lines(file).map((r) => r.msg)).toEqual(['one']);
    for (let i = 0; i < 50; i++) w.write({ time: 2, kind: 'lifecycle', event: 'warning', msg: `m${i}` });
    await w.close();
    expect(lines(file).map((r) => r.msg)).toEqual(['one', ...Array.from({ length: 50 }, (_, i) => `m${i}`)]);
  });

  test('a queue of several MB goes out in slices, whole records, in order', async () => {
    const file = join(root, 'slices.ndjson');
    const w = new LogWriter({ file, ...base });
    const pad = 'p'.repeat(1000);
    for (let i = 0; i < 4000; i++) w.write({ time: i, kind: 'lifecycle', event: 'warning', msg: `${i} ${pad}` });
    await w.close();
    const records = lines(file);
    expect(records.map((r) => r.seq)).toEqual(Array.from({ length: 4000 }, (_, i) => i));
    expect(records.every((r) => String(r.msg).endsWith(pad))).toBe(true);
  });

  test('multi-byte text survives the queue\u2019s block boundaries byte for byte', async () => {
    const file = join(root, 'utf8-blocks.ndjson');
    const w = new LogWriter({ file, ...base });
    // 1, 2, 3 and 4 bytes per character, in records of uneven length, so boundaries fall everywhere.
    const text = (i: number) => `a\u00e9\u20ac\u{1F600}`.repeat(50 + (i % 97));
    for (let i = 0; i < 3000; i++) w.write({ time: i, kind: 'lifecycle', event: 'warning', msg: text(i) });
    await w.close();
    const records = lines(file);
    expect(records.map((r) => r.seq)).toEqual(Array.from({ length: 3000 }, (_, i) => i));
    expect(records.every((r, i) => r.msg === text(i))).toBe(true);
  });

  test('long records, all ASCII or with one character beyond it, come out byte for byte', async () => {
    const file = join(root, 'long-records.ndjson');
    const w = new LogWriter({ file, ...base });
    // Long records, all ASCII or with characters of 2 and 4 bytes at their end.
    const raw = (i: number) => `${'x'.repeat(4000 + i * 97)}${i % 2 === 1 ? '\u00e9\u{1F600}' : ''}`;
    for (let i = 0; i < 400; i++) w.write({ time: i, kind: 'invalid', dir: 's2c', reason: 'plain text, not JSON', raw: raw(i), bytes: 0, msg: 'long' });
    await w.close();
    const records = lines(file);
    expect(records).toHaveLength(400);
    expect(records.every((r, i) => r.raw === raw(i))).toBe(true);
  });

  test('a record with room left for its characters but not its bytes goes whole into the next block', async () => {
    const file = join(root, 'bytes-not-chars.ndjson');
    const w = new LogWriter({ file, ...base });
    // 30,000 three-byte characters: the third record finds 80 KiB of a 256 KiB block left, room for its
    // characters and not for their 90 KB; an all-ASCII one between keeps the boundaries moving.
    const text = (i: number) => (i % 4 === 3 ? 'x'.repeat(70_000 + i) : '\u20ac'.repeat(30_000 + i));
    for (let i = 0; i < 40; i++) w.write({ time: i, kind: 'stderr', dir: 's2c', text: text(i), bytes: 0, msg: 'x' });
    await w.close();
    const records = lines(file);
    expect(records).toHaveLength(40);
    expect(records.every((r, i) => r.text === text(i))).toBe(true);
  });

  test('a flood past the queue bound drops frame records, keeps mcptap\u2019s own, and says in the log how many went', { timeout: 30_000 }, async () => {
    const file = join(root, 'flood.ndjson');
    const warnings: string[] = [];
    const w = new LogWriter({ file, ...base, warn: (m) => warnings.push(m) });
    const big = 'y'.repeat(100 * 1024);
    // All in one turn: nothing can be written meanwhile, so the 64 MiB queue fills and the rest is dropped.
    for (let i = 0; i < 700; i++) w.write({ time: i, kind: 'invalid', dir: 's2c', reason: 'plain text, not JSON', raw: big, bytes: big.length, msg: 'flood' });
    // The server's stderr may still fill the queue to twice its bound; mcptap's own records always get in.
    w.write({ time: 998, kind: 'stderr', dir: 's2c', text: 'Traceback: the crash', bytes: 20, msg: 'Server stderr: Traceback' });
    w.write({ time: 999, kind: 'lifecycle', event: 'exit', code: 0, signal: null, durationMs: 1, msg: 'exit' });
    await w.close();
    const records = lines(file);
    const kept = records.filter((r) => r.kind === 'invalid').length;
    expect(kept).toBeGreaterThan(100);
    expect(kept).toBeLessThan(700);
    expect(records.at(-3)).toMatchObject({ kind: 'stderr', text: 'Traceback: the crash' });
    expect(records.at(-2)).toMatchObject({ kind: 'lifecycle', event: 'warning', dropped: 700 - kept, msg: `${700 - kept} records were dropped before this point: the log fell behind the traffic (the traffic itself was not affected).` });
    expect(records.at(-1)).toMatchObject({ kind: 'lifecycle', event: 'exit' });
    expect(warnings).toEqual([expect.stringMatching(/is falling behind the traffic; records are being dropped/)]);
  });

  test('check\u2019s counts of a log that dropped records under a flood add up: lost answers are unknown', { timeout: 30_000 }, async () => {
    const file = join(root, 'flood-calls.ndjson');
    const w = new LogWriter({ file, ...base, warn: () => {} });
    const big = 'z'.repeat(100 * 1024);
    // Past the 64 MiB queue in one turn: a writer whose caller never waits for the disk (inline inspection).
    for (let i = 0; i < 400; i++) {
      const seq = w.write({ time: i, kind: 'request', dir: 'c2s', id: i, method: 'tools/call', raw: big, bytes: big.length, msg: 'call' });
      w.write({ time: i, kind: 'response', dir: 's2c', id: i, method: 'tools/call', requestSeq: seq, raw: big, bytes: big.length, msg: 'answer' });
    }
    w.write({ time: 999, kind: 'lifecycle', event: 'exit', code: 0, signal: null, durationMs: 1, msg: 'exit' });
    await w.close();
    const s = checkRecords(lines(file) as unknown as LogRecord[]).sessions[0]!;
    expect(s.dropped).toBeGreaterThan(0);
    expect(s.counts.unanswered).toBe(0);
    expect(s.unknown).toBeLessThanOrEqual(s.requests);
  });

  test('a writer that waits while the logs are backlogged (as the inspection thread does) loses nothing', { timeout: 30_000 }, async () => {
    const file = join(root, 'waits.ndjson');
    const warnings: string[] = [];
    const w = new LogWriter({ file, ...base, warn: (m) => warnings.push(m) });
    const big = 'z'.repeat(100 * 1024);
    // 30 MB: past the 8 MiB at which a waiting caller holds back, several times.
    for (let i = 0; i < 300; i++) {
      if (logsBacklogged()) await whenLogsDrained();
      w.write({ time: i, kind: 'invalid', dir: 's2c', reason: 'plain text, not JSON', raw: big, bytes: big.length, msg: 'flood' });
    }
    await w.close();
    expect(lines(file).filter((r) => r.kind === 'invalid')).toHaveLength(300);
    expect(logsBacklogged()).toBe(false);
    expect(warnings).toEqual([]);
  });

  test('queue blocks filled again once written keep every record byte for byte, two logs sharing them', { timeout: 30_000 }, async () => {
    // 2 × 30 MB of records that differ from each other: a block filled again while a write still read it would
    // put one record's bytes into another's place.
    const files = [join(root, 'reuse-a.ndjson'), join(root, 'reuse-b.ndjson')];
    const writers = files.map((file) => new LogWriter({ file, ...base }));
    const text = (w: number, i: number) => `${w}:${i}:${String.fromCharCode(65 + ((i * 7 + w) % 26)).repeat(100 * 1024)}`;
    for (let i = 0; i < 300; i++) {
      if (logsBacklogged()) await whenLogsDrained();
      writers.forEach((writer, w) => writer.write({ time: i, kind: 'stderr', dir: 's2c', text: text(w, i), bytes: 0, msg: 'x' }));
    }
    await Promise.all(writers.map((writer) => writer.close()));
    files.forEach((file, w) => {
      const texts = lines(file).map((r) => r.text);
      expect(texts).toHaveLength(300);
      texts.forEach((t, i) => expect(t === text(w, i)).toBe(true));
    });
  });

  test('an unwritable folder (a path under a regular file) warns once and never throws', async () => {
    const blocker = join(root, 'regular-file');
    writeFileSync(blocker, 'x');
    const warnings: string[] = [];
    const w = new LogWriter({ file: join(blocker, 'sub', 'log.ndjson'), ...base, warn: (m) => warnings.push(m) });
    expect(w.healthy).toBe(false);
    expect(w.write({ time: 1, kind: 'lifecycle', event: 'start', msg: 's' })).toBe(0);
    expect(w.write({ time: 2, kind: 'lifecycle', event: 'exit', msg: 'e' })).toBe(1);
    w.flushSync();
    await w.close();
    expect(warnings).toHaveLength(1);
    expect(warnings[0]).toMatch(/^cannot write the log .*regular-file\/sub\/log\.ndjson \((ENOTDIR|EEXIST)[^)]*\); the traffic goes on without a log\. Choose another folder with --log-dir or MCPTAP_LOG_DIR\.$/);
  });

  test.skipIf(!existsSync('/dev/full'))('a full disk (/dev/full) warns once and never throws', async () => {
    const warnings: string[] = [];
    const w = new LogWriter({ file: '/dev/full', ...base, warn: (m) => warnings.push(m) });
    const big = 'z'.repeat(64 * 1024);
    for (let i = 0; i < 50; i++) w.write({ time: i, kind: 'stderr', dir: 's2c', text: big, bytes: big.length, msg: 'x' });
    w.flushSync();
    await new Promise((r) => setTimeout(r, 50));
    for (let i = 0; i < 5; i++) w.write({ time: i, kind: 'lifecycle', event: 'warning', msg: 'after' });
    w.flushSync();
    await w.close();
    expect(warnings).toHaveLength(1);
    expect(warnings[0]).toMatch(/ENOSPC/);
    expect(w.healthy).toBe(false);
  });
});

describe('AppendFile: what a short write leaves', () => {
  const parts = () => [Buffer.from('abc'), Buffer.from('de'), Buffer.from('fghi')];
  const text = (buffers: Buffer[]) => Buffer.concat(buffers).toString();

  test('the rest after every possible count of written bytes, across block boundaries', () => {
    for (let written = 0; written <= 9; written++) expect(text(unwritten(parts(), written))).toBe('abcdefghi'.slice(written));
  });

  test('everything written leaves nothing', () => {
    expect(unwritten(parts(), 9)).toEqual([]);
  });
});
