/**
 * The corpus: every file in fixtures/ is accounted for — no silent skips.
 *
 * - mcptap logs (fixtures/captures/**, made by scripts/make-fixtures.mjs) must parse without a single problem
 *   line, replay, and re-capture to the same frames, ids and times aside:
 *     MCP sessions: `mcptap -- mcptap replay LOG` (the stdio tap around the stdio replay), driven by a client that
 *       sends the recorded client frames in lockstep; the new log's frames must equal the recorded ones.
 *     HTTP exchanges: `mcptap http --target <mcptap replay LOG --listen>`, driven by the recorded requests; the new
 *       log's exchanges (method, path, request body, status, response body) must equal the recorded ones.
 * - Raw wire material copied from the shared captures (request/response bodies, SSE, the Cline stdio session)
 *   must parse in its own format.
 * - Programs (the tiny peers *.mjs) are listed by name; a folder's README.md says where its frames come from.
 * - fixtures/logs/ keeps logs of older format versions (and the frames they were made of) for the reader's
 *   migration test (test/unit/reader.test.ts): each log must read without a problem line.
 * A file that is none of these fails the test. Needs a fresh build (bin/mcptap.js runs dist/).
 */
import { spawn, type ChildProcess } from 'node:child_process';
import { readdirSync, readFileSync, statSync } from 'node:fs';
import { join, relative } from 'node:path';
import { afterEach, describe, expect, test } from 'vitest';
import { readAllRecords, readLogFile, parseRecordLine, buildScript, mcpSessions, canonicalJson, replay } from '../../src/index.js';
import type { LogRecord } from '../../src/log/schema.js';
import { tempDir } from '../support/temp-dir.js';

const FIXTURES = 'fixtures';
const PROGRAMS = new Set(['fixtures/llm-upstream.mjs', 'fixtures/weather-server.mjs', 'fixtures/v2/trip-server.mjs']);

function walk(dir: string): string[] {
  return readdirSync(dir)
    .sort()
    .flatMap((name) => {
      const path = join(dir, name);
      return statSync(path).isDirectory() ? walk(path) : [path];
    });
}

const files = walk(FIXTURES).map((f) => relative('.', f));
const isLog = (file: string): boolean => {
  if (!file.endsWith('.ndjson')) return false;
  const first = readFileSync(file, 'utf8').split('\n', 1)[0] ?? '';
  const parsed = parseRecordLine(first);
  return parsed !== undefined && 'record' in parsed;
};
/** Logs of older format versions and their frames, for the reader's migration test. */
const isFormatFixture = (file: string): boolean => file.startsWith('fixtures/logs/');
const logs = files.filter((f) => isLog(f) && !isFormatFixture(f));
/** Where a folder's frames come from (fixtures/anthropic/README.md): documentation, not wire material. */
const isProvenance = (file: string): boolean => /(^|\/)README\.md$/.test(file);
const raw = files.filter((f) => !PROGRAMS.has(f) && !logs.includes(f) && !isProvenance(f) && !isFormatFixture(f));

const cleanup: (() => Promise<void>)[] = [];
afterEach(async () => {
  for (const c of cleanup.splice(0).reverse()) await c();
});

/** Frames of an MCP session as comparable values: direction, kind, and the JSON without its id. */
function mcpFrames(records: readonly LogRecord[], session: string): string[] {
  return records
    .filter((r) => r.session === session && (r.kind === 'request' || r.kind === 'response' || r.kind === 'notification' || r.kind === 'invalid'))
    .map((r) => {
      const text = (r as { raw: string }).raw;
      let body: string;
      try {
        const { id: _id, ...rest } = JSON.parse(text) as Record<string, unknown>;
        body = canonicalJson(rest);
      } catch {
        body = text;
      }
      return `${r.dir} ${r.kind} ${body}`;
    });
}

async function exited(child: ChildProcess): Promise<void> {
  if (child.exitCode !== null || child.signalCode !== null) return;
  await new Promise((r) => child.once('exit', r));
}

/** Replay one MCP session over stdio inside the stdio tap, sending the recorded client frames in lockstep. */
async function recaptureStdio(log: string, session: string, frames: readonly LogRecord[]): Promise<LogRecord[]> {
  const dir = tempDir('mcptap-corpus-');
  const child = spawn(
    process.execPath,
    ['bin/mcptap.js', '--log-dir', dir, '--name', 'corpus', '--max-body', String(64 * 1024 * 1024), '--', process.execPath, 'bin/mcptap.js', 'replay', log, '--session', session, '--no-delay'],
    { stdio: ['pipe', 'pipe', 'pipe'] },
  );
  cleanup.push(async () => {
    child.kill('SIGKILL');
    await exited(child);
  });
  let received = 0;
  let buffer = '';
  const waiters: { count: number; resolve: () => void }[] = [];
  child.stdout!.on('data', (chunk: Buffer) => {
    buffer += chunk.toString('utf8');
    const lines = buffer.split('\n');
    buffer = lines.pop()!;
    received += lines.length;
    for (const w of waiters.splice(0)) (received >= w.count ? w.resolve : () => waiters.push(w))();
  });
  let stderr = '';
  child.stderr!.on('data', (c: Buffer) => (stderr += c.toString()));
  const until = (count: number): Promise<void> =>
    new Promise((resolve, reject) => {
      if (received >= count) return resolve();
      const timer = setTimeout(() => reject(new Error(`the replay of ${log} sent ${received} of ${count} server frames; stderr:\n${stderr}`)), 10_000);
      waiters.push({ count, resolve: () => (clearTimeout(timer), resolve()) });
    });
  let serverFramesBefore = 0;
  for (const r of frames) {
    if (r.dir === 's2c') {
      serverFramesBefore++;
      continue;
    }
    await until(serverFramesBefore);
    const text = (r as { raw: string; rawEncoding?: string }).rawEncoding === 'base64' ? Buffer.from((r as { raw: string }).raw, 'base64') : Buffer.from((r as { raw: string }).raw);
    child.stdin!.write(Buffer.concat([text, Buffer.from('\n')]));
  }
  await until(serverFramesBefore);
  child.stdin!.end();
  await exited(child);
  return readAllRecords([dir]);
}

/** One exchange as comparable text: request and answer, JSON-RPC ids aside. */
function exchangeKey(e: { method: string; path: string; requestBody?: string | undefined; status?: number | undefined; body: string }): string {
  const strip = (text: string | undefined): string => {
    if (!text) return '';
    return text
      .split('\n')
      .map((line) => {
        const m = /^(data: ?)?(\{.*\})\s*$/.exec(line);
        if (!m) return line;
        try {
          const { id: _id, ...rest } = JSON.parse(m[2]!) as Record<string, unknown>;
          return `${m[1] ?? ''}${canonicalJson(rest)}`;
        } catch {
          return line;
        }
      })
      .join('\n');
  };
  return `${e.method} ${e.path} ${strip(e.requestBody)} → ${e.status ?? '-'} ${strip(e.body)}`;
}

function exchangesOf(records: readonly LogRecord[]): { method: string; path: string; requestBody?: string; status?: number; body: string; outcome: string }[] {
  const requests = new Map<string, Extract<LogRecord, { kind: 'http-request' }>>();
  const out: { method: string; path: string; requestBody?: string; status?: number; body: string; outcome: string }[] = [];
  for (const r of records) {
    if (r.kind === 'http-request') requests.set(`${r.session}#${r.exchange}`, r);
    if (r.kind === 'http-end') {
      const req = requests.get(`${r.session}#${r.exchange}`);
      out.push({ method: r.method, path: r.path, ...(req?.body !== undefined ? { requestBody: req.body } : {}), ...(r.status !== undefined ? { status: r.status } : {}), body: r.body ?? '', outcome: r.outcome });
    }
  }
  return out;
}

/** Serve the capture with the HTTP replay, put `mcptap http` in front, and send it the recorded requests. */
async function recaptureHttp(log: string, recorded: ReturnType<typeof exchangesOf>): Promise<LogRecord[]> {
  const stand = await replay({ logs: log, listen: 0, noDelay: true });
  cleanup.push(() => stand.close());
  const dir = tempDir('mcptap-corpus-');
  const tap = spawn(process.execPath, ['bin/mcptap.js', 'http', '--target', stand.url!, '--listen', '0', '--log-dir', dir, '--name', 'corpus', '--max-body', String(64 * 1024 * 1024)], {
    stdio: ['ignore', 'pipe', 'pipe'],
  });
  cleanup.push(async () => {
    tap.kill('SIGKILL');
    await exited(tap);
  });
  let err = '';
  const url = await new Promise<string>((resolve, reject) => {
    tap.stderr!.on('data', (c: Buffer) => {
      err += c.toString();
      const m = /listening on (http:\/\/\S+?),/.exec(err);
      if (m) resolve(m[1]!);
    });
    tap.once('exit', () => reject(new Error(`mcptap http exited: ${err}`)));
  });
  const open: AbortController[] = [];
  for (const e of recorded) {
    const abort = new AbortController();
    const response = await fetch(`${url}${e.path}`, {
      method: e.method,
      signal: abort.signal,
      headers: { 'content-type': 'application/json', accept: 'application/json, text/event-stream' },
      ...(e.requestBody !== undefined ? { body: e.requestBody } : {}),
    });
    if (e.outcome === 'client-aborted') {
      // A stream the recorded client hung up on (a standalone SSE GET): read it in the background, hang up at the end.
      open.push(abort);
      void response.text().catch(() => {});
      continue;
    }
    await response.arrayBuffer();
  }
  await new Promise((r) => setTimeout(r, 200));
  for (const a of open) a.abort();
  const gone = exited(tap);
  tap.kill('SIGINT');
  await gone;
  return readAllRecords([dir]);
}

describe('fixtures corpus', () => {
  test('every file in fixtures/ is a capture, raw wire material or a listed program', () => {
    expect(logs.length).toBeGreaterThanOrEqual(5);
    for (const program of PROGRAMS) expect(files).toContain(program);
  });

  test.each(raw)('raw wire material %s parses in its own format', (file) => {
    const text = readFileSync(file, 'utf8');
    if (file.endsWith('.json')) {
      expect(() => JSON.parse(text)).not.toThrow();
    } else if (file.endsWith('.ndjson')) {
      const lines = text.split('\n').filter((l) => l.trim() !== '');
      expect(lines.length).toBeGreaterThan(0);
      for (const line of lines) {
        const value = JSON.parse(line) as Record<string, unknown>;
        // The Cline stdio session: {dir, line} with a JSON-RPC message inside.
        if ('line' in value) expect((JSON.parse(value.line as string) as { jsonrpc: string }).jsonrpc).toBe('2.0');
      }
    } else if (file.endsWith('.sse')) {
      // Lines may end in CRLF, as the Gemini API's do.
      const events = text.split(/\r?\n\r?\n/).filter((e) => e.trim() !== '');
      expect(events.length).toBeGreaterThan(0);
      for (const event of events) for (const line of event.split(/\r?\n/)) expect(line).toMatch(/^(data|event|id|retry)?:|^:/);
    } else {
      throw new Error(`${file} is neither an mcptap log, raw wire material (.json, .ndjson, .sse) nor a listed program: add it to the corpus test`);
    }
  });

  test.each(files.filter(isFormatFixture))('format fixture %s reads as what it is', async (file) => {
    if (file.endsWith('.ndjson')) {
      const problems: string[] = [];
      for await (const _ of readLogFile(file, { onProblem: (p) => problems.push(`${p.line}: ${p.message}`) }));
      expect(problems).toEqual([]);
    } else {
      // The frames a log was made of: a direction (0 client, 1 server) and the frame, a line each.
      for (const line of readFileSync(file, 'utf8').split('\n').filter(Boolean)) expect(line).toMatch(/^[01] /);
    }
  });

  test.each(logs)('capture %s parses, replays and re-captures to the same frames', async (file) => {
    const problems: string[] = [];
    const records: LogRecord[] = [];
    for await (const { record } of readLogFile(file, { onProblem: (p) => problems.push(`${p.line}: ${p.message}`) })) records.push(record);
    expect(problems).toEqual([]);
    expect(records.length).toBeGreaterThan(0);
    const sessions = mcpSessions(records);
    const exchanges = exchangesOf(records);
    // Every capture has something to replay.
    expect(sessions.length + exchanges.length).toBeGreaterThan(0);

    for (const { session } of sessions) {
      const script = buildScript(records, session);
      expect(script.steps.length).toBeGreaterThan(0);
      const frames = records.filter((r) => r.session === session && (r.kind === 'request' || r.kind === 'response' || r.kind === 'notification' || r.kind === 'invalid'));
      const again = await recaptureStdio(file, session, frames);
      const [newSession] = mcpSessions(again);
      expect(newSession, `the re-capture of ${file} holds no MCP session`).toBeDefined();
      // Per direction: the order between the two directions depends on scheduling, not on the server.
      const mine = mcpFrames(again, newSession!.session);
      const theirs = mcpFrames(records, session);
      expect(theirs.length).toBe(frames.length);
      expect(mine.length).toBe(theirs.length);
      for (const dir of ['c2s', 's2c']) expect(mine.filter((f) => f.startsWith(dir))).toEqual(theirs.filter((f) => f.startsWith(dir)));
      // What was never answered stays unanswered.
      expect(again.filter((r) => r.kind === 'pending').map((r) => (r as { method: string }).method)).toEqual(
        records.filter((r) => r.kind === 'pending' && r.session === session).map((r) => (r as { method: string }).method),
      );
    }

    if (exchanges.length) {
      const again = exchangesOf(await recaptureHttp(file, exchanges));
      expect(again.length).toBe(exchanges.length);
      expect(again.map(exchangeKey)).toEqual(exchanges.map(exchangeKey));
    }
  });
});
