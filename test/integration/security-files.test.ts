/**
 * Private and bounded on disk: log files 0600 in folders 0700 whatever the umask (and even when the file was
 * there before with wider modes); --max-log-mb rotates into parts that stay under the cap and read back whole.
 */
import { spawn } from 'node:child_process';
import { chmodSync, readdirSync, statSync, writeFileSync } from 'node:fs';
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
