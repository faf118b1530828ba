import { existsSync, mkdirSync, readdirSync, readFileSync, writeFileSync } from 'node:fs';
import { join } from 'node:path';
import { describe, expect, test } from 'vitest';
import { LONG_LINE, listLogFiles, parseRecordLine, readAllRecords, readLogs, type LogProblem } from '../../src/log/reader.js';
import { FRAME_HEAD_BYTES } from '../../src/log/long-line.js';
import { McptapError } from '../../src/types.js';
import { LOG_FORMAT_VERSION, type LogRecord } from '../../src/log/schema.js';
import { pendingOfEvicted } from '../../src/log/evicted.js';
import { tempDir } from '../support/temp-dir.js';

const root = tempDir('mcptap-reader-');

const rec = (session: string, seq: number, time: number, extra: Record<string, unknown> = {}) =>
  JSON.stringify({ level: 30, v: 1, time, seq, session, channel: 'stdio', label: session, kind: 'lifecycle', event: 'warning', msg: `${session}#${seq}`, ...extra });

function file(name: string, lines: string[]): string {
  const path = join(root, name);
  mkdirSync(join(path, '..'), { recursive: true });
  writeFileSync(path, lines.join('\n') + '\n');
  return path;
}

describe('reader', () => {
  test('merges files by time; ties broken by file order, then seq', async () => {
    const a = file('m/a.ndjson', [rec('a', 0, 10), rec('a', 1, 20), rec('a', 2, 20), rec('a', 3, 40)]);
    const b = file('m/b.ndjson', [rec('b', 0, 5), rec('b', 1, 20), rec('b', 2, 30)]);
    const msgs = (await readAllRecords([b, a])).map((r) => r.msg);
    // b is listed first, so b's record at time 20 comes before a's.
    expect(msgs).toEqual(['b#0', 'a#0', 'b#1', 'a#1', 'a#2', 'b#2', 'a#3']);
    expect((await readAllRecords([a, b])).map((r) => r.msg)).toEqual(['b#0', 'a#0', 'a#1', 'a#2', 'b#1', 'b#2', 'a#3']);
  });

  test('within one file, records of the same time keep seq order', async () => {
    const f = file('same.ndjson', [rec('s', 0, 7), rec('s', 1, 7), rec('s', 2, 7)]);
    expect((await readAllRecords([f])).map((r) => r.seq)).toEqual([0, 1, 2]);
  });

  test('a folder means its *.ndjson files, sorted by name', async () => {
    file('dir/2.ndjson', [rec('two', 0, 1)]);
    file('dir/1.ndjson', [rec('one', 0, 1)]);
    file('dir/notes.txt', ['not a log']);
    const files = await listLogFiles([join(root, 'dir')]);
    expect(files.map((f) => f.slice(root.length))).toEqual(['/dir/1.ndjson', '/dir/2.ndjson']);
    expect((await readAllRecords([join(root, 'dir')])).map((r) => r.msg)).toEqual(['one#0', 'two#0']);
  });

  test('a missing path is a plain sentence', async () => {
    const error = await listLogFiles([join(root, 'nope')]).catch((e: unknown) => e);
    expect(error).toBeInstanceOf(McptapError);
    expect((error as McptapError).code).toBe('LOG_NOT_FOUND');
    expect((error as McptapError).message).toMatch(/^There is no log at .*nope\. Give a log file or a folder of logs/);
  });

  test('lines that are not records are reported with file and line, never thrown; empty lines ignored', async () => {
    const f = file('bad.ndjson', [rec('x', 0, 1), '', 'garbage', '[1]', '{"v":1,"kind":"request"}', rec('x', 1, 2), '{"v":1,"time":3,"seq":2,"ki']);
    const problems: LogProblem[] = [];
    const records = await readAllRecords([f], { onProblem: (p) => problems.push(p) });
    expect(records.map((r) => r.seq)).toEqual([0, 1]);
    expect(problems.map((p) => [p.line, p.message])).toEqual([
      [3, 'not JSON (a torn write, or not an mcptap log)'],
      [4, 'not a JSON object'],
      [5, 'not an mcptap record (no v, kind or time)'],
      [7, 'not JSON (a torn write, or not an mcptap log)'],
    ]);
    expect(problems.every((p) => p.file === f)).toBe(true);
  });

  test('CRLF logs read the same', async () => {
    const path = join(root, 'crlf.ndjson');
    writeFileSync(path, `${rec('c', 0, 1)}\r\n${rec('c', 1, 2)}\r\n`);
    expect((await readAllRecords([path])).map((r) => r.seq)).toEqual([0, 1]);
  });

  test('records of a newer version pass through as they are', () => {
    const parsed = parseRecordLine(rec('n', 0, 1, { v: 99, futureField: { x: 1 } }));
    expect(parsed).toEqual({ record: expect.objectContaining({ v: 99, futureField: { x: 1 } }) });
    expect(parseRecordLine('   ')).toBeUndefined();
  });

  test('readLogs streams with file and line', async () => {
    const f = file('stream.ndjson', [rec('s', 0, 1), rec('s', 1, 2)]);
    const seen: [number, string][] = [];
    for await (const { line, file: from } of readLogs([f])) seen.push([line, from]);
    expect(seen).toEqual([
      [1, f],
      [2, f],
    ]);
  });

  test.skipIf(!existsSync('/proc/self/fd'))('a folder of many logs is read with a few files open at a time, merged exactly', async () => {
    // One file per session, as a host that starts servers all day leaves them (macOS allows 256 open files).
    // Each file is longer than what a reader buffers ahead (readline: 1024 lines), so an open reader holds its
    // file open.
    const dir = join(root, 'many');
    mkdirSync(dir);
    const n = 60;
    const perFile = 1100;
    for (let i = 0; i < n; i++) {
      // Sessions in sequence, except every tenth overlaps the next; names sort in another order than time.
      const start = i * 10_000;
      const lines = Array.from({ length: perFile }, (_, j) => rec(`s${i}`, j, start + j));
      if (i % 10 === 0) lines.push(rec(`s${i}`, perFile, start + 10_500));
      writeFileSync(join(dir, `s${String((i * 37) % n).padStart(3, '0')}.ndjson`), `${lines.join('\n')}\n`);
    }
    writeFileSync(join(dir, 'garbage.ndjson'), 'not a record\n');
    const fds = () => readdirSync('/proc/self/fd').length;
    const baseline = fds();
    let most = 0;
    const seen: [number, string][] = [];
    const problems: LogProblem[] = [];
    let count = 0;
    for await (const { record } of readLogs([dir], { onProblem: (p) => problems.push(p) })) {
      if (count++ % 100 === 0) most = Math.max(most, fds() - baseline);
      seen.push([record.time, record.session]);
    }
    expect(seen).toHaveLength(n * perFile + n / 10);
    const times = seen.map(([t]) => t);
    expect(times).toEqual([...times].sort((a, b) => a - b));
    // The overlapping last record of session 0 comes among the records of session 1.
    const late = seen.findIndex(([t, s]) => t === 10_500 && s === 's0');
    expect(late).toBeGreaterThan(0);
    expect([seen[late - 1]![1], seen[late + 1]![1]]).toEqual(['s1', 's1']);
    expect(most).toBeLessThan(8);
    expect(problems.map((p) => [p.file.endsWith('garbage.ndjson'), p.line])).toEqual([[true, 1]]);
  });
});

describe('every record is checked against its kind as it is read', () => {
  test('a record without the fields of its kind is a problem that names them, never a record', () => {
    expect(parseRecordLine('{"v":1,"kind":"llm-response","time":1}')).toEqual({
      problem: 'an llm-response record without seq, session, channel, label, msg, exchange, endpoint, status, content, toolCalls and durationMs',
    });
    const noLabel = JSON.parse(rec('s', 0, 1)) as Record<string, unknown>;
    delete noLabel.label;
    expect(parseRecordLine(JSON.stringify(noLabel))).toEqual({ problem: 'a lifecycle record without label' });
  });

  test('a field of the wrong type is a problem; fields the contract does not name pass', () => {
    expect(parseRecordLine(rec('s', 0, 1, { kind: 'stderr', text: 3, bytes: 1, dir: 's2c' }))).toEqual({ problem: 'a stderr record with a wrong type for text (a string)' });
    expect(parseRecordLine(rec('s', 0, 1, { code: 'x' }))).toEqual({ problem: 'a lifecycle record with a wrong type for code (a number or null)' });
    expect(parseRecordLine(rec('s', 0, 1, { somethingNew: [1, { a: 2 }] }))).toHaveProperty('record');
  });

  test('an evicted record (v6) reads as the pending records of its requests; a malformed one is a problem', () => {
    const requests = [
      { dir: 'c2s', id: 7, method: 'tools/call', tool: 'slow', requestSeq: 3, ageMs: 12.5 },
      { dir: 's2c', id: 'x', method: 'subscriptions/listen', requestSeq: 4, ageMs: 2 },
      { dir: 'c2s', id: 8, method: 'ping', requestSeq: 5, ageMs: 1, cancelled: true },
    ];
    const line = rec('s', 9, 100, { v: 6, kind: 'evicted', level: 40, msg: 'mcptap stops tracking 3 requests', requests });
    const parsed = parseRecordLine(line);
    if (!parsed || !('record' in parsed) || parsed.record.kind !== 'evicted') throw new Error('not read');
    const stamp = { v: 6, time: 100, seq: 9, session: 's', channel: 'stdio', label: 's', kind: 'pending', evicted: true };
    expect(pendingOfEvicted(parsed.record)).toEqual([
      { ...stamp, dir: 'c2s', id: 7, method: 'tools/call', tool: 'slow', requestSeq: 3, ageMs: 12.5, level: 40, msg: "The client's request tools/call slow #7 has waited 13 ms without an answer; mcptap stops tracking it to bound memory." },
      { ...stamp, dir: 's2c', id: 'x', method: 'subscriptions/listen', requestSeq: 4, ageMs: 2, level: 30, subscription: true, msg: "The client's subscription (subscriptions/listen #x) has been open for 2 ms; mcptap stops tracking it to bound memory. A subscription gets a response only when the server ends it." },
      { ...stamp, dir: 'c2s', id: 8, method: 'ping', requestSeq: 5, ageMs: 1, level: 30, cancelled: true, msg: "The client cancelled its request ping #8 and, as MCP says, got no answer (1 ms after it was sent; mcptap stops tracking it)." },
    ]);
    const wrong = 'an evicted record with a wrong type for requests (a list of requests, each with a dir, id, method, requestSeq and ageMs)';
    expect(parseRecordLine(rec('s', 9, 100, { v: 6, kind: 'evicted', requests: [{ ...requests[0], requestSeq: undefined }] }))).toEqual({ problem: wrong });
    expect(parseRecordLine(rec('s', 9, 100, { v: 6, kind: 'evicted', requests: [] }))).toEqual({ problem: wrong });
    expect(parseRecordLine(rec('s', 9, 100, { v: 6, kind: 'evicted' }))).toEqual({ problem: 'an evicted record without requests' });
  });

  test('an unknown kind is a problem, unless a newer mcptap wrote it', () => {
    expect(parseRecordLine(rec('s', 0, 1, { kind: 'telepathy' }))).toEqual({ problem: 'a record of an unknown kind "telepathy"' });
    expect(parseRecordLine(rec('s', 0, 1, { kind: 'telepathy', v: 99 }))).toHaveProperty('record');
  });
});

describe('format versions', () => {
  /** The odd frames (quotes, backslashes, control characters, lone surrogates, U+2028, batches, …) as a log. */
  async function logOf(framesFile: string, out: string): Promise<void> {
    const { StdioInspector } = await import('../../src/inspect/stdio-inspector.js');
    const { openLogForInspection } = await import('../../src/inspect/inspector-log.js');
    const { CALL } = await import('../../src/capture/stdio-calls.js');
    const config = openLogForInspection({ logFile: out, session: 'odd-20261202T000000Z-1', label: 'odd', maxBody: 1024 * 1024 }, () => {});
    const inspector = new StdioInspector(config, { notice: () => {} });
    const T = 1796000000000;
    readFileSync(framesFile, 'utf8').split('\n').filter(Boolean).forEach((line, i) => {
      inspector.apply([CALL.data, Number(line[0]), Buffer.from(`${line.slice(2)}\n`), T + i, i * 1.5]);
    });
    inspector.apply([CALL.endStreams, T + 100, 200]);
    await inspector.close([CALL.close, { time: T + 101, kind: 'lifecycle', event: 'exit', code: 0, signal: null, msg: 'The server exited with code 0.' }]);
  }

  test('a v1 log (raw escaped into strings) reads as the same records as the v2 log of the same frames', async () => {
    const v2 = join(root, 'odd-v2.ndjson');
    await logOf('fixtures/logs/odd-frames.txt', v2);
    const lines = readFileSync(v2, 'utf8').split('\n').filter(Boolean);
    // Frames of one-line JSON are written as JSON in v2; the others (plain text, a CR inside) as strings.
    expect(lines.filter((l) => /"raw":[{[ ]/.test(l))).toHaveLength(14);
    const withoutV = (records: LogRecord[]) => records.map(({ v: _v, ...rest }) => rest);
    const [old, current] = [await readAllRecords(['fixtures/logs/odd-frames-v1.ndjson']), await readAllRecords([v2])];
    expect(old.every((r) => r.v === 1) && current.every((r) => r.v === LOG_FORMAT_VERSION)).toBe(true);
    expect(withoutV(current)).toEqual(withoutV(old));
    // The frames themselves, exactly as they were on the wire.
    const frames = readFileSync('fixtures/logs/odd-frames.txt', 'utf8').split('\n').filter(Boolean).map((l) => l.slice(2).replace(/\r$/, ''));
    const raws = current.filter((r) => 'raw' in r && !('batch' in r && r.batch)).map((r) => (r as { raw: string }).raw);
    for (const frame of frames) if (!frame.includes('hunter2') && !frame.startsWith('[')) expect(raws).toContain(frame);
  });
});

describe('a line too long to hold', () => {
  // A tools/call answer of 6 MiB of text, with characters a cut could split: é (2 bytes), \n escaped, \u escapes.
  const text = 'é\n\u0001abc'.repeat(Math.ceil((LONG_LINE * 1.5) / 7));
  const frame = JSON.stringify({ result: { content: [{ type: 'text', text }] }, jsonrpc: '2.0', id: 1 });
  const answer = { level: 30, v: 1, time: 20, seq: 1, session: 's', channel: 'stdio', label: 's', kind: 'response', dir: 's2c', id: 1, method: 'tools/call', requestSeq: 0, msg: 'Tool answered.', bytes: Buffer.byteLength(frame) };
  const lines = {
    // v1: the frame escaped into a string, in the middle of the record.
    v1: JSON.stringify({ ...answer, raw: frame, tool: 'echo' }),
    // v2: the frame as JSON, the record's last field.
    v2: `${JSON.stringify({ ...answer, v: 2, tool: 'echo' }).slice(0, -1)},"raw":${frame}}`,
  };

  test.each(['v1', 'v2'] as const)('%s: a slim reader keeps the frame\u2019s head, marked truncated, and every other field', async (v) => {
    const path = file(`long/${v}.ndjson`, [rec('s', 0, 10), lines[v], rec('s', 2, 30)]);
    expect(lines[v].length).toBeGreaterThan(LONG_LINE);
    const problems: LogProblem[] = [];
    const records = await readAllRecords([path], { slim: true, onProblem: (p) => problems.push(p) });
    expect(problems).toEqual([]);
    expect(records.map((r) => r.seq)).toEqual([0, 1, 2]);
    const r = records[1] as LogRecord & { raw: string; truncated?: boolean };
    expect(r).toMatchObject({ kind: 'response', method: 'tools/call', tool: 'echo', msg: 'Tool answered.', bytes: Buffer.byteLength(frame), truncated: true });
    expect(Buffer.byteLength(r.raw)).toBeLessThanOrEqual(FRAME_HEAD_BYTES);
    // v2 keeps 1 MiB of the frame; v1 1 MiB of its escaped text (each \\n and \\u0001 escape is longer than its character).
    expect(Buffer.byteLength(r.raw)).toBeGreaterThan(v === 'v2' ? FRAME_HEAD_BYTES - 8 : FRAME_HEAD_BYTES * 0.8);
    expect(frame.startsWith(r.raw)).toBe(true);
    // Read whole by a reader that copies frames out.
    const whole = await readAllRecords([path]);
    expect((whole[1] as LogRecord & { raw: string }).raw).toBe(frame);
    expect(whole[1]).not.toHaveProperty('truncated');
  });

  test('a torn long line is a problem, and the lines after it are read', async () => {
    const path = file('long/torn.ndjson', [rec('s', 0, 10), lines.v1.slice(0, LONG_LINE + 1000), rec('s', 2, 30)]);
    const problems: LogProblem[] = [];
    const records = await readAllRecords([path], { slim: true, onProblem: (p) => problems.push(p) });
    expect(records.map((r) => r.seq)).toEqual([0, 2]);
    expect(problems.map((p) => [p.line, p.message])).toEqual([[2, 'not JSON (a torn write, or not an mcptap log)']]);
  });
});
