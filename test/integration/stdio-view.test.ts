/**
 * `mcptap view` on logs made by the stdio wrapper: one readable line per record, colour only on a terminal.
 *
 * Spawns bin/mcptap.js, which runs the built CLI: build first (`npx tsc -p .`, or `npm test`).
 */
import { spawn, spawnSync } from 'node:child_process';
import { existsSync, writeFileSync } from 'node:fs';
import { join } from 'node:path';
import { beforeAll, describe, expect, test } from 'vitest';
import { tempDir } from '../support/temp-dir.js';

const root = tempDir('mcptap-view-');
const logDir = join(root, 'logs');
const ESC = '\u001b[';

/** A tiny stdio server: a banner on stdout (the classic bug), a line on stderr, then an answer to each request. */
const server = `
process.stdout.write('weather server starting\\n');
process.stderr.write('INFO ready\\n');
require('readline').createInterface({ input: process.stdin }).on('line', (line) => {
  const m = JSON.parse(line);
  if (m.id === undefined) return;
  const result = m.method === 'tools/call' ? { content: [{ type: 'text', text: 'Sunny, 21 C' }] } : {};
  process.stdout.write(JSON.stringify({ jsonrpc: '2.0', id: m.id, result }) + '\\n');
});`;

function run(args: string[], env: NodeJS.ProcessEnv = process.env, input = ''): Promise<{ code: number | null; stdout: string; stderr: string }> {
  return new Promise((resolve) => {
    const child = spawn(process.execPath, ['bin/mcptap.js', ...args], { env, stdio: ['pipe', 'pipe', 'pipe'] });
    let stdout = '';
    let stderr = '';
    child.stdout.on('data', (c: Buffer) => (stdout += c.toString()));
    child.stderr.on('data', (c: Buffer) => (stderr += c.toString()));
    child.on('close', (code) => resolve({ code, stdout, stderr }));
    child.stdin.end(input);
  });
}

beforeAll(async () => {
  const input = [
    '{"jsonrpc":"2.0","id":0,"method":"initialize","params":{"protocolVersion":"2025-06-18","capabilities":{},"clientInfo":{"name":"demo","version":"1.0"}}}',
    '{"jsonrpc":"2.0","id":1,"method":"tools/call","params":{"name":"get_forecast","arguments":{"city":"Paris"}}}',
    '',
  ].join('\n');
  // Wait for the banner so the answers come after the requests, as in a real session.
  const result = await run(['--log-dir', logDir, '--name', 'weather', '--', process.execPath, '-e', server], process.env, input);
  expect(result.code).toBe(0);
});

describe('mcptap view', () => {
  test('piped: plain text, one line per record, with arrows, methods, ids, latency and the sentence', async () => {
    const { code, stdout, stderr } = await run(['view', logDir]);
    expect(code).toBe(0);
    expect(stderr).toBe('');
    expect(stdout).not.toContain(ESC);
    const lines = stdout.trimEnd().split('\n');
    expect(lines.find((l) => l.includes('initialize #0') && l.includes('\u2192 request'))).toMatch(
      /^\d\d:\d\d:\d\d\.\d{3} weather \u2192 request +initialize #0 Handshake: client demo 1\.0 offers protocol 2025-06-18 with no capabilities\.$/,
    );
    expect(lines.find((l) => l.includes('\u2190 response') && l.includes('get_forecast'))).toMatch(
      /^\d\d:\d\d:\d\d\.\d{3} weather \u2190 response +tools\/call get_forecast #1 [\d.]+ms Tool get_forecast returned 1 text \([\d.]+ m?s\)\.$/,
    );
    expect(lines.find((l) => l.includes('\u2190 invalid'))).toMatch(/\u2190 invalid +The server wrote a line that is not JSON-RPC to stdout \(plain text, not JSON\)/);
    expect(lines.filter((l) => / \u2190 stderr /.test(l))).toEqual([expect.stringMatching(/ weather \u2190 stderr +Server stderr: INFO ready$/)]);
    expect(lines[0]).toMatch(/ weather \u00b7 start +mcptap \S+ starts /);
    expect(lines.some((l) => / \u00b7 exit +The server exited with code 0/.test(l))).toBe(true);
  });

  test('--color forces colour even when piped; NO_COLOR and --no-color keep it off', async () => {
    expect((await run(['view', '--color', logDir])).stdout).toContain(ESC);
    expect((await run(['view', '--no-color', logDir])).stdout).not.toContain(ESC);
  });

  test.skipIf(!existsSync('/usr/bin/script'))('on a terminal: colour by default, none with NO_COLOR', () => {
    // `script` gives the command a pseudo-terminal, as a user's shell would.
    const tty = (env: NodeJS.ProcessEnv) =>
      spawnSync('script', ['-qec', `${process.execPath} bin/mcptap.js view ${logDir}`, '/dev/null'], { env, encoding: 'utf8' }).stdout;
    expect(tty({ ...process.env, NO_COLOR: '' })).toContain(ESC);
    const { NO_COLOR: _, ...withoutNoColor } = process.env;
    expect(tty(withoutNoColor)).toContain(ESC);
    expect(tty({ ...withoutNoColor, NO_COLOR: '1' })).not.toContain(ESC);
  });

  test('several logs merge by time; lines that are not records are skipped with a note', async () => {
    const other = join(root, 'other.ndjson');
    writeFileSync(other, `${JSON.stringify({ v: 1, time: 0, seq: 0, session: 'x', channel: 'stdio', label: 'early', kind: 'lifecycle', event: 'start', msg: 'the earliest record' })}\nnot a record\n`);
    const { code, stdout, stderr } = await run(['view', logDir, other]);
    expect(code).toBe(0);
    expect(stdout.split('\n')[0]).toMatch(/early .*the earliest record$/);
    expect(stderr).toBe(`mcptap: skipped ${other}:2: not JSON (a torn write, or not an mcptap log).\n`);
  });

  test('a missing log is a plain sentence, exit 2 (could not read)', async () => {
    const { code, stdout, stderr } = await run(['view', join(root, 'nope')]);
    expect(code).toBe(2);
    expect(stdout).toBe('');
    expect(stderr).toMatch(/^mcptap: There is no log at .*nope\. Give a log file or a folder of logs/);
  });
});
