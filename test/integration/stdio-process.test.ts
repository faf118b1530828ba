/**
 * mcptap owns its child's life: exit codes, signals, no orphans, stderr, start-up failures, an unwritable log,
 * file modes, and the words it says on the command line.
 *
 * Spawns bin/mcptap.js, which runs the built CLI: build first (`npx tsc -p .`, or `npm test`).
 */
import { spawn, type ChildProcessWithoutNullStreams } from 'node:child_process';
import { mkdtempSync, readdirSync, readFileSync, rmSync, statSync, writeFileSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { afterAll, describe, expect, test } from 'vitest';
import { readAllRecords } from '../../src/log/reader.js';
import type { LogRecord } from '../../src/log/schema.js';

type Rec = LogRecord & Record<string, unknown>;
const root = mkdtempSync(join(tmpdir(), 'mcptap-process-'));
afterAll(() => rmSync(root, { recursive: true, force: true }));
let dirs = 0;
const freshDir = () => join(root, `logs-${++dirs}`);

interface Run {
  child: ChildProcessWithoutNullStreams;
  stdout: () => string;
  stderr: () => string;
  done: Promise<{ code: number | null; signal: NodeJS.Signals | null }>;
  /** Resolves once stderr matches. */
  waitFor: (pattern: RegExp) => Promise<RegExpMatchArray>;
}

function start(words: string[], env: NodeJS.ProcessEnv = process.env): Run {
  const child = spawn(process.execPath, ['bin/mcptap.js', ...words], { stdio: ['pipe', 'pipe', 'pipe'], env });
  let stdout = '';
  let stderr = '';
  const waiters: { pattern: RegExp; resolve: (m: RegExpMatchArray) => void }[] = [];
  child.stdout.on('data', (c: Buffer) => (stdout += c.toString()));
  child.stderr.on('data', (c: Buffer) => {
    stderr += c.toString();
    for (const w of [...waiters]) {
      const m = stderr.match(w.pattern);
      if (m) {
        waiters.splice(waiters.indexOf(w), 1);
        w.resolve(m);
      }
    }
  });
  child.stdin.on('error', () => {});
  const done = new Promise<{ code: number | null; signal: NodeJS.Signals | null }>((resolve) => child.on('close', (code, signal) => resolve({ code, signal })));
  return {
    child,
    stdout: () => stdout,
    stderr: () => stderr,
    done,
    waitFor: (pattern) => {
      const m = stderr.match(pattern);
      if (m) return Promise.resolve(m);
      return new Promise((resolve, reject) => {
        // Say what did come, rather than hang until the test times out.
        const timer = setTimeout(() => reject(new Error(`stderr never matched ${String(pattern)}; it was: ${stderr}`)), 10_000);
        waiters.push({ pattern, resolve: (found) => (clearTimeout(timer), resolve(found)) });
      });
    },
  };
}

/** Alive means: the pid exists and is not a zombie (a container's pid 1 may never reap orphans). */
function alive(pid: number): boolean {
  try {
    const stat = readFileSync(`/proc/${pid}/stat`, 'utf8');
    return stat.slice(stat.lastIndexOf(')') + 2)[0] !== 'Z';
  } catch {
    try {
      process.kill(pid, 0);
      return true;
    } catch {
      return false;
    }
  }
}

async function until(check: () => boolean, ms = 3000): Promise<boolean> {
  const end = Date.now() + ms;
  while (Date.now() < end) {
    if (check()) return true;
    await new Promise((r) => setTimeout(r, 20));
  }
  return check();
}

const records = async (dir: string) => (await readAllRecords([dir])) as Rec[];

describe('exit codes', () => {
  test('the child exits 7 → mcptap exits 7, and the log says so', async () => {
    const dir = freshDir();
    const run = start(['--log-dir', dir, '--', process.execPath, '-e', 'process.exit(7)']);
    run.child.stdin.end();
    expect(await run.done).toEqual({ code: 7, signal: null });
    const exit = (await records(dir)).at(-1)!;
    expect(exit).toMatchObject({ kind: 'lifecycle', event: 'exit', code: 7, signal: null, level: 40 });
    expect(exit.msg).toMatch(/^The server exited with code 7 after \d+ ms\.$/);
  });

  test('the child dies by SIGKILL → mcptap exits 128 + 9', async () => {
    const dir = freshDir();
    const run = start(['--log-dir', dir, '--', process.execPath, '-e', "process.kill(process.pid, 'SIGKILL')"]);
    expect(await run.done).toEqual({ code: 137, signal: null });
    expect((await records(dir)).at(-1)).toMatchObject({ event: 'exit', code: null, signal: 'SIGKILL' });
  });

  test('command not found → a plain sentence and exit 127', async () => {
    const dir = freshDir();
    const run = start(['--log-dir', dir, '--', 'no-such-mcp-server-xyz', '--flag']);
    expect((await run.done).code).toBe(127);
    expect(run.stderr()).toMatch(/^mcptap: cannot start no-such-mcp-server-xyz: command not found\. Check the spelling and that it is on the PATH mcptap sees/m);
    expect(run.stdout()).toBe('');
    const log = await records(dir);
    expect(log.map((r) => r.kind)).toEqual(['lifecycle', 'lifecycle', 'lifecycle']);
    expect(log[1]).toMatchObject({ event: 'warning', level: 50 });
    expect(log[2]).toMatchObject({ event: 'exit', msg: 'The server could not be started; mcptap exits with 127.' });
  });
});

describe('signals and orphans', () => {
  // A shell that starts a grandchild and reports both pids, as `npx` or `uv run` would.
  const tree = ['sh', '-c', 'sleep 30 & echo "grandchild $!" >&2; echo "child $$" >&2; wait'];

  test('SIGTERM to mcptap ends the child and the grandchild; mcptap exits 128 + 15', async () => {
    const dir = freshDir();
    const run = start(['--log-dir', dir, '--', ...tree]);
    const child = Number((await run.waitFor(/child (\d+)/))[1]);
    const grandchild = Number((await run.waitFor(/grandchild (\d+)/))[1]);
    expect(alive(child) && alive(grandchild)).toBe(true);
    run.child.kill('SIGTERM');
    expect(await run.done).toEqual({ code: 143, signal: null });
    expect(await until(() => !alive(child) && !alive(grandchild))).toBe(true);
    expect((await records(dir)).at(-1)).toMatchObject({ event: 'exit', signal: 'SIGTERM' });
  });

  test('a server that exits leaving a background job in its group: the job is ended, not orphaned', async () => {
    const dir = freshDir();
    // The job inherits the server's stdout and stderr, so the pipes stay open after the server exits.
    const run = start(['--log-dir', dir, '--', 'sh', '-c', 'sleep 30 & echo "job $!" >&2; exit 0']);
    run.child.stdin.end();
    const job = Number((await run.waitFor(/job (\d+)/))[1]);
    expect(await run.done).toEqual({ code: 0, signal: null });
    expect(await until(() => !alive(job))).toBe(true);
    const log = await records(dir);
    expect(log.find((r) => r.kind === 'lifecycle' && r.event === 'warning')!.msg).toMatch(/^The server exited but left processes running in its process group; mcptap ends them/);
    expect(log.at(-1)).toMatchObject({ event: 'exit', code: 0 });
  });

  test('a child that ignores SIGTERM is killed after the grace period', async () => {
    const dir = freshDir();
    const run = start(['--log-dir', dir, '--', process.execPath, '-e', "process.on('SIGTERM', () => console.error('ignoring SIGTERM')); console.error('ready'); setInterval(() => {}, 1000)"]);
    await run.waitFor(/ready/);
    const started = Date.now();
    run.child.kill('SIGTERM');
    expect(await run.done).toEqual({ code: 137, signal: null });
    // One grace period (2 s) after the signal, not two.
    expect(Date.now() - started).toBeGreaterThanOrEqual(1900);
    expect(Date.now() - started).toBeLessThan(3500);
    expect(run.stderr()).toContain('ignoring SIGTERM');
  });

  test('after stdin EOF the server may finish its work: a 2.5 s tool call still answers, as without mcptap', async () => {
    // Piped clients (scripts, CLIs) close stdin right after their last request and read until the server exits;
    // server-everything answers in-flight calls and exits then. mcptap must not cut that short.
    const dir = freshDir();
    const run = start(['--log-dir', dir, '--', process.execPath, 'node_modules/@modelcontextprotocol/server-everything/dist/index.js', 'stdio']);
    run.child.stdin.end(
      [
        '{"jsonrpc":"2.0","id":0,"method":"initialize","params":{"protocolVersion":"2025-06-18","capabilities":{},"clientInfo":{"name":"script","version":"1"}}}',
        '{"jsonrpc":"2.0","method":"notifications/initialized"}',
        '{"jsonrpc":"2.0","id":1,"method":"tools/call","params":{"name":"trigger-long-running-operation","arguments":{"duration":2.5,"steps":1}}}',
        '',
      ].join('\n'),
    );
    expect(await run.done).toEqual({ code: 0, signal: null });
    expect(run.stdout()).toContain('"text":"Long running operation completed. Duration: 2.5 seconds, Steps: 1."');
    const log = await records(dir);
    expect(log.find((r) => r.kind === 'response' && r.id === 1)).toMatchObject({ method: 'tools/call', tool: 'trigger-long-running-operation' });
    expect(log.filter((r) => r.kind === 'pending')).toEqual([]);
    expect(log.at(-1)).toMatchObject({ event: 'exit', code: 0, signal: null });
  });

  test('stdin EOF closes the child\u2019s stdin, and the child ends on its own', async () => {
    const dir = freshDir();
    const run = start(['--log-dir', dir, '--', 'cat']);
    await run.waitFor(/logging cat to/);
    run.child.stdin.end('{"jsonrpc":"2.0","method":"notifications/initialized"}\n');
    expect(await run.done).toEqual({ code: 0, signal: null });
    expect(run.stdout()).toBe('{"jsonrpc":"2.0","method":"notifications/initialized"}\n');
    expect((await records(dir)).map((r) => (r.kind === 'lifecycle' ? r.event : r.kind))).toEqual(['start', 'notification', 'stdin-end', 'notification', 'exit']);
  });
});

describe('the client stops reading', () => {
  test('the server sees a broken pipe, as without mcptap: `yes` stops, and mcptap exits with its status', async () => {
    const dir = freshDir();
    const run = start(['--log-dir', dir, '--', 'yes']);
    run.child.stdin.end();
    // Read the first chunk, then close our end of mcptap's stdout, as `| head -1` would.
    await new Promise<void>((resolve) => run.child.stdout.once('data', () => resolve()));
    run.child.stdout.destroy();
    const child = Number((await records(dir).catch(() => []))[0]?.childPid ?? 0);
    try {
      // Node gives a child socket pairs, not pipes: `yes` reads ECONNRESET (or EPIPE) and exits 1; a server
      // killed by SIGPIPE would make mcptap exit 141. Either way mcptap passes the server's status on.
      const done = await Promise.race([run.done, new Promise((r) => setTimeout(() => r('still running after 8 s'), 8000))]);
      expect(done).toEqual({ code: 1, signal: null });
      if (child) expect(await until(() => !alive(child))).toBe(true);
    } finally {
      // Leave nothing spinning behind if it failed.
      run.child.kill('SIGKILL');
      if (child && alive(child)) process.kill(child, 'SIGKILL');
    }
    const log = await records(dir);
    expect(log.find((r) => r.kind === 'lifecycle' && r.event === 'warning')!.msg).toMatch(/^the client stopped reading mcptap's stdout \(EPIPE\)/);
    expect(log.at(-1)).toMatchObject({ event: 'exit', code: 1 });
    expect(log.filter((r) => r.kind === 'stderr').map((r) => r.text)).toEqual([expect.stringMatching(/^yes: standard output: (Broken pipe|Connection reset by peer)$/)]);
  });
});

describe('nobody reads mcptap\u2019s stderr', () => {
  test('a closed stderr does not take the session down: traffic flows, the server\u2019s stderr is still logged', async () => {
    const dir = freshDir();
    const script = "process.stdin.on('data', (d) => { console.error('server saw ' + d.length + ' bytes'); process.stdout.write(d); }); process.stdin.on('end', () => process.exit(0))";
    const run = start(['--log-dir', dir, '--', process.execPath, '-e', script]);
    run.child.stderr.destroy();
    await new Promise((r) => setTimeout(r, 300));
    run.child.stdin.end('{"jsonrpc":"2.0","id":1,"method":"ping"}\n');
    expect(await run.done).toEqual({ code: 0, signal: null });
    expect(run.stdout()).toBe('{"jsonrpc":"2.0","id":1,"method":"ping"}\n');
    const log = await records(dir);
    expect(log.filter((r) => r.kind === 'stderr').map((r) => r.text)).toEqual(['server saw 41 bytes']);
    expect(log.some((r) => r.kind === 'lifecycle' && r.event === 'warning' && /stderr/.test(r.msg))).toBe(true);
  });
});

describe('partial lines when the server goes first', () => {
  test('a client line still unfinished when the server exits is logged as partial, not lost', async () => {
    const dir = freshDir();
    const run = start(['--log-dir', dir, '--', process.execPath, '-e', 'process.stdin.resume(); setTimeout(() => process.exit(0), 500)']);
    run.child.stdin.write('{"jsonrpc":"2.0","id":1,"method":"tools/ca');
    expect((await run.done).code).toBe(0);
    run.child.stdin.destroy();
    const partial = (await records(dir)).filter((r) => r.kind === 'invalid');
    expect(partial).toEqual([expect.objectContaining({ dir: 'c2s', partial: true, raw: '{"jsonrpc":"2.0","id":1,"method":"tools/ca', bytes: 42 })]);
  });
});

describe('stderr', () => {
  test('the child\u2019s stderr is relayed unchanged and logged line by line; stdout stays clean', async () => {
    const dir = freshDir();
    const script = "process.stderr.write('first line\\nsecond \\u00e9 line\\npartial'); process.stdout.write('{}\\n')";
    const run = start(['--log-dir', dir, '--name', 'noisy', '--', process.execPath, '-e', script]);
    run.child.stdin.end();
    expect((await run.done).code).toBe(0);
    const lines = run.stderr().split('\n');
    expect(lines[0]).toMatch(/^mcptap: logging .* to .*\/noisy-\d{8}T\d{6}Z-\d+\.ndjson$/);
    expect(lines.slice(1).join('\n')).toBe('first line\nsecond \u00e9 line\npartial');
    expect(run.stdout()).toBe('{}\n');
    const log = await records(dir);
    expect(log.filter((r) => r.kind === 'stderr').map((r) => [r.text, r.bytes, r.dir])).toEqual([
      ['first line', 10, 's2c'],
      ['second \u00e9 line', 14, 's2c'],
      ['partial', 7, 's2c'],
    ]);
    expect(log.at(-1)).toMatchObject({ stderrTail: ['first line', 'second \u00e9 line', 'partial'] });
  });
});

describe('long stderr lines', () => {
  test('a stderr line over 8 KiB is relayed whole and logged as its head, without a character cut in half', async () => {
    const dir = freshDir();
    const line = `x${'\u00e9'.repeat(4500)}`; // 9001 bytes; the 8 KiB cap falls inside an é
    const run = start(['--log-dir', dir, '--', process.execPath, '-e', `process.stderr.write(${JSON.stringify(`${line}\n`)})`]);
    run.child.stdin.end();
    expect((await run.done).code, run.stderr().slice(0, 200) + run.stderr().slice(-300)).toBe(0);
    expect(run.stderr().split('\n')[1]).toBe(line);
    const [record] = (await records(dir)).filter((r) => r.kind === 'stderr');
    expect(record).toMatchObject({ bytes: 9001, truncated: true, text: line.slice(0, 4096) });
  });
});

describe('the log', () => {
  test('an unwritable --log-dir (a path under a regular file) warns once and the relay goes on', async () => {
    const blocker = join(root, 'a-file');
    writeFileSync(blocker, 'x');
    const run = start(['--log-dir', join(blocker, 'logs'), '--', 'cat']);
    run.child.stdin.end('{"jsonrpc":"2.0","id":1,"method":"ping"}\nhello\n');
    expect((await run.done).code).toBe(0);
    expect(run.stdout()).toBe('{"jsonrpc":"2.0","id":1,"method":"ping"}\nhello\n');
    const warnings = run.stderr().split('\n').filter(Boolean);
    expect(warnings).toHaveLength(1);
    expect(warnings[0]).toMatch(/^mcptap: cannot write the log .*a-file\/logs\/cat-.*\.ndjson \(ENOTDIR.*\); the traffic goes on without a log\. Choose another folder with --log-dir or MCPTAP_LOG_DIR\.$/);
  });

  test('the log file is 0600 in a 0700 folder, named <label>-<UTC timestamp>-<pid>.ndjson', async () => {
    const dir = join(freshDir(), 'nested');
    const run = start(['--log-dir', dir, '--', process.execPath, '-e', '']);
    run.child.stdin.end();
    await run.done;
    const [name, ...more] = readdirSync(dir);
    expect(more).toEqual([]);
    expect(name).toMatch(new RegExp(`^node-\\d{8}T\\d{6}Z-${run.child.pid}\\.ndjson$`));
    expect(statSync(dir).mode & 0o777).toBe(0o700);
    expect(statSync(join(dir, name!)).mode & 0o777).toBe(0o600);
  });

  test('$MCPTAP_LOG_DIR is used when --log-dir is not given', async () => {
    const dir = freshDir();
    const run = start(['--', process.execPath, '-e', ''], { ...process.env, MCPTAP_LOG_DIR: dir });
    run.child.stdin.end();
    await run.done;
    expect(run.stderr()).toContain(`to ${dir}/`);
    expect(readdirSync(dir)).toHaveLength(1);
  });
});

describe('the command line', () => {
  test('--help explains the wrap command, its flags and examples', async () => {
    const run = start(['--help']);
    expect((await run.done).code).toBe(0);
    const help = run.stdout();
    expect(help).toContain('Usage: mcptap [options] -- <command> [args...]');
    for (const word of ['--log-dir', '--name', '--max-body', 'mcptap -- python weather.py', 'view']) expect(help).toContain(word);
  });

  test('nothing after -- is a plain sentence and exit 2', async () => {
    for (const words of [['--'], [], ['--log-dir', join(root, 'unused'), '--']]) {
      const run = start(words);
      run.child.stdin.end();
      expect((await run.done).code, `${words.join(' ')}: ${run.stderr()}`).toBe(2);
      expect(run.stderr()).toBe('mcptap: nothing to wrap. Put the MCP server\u2019s command after --, for example: mcptap -- python weather.py\n');
      expect(run.stdout()).toBe('');
    }
  });

  test('`mcptap stdio ... -- cmd` is the same command, flags as --flag=value too', async () => {
    const dir = freshDir();
    const run = start(['stdio', `--log-dir=${dir}`, '--name', 'spelled', '--', 'cat']);
    run.child.stdin.end('{"jsonrpc":"2.0","method":"x"}\n');
    expect((await run.done).code).toBe(0);
    expect(run.stdout()).toBe('{"jsonrpc":"2.0","method":"x"}\n');
    expect(readdirSync(dir)).toEqual([expect.stringMatching(/^spelled-\d{8}T\d{6}Z-\d+\.ndjson$/)]);
  });

  test('a bad --max-body is a plain sentence and exit 2', async () => {
    const run = start(['--max-body', 'lots', '--', 'cat']);
    run.child.stdin.end();
    expect((await run.done).code).toBe(2);
    expect(run.stderr()).toMatch(/^mcptap: --max-body must be a whole number of bytes \(0 or more\), not/);
  });
});
