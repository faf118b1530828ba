/**
 * The wrapped server is never orphaned, even when mcptap is killed with SIGKILL (which runs no code in mcptap).
 * Real processes: the built CLI (bin/mcptap.js → dist/) wrapping small node servers.
 */
import { spawn, type ChildProcess } from 'node:child_process';
import { join, resolve } from 'node:path';
import { readFileSync } from 'node:fs';
import { PassThrough } from 'node:stream';
import { afterEach, describe, expect, it } from 'vitest';
import { startStdioTap } from '../../src/index.js';
import { tempDir } from '../support/temp-dir.js';

const ROOT = resolve(import.meta.dirname, '../..');
const BIN = join(ROOT, 'bin/mcptap.js');

/**
 * Prints its pid as a JSON-RPC notification, then lives on. `stubborn` ignores stdin EOF and SIGTERM. The
 * handlers come first: once the pid is out, the test may kill mcptap and its watchdog signal the server at once.
 */
function server(stubborn: boolean): string {
  return `
    ${stubborn ? "process.on('SIGTERM', () => {}); process.stdin.on('end', () => {});" : "process.stdin.on('end', () => process.exit(0));"}
    process.stdout.write(JSON.stringify({ jsonrpc: '2.0', method: 'notifications/message', params: { pid: process.pid } }) + '\\n');
    process.stdin.resume();
    setInterval(() => {}, 1000);
  `;
}

/** True while the process exists and is not a zombie waiting for its (new) parent to reap it. */
const alive = (pid: number): boolean => {
  try {
    process.kill(pid, 0);
  } catch {
    return false;
  }
  try {
    // "pid (comm) S ...": the state follows the last ')'.
    const stat = readFileSync(`/proc/${pid}/stat`, 'utf8');
    return stat.slice(stat.lastIndexOf(')') + 2, stat.lastIndexOf(')') + 3) !== 'Z';
  } catch {
    return true;
  }
};

async function waitUntil(check: () => boolean, ms: number): Promise<number> {
  const start = Date.now();
  while (!check()) {
    if (Date.now() - start > ms) throw new Error(`still not true after ${ms} ms`);
    await new Promise((r) => setTimeout(r, 25));
  }
  return Date.now() - start;
}

const started: number[] = [];
afterEach(() => {
  // Whatever a failed test left behind goes now.
  for (const pid of started.splice(0)) if (alive(pid)) process.kill(pid, 'SIGKILL');
});

/** Start mcptap around a server; resolves with mcptap and the server's pid (read from the relayed stdout). */
async function wrap(stubborn: boolean): Promise<{ mcptap: ChildProcess; serverPid: number }> {
  const logDir = tempDir('mcptap-orphan-');
  const mcptap = spawn(process.execPath, [BIN, '--log-dir', logDir, '--', process.execPath, '-e', server(stubborn)], { stdio: ['pipe', 'pipe', 'pipe'] });
  const serverPid = await new Promise<number>((resolvePid, reject) => {
    let text = '';
    mcptap.stdout!.on('data', (c: Buffer) => {
      text += c.toString();
      const line = text.split('\n')[0];
      if (text.includes('\n')) resolvePid((JSON.parse(line!) as { params: { pid: number } }).params.pid);
    });
    mcptap.on('exit', () => reject(new Error('mcptap exited before the server spoke')));
  });
  started.push(serverPid);
  return { mcptap, serverPid };
}

describe('no orphans when mcptap is SIGKILLed', () => {
  it('a server that ignores stdin EOF and SIGTERM is still ended (SIGTERM, grace, SIGKILL by the watchdog)', async () => {
    const { mcptap, serverPid } = await wrap(true);
    expect(alive(serverPid)).toBe(true);
    mcptap.kill('SIGKILL');
    // Default grace is 2 s between SIGTERM and SIGKILL; allow generous slack on a busy machine.
    const took = await waitUntil(() => !alive(serverPid), 10_000);
    expect(took).toBeGreaterThanOrEqual(900); // it did ignore SIGTERM: only the SIGKILL after the grace period ended it
  });

  it('a server that exits on stdin EOF goes at once', async () => {
    const { mcptap, serverPid } = await wrap(false);
    mcptap.kill('SIGKILL');
    const took = await waitUntil(() => !alive(serverPid), 5_000);
    // Well before the watchdog's SIGKILL, which comes only after the 2 s grace period.
    expect(took).toBeLessThan(1800);
  });
});

describe('the watchdog itself', () => {
  it('leaves without touching anything when mcptap ends normally', async () => {
    const input = new PassThrough();
    const tap = startStdioTap({ command: 'cat', logDir: tempDir('mcptap-dog-'), input, output: new PassThrough(), errorOutput: new PassThrough() });
    const dogPid = tap.watchdogPid;
    expect(dogPid).toBeTypeOf('number');
    expect(alive(dogPid!)).toBe(true);
    input.end('{"jsonrpc":"2.0","method":"x"}\n');
    const exit = await tap.exited;
    expect(exit.exitCode).toBe(0);
    await waitUntil(() => !alive(dogPid!), 3_000);
  });

  it('can be turned off', () => {
    const input = new PassThrough();
    const tap = startStdioTap({ command: 'cat', logDir: tempDir('mcptap-dog-'), input, output: new PassThrough(), errorOutput: new PassThrough(), watchdog: false });
    expect(tap.watchdogPid).toBeUndefined();
    input.end();
    return tap.exited;
  });
});
