/**
 * The stdio tap inspects its copy of the traffic on an inspection thread by default. These tests hold the thread
 * to the inline inspector's results, and show what happens when the thread falls behind: copies are skipped,
 * the log says how many bytes went uninspected, and logging resumes at the next whole line.
 */
import { readFileSync, readdirSync } from 'node:fs';
import { spawn } from 'node:child_process';
import { join } from 'node:path';
import { PassThrough } from 'node:stream';
import { describe, expect, it } from 'vitest';
import { startStdioTap, readAllRecords, type LogRecord } from '../../src/index.js';
import { StdioCalls, STREAM } from '../../src/capture/stdio-calls.js';
import { ThreadChannel } from '../../src/inspect/channel.js';
import { openLogFile } from '../../src/log/open-file.js';
import { INSPECTION_NICE } from '../../src/inspect/channel-thread.js';
import { tempDir } from '../support/temp-dir.js';

/** The stdio tap's calls over a channel to an inspection thread, as the tap makes them; `maxBacklogBytes` small in tests. */
function threaded(file: string, notice: (m: string) => void, maxBacklogBytes = 64 << 20): { calls: StdioCalls; channel: ThreadChannel } {
  const config = { logFile: file, fd: openLogFile(file), session: 's', label: 'gap', maxBody: 1 << 20 };
  const channel = new ThreadChannel({ inspector: 'stdio-inspector', config, maxBacklogBytes, reports: 1, notice });
  return { calls: new StdioCalls(channel, 1 << 20), channel };
}

const TRAFFIC = [
  '{"jsonrpc":"2.0","id":1,"method":"initialize","params":{"protocolVersion":"2025-06-18","capabilities":{},"clientInfo":{"name":"t","version":"1"}}}\n',
  '{"jsonrpc":"2.0","id":2,"method":"tools/call","params":{"name":"get_weather","arguments":{"city":"Oslo"}}}\n',
  'not json at all\n',
  '{"jsonrpc":"2.0","method":"notifications/progress","params":{"progressToken":1,"progress":1}}\n',
  '{"jsonrpc":"2.0","id":3,"method":"tools/call","params":{"name":"half',
];

/** Run `cat` (an echo server; it says something on stderr as it ends) through the tap; the records, without what differs by run. */
async function capture(inspectionThread: boolean): Promise<Record<string, unknown>[]> {
  const logDir = tempDir('mcptap-thread-');
  const input = new PassThrough();
  const output = new PassThrough();
  const got: Buffer[] = [];
  output.on('data', (c: Buffer) => got.push(c));
  const tap = startStdioTap({ command: 'sh', args: ['-c', 'cat; echo "on stderr" >&2'], label: 'cat', logDir, input, output, errorOutput: new PassThrough(), inspectionThread });
  // Each piece's echo comes back before the next piece goes: the order of the records is then the same in
  // every run, whatever the machine's load (a fixed pause was not enough under the full suite).
  let sent = 0;
  for (const piece of TRAFFIC) {
    input.write(piece);
    sent += piece.length;
    for (const until = Date.now() + 10_000; Buffer.concat(got).length < sent && Date.now() < until; ) await new Promise((r) => setTimeout(r, 2));
  }
  input.end();
  expect((await tap.exited).exitCode).toBe(0);
  expect(Buffer.concat(got).toString()).toBe(TRAFFIC.join(''));
  const records = await readAllRecords([logDir]);
  return records.map((r) => {
    const { time: _t, session: _s, latencyMs: _l, durationMs: _d, ageMs: _a, pid: _p, childPid: _c, msg, ...rest } = r as LogRecord & Record<string, unknown>;
    // Durations appear in some sentences ("returned in 0.4 ms", "1.2 s" on a slow run): compare without them.
    return { ...rest, msg: String(msg).replace(/\d+(\.\d+)? m?s\b/g, 'N').replace(/pid \d+/g, 'pid N') };
  });
}

describe('the inspection thread', () => {
  it('writes the same records as inspecting inline, in the same order', async () => {
    const inline = await capture(false);
    const threaded = await capture(true);
    expect(threaded).toEqual(inline);
    // And they are the records one expects: both directions, the invalid line, the partial one, stderr, exit.
    const kinds = threaded.map((r) => `${r.kind}${r.dir ? `:${r.dir}` : ''}`);
    expect(kinds).toContain('request:c2s');
    expect(kinds).toContain('invalid:s2c');
    expect(kinds).toContain('stderr:s2c');
    expect(threaded.filter((r) => r.partial === true)).toHaveLength(2);
    expect(threaded.at(-1)).toMatchObject({ kind: 'lifecycle', event: 'exit', stderrTail: ['on stderr'] });
  });

  it('skips copies while too far behind, up to the end of a line, says how many bytes went uninspected, and resumes with the next line', async () => {
    const dir = tempDir('mcptap-gap-');
    const file = join(dir, 'gap.ndjson');
    const notices: string[] = [];
    // A ring of 1000 bytes: the backlog's bound.
    const { calls: thread, channel } = threaded(file, (m) => notices.push(m), 1000);
    const line = (i: number) => Buffer.from(`{"jsonrpc":"2.0","method":"notifications/message","params":{"data":"${String(i).padStart(80, '0')}"}}\n`);
    // Lines cut into two chunks each, all in one turn of the event loop: the thread takes in nothing meanwhile,
    // so the backlog only grows, and a skip can start in the middle of a line.
    let sent = 0;
    for (let i = 0; i < 20; i++) {
      const chunk = line(i);
      sent += chunk.length;
      thread.data(STREAM.s2c, chunk.subarray(0, 50), 1000 + i, i);
      thread.data(STREAM.s2c, chunk.subarray(50), 1000 + i, i);
    }
    for (const until = Date.now() + 10_000; !channel.caughtUp && Date.now() < until; ) await new Promise((r) => setTimeout(r, 10));
    // Caught up: the next line is copied and logged again.
    thread.data(STREAM.s2c, line(99), 2001, 101);
    sent += line(99).length;
    thread.endStreams(3000, 200);
    await thread.close({ time: 3000, kind: 'lifecycle', event: 'exit', code: 0, signal: null, durationMs: 1, msg: 'done' } as never);
    const records = readFileSync(file, 'utf8').trim().split('\n').map((l) => JSON.parse(l) as Record<string, unknown>);
    const logged = records.filter((r) => r.kind === 'notification');
    const gaps = records.filter((r) => r.event === 'warning').map((r) => String(r.msg));
    // Whole lines only, never the tail of a cut one; the first lines and the last are there.
    expect(records.some((r) => r.kind === 'invalid')).toBe(false);
    const early = logged.filter((r) => r.time !== 2001).map((r) => r.time);
    expect(early).toEqual(Array.from({ length: early.length }, (_, i) => 1000 + i));
    expect(early.length).toBeGreaterThanOrEqual(5);
    expect(logged.at(-1)?.time).toBe(2001);
    expect(logged.length).toBeLessThan(21);
    // Each skipped span is said once, and the logged and skipped bytes add up to what passed.
    expect(gaps.length).toBeGreaterThan(0);
    const skipped = gaps.map((m) => Number(/did not inspect (\d+) bytes of the server\u2019s stdout, up to the end of a line; they were relayed in full/.exec(m)?.[1]));
    expect(skipped.every((n) => n > 0)).toBe(true);
    // The count is a field too, for check (a request whose answer was in those bytes is unknown, not unanswered).
    expect(records.filter((r) => r.event === 'warning').map((r) => r.uninspectedBytes)).toEqual(skipped);
    // And the stream: only a gap in the server's stdout can hold an answer to the client.
    expect(new Set(records.filter((r) => r.event === 'warning').map((r) => r.stream))).toEqual(new Set(['stdout']));
    const loggedBytes = logged.reduce((sum, r) => sum + Number(r.bytes) + 1, 0);
    expect(loggedBytes + skipped.reduce((a, b) => a + b, 0)).toBe(sent);
    expect(notices).toEqual([]);
    expect(readdirSync(dir)).toEqual(['gap.ndjson']);
  });

  it('a skip still running when the client closes its side is said before the end of input: no half line is logged as partial', async () => {
    const file = join(tempDir('mcptap-gap-end-'), 'gap.ndjson');
    const { calls: thread } = threaded(file, () => {}, 1000);
    // One turn: the start of a long line is copied, the rest of it is skipped, then stdin ends mid-line.
    thread.data(STREAM.c2s, Buffer.from(`{"jsonrpc":"2.0","id":1,"method":"tools/call","params":{"a":"${'x'.repeat(400)}`), 1, 1);
    thread.data(STREAM.c2s, Buffer.from('y'.repeat(600)), 2, 2);
    thread.inputEnd(3, 3);
    thread.endStreams(4, 4);
    await thread.close({ time: 5, kind: 'lifecycle', event: 'exit', code: 0, signal: null, durationMs: 1, msg: 'done' } as never);
    const records = readFileSync(file, 'utf8').trim().split('\n').map((l) => JSON.parse(l) as Record<string, unknown>);
    expect(records.filter((r) => r.dir === 'c2s')).toEqual([]);
    const first = Buffer.byteLength(`{"jsonrpc":"2.0","id":1,"method":"tools/call","params":{"a":"${'x'.repeat(400)}`);
    expect(records.filter((r) => r.event === 'warning').map((r) => r.msg)).toEqual([
      `mcptap fell behind and did not inspect ${first + 600} bytes of the client\u2019s input, up to the end of a line; they were relayed in full, and logging resumes with the next line.`,
    ]);
  });

  it.runIf(process.platform === 'linux')('runs at a lower priority than the relay: one thread of mcptap is niced, the main thread is not', async () => {
    const logDir = tempDir('mcptap-nice-');
    const child = spawn(process.execPath, ['bin/mcptap.js', '--log-dir', logDir, '--', 'cat'], { stdio: ['pipe', 'pipe', 'ignore'] });
    // Once a line has come back through cat and been logged, the inspection thread is running.
    child.stdin.write('{"jsonrpc":"2.0","id":1,"method":"ping"}\n');
    await new Promise((r) => child.stdout.once('data', r));
    for (const until = Date.now() + 10_000; Date.now() < until; await new Promise((r) => setTimeout(r, 20))) {
      const [file] = readdirSync(logDir);
      if (file && readFileSync(join(logDir, file), 'utf8').includes('"method":"ping"')) break;
    }
    /** nice of each thread of the process (field 19 of /proc/<pid>/task/<tid>/stat). */
    const niceOf = (tid: string) => Number(readFileSync(`/proc/${child.pid}/task/${tid}/stat`, 'utf8').split(') ')[1]!.split(' ')[16]);
    const threads = readdirSync(`/proc/${child.pid}/task`);
    const nices = threads.map(niceOf);
    child.stdin.end();
    await new Promise((r) => child.once('exit', r));
    expect(nices[threads.indexOf(String(child.pid))]).toBe(0);
    expect(nices.filter((n) => n === INSPECTION_NICE)).toHaveLength(1);
  });

  it('starts when mcptap itself runs with V8 options, which Node refuses to pass to a worker', async () => {
    const logDir = tempDir('mcptap-v8-options-');
    const child = spawn(process.execPath, ['--max-old-space-size=512', '--stack-size=2000', 'bin/mcptap.js', '--log-dir', logDir, '--', 'cat'], { stdio: ['pipe', 'pipe', 'pipe'] });
    let stderr = '';
    child.stderr.on('data', (c: Buffer) => (stderr += c.toString()));
    child.stdin.write('{"jsonrpc":"2.0","id":1,"method":"ping"}\n');
    await new Promise((r) => child.stdout.once('data', r));
    child.stdin.end();
    expect(await new Promise((r) => child.once('exit', r))).toBe(0);
    // Before, the thread could not start ("invalid execArgv flags") and the tap inspected on the main thread.
    expect(stderr).not.toContain('inspection thread');
    const records = await readAllRecords([logDir]);
    expect(records.filter((r) => r.kind === 'request').map((r) => `${r.dir} ${r.method}`)).toEqual(['c2s ping', 's2c ping']);
  });

  it('counts a request the thread has not looked at yet as owed, so the stdin-EOF escalation waits for it', async () => {
    const dir = tempDir('mcptap-owed-');
    const file = join(dir, 'owed.ndjson');
    const { calls: thread } = threaded(file, () => {});
    const settle = async (want: boolean) => {
      for (const until = Date.now() + 10_000; thread.serverMayOweClient() !== want && Date.now() < until; ) await new Promise((r) => setTimeout(r, 5));
      return thread.serverMayOweClient();
    };
    expect(await settle(false)).toBe(false);
    thread.data(STREAM.c2s, Buffer.from('{"jsonrpc":"2.0","id":7,"method":"tools/call","params":{"name":"slow"}}\n'), 1, 1);
    // Same turn: the thread has not even been sent the request, yet it is owed.
    expect(thread.serverMayOweClient()).toBe(true);
    await new Promise((r) => setTimeout(r, 300));
    expect(thread.serverMayOweClient()).toBe(true);
    thread.data(STREAM.s2c, Buffer.from('{"jsonrpc":"2.0","id":7,"result":{}}\n'), 2, 2);
    expect(await settle(false)).toBe(false);
    thread.endStreams(3, 3);
    await thread.close({ time: 3, kind: 'lifecycle', event: 'exit', code: 0, signal: null, durationMs: 1, msg: 'done' } as never);
  });
});
