/**
 * Private and bounded on disk: log files 0600 in folders 0700 whatever the umask (and even when the file was
 * there before with wider modes); --max-log-mb rotates into parts that stay under the cap and read back whole.
 */
import { spawn } from 'node:child_process';
import { chmodSync, readdirSync, rmSync, statSync, writeFileSync } from 'node:fs';
import { join, resolve } from 'node:path';
import { describe, expect, it } from 'vitest';
import { LogWriter, readAllRecords } from '../../src/index.js';
import { tempDir } from '../support/temp-dir.js';

const BIN = resolve(import.meta.dirname, '../../bin/mcptap.js');
const mode = (path: string): number => statSync(path).mode & 0o777;

describe('private by default', () => {
  it('a new folder is 0700 and a new log 0600, even with umask 000', async () => {
    const previous = process.umask(0o000);
    try {
      const dir = join(tempDir('mcptap-modes-'), 'a', 'logs');
      const writer = new LogWriter({ file: join(dir, 'x.ndjson'), session: 's', channel: 'stdio', label: 'x' });
      writer.write({ time: 1, kind: 'lifecycle', event: 'start', msg: 'start' });
      await writer.close();
      expect(mode(dir)).toBe(0o700);
      expect(mode(join(dir, 'x.ndjson'))).toBe(0o600);
    } finally {
      process.umask(previous);
    }
  });

  it('a log that existed with wider modes is made 0600 before anything is written', async () => {
    const dir = tempDir('mcptap-modes-');
    const file = join(dir, 'old.ndjson');
    writeFileSync(file, '');
    chmodSync(file, 0o644);
    const writer = new LogWriter({ file, session: 's', channel: 'stdio', label: 'x' });
    expect(mode(file)).toBe(0o600);
    await writer.close();
  });

  it('rotated parts are 0600 too', async () => {
    const dir = tempDir('mcptap-modes-');
    const writer = new LogWriter({ file: join(dir, 'r.ndjson'), session: 's', channel: 'stdio', label: 'x', maxFileBytes: 300 });
    for (let i = 0; i < 20; i++) writer.write({ time: i, kind: 'stderr', dir: 's2c', text: 'x'.repeat(50), bytes: 50, msg: 'line' });
    await writer.close();
    expect(writer.files.length).toBeGreaterThan(2);
    for (const f of writer.files) expect(mode(f), f).toBe(0o600);
  });
});

describe('--max-log-mb', () => {
  it('the CLI keeps every part under the cap, and the parts read back as one complete log', async () => {
    const logDir = tempDir('mcptap-rotate-');
    const lines = Array.from({ length: 3000 }, (_, i) => `${JSON.stringify({ jsonrpc: '2.0', id: i, method: 'tools/call', params: { name: 'echo', arguments: { pad: 'y'.repeat(100) } } })}\n`).join('');
    const child = spawn(process.execPath, [BIN, '--max-log-mb', '0.25', '--log-dir', logDir, '--', 'cat'], { stdio: ['pipe', 'pipe', 'ignore'] });
    let out = '';
    child.stdout.on('data', (c: Buffer) => (out += c.toString()));
    child.stdin.end(lines);
    const code = await new Promise<number | null>((r) => child.on('close', r));
    expect(code).toBe(0);
    expect(out).toBe(lines);
    const files = readdirSync(logDir).sort();
    expect(files.length).toBeGreaterThan(3);
    expect(files.slice(1).every((f) => /\.part\d{3}\.ndjson$/.test(f))).toBe(true);
    for (const f of files) expect(statSync(join(logDir, f)).size).toBeLessThanOrEqual(0.25 * 1024 * 1024);
    const records = await readAllRecords([logDir]);
    // 3000 lines each way, the start, stdin-end and exit records: nothing lost across parts, seq unbroken.
    expect(records.filter((r) => r.kind === 'request')).toHaveLength(6000);
    const seqs = records.map((r) => r.seq).sort((a, b) => a - b);
    expect(seqs).toEqual(Array.from({ length: seqs.length }, (_, i) => i));
    expect(records.at(-1)?.kind).toBe('lifecycle');
  });

  it('--max-log-files keeps only the newest parts', async () => {
    const logDir = tempDir('mcptap-rotate-');
    const lines = Array.from({ length: 2000 }, (_, i) => `{"jsonrpc":"2.0","method":"n","params":{"i":${i},"pad":"${'z'.repeat(100)}"}}\n`).join('');
    const child = spawn(process.execPath, [BIN, '--max-log-mb', '0.1', '--max-log-files', '2', '--log-dir', logDir, '--', 'cat'], { stdio: ['pipe', 'ignore', 'ignore'] });
    child.stdin.end(lines);
    expect(await new Promise((r) => child.on('close', r))).toBe(0);
    const files = readdirSync(logDir);
    expect(files).toHaveLength(2);
    expect(files.every((f) => /\.part\d{3}\.ndjson$/.test(f))).toBe(true);
  });
});

describe('files made from a log are private too', () => {
  it('export, view -o and check -o write 0600, even over a file that was 0644', async () => {
    const logDir = tempDir('mcptap-out-');
    const frames = `${JSON.stringify({ jsonrpc: '2.0', id: 1, method: 'ping' })}\n`;
    const wrap = spawn(process.execPath, [BIN, '--log-dir', logDir, '--', 'cat'], { stdio: ['pipe', 'ignore', 'ignore'] });
    wrap.stdin.end(frames);
    expect(await new Promise((r) => wrap.on('close', r))).toBe(0);
    const outDir = tempDir('mcptap-out-files-');
    const wide = join(outDir, 'wide.json');
    writeFileSync(wide, 'old');
    chmodSync(wide, 0o644);
    const runs: [string, string[]][] = [
      [join(outDir, 'export.har'), ['export', '--format', 'har', '-o']],
      [wide, ['export', '--format', 'otlp', '-o']],
      [join(outDir, 'view.txt'), ['view', '-o']],
      [join(outDir, 'check.txt'), ['check', '-o']],
    ];
    for (const [file, args] of runs) {
      const child = spawn(process.execPath, [BIN, ...args, file, logDir], { stdio: ['ignore', 'ignore', 'pipe'] });
      let err = '';
      child.stderr.on('data', (c: Buffer) => (err += c.toString()));
      const code = await new Promise<number | null>((r) => child.on('close', r));
      // check exits 1 on this log (cat echoes the ping back, unanswered): a verdict, not a failure to write.
      expect(code === 0 || (args[0] === 'check' && code === 1), `${args.join(' ')} exited ${code}: ${err}`).toBe(true);
      expect(mode(file), args.join(' ')).toBe(0o600);
    }
  });
});

describe('a log folder removed mid-session', () => {
  it('warns once, makes the folder again and logs on there', async () => {
    const dir = join(tempDir('mcptap-gone-'), 'logs');
    const warnings: string[] = [];
    const file = join(dir, 'x.ndjson');
    const writer = new LogWriter({ file, session: 's', channel: 'stdio', label: 'x', warn: (m) => warnings.push(m) });
    const t0 = Date.now();
    writer.write({ time: t0, kind: 'lifecycle', event: 'start', msg: 'start' });
    await new Promise((r) => setTimeout(r, 50));
    rmSync(dir, { recursive: true, force: true });
    for (let i = 1; i <= 5; i++) writer.write({ time: t0 + 1000 * i, kind: 'stderr', dir: 's2c', text: `line ${i}`, bytes: 6, msg: `line ${i}` });
    await writer.close();
    expect(warnings).toHaveLength(1);
    expect(warnings[0]).toMatch(/was removed during the session; mcptap made it again/);
    expect(mode(dir)).toBe(0o700);
    const records = await readAllRecords([dir]);
    expect(records[0]).toMatchObject({ kind: 'lifecycle', event: 'warning' });
    expect(records.filter((r) => r.kind === 'stderr').map((r) => (r as { text: string }).text)).toEqual(['line 1', 'line 2', 'line 3', 'line 4', 'line 5']);
  });

  it('a folder made read-only mid-session is no reason to stop: the open log goes on, without a warning', async () => {
    const dir = tempDir('mcptap-readonly-');
    const file = join(dir, 'x.ndjson');
    const warnings: string[] = [];
    const writer = new LogWriter({ file, session: 's', channel: 'stdio', label: 'x', warn: (m) => warnings.push(m) });
    const t0 = Date.now();
    writer.write({ time: t0, kind: 'lifecycle', event: 'start', msg: 'start' });
    chmodSync(dir, 0o500);
    try {
      for (let i = 1; i <= 3; i++) writer.write({ time: t0 + 1000 * i, kind: 'stderr', dir: 's2c', text: `line ${i}`, bytes: 6, msg: `line ${i}` });
      await writer.close();
    } finally {
      chmodSync(dir, 0o700);
    }
    expect(warnings).toEqual([]);
    expect((await readAllRecords([file])).map((r) => r.kind)).toEqual(['lifecycle', 'stderr', 'stderr', 'stderr']);
  });

  it('says plainly when the folder cannot be made again', async () => {
    // A file where the folder was stops even root from making it again.
    const parent = tempDir('mcptap-gone-');
    const dir = join(parent, 'logs');
    const warnings: string[] = [];
    const writer = new LogWriter({ file: join(dir, 'x.ndjson'), session: 's', channel: 'stdio', label: 'x', warn: (m) => warnings.push(m) });
    const t0 = Date.now();
    writer.write({ time: t0, kind: 'lifecycle', event: 'start', msg: 'start' });
    await new Promise((r) => setTimeout(r, 50));
    rmSync(dir, { recursive: true, force: true });
    writeFileSync(dir, 'a file where the folder was');
    writer.write({ time: t0 + 1000, kind: 'stderr', dir: 's2c', text: 'lost', bytes: 4, msg: 'lost' });
    writer.write({ time: t0 + 2000, kind: 'stderr', dir: 's2c', text: 'lost', bytes: 4, msg: 'lost' });
    await writer.close();
    expect(warnings).toHaveLength(1);
    expect(warnings[0]).toMatch(/was removed during the session and cannot be made again \(E\w+/);
    expect(writer.healthy).toBe(false);
  });
});
