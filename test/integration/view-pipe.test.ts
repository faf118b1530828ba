/**
 * `mcptap view logs/ | head`: the views stream, so the reader can go away mid-output; mcptap then stops
 * quietly with exit 0 (as `git log | head` does), not with "unexpected error: write EPIPE".
 */
import { spawn } from 'node:child_process';
import { readFileSync, writeFileSync } from 'node:fs';
import { join } from 'node:path';
import { fileURLToPath } from 'node:url';
import { describe, expect, it } from 'vitest';
import { tempDir } from '../support/temp-dir.js';

const BIN = fileURLToPath(new URL('../../bin/mcptap.js', import.meta.url));
const ROUNDTRIP = join(import.meta.dirname, '../../fixtures/captures/roundtrip/ollama.ndjson');

describe('a view whose reader goes away', () => {
  it.each(['pretty', 'json'])('ends with exit 0 and nothing on stderr (--format %s)', async (format) => {
    const dir = tempDir('mcptap-view-pipe-');
    const lines = readFileSync(ROUNDTRIP, 'utf8').split('\n').filter(Boolean).map((l) => JSON.parse(l) as { time: number; session: string; exchange?: string });
    // Far more output than a pipe holds: 400 copies of the proxy's log, each its own session.
    const copies = Array.from({ length: 400 }, (_, n) => lines.map((r) => JSON.stringify({ ...r, time: r.time + n * 2000, session: `${r.session}-${n}`, ...(r.exchange ? { exchange: `${r.exchange}-${n}` } : {}) })).join('\n'));
    writeFileSync(join(dir, 'big.ndjson'), `${copies.join('\n')}\n`);
    const child = spawn(process.execPath, [BIN, 'view', '--format', format, '--no-color', dir], { stdio: ['ignore', 'pipe', 'pipe'] });
    let stderr = '';
    child.stderr.on('data', (d: Buffer) => (stderr += d.toString()));
    // Read one chunk, then go away, as `head -1` does.
    await new Promise((resolve) => child.stdout.once('data', resolve));
    child.stdout.destroy();
    const code = await new Promise((resolve) => child.on('close', resolve));
    expect(stderr).toBe('');
    expect(code).toBe(0);
  });

  it('reads to the end into a pipe with nothing on stderr', async () => {
    const dir = tempDir('mcptap-view-slow-');
    const lines = readFileSync(ROUNDTRIP, 'utf8').split('\n').filter(Boolean).map((l) => JSON.parse(l) as { time: number; session: string; exchange?: string });
    const copies = Array.from({ length: 400 }, (_, n) => lines.map((r) => JSON.stringify({ ...r, time: r.time + n * 2000, session: `${r.session}-${n}`, ...(r.exchange ? { exchange: `${r.exchange}-${n}` } : {}) })).join('\n'));
    writeFileSync(join(dir, 'big.ndjson'), `${copies.join('\n')}\n`);
    // A shell's pipe (not the socket pair spawn gives): mcptap waits for it to drain after every chunk it writes.
    const child = spawn('/bin/sh', ['-c', '"$0" "$1" view --no-color "$2" | wc -c', process.execPath, BIN, dir], { stdio: ['ignore', 'pipe', 'pipe'] });
    let stderr = '';
    let stdout = '';
    child.stderr.on('data', (d: Buffer) => (stderr += d.toString()));
    child.stdout.on('data', (d: Buffer) => (stdout += d.toString()));
    const code = await new Promise((resolve) => child.on('close', resolve));
    // Once, each drain's error listener stayed: past ten, Node warned of a leak (MaxListenersExceededWarning).
    expect(stderr).toBe('');
    expect(code).toBe(0);
    expect(Number(stdout.trim())).toBeGreaterThan(1_000_000);
  });
});
