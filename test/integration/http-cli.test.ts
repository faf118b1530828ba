/**
 * `mcptap http` as a user runs it: the built CLI in its own process, a real ollama client through it, Ctrl-C
 * (SIGTERM) to stop with the log flushed, and plain sentences for bad flags. Needs a fresh build (npm test
 * builds first).
 */
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { spawn, type ChildProcess } from 'node:child_process';
import { mkdtempSync, readdirSync, rmSync } from 'node:fs';
import { createServer, type Server } from 'node:net';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { Ollama } from 'ollama';
import { readAllRecords, type LogRecord } from '../../src/index.js';
// @ts-expect-error — a plain .mjs fixture without type declarations
import { startLlmUpstream } from '../../fixtures/llm-upstream.mjs';

type Rec = LogRecord & Record<string, unknown>;
const BIN = 'bin/mcptap.js';

/** Run the CLI to completion; resolves with its exit code and stderr. */
function runCli(args: string[]): Promise<{ code: number | null; stderr: string }> {
  return new Promise((resolve) => {
    const child = spawn(process.execPath, [BIN, ...args], { stdio: ['ignore', 'pipe', 'pipe'] });
    let stderr = '';
    child.stderr.on('data', (d: Buffer) => (stderr += d.toString()));
    child.on('exit', (code) => resolve({ code, stderr }));
  });
}

/** Start the CLI and wait for its "listening on" line. */
function startCli(args: string[]): Promise<{ child: ChildProcess; url: string; stderr: () => string }> {
  return new Promise((resolve, reject) => {
    const child = spawn(process.execPath, [BIN, ...args], { stdio: ['ignore', 'pipe', 'pipe'] });
    let stderr = '';
    child.stderr!.on('data', (d: Buffer) => {
      stderr += d.toString();
      const m = /listening on (http:\/\/\S+),/.exec(stderr);
      if (m) resolve({ child, url: m[1]!, stderr: () => stderr });
    });
    child.on('exit', (code) => reject(new Error(`mcptap http exited with ${code}: ${stderr}`)));
  });
}

describe('mcptap http (the CLI)', () => {
  let upstream: { url: string; close(): Promise<void> };
  let logDir: string;

  beforeAll(async () => {
    logDir = mkdtempSync(join(tmpdir(), 'mcptap-http-cli-'));
    upstream = await startLlmUpstream({ speed: 50 });
  });
  afterAll(async () => {
    await upstream?.close();
    rmSync(logDir, { recursive: true, force: true });
  });

  it('proxies a real client, stops on SIGTERM with exit 0, and leaves a complete log (--no-chunks honoured)', async () => {
    const { child, url, stderr } = await startCli(['http', '--target', upstream.url, '--listen', '0', '--log-dir', logDir, '--name', 'cli', '--no-chunks']);
    expect(url).toMatch(/^http:\/\/127\.0\.0\.1:\d+$/);
    const parts: string[] = [];
    const stream = await new Ollama({ host: url }).chat({ model: 'qwen2.5:3b', messages: [{ role: 'user', content: 'q' }, { role: 'tool', content: 'r' }], stream: true });
    for await (const part of stream) parts.push(part.message.content);
    expect(parts.join('')).toMatch(/^The weather report indicates/);
    const exited = new Promise<number | null>((resolve) => child.once('exit', (code) => resolve(code)));
    child.kill('SIGTERM');
    expect(await exited).toBe(0);
    expect(stderr()).toContain('logging to');
    const files = readdirSync(logDir).filter((f) => f.startsWith('cli-') && f.endsWith('.ndjson'));
    expect(files).toHaveLength(1);
    const records = (await readAllRecords([join(logDir, files[0]!)])) as Rec[];
    expect(records[0]).toMatchObject({ kind: 'lifecycle', event: 'listen', target: upstream.url });
    expect(records.at(-1)).toMatchObject({ kind: 'lifecycle', event: 'close' });
    expect(records.filter((r) => r.kind === 'llm-chunk')).toEqual([]);
    const reply = records.find((r) => r.kind === 'llm-response');
    expect(reply?.content).toBe(parts.join(''));
    expect(reply?.chunkCount).toBe(parts.length);
  });

  it('says what is wrong with bad flags, with exit code 2', async () => {
    const noTarget = await runCli(['http', '--listen', '0']);
    expect(noTarget.code).toBe(2);
    expect(noTarget.stderr).toContain('--target');
    const badListen = await runCli(['http', '--target', upstream.url, '--listen', 'localhost']);
    expect(badListen.code).toBe(2);
    expect(badListen.stderr).toContain('--listen must be a port or HOST:PORT');
    const badTarget = await runCli(['http', '--target', 'ftp://example.com', '--log-dir', logDir]);
    expect(badTarget.code).toBe(2);
    expect(badTarget.stderr).toContain('http:// or https://');
  });

  it('says how to free a port that is taken', async () => {
    const blocker: Server = createServer();
    await new Promise<void>((resolve) => blocker.listen(0, '127.0.0.1', () => resolve()));
    const address = blocker.address();
    const port = typeof address === 'object' && address ? address.port : 0;
    try {
      const taken = await runCli(['http', '--target', upstream.url, '--listen', String(port), '--log-dir', logDir]);
      expect(taken.code).toBe(1);
      expect(taken.stderr).toContain(`127.0.0.1:${port} is already in use`);
    } finally {
      blocker.close();
    }
  });
});
