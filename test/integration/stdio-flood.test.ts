/**
 * A flood through `mcptap -- cat`: the log must be complete (the inspection waits for the disk rather than drop
 * records), and a SIGTERM while mcptap is still writing the log after the server has gone ends it promptly,
 * with one warning that counts what was relayed but not inspected. Not timed: speed is in bench/.
 */
import { spawn } from 'node:child_process';
import type { Writable } from 'node:stream';
import { readdirSync, readFileSync } from 'node:fs';
import { join } from 'node:path';
import { describe, expect, it } from 'vitest';
import { tempDir } from '../support/temp-dir.js';
import { readAllRecords } from '../../src/log/reader.js';
import { pendingOfEvicted } from '../../src/log/evicted.js';
import { checkRecords } from '../../src/check/check.js';
import type { EvictedRecord } from '../../src/log/schema.js';

const notification = (i: number): string => `{"jsonrpc":"2.0","method":"notifications/message","params":{"level":"info","data":"flood ${i}"}}\n`;
/** A notification of 64 KiB, as a server sends a big log line or a client a big argument. */
const bigNotification = (i: number): string => `{"jsonrpc":"2.0","method":"notifications/message","params":{"level":"info","data":"${String(i).padEnd(65_400, 'x')}"}}\n`;
const request = (i: number): string => `{"jsonrpc":"2.0","id":${i},"method":"tools/call","params":{"name":"echo","arguments":{"text":"flood ${i}"}}}\n`;

/** Write `lines` lines made by `line`, a thousand at a time, waiting for the pipe; how many bytes were written. */
async function writeLines(stdin: Writable, lines: number, line: (i: number) => string): Promise<number> {
  let sent = 0;
  const block: string[] = [];
  for (let i = 0; i < lines; i++) {
    block.push(line(i));
    if (block.length === 1000 || i === lines - 1) {
      const text = block.join('');
      block.length = 0;
      sent += text.length;
      if (!stdin.write(text)) await new Promise((resolve) => stdin.once('drain', resolve));
    }
  }
  return sent;
}

/** What a flood writes: `lines` lines made by `line`, in blocks, or `burst`, all of it at once. */
type FloodInput = { lines: number; line?: (i: number) => string } | { burst: Buffer };

/** Run `mcptap -- cat`, write `input`, end stdin; `whileDraining` runs once the server has gone. */
async function flood(
  input: FloodInput,
  whileDraining?: (pid: number) => void,
): Promise<{ code: number | null; stdoutBytes: number; sent: number; stderr: string; records: Record<string, unknown>[]; logDir: string }> {
  const logDir = tempDir('mcptap-flood-');
  const child = spawn(process.execPath, ['bin/mcptap.js', '--log-dir', logDir, '--', 'cat'], { stdio: ['pipe', 'pipe', 'pipe'] });
  let stdoutBytes = 0;
  let stderr = '';
  child.stdout.on('data', (c: Buffer) => (stdoutBytes += c.length));
  child.stderr.on('data', (c: Buffer) => (stderr += c.toString()));
  const closed = new Promise<number | null>((resolve) => child.on('close', (code) => resolve(code)));
  let sent: number;
  if ('burst' in input) {
    child.stdin.write(input.burst);
    sent = input.burst.length;
  } else {
    sent = await writeLines(child.stdin, input.lines, input.line ?? notification);
  }
  child.stdin.end();
  if (whileDraining) {
    // Every byte came back through cat: the server has gone (or is going) and mcptap is writing its log.
    for (const until = Date.now() + 60_000; stdoutBytes < sent && Date.now() < until; ) await new Promise((r) => setTimeout(r, 10));
    whileDraining(child.pid!);
  }
  const code = await closed;
  const [file] = readdirSync(logDir);
  const records = readFileSync(join(logDir, file!), 'utf8').trim().split('\n').map((l) => JSON.parse(l) as Record<string, unknown>);
  return { code, stdoutBytes, sent, stderr, records, logDir };
}

/** The run ended well, everything it sent came back, and its log holds `n` notifications each way and no warning. */
function expectEveryNotification(run: Awaited<ReturnType<typeof flood>>, n: number): void {
  expect(run.code).toBe(0);
  expect(run.stdoutBytes).toBe(run.sent);
  const notes = run.records.filter((r) => r.kind === 'notification');
  expect(notes.filter((r) => r.dir === 'c2s')).toHaveLength(n);
  expect(notes.filter((r) => r.dir === 's2c')).toHaveLength(n);
  expect(run.records.filter((r) => r.event === 'warning')).toEqual([]);
}

describe('a flood through mcptap -- cat', () => {
  it('logs every one of 200,000 frames', { timeout: 120_000 }, async () => {
    const run = await flood({ lines: 100_000 });
    expectEveryNotification(run, 100_000);
    expect(run.stderr).not.toMatch(/dropped|behind/);
    expect(run.records.at(-1)).toMatchObject({ kind: 'lifecycle', event: 'exit', code: 0 });
  });

  it('logs every frame of a burst far past what the inspection keeps up with: 1,500 frames of 64 KiB', { timeout: 120_000 }, async () => {
    // Made before cat starts and written at once: cat relays the 98 MB both ways in a fraction of a second, and
    // the backlog (up to 196 MB) is held, then drained.
    const burst = Buffer.from(Array.from({ length: 1500 }, (_, i) => bigNotification(i)).join(''));
    const run = await flood({ burst });
    expectEveryNotification(run, 1500);
  });

  it('a flood of requests nobody answers: each is logged, then let go once, and check counts every one unanswered', { timeout: 120_000 }, async () => {
    // cat sends each request back, so the tap sees 30,000 from each side, far past the 10,000 it tracks.
    const run = await flood({ lines: 30_000, line: request });
    expect(run.code).toBe(0);
    expect(run.stdoutBytes).toBe(run.sent);
    const records = await readAllRecords([run.logDir]);
    const requests = records.filter((r) => r.kind === 'request');
    expect(requests).toHaveLength(60_000);
    const evictions = records.filter((r): r is EvictedRecord => r.kind === 'evicted');
    // Past 10,000 open the oldest 1,001 go at once, in one record: 50 times, 50,050 requests; the 9,950 still
    // open when cat exits are pending at the end.
    expect(evictions.map((r) => r.requests.length)).toEqual(Array(50).fill(1001));
    expect(records.filter((r) => r.kind === 'pending')).toHaveLength(9950);
    const letGo = [...evictions.flatMap(pendingOfEvicted), ...records.filter((r) => r.kind === 'pending')];
    expect(letGo.map((p) => (p.kind === 'pending' ? p.requestSeq : -1)).sort((a, b) => a - b)).toEqual(requests.map((r) => r.seq));
    const report = checkRecords(records);
    expect(report.sessions[0]).toMatchObject({ requests: 60_000, counts: { unanswered: 60_000 } });
  });

  it('a SIGTERM while the log is still being written ends mcptap with what was written and one warning for the rest', { timeout: 120_000 }, async () => {
    let signals = 0;
    let timer: NodeJS.Timeout | undefined;
    const run = await flood({ lines: 300_000 }, (pid) => {
      // The first SIGTERM may come a moment before mcptap has seen the server go (it then goes to the server):
      // send one every 100 ms until mcptap is gone.
      const send = (): void => {
        try {
          process.kill(pid, 'SIGTERM');
          signals++;
        } catch {
          return;
        }
        timer = setTimeout(send, 100);
      };
      send();
    });
    clearTimeout(timer);
    expect(run.stdoutBytes).toBe(run.sent);
    const warnings = run.records.filter((r) => r.event === 'warning');
    expect(warnings).toHaveLength(1);
    const [, bytes, chunks] = /^mcptap was stopped while it was still logging: (\d+) bytes \((\d+) chunks\) of traffic were relayed in full but not inspected/.exec(String(warnings[0]!.msg)) ?? [];
    expect(Number(bytes)).toBeGreaterThan(0);
    expect(Number(chunks)).toBeGreaterThan(0);
    // What was inspected is in the log, flushed, and ends with the exit record; the stop is said on stderr too.
    const logged = run.records.filter((r) => r.kind === 'notification').length;
    expect(logged).toBeLessThan(600_000);
    expect(run.records.at(-1)).toMatchObject({ kind: 'lifecycle', event: 'exit' });
    expect(run.stderr).toContain('mcptap was stopped while it was still logging');
  });
});
