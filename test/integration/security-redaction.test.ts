/**
 * Redaction end to end: secrets reach the peer untouched (the traffic is never changed) and never reach the log,
 * through the stdio wrapper (library and CLI) and the HTTP tap with the real `openai` client. The log is
 * searched for any 6-character piece of each secret, so a key split across records would be caught too.
 */
import { spawn } from 'node:child_process';
import { createServer, type Server } from 'node:http';
import type { AddressInfo } from 'node:net';
import { readFileSync, readdirSync } from 'node:fs';
import { join, resolve } from 'node:path';
import { PassThrough } from 'node:stream';
import OpenAI from 'openai';
import { describe, expect, it } from 'vitest';
import { parseRecordLine, startHttpTap, startStdioTap } from '../../src/index.js';
import { tempDir } from '../support/temp-dir.js';

/** A log line as the reader reads it (a v2 line writes a frame of JSON as JSON; the reader gives back its text). */
const readRecord = (line: string): any => {
  const parsed = parseRecordLine(line);
  if (!parsed || !('record' in parsed)) throw new Error(`not a record: ${line}`);
  return parsed.record;
};
const BIN = resolve(import.meta.dirname, '../../bin/mcptap.js');
// Credential-shaped values built at run time, so this file itself holds no key-looking literal.
const OPENAI_KEY = ['sk', 'proj', 'Zyxwvutsrq9876543210ABCDEFghijklmn'].join('-');
const GITHUB_TOKEN = `ghp_${'Q1w2E3r4T5y6U7i8O9p0AaSsDdFfGgHhJj'}`;
const PASSWORD = 'correct-horse-battery-staple';

/** Fails when any 6-character piece of a secret appears in the text. */
function expectNoPieceOf(secret: string, text: string): void {
  for (let i = 0; i + 6 <= secret.length; i++) {
    const piece = secret.slice(i, i + 6);
    if (text.includes(piece)) throw new Error(`the log holds "${piece}", a piece of a secret`);
  }
}

function logText(dir: string): string {
  return readdirSync(dir)
    .map((f) => readFileSync(join(dir, f), 'utf8'))
    .join('');
}

const toolCall = JSON.stringify({
  jsonrpc: '2.0',
  id: 1,
  method: 'tools/call',
  params: { name: 'deploy', arguments: { repo: 'a/b', token: GITHUB_TOKEN, db: { password: PASSWORD }, note: `use ${OPENAI_KEY}` } },
});

describe('stdio: forwarded untouched, logged redacted', () => {
  it('library: secrets in arguments, command-line flags and the echo never reach the log', async () => {
    const logDir = tempDir('mcptap-redact-');
    const input = new PassThrough();
    const output = new PassThrough();
    let out = '';
    output.on('data', (c: Buffer) => (out += c.toString()));
    // The flags go to sh as $0, $1, …, where nothing reads them: `cat` itself would try to open them as files.
    const tap = startStdioTap({ command: 'sh', args: ['-c', 'cat', 'server', '--api-key', PASSWORD], logDir, input, output, errorOutput: new PassThrough() });
    input.end(`${toolCall}\n`);
    await tap.exited;
    expect(out).toBe(`${toolCall}\n`);
    const log = logText(logDir);
    for (const secret of [OPENAI_KEY, GITHUB_TOKEN, PASSWORD]) expectNoPieceOf(secret, log);
    const records = log.split('\n').filter(Boolean).map(readRecord);
    const request = records.find((r) => r.kind === 'request' && r.dir === 'c2s');
    expect(request.redacted).toBe(true);
    expect(JSON.parse(request.raw).params.arguments).toEqual({ repo: 'a/b', token: '[redacted]', db: { password: '[redacted]' }, note: 'use [redacted]' });
    const start = records.find((r) => r.event === 'start');
    expect(start.args).toEqual(['-c', 'cat', 'server', '--api-key', '[redacted]']);
  });

  function cli(args: string[], stdin: string): Promise<{ out: string; err: string; code: number | null }> {
    return new Promise((done) => {
      const child = spawn(process.execPath, [BIN, ...args], { stdio: ['pipe', 'pipe', 'pipe'] });
      let out = '';
      let err = '';
      child.stdout.on('data', (c: Buffer) => (out += c.toString()));
      child.stderr.on('data', (c: Buffer) => (err += c.toString()));
      child.on('close', (code) => done({ out, err, code }));
      child.stdin.end(stdin);
    });
  }

  it('CLI --no-redact writes secrets as sent, and says so on stderr', async () => {
    const logDir = tempDir('mcptap-noredact-');
    const r = await cli(['--no-redact', '--log-dir', logDir, '--', 'cat'], `${toolCall}\n`);
    expect(r.code).toBe(0);
    expect(r.out).toBe(`${toolCall}\n`);
    expect(r.err).toContain('redaction is off (--no-redact)');
    expect(logText(logDir)).toContain(GITHUB_TOKEN);
  });

  it('CLI --redact-key and --redact-pattern add rules', async () => {
    const logDir = tempDir('mcptap-rules-');
    const line = JSON.stringify({ jsonrpc: '2.0', id: 2, method: 'tools/call', params: { name: 't', arguments: { tenant: 'acme-42', ref: 'corp_AbCdEf123456' } } });
    const r = await cli(['--redact-key', 'tenant', '--redact-pattern', 'corp_[A-Za-z0-9]{12}', '--log-dir', logDir, '--', 'cat'], `${line}\n`);
    expect(r.code).toBe(0);
    expect(r.out).toBe(`${line}\n`);
    const log = logText(logDir);
    expect(log).not.toContain('acme-42');
    expect(log).not.toContain('corp_AbCdEf123456');
    expect(r.err).not.toContain('redaction is off');
  });

  it('CLI refuses a bad pattern with a sentence', async () => {
    const r = await cli(['--redact-pattern', '([', '--', 'cat'], '');
    expect(r.code).toBe(2);
    expect(r.err).toContain('is not a usable regular expression');
  });
});

describe('HTTP: the real openai client through mcptap http', () => {
  it('the key in Authorization and a key split across stream chunks reach the client whole, the log not at all', async () => {
    const answer = `Here it is: ${OPENAI_KEY} (keep it safe).`;
    // Cut the answer so the key spans several chunks.
    const keyAt = answer.indexOf(OPENAI_KEY);
    const cuts = [0, keyAt - 3, keyAt + 5, keyAt + 11, keyAt + 30, answer.length];
    const pieces = cuts.slice(1).map((end, i) => answer.slice(cuts[i], end));
    let seenAuthorization = '';
    const upstream: Server = createServer((req, res) => {
      seenAuthorization = String(req.headers.authorization);
      req.resume();
      req.on('end', async () => {
        res.writeHead(200, { 'content-type': 'text/event-stream' });
        for (const [i, content] of pieces.entries()) {
          const chunk = { id: 'c1', object: 'chat.completion.chunk', created: 1, model: 'm', choices: [{ index: 0, delta: i === 0 ? { role: 'assistant', content } : { content }, finish_reason: null }] };
          res.write(`data: ${JSON.stringify(chunk)}\n\n`);
          await new Promise((r) => setTimeout(r, 2));
        }
        res.write(`data: ${JSON.stringify({ id: 'c1', object: 'chat.completion.chunk', created: 1, model: 'm', choices: [{ index: 0, delta: {}, finish_reason: 'stop' }] })}\n\n`);
        res.end('data: [DONE]\n\n');
      });
    });
    await new Promise<void>((r) => upstream.listen(0, '127.0.0.1', r));
    const logDir = tempDir('mcptap-http-redact-');
    const tap = await startHttpTap({ target: `http://127.0.0.1:${(upstream.address() as AddressInfo).port}`, logDir });
    try {
      const client = new OpenAI({ apiKey: OPENAI_KEY, baseURL: `${tap.url}/v1`, maxRetries: 0 });
      const stream = await client.chat.completions.create({ model: 'm', stream: true, messages: [{ role: 'user', content: `my github token is ${GITHUB_TOKEN}` }] });
      let text = '';
      for await (const chunk of stream) text += chunk.choices[0]?.delta?.content ?? '';
      // The traffic: untouched both ways.
      expect(text).toBe(answer);
      expect(seenAuthorization).toBe(`Bearer ${OPENAI_KEY}`);
    } finally {
      await tap.close();
      await new Promise((r) => upstream.close(r));
    }
    const log = logText(logDir);
    expectNoPieceOf(OPENAI_KEY, log);
    expectNoPieceOf(GITHUB_TOKEN, log);
    const records = log.split('\n').filter(Boolean).map(readRecord);
    const request = records.find((r) => r.kind === 'http-request');
    expect(request.headers.authorization).toMatch(/\[redacted\]/);
    const reply = records.find((r) => r.kind === 'llm-response');
    expect(reply.content).toBe('Here it is: [redacted] (keep it safe).');
    expect(records.filter((r) => r.kind === 'llm-chunk').some((r) => r.redacted)).toBe(true);
  });
});

describe('what mcptap itself prints', () => {
  it('the --target password is not on stderr, nor in the log', async () => {
    const logDir = tempDir('mcptap-target-');
    const child = spawn(process.execPath, [BIN, 'http', '--target', `http://bob:${PASSWORD}@127.0.0.1:9`, '--listen', '0', '--log-dir', logDir], { stdio: ['ignore', 'ignore', 'pipe'] });
    let err = '';
    await new Promise<void>((resolve, reject) => {
      child.stderr.on('data', (c: Buffer) => {
        err += c.toString();
        if (err.includes('logging to')) resolve();
      });
      child.once('exit', (code) => reject(new Error(`mcptap http exited (${code}): ${err}`)));
    });
    child.kill('SIGTERM');
    await new Promise((r) => child.once('exit', r));
    expect(err).toContain('forwarding to http://bob:[redacted]@127.0.0.1:9');
    expectNoPieceOf(PASSWORD, err);
    expectNoPieceOf(PASSWORD, logText(logDir));
  });
});
