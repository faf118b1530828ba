/**
 * `mcptap ui` on a folder that already holds many records: the backfill reads them (4 MiB of each file a
 * look, from the newest DEFAULT_UI_MAX_BYTES of each), keeps the newest DEFAULT_UI_MAX_RECORDS within that many
 * bytes of log lines, says how much it left out (the page's hello, the start-up line), and starts. It once spread one look's
 * records into a single call, which overflows the stack past about a hundred thousand records, and the server
 * never started. Also what the server says to requests for anything but its page, its script and /ws.
 */
import { spawn } from 'node:child_process';
import http from 'node:http';
import { mkdtempSync, rmSync, writeFileSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { afterEach, describe, expect, it } from 'vitest';
import WebSocket from 'ws';
import { DEFAULT_UI_MAX_BYTES, DEFAULT_UI_MAX_RECORDS, startUiServer, type UiServer } from '../../src/ui/server.js';

/** A stderr record of about `size` characters. */
const line = (seq: number, size = 0): string =>
  JSON.stringify({ v: 1, seq, time: 1_780_000_000_000 + seq, session: 's', channel: 'stdio', label: 'x', kind: 'stderr', dir: 's2c', text: `line ${seq} ${'x'.repeat(size)}`, bytes: 6, msg: 'm' });

/** The page's first message. */
function hello(port: number): Promise<Record<string, unknown>> {
  return new Promise((resolve, reject) => {
    const ws = new WebSocket(`ws://127.0.0.1:${port}/ws`);
    ws.once('message', (data: Buffer) => {
      ws.close();
      resolve(JSON.parse(data.toString('utf8')) as Record<string, unknown>);
    });
    ws.once('error', reject);
  });
}

let ui: UiServer | undefined;
let dir: string | undefined;
afterEach(async () => {
  await ui?.close();
  if (dir) rmSync(dir, { recursive: true, force: true });
});

describe('mcptap ui backfill', () => {
  it('starts on six logs of 25,000 records each, read in one look, and keeps the newest it may', async () => {
    dir = mkdtempSync(join(tmpdir(), 'mcptap-ui-long-'));
    for (let file = 0; file < 6; file++) {
      const lines: string[] = [];
      for (let i = 0; i < 25_000; i++) {
        const seq = file * 25_000 + i;
        lines.push(JSON.stringify({ v: 1, seq, time: 1_780_000_000_000 + seq, session: `s${file}`, channel: 'stdio', label: 'x', kind: 'stderr', dir: 's2c', text: `line ${seq}`, bytes: 6, msg: 'm' }));
      }
      writeFileSync(join(dir, `part-${file}.ndjson`), `${lines.join('\n')}\n`);
    }
    // Bytes enough for every record: the bound of records is the one that holds.
    ui = await startUiServer({ logDir: dir, listen: 0, maxBytes: 64 * 1024 * 1024, warn: () => {} });
    expect(ui.records).toBe(DEFAULT_UI_MAX_RECORDS);
  });

  it('reads a long log from its newest bytes, and holds the newest records within its bound of bytes', async () => {
    dir = mkdtempSync(join(tmpdir(), 'mcptap-ui-big-'));
    // 6,000 records of about 1 KB: 6 MB, more than one look (4 MiB) takes.
    const text = `${Array.from({ length: 6000 }, (_, i) => line(i, 1000)).join('\n')}\n`;
    writeFileSync(join(dir, 'big.ndjson'), text);
    const warnings: string[] = [];
    ui = await startUiServer({ logDir: dir, listen: 0, maxBytes: 1_000_000, warn: (w) => warnings.push(w) });
    // About 1,150 bytes each: the newest 860-odd within 1,000,000, the older bytes let go unread.
    expect(ui.records).toBeGreaterThan(800);
    expect(ui.records).toBeLessThan(1000);
    expect(ui.leftOutBytes).toBeGreaterThan(text.length - 1_000_000);
    expect(ui.leftOutBytes).toBeLessThan(text.length - 900_000);
    // The line cut by where the read started is let go, not reported as a broken line.
    expect(warnings).toEqual([]);
    const first = await hello(ui.port);
    expect(first).toMatchObject({ type: 'hello', records: ui.records, leftOutMb: Math.round(ui.leftOutBytes / 1024 / 1024), maxMb: 1 });
    expect(first.leftOutMb).toBeGreaterThanOrEqual(5);
  });

  it('says on stderr how much of the logs it left out', async () => {
    dir = mkdtempSync(join(tmpdir(), 'mcptap-ui-cli-'));
    // Two logs: one a little longer than the default bound, one short (read whole).
    const count = Math.ceil(DEFAULT_UI_MAX_BYTES / 2000) + 2000;
    writeFileSync(join(dir, 'big.ndjson'), `${Array.from({ length: count }, (_, i) => line(i, 1900)).join('\n')}\n`);
    writeFileSync(join(dir, 'small.ndjson'), `${line(count + 1)}\n`);
    const child = spawn(process.execPath, ['bin/mcptap.js', 'ui', '--listen', '0', dir], { stdio: ['ignore', 'ignore', 'pipe'] });
    let err = '';
    await new Promise<void>((resolve, reject) => {
      child.stderr.on('data', (c: Buffer) => {
        err += c.toString('utf8');
        if (err.includes('Ctrl-C')) resolve();
      });
      child.once('exit', (code) => reject(new Error(`mcptap ui exited (${code}): ${err}`)));
    });
    child.kill('SIGTERM');
    const held = Math.round(DEFAULT_UI_MAX_BYTES / 1024 / 1024);
    expect(err).toMatch(new RegExp(`\\(\\d+ past records; the older [1-9] MB of the logs left out, as the view holds their newest ${held} MB \\(mcptap view reads them all\\)\\); Ctrl-C to stop`));
  });
});

describe('mcptap ui answers what it does not serve', () => {
  /** A raw request, so the status line is read as sent. */
  function request(port: number, method: string, path: string): Promise<{ status: number; body: string }> {
    return new Promise((resolve, reject) => {
      const req = http.request({ host: '127.0.0.1', port, method, path }, (res) => {
        let body = '';
        res.setEncoding('utf8');
        res.on('data', (c: string) => (body += c));
        res.on('end', () => resolve({ status: res.statusCode ?? 0, body }));
      });
      req.on('error', reject);
      req.end();
    });
  }

  it('says 405 to a POST, 404 off the page, and 404 to a WebSocket anywhere but /ws', async () => {
    dir = mkdtempSync(join(tmpdir(), 'mcptap-ui-paths-'));
    writeFileSync(join(dir, 'a.ndjson'), `${line(0)}\n`);
    ui = await startUiServer({ logDir: dir, listen: 0 });
    expect(await request(ui.port, 'POST', '/')).toMatchObject({ status: 405 });
    expect(await request(ui.port, 'GET', '/secret')).toEqual({ status: 404, body: 'Not here: the live view is at /\n' });
    expect(await request(ui.port, 'HEAD', '/ui.js')).toEqual({ status: 200, body: '' });
    const refused = await new Promise<number>((resolve) => {
      const ws = new WebSocket(`ws://127.0.0.1:${ui!.port}/other`);
      ws.once('unexpected-response', (_req, res) => resolve(res.statusCode ?? 0));
      ws.once('error', () => resolve(-1));
    });
    expect(refused).toBe(404);
    expect((await hello(ui.port)).type).toBe('hello');
  });
});
