/**
 * Crash safety: records are flushed whatever ends the process, and an exception in the logging path is reported
 * once while the traffic keeps flowing. Uses the built library (dist/) in real child processes.
 */
import { spawn, spawnSync } from 'node:child_process';
import { readFileSync, readdirSync } from 'node:fs';
import { join, resolve } from 'node:path';
import { PassThrough } from 'node:stream';
import { describe, expect, it } from 'vitest';
import { startStdioTap } from '../../src/index.js';
import type { RecordDraft } from '../../src/log/schema.js';
import { tempDir } from '../support/temp-dir.js';

const ROOT = resolve(import.meta.dirname, '../..');
const WRITER = join(ROOT, 'dist/log/writer.js');

/** A node process that writes `count` records through LogWriter and then ends the way `ending` says. */
function writeThenEnd(ending: string, count: number): { file: string; status: number | null; stderr: string } {
  const dir = tempDir('mcptap-crash-');
  const file = join(dir, 'crash.ndjson');
  const script = `
    const { LogWriter } = await import(${JSON.stringify(WRITER)});
    const w = new LogWriter({ file: ${JSON.stringify(file)}, session: 's', channel: 'stdio', label: 'crash' });
    const pad = 'x'.repeat(200);
    for (let i = 0; i < ${count}; i++) w.write({ time: Date.now(), kind: 'stderr', dir: 's2c', text: pad, bytes: 200, msg: 'n' + i });
    ${ending}
  `;
  const run = spawnSync(process.execPath, ['--input-type=module', '-e', script], { encoding: 'utf8', timeout: 30_000 });
  return { file, status: run.status, stderr: run.stderr };
}

function seqs(file: string): number[] {
  return readFileSync(file, 'utf8')
    .split('\n')
    .filter(Boolean)
    .map((line) => (JSON.parse(line) as { seq: number }).seq);
}

describe('records are flushed on exit', () => {
  it.each([
    ['process.exit right after writing', 'process.exit(3);', 3],
    ['an uncaught exception', "throw new Error('boom');", 1],
    ['the event loop running dry', '', 0],
  ])('%s', (_name, ending, expectedStatus) => {
    const count = 20_000;
    const { file, status } = writeThenEnd(ending, count);
    expect(status).toBe(expectedStatus);
    // The write that was in flight at exit may land after the rest (see AppendFile.flushAtExit): order aside,
    // every record must be there exactly once.
    const written = seqs(file).sort((a, b) => a - b);
    expect(written.length).toBe(count);
    expect(written).toEqual(Array.from({ length: count }, (_, i) => i));
  });
});

describe("a tap's inspection thread, when its process ends without closing the tap", () => {
  const INDEX = join(ROOT, 'dist/index.js');

  /** A node process that relays `count` frames through a stdio tap around `cat`, then ends the way `ending` says. */
  function relayThenEnd(ending: string, count: number): { logDir: string; status: number | null; stderr: string } {
    const logDir = tempDir('mcptap-crash-tap-');
    const script = `
      const { PassThrough } = await import('node:stream');
      const { startStdioTap } = await import(${JSON.stringify(INDEX)});
      const input = new PassThrough();
      const output = new PassThrough();
      startStdioTap({ command: 'cat', logDir: ${JSON.stringify(logDir)}, input, output, errorOutput: new PassThrough(), watchdog: false });
      const lines = Array.from({ length: ${count} }, (_, i) => '{"jsonrpc":"2.0","id":' + i + ',"method":"ping"}\\n').join('');
      let echoed = '';
      output.on('data', (chunk) => {
        echoed += chunk;
        // Every frame is back: end right after this event (the tap's own listener sees the chunk first), long
        // before the tap's batch of copies goes to its thread.
        if (echoed.length === lines.length) setImmediate(() => { ${ending} });
      });
      input.write(lines);
    `;
    const run = spawnSync(process.execPath, ['--input-type=module', '-e', script], { encoding: 'utf8', timeout: 30_000 });
    return { logDir, status: run.status, stderr: run.stderr };
  }

  it.each([
    ['an uncaught exception', "throw new Error('the host crashed');", 1],
    ['process.exit', 'process.exit(4);', 4],
  ])('still logs every frame it relayed: %s', (_name, ending, expectedStatus) => {
    const count = 50;
    const { logDir, status, stderr } = relayThenEnd(ending, count);
    expect(status, stderr).toBe(expectedStatus);
    const [file] = readdirSync(logDir).filter((f) => f.endsWith('.ndjson'));
    const records = readFileSync(join(logDir, file!), 'utf8')
      .split('\n')
      .filter(Boolean)
      .map((line) => JSON.parse(line) as { dir?: string; id?: number; raw?: string });
    for (const dir of ['c2s', 's2c']) {
      const ids = records.filter((r) => r.dir === dir && r.raw !== undefined).map((r) => r.id);
      expect(ids, dir).toEqual(Array.from({ length: count }, (_, i) => i));
    }
  });
});

describe('an exception in the logging path', () => {
  it('is reported once on stderr, and every byte still flows both ways', async () => {
    const logDir = tempDir('mcptap-sink-');
    const input = new PassThrough();
    const output = new PassThrough();
    const errorOutput = new PassThrough();
    let stderrText = '';
    errorOutput.on('data', (c: Buffer) => (stderrText += c.toString()));
    let outText = '';
    output.on('data', (c: Buffer) => (outText += c.toString()));
    let calls = 0;
    const throwingSink = {
      write(_draft: RecordDraft): number {
        calls++;
        throw new Error('sink exploded');
      },
    };
    const tap = startStdioTap({ command: 'cat', logDir, input, output, errorOutput, sink: throwingSink, watchdog: false });
    const lines = Array.from({ length: 200 }, (_, i) => `{"jsonrpc":"2.0","id":${i},"method":"ping"}\n`).join('') + 'not json\n' + 'partial tail';
    input.end(lines);
    const exit = await tap.exited;
    expect(exit.exitCode).toBe(0);
    expect(outText).toBe(lines);
    expect(calls).toBeGreaterThan(200);
    const reports = stderrText.split('\n').filter((l) => l.includes('internal error in the logging path'));
    expect(reports).toHaveLength(1);
    expect(reports[0]).toContain('sink exploded');
    // The log file itself is complete: the failing extra sink does not cost the log its records.
    const [logFile] = readdirSync(logDir);
    const kinds = readFileSync(join(logDir, logFile!), 'utf8').split('\n').filter(Boolean).map((l) => (JSON.parse(l) as { kind: string }).kind);
    // cat echoes every line, so each request is logged twice: once each way.
    expect(kinds.filter((k) => k === 'request')).toHaveLength(400);
    expect(kinds).toContain('invalid');
    expect(kinds.at(-1)).toBe('lifecycle');
  });

  it('the CLI relays bytes unchanged even when the log cannot be written', async () => {
    // A log folder under a regular file cannot be created: the log fails, the traffic must not.
    const dir = tempDir('mcptap-nolog-');
    const blocker = join(dir, 'file');
    spawnSync('touch', [blocker]);
    const child = spawn(process.execPath, [join(ROOT, 'bin/mcptap.js'), '--log-dir', join(blocker, 'logs'), '--', 'cat'], { stdio: ['pipe', 'pipe', 'pipe'] });
    let out = '';
    let err = '';
    child.stdout.on('data', (c: Buffer) => (out += c.toString()));
    child.stderr.on('data', (c: Buffer) => (err += c.toString()));
    const payload = '{"jsonrpc":"2.0","id":1,"method":"ping"}\n'.repeat(100);
    child.stdin.end(payload);
    const code = await new Promise<number | null>((r) => child.on('close', r));
    expect(code).toBe(0);
    expect(out).toBe(payload);
    expect(err).toMatch(/cannot write the log/);
  });
});
