/**
 * Secrets as an attacker would plant them: generated keys of every shape mcptap recognises (and JWTs, URL
 * passwords, key=value pairs), written plain, JSON-escaped and URL-encoded, at positions that put them across
 * every preview cut, the --max-body cap and the stderr cap, in MCP arguments and results, stderr lines and the
 * command line, and split at a random byte across the events of an SSE stream of a dialect mcptap does not
 * know. The logs, a HAR export and an OTLP export must hold no 8-character piece of any of them beyond its
 * public prefix; the bytes forwarded must hold every one unchanged.
 */
import { readFileSync, readdirSync } from 'node:fs';
import { createServer, request as httpRequest } from 'node:http';
import type { AddressInfo } from 'node:net';
import { join } from 'node:path';
import { PassThrough } from 'node:stream';
import fc from 'fast-check';
import { describe, expect, it } from 'vitest';
import { readAllRecords, startHttpTap, startStdioTap } from '../../src/index.js';
import { formatHar } from '../../src/export/har.js';
import { formatOtlp } from '../../src/export/otlp.js';
import { tempDir } from '../support/temp-dir.js';

const MAX_BODY = 4096;
const STDERR_CAP = 8 * 1024;

/** A secret as planted: the text that goes into the traffic, and the part of it no log may show. */
interface Planted {
  text: string;
  secret: string;
}

/** Random characters from `chars`, from a seed (fast-check's own strings lean to repeats like `aaaa`). */
function randomChars(seed: number, length: number, chars: string): string {
  let x = seed | 0 || 1;
  let out = '';
  for (let i = 0; i < length; i++) {
    x ^= x << 13;
    x ^= x >>> 17;
    x ^= x << 5;
    out += chars[(x >>> 0) % chars.length];
  }
  return out;
}
const ALNUM = 'ABCDEFGHIJKLMNOPQRSTUVWXYZabcdefghijklmnopqrstuvwxyz0123456789';
const UPPER = 'ABCDEFGHIJKLMNOPQRSTUVWXYZ0123456789';
const B64URL = `${ALNUM}_-`;

/** Every shape, built from a seed; `text` is what is written into a JSON string's content or a line. */
const SHAPES: ((seed: number) => Planted)[] = [
  (s) => plain(`sk-proj-`, randomChars(s, 40, B64URL)),
  (s) => plain(`sk-ant-api03-`, randomChars(s, 48, B64URL)),
  (s) => plain(`gsk_`, randomChars(s, 40, ALNUM)),
  (s) => plain(`ghp_`, randomChars(s, 36, ALNUM)),
  (s) => plain(`gho_`, randomChars(s, 36, ALNUM)),
  (s) => plain(`github_pat_`, randomChars(s, 60, `${ALNUM}_`)),
  (s) => plain(`xoxb-`, randomChars(s, 30, `${ALNUM}-`)),
  (s) => plain(`AKIA`, randomChars(s, 16, UPPER)),
  (s) => plain(`AIza`, randomChars(s, 35, B64URL)),
  (s) => plain(`sk_live_`, randomChars(s, 24, ALNUM)),
  (s) => {
    const jwt = `eyJ${randomChars(s, 20, B64URL)}.eyJ${randomChars(s + 1, 30, B64URL)}.${randomChars(s + 2, 43, B64URL)}`;
    return { text: jwt, secret: jwt.slice(3) };
  },
  (s) => plain(`Bearer `, randomChars(s, 32, ALNUM)),
  (s) => plain(`AUTHORIZATION: BEARER `, randomChars(s, 32, ALNUM)),
  (s) => around(`postgres://app:`, randomChars(s, 18, `${ALNUM}!#`), `@db.local/app`),
  (s) => around(`redis://:`, randomChars(s, 18, ALNUM), `@cache:6379`),
  (s) => plain(`password=`, randomChars(s, 18, ALNUM)),
  // Escaped as some JSON encoders write them, and URL-encoded in a query string.
  (s) => around(`https:\\/\\/bob:`, randomChars(s, 18, ALNUM), `@h.example\\/x`),
  (s) => around(`see https://h/cb?api%5Fkey=`, randomChars(s, 20, ALNUM), `&x=1`),
  (s) => around(`next=https%3A%2F%2Fu%3A`, randomChars(s, 18, ALNUM), `%40h2%2Fx`),
];
function plain(prefix: string, secret: string): Planted {
  return { text: `${prefix}${secret}`, secret };
}
function around(before: string, secret: string, after: string): Planted {
  return { text: `${before}${secret}${after}`, secret };
}

/** The planted cases: a shape, a seed, and where the secret starts. */
const cases = fc.sample(
  fc.record({
    shape: fc.integer({ min: 0, max: SHAPES.length - 1 }),
    seed: fc.integer({ min: 1, max: 2 ** 30 }),
    // Across every preview cut (a few dozen to 200 characters), and across the caps.
    at: fc.oneof(fc.integer({ min: 0, max: 260 }), fc.integer({ min: MAX_BODY - 120, max: MAX_BODY + 10 }), fc.integer({ min: STDERR_CAP - 140, max: STDERR_CAP })),
  }),
  { numRuns: 240, seed: 25 },
).map(({ shape, seed, at }) => ({ ...SHAPES[shape]!(seed), at }));

/** Every 8-character piece of a secret found in `text` (one pass over the text, the pieces in a set). */
function leaks(text: string, planted: readonly Planted[]): string[] {
  const pieces = new Map<string, string>();
  for (const { secret } of planted) for (let i = 0; i + 8 <= secret.length; i++) pieces.set(secret.slice(i, i + 8), secret);
  const found: string[] = [];
  for (let at = 0; at + 8 <= text.length && found.length < 20; at++) {
    const secret = pieces.get(text.slice(at, at + 8));
    if (secret !== undefined) found.push(`a piece of ${secret}: …${text.slice(Math.max(0, at - 80), at + 40)}…`);
  }
  return found;
}

function logText(dir: string): string {
  return readdirSync(dir)
    .map((f) => readFileSync(join(dir, f), 'utf8'))
    .join('');
}

async function exportsOf(dir: string): Promise<string> {
  const records = await readAllRecords([dir]);
  return `${formatHar(records)}\n${formatOtlp(records)}`;
}

// Echoes each line back (the server's answer carries the secret too) and writes it on stderr.
const ECHO = `process.stdin.on('data', (d) => { process.stdout.write(d); process.stderr.write(d); });`;

describe('planted secrets: none in any log or export, all in the traffic', () => {
  it('stdio: arguments, results, stderr, the command line, previews and caps', async () => {
    const logDir = tempDir('mcptap-planted-');
    const argSecrets = cases.slice(0, 3);
    const args = ['-e', ECHO, '--', '--api-key', argSecrets[0]!.secret, `--token=${argSecrets[1]!.secret}`, argSecrets[2]!.text];
    const input = new PassThrough();
    const output = new PassThrough();
    let out = '';
    output.on('data', (c: Buffer) => (out += c.toString()));
    const errorOutput = new PassThrough();
    let stderr = '';
    errorOutput.on('data', (c: Buffer) => (stderr += c.toString()));
    const tap = startStdioTap({ command: process.execPath, args, logDir, input, output, errorOutput, maxBody: MAX_BODY });
    const lines = cases.map((c, i) => {
      // Words before the secret, ending in a space: a key glued to a word (`wordsk-…`) is no key.
      const pad = c.at === 0 ? '' : `${'word '.repeat(Math.ceil(c.at / 5)).slice(0, c.at - 1)} `;
      const frame =
        i % 2 === 0
          ? `{"jsonrpc":"2.0","id":${i},"method":"tools/call","params":{"name":"look","arguments":{"q":"${pad}${c.text} and more words"}}}`
          : `{"jsonrpc":"2.0","id":"r${i}","result":{"content":[{"type":"text","text":"${pad}${c.text} and more words"}]}}`;
      return `${frame}\n`;
    });
    input.end(lines.join(''));
    await tap.exited;
    // The traffic carries every secret unchanged.
    expect(out).toBe(lines.join(''));
    expect(stderr).toContain(lines.join(''));
    const log = logText(logDir);
    expect(leaks(log, [...cases, ...argSecrets])).toEqual([]);
    expect(leaks(await exportsOf(logDir), cases)).toEqual([]);
    expect(log).toContain('"truncated":true');
  });

  it('HTTP: an SSE stream of an unknown dialect, each secret split at a random byte across two events', async () => {
    const logDir = tempDir('mcptap-planted-http-');
    const upstream = createServer((req, res) => {
      let body = '';
      req.on('data', (c: Buffer) => (body += c.toString()));
      req.on('end', () => {
        const { text, split } = JSON.parse(body) as { text: string; split: number };
        res.writeHead(200, { 'content-type': 'text/event-stream' });
        // A dialect mcptap knows nothing of: the streamed text sits under a key of its own.
        for (const piece of [text.slice(0, split), text.slice(split)]) {
          res.write(`event: part\ndata: ${JSON.stringify({ kind: 'part', payload: { seq: 1, fragment: piece } })}\n\n`);
        }
        res.end('event: end\ndata: {"kind":"end"}\n\n');
      });
    });
    await new Promise<void>((r) => upstream.listen(0, '127.0.0.1', r));
    const tap = await startHttpTap({ target: `http://127.0.0.1:${(upstream.address() as AddressInfo).port}`, logDir, label: 'planted' });
    const planted = cases.slice(0, 80);
    let all = '';
    for (const [i, c] of planted.entries()) {
      const text = `here it is: ${c.text} done`;
      const split = 12 + ((c.at + i) % (text.length - 12));
      const got = await new Promise<string>((resolve, reject) => {
        const req = httpRequest(`${tap.url}/v2/unknown-dialect`, { method: 'POST', headers: { 'content-type': 'application/json' } }, (res) => {
          let sse = '';
          res.on('data', (d: Buffer) => (sse += d.toString()));
          res.on('end', () => resolve(sse));
        });
        req.on('error', reject);
        req.end(JSON.stringify({ text, split }));
      });
      // What the client gets, reassembled, is the text with its secret whole.
      const joined = [...got.matchAll(/"fragment":"((?:[^"\\]|\\.)*)"/g)].map((m) => JSON.parse(`"${m[1]}"`) as string).join('');
      expect(joined).toBe(text);
      all += joined;
    }
    await tap.close();
    await new Promise((r) => upstream.close(r));
    for (const c of planted) expect(all).toContain(c.secret);
    expect(leaks(logText(logDir), planted)).toEqual([]);
    expect(leaks(await exportsOf(logDir), planted)).toEqual([]);
  });
});
