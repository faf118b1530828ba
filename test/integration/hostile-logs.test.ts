/**
 * Hostile log files through every reading command (view, view --format html, check, export har and otlp, diff,
 * replay over stdio and --listen, ui): records missing the fields of their kind, fields of the wrong type, a
 * record without a label, garbage, a 16 MiB line, an empty file, a named pipe, a symbolic-link loop. No stack
 * trace, no hang: a `skipped` sentence with the file and line for each bad record, and the one exit-code rule —
 * 2 when nothing could be read, otherwise the command's own answer over what could.
 * Spawns bin/mcptap.js: build first (npm test does).
 */
import { execFileSync, spawn } from 'node:child_process';
import { copyFileSync, mkdirSync, readFileSync, symlinkSync, writeFileSync } from 'node:fs';
import { dirname, join, resolve } from 'node:path';
import { beforeAll, describe, expect, it } from 'vitest';
import { tempDir } from '../support/temp-dir.js';
import { mcptap } from '../support/mcptap-cli.js';

const BIN = resolve(import.meta.dirname, '../../bin/mcptap.js');
const CLEAN = resolve(import.meta.dirname, '../../fixtures/captures/roundtrip/weather.ndjson');

const cli = (...args: string[]) => mcptap(args);

/** The commands that read logs, each as a function of the log paths; `replay` gets no client (stdin ends). */
const COMMANDS: [string, (logs: string[]) => string[]][] = [
  ['view', (logs) => ['view', '--no-color', ...logs]],
  ['view --format html', (logs) => ['view', '--format', 'html', ...logs]],
  ['check', (logs) => ['check', '--no-color', ...logs]],
  ['export --format har', (logs) => ['export', '--format', 'har', ...logs]],
  ['export --format otlp', (logs) => ['export', '--format', 'otlp', ...logs]],
  // diff compares two captures: several files go in as the folder that holds them.
  ['diff', (logs) => ['diff', CLEAN, logs.length === 1 ? logs[0]! : dirname(logs[0]!)]],
  ['replay', (logs) => ['replay', ...logs]],
  ['replay --listen', (logs) => ['replay', '--listen', '0', ...logs]],
];

/** What no answer of mcptap's may look like. */
function expectNoCrash(stderr: string, what: string): void {
  expect(stderr, what).not.toMatch(/unexpected error|TypeError|\n\s+at /);
  for (const line of stderr.trim().split('\n').filter(Boolean)) expect(line, what).toMatch(/^mcptap: /);
}

const base = { v: 1, seq: 0, session: 's-1', channel: 'stdio', label: 'x', msg: 'm' };
/** Each kind with only v, kind and time, as the issue's `{"v":1,"kind":"llm-response","time":1}`. */
const KINDS = ['lifecycle', 'request', 'response', 'notification', 'invalid', 'stderr', 'pending', 'http-request', 'http-response', 'http-end', 'sse', 'llm-request', 'llm-chunk', 'llm-response', 'llm-error'];
const bare = KINDS.map((kind, i) => JSON.stringify({ v: 1, kind, time: 1_700_000_000_000 + i }));
/** Whole-looking records whose fields have the wrong types. */
const wrongTypes = [
  { ...base, kind: 'llm-response', time: 1, dir: 's2c', exchange: 'x', endpoint: '/v1/chat/completions', status: 200, content: '', toolCalls: 'get_weather', durationMs: 5 },
  { ...base, kind: 'llm-request', time: 2, dir: 'c2s', exchange: 'x', endpoint: '/api/chat', stream: 'yes', messageCount: 1, tools: [1, 2], toolResults: [] },
  { ...base, kind: 'request', time: 3, dir: 'up', id: { no: 1 }, method: 7, bytes: 1, raw: '{}' },
  { ...base, kind: 'http-end', time: 4, exchange: 'x', method: 'GET', path: '/', outcome: 'complete', reqBytes: 0, resBytes: 0, durationMs: 1, chunks: [['a', 1]] },
  { ...base, kind: 'response', time: 5, label: 42, dir: 's2c', id: 1, bytes: 1, raw: '{}', error: 'boom' },
].map((r) => JSON.stringify(r));
/** A record whole but for its label (once crashed view --format html). */
const noLabel = readFileSync(CLEAN, 'utf8')
  .split('\n')
  .filter(Boolean)
  .slice(0, 3)
  .map((l) => {
    const { label: _label, ...rest } = JSON.parse(l) as Record<string, unknown>;
    return JSON.stringify(rest);
  });
const garbage = ['GET / HTTP/1.1', '\u0000\u0001binary\u00ff', '{"half": ', '[1,2,3]', 'null', '{"v":"1","kind":"request","time":"now"}'];

describe('hostile log files through every reading command', () => {
  const files: Record<string, string> = {};
  let dir: string;

  beforeAll(() => {
    dir = tempDir('mcptap-hostile-');
    mkdirSync(join(dir, 'hostile'));
    const write = (name: string, text: string): void => {
      files[name] = join(dir, 'hostile', name);
      writeFileSync(files[name]!, text);
    };
    write('bare-kinds.ndjson', `${bare.join('\n')}\n`);
    write('wrong-types.ndjson', `${wrongTypes.join('\n')}\n`);
    write('no-label.ndjson', `${noLabel.join('\n')}\n`);
    write('garbage.ndjson', `${garbage.join('\n')}\n`);
    write('huge-line.ndjson', `${'x'.repeat(16 * 1024 * 1024)}\n`);
    write('empty.ndjson', '');
  });

  it.each(COMMANDS)('%s: logs in which nothing is a record are named line by line, then a sentence and exit 2', async (name, args) => {
    const hostile = ['bare-kinds.ndjson', 'wrong-types.ndjson', 'no-label.ndjson', 'garbage.ndjson', 'huge-line.ndjson', 'empty.ndjson'].map((f) => files[f]!);
    const r = await cli(...args(hostile));
    const what = `${name}: ${r.stderr}`;
    expect(r.code, what).toBe(2);
    expectNoCrash(r.stderr, what);
    expect(r.stderr, what).toMatch(/mcptap: (nothing in .* is an mcptap record|the log holds no MCP frames|the logs hold no complete HTTP exchanges)/);
    for (const file of hostile.slice(0, -1)) expect(r.stderr, what).toContain(`mcptap: skipped ${file}:1: `);
  });

  it.each([COMMANDS[0]!, COMMANDS[6]!])('%s: an empty log is a sentence and exit 2', async (_, args) => {
    const r = await cli(...args([files['empty.ndjson']!]));
    expect(r.code).toBe(2);
    expect(r.stderr).toMatch(/^mcptap: (.* holds no records: the log is empty|the log holds no MCP frames)/);
  });

  it('says for each bad record which field, with its file and line', async () => {
    const r = await cli('view', files['bare-kinds.ndjson']!);
    expect(r.stderr).toContain(`mcptap: skipped ${files['bare-kinds.ndjson']}:1: a lifecycle record without seq, session, channel, label, msg and event.\n`);
    expect(r.stderr).toContain(`skipped 10 more lines of ${files['bare-kinds.ndjson']} that are not records.`);
    const wrong = await cli('view', files['wrong-types.ndjson']!);
    expect(wrong.stderr).toContain(`:1: an llm-response record with a wrong type for toolCalls (a list of tool calls with a name).`);
    expect(wrong.stderr).toContain(`:5: a response record with a wrong type for label (a string) and error (an object with a numeric code and a message).`);
    const label = await cli('view', '--format', 'html', files['no-label.ndjson']!);
    expect(label.stderr).toContain(`:1: a lifecycle record without label.`);
  });

  it.each(COMMANDS)('%s: in a folder, good records among bad ones are read, the bad ones, a named pipe and a link loop named', async (name, args) => {
    const folder = join(tempDir('mcptap-hostile-folder-'), 'logs');
    mkdirSync(join(folder, 'sub'), { recursive: true });
    const mixed = join(folder, 'mixed.ndjson');
    writeFileSync(mixed, `${readFileSync(CLEAN, 'utf8')}${bare[13]}\n${wrongTypes[0]}\n${garbage[0]}\n`);
    execFileSync('mkfifo', [join(folder, 'pipe.ndjson')]);
    symlinkSync(folder, join(folder, 'sub', 'loop'));
    const r = await cli(...args([folder]));
    const what = `${name}: ${r.stderr}`;
    expectNoCrash(r.stderr, what);
    // The weather log is an MCP capture: nothing for an HTTP replay (exit 2), a clean pass for everything else.
    expect(r.code, what).toBe(name === 'replay --listen' ? 2 : 0);
    expect(r.stderr, what).toContain('a named pipe (FIFO), not a log file');
    expect(r.stderr, what).toContain('(a symbolic-link loop)');
    const clean = readFileSync(CLEAN, 'utf8').split('\n').filter(Boolean).length;
    expect(r.stderr, what).toContain(`mcptap: skipped ${mixed}:${clean + 1}: an llm-response record without`);
    expect(r.stderr, what).toContain(`mcptap: skipped ${mixed}:${clean + 3}: not JSON`);
  });

  it('ui: a file is a sentence and exit 2 (a folder not there yet is waited for: ui-live.test.ts)', async () => {
    const file = await cli('ui', '--listen', '0', CLEAN);
    expect(file).toMatchObject({ code: 2, stderr: `mcptap: ${CLEAN} is not a folder: mcptap ui follows a folder of logs (give ${dirname(CLEAN)}); to read one log, use mcptap view ${CLEAN}.\n` });
  });

  it('ui: a folder of hostile logs starts the live view, naming what it skipped', async () => {
    const folder = join(tempDir('mcptap-hostile-ui-'), 'logs');
    mkdirSync(folder);
    copyFileSync(CLEAN, join(folder, 'weather.ndjson'));
    for (const f of ['bare-kinds.ndjson', 'wrong-types.ndjson', 'no-label.ndjson', 'garbage.ndjson', 'empty.ndjson']) copyFileSync(files[f]!, join(folder, f));
    const child = spawn(process.execPath, [BIN, 'ui', '--listen', '0', folder], { stdio: ['ignore', 'ignore', 'pipe'] });
    let stderr = '';
    await new Promise<void>((ready, failed) => {
      const timer = setTimeout(() => failed(new Error(`ui did not start: ${stderr}`)), 30_000);
      child.stderr!.on('data', (c: Buffer) => {
        stderr += c.toString();
        if (/live view of .* at http/.test(stderr)) {
          clearTimeout(timer);
          ready();
        }
      });
      child.once('exit', (c) => failed(new Error(`ui exited ${c}: ${stderr}`)));
    });
    child.kill('SIGTERM');
    expectNoCrash(stderr, stderr);
    expect(stderr).toContain(`mcptap: skipped ${join(folder, 'wrong-types.ndjson')}:1: an llm-response record with a wrong type for toolCalls`);
    expect(stderr).toMatch(/\(\d+ past records\)/);
  });
});
