/**
 * mcptap owns its child's life: exit codes, signals, no orphans, stderr, start-up failures, an unwritable log,
 * file modes, and the words it says on the command line.
 *
 * Spawns bin/mcptap.js, which runs the built CLI: build first (`npx tsc -p .`, or `npm test`).
 */
import { existsSync, readdirSync, readFileSync, statSync, writeFileSync } from 'node:fs';
import { join } from 'node:path';
import { describe, expect, test } from 'vitest';
import { alive, logDirs, records, start, until } from './stdio-helpers.js';
import { tempDir } from '../support/temp-dir.js';

const { root, freshDir } = logDirs('mcptap-process-');

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

  test('a server that says why it fails and exits at once, before mcptap has loaded its tap: every word still arrives and is logged', async () => {
    // The CLI spawns the server before loading the tap; `sh` is done long before the tap listens.
    const dir = freshDir();
    const run = start(['--log-dir', dir, '--', 'sh', '-c', 'echo \'{"jsonrpc":"2.0","method":"notifications/message","params":{}}\'; echo "ImportError: no module named weather" >&2; exit 3']);
    run.child.stdin.end();
    expect(await run.done).toEqual({ code: 3, signal: null });
    expect(run.stdout()).toBe('{"jsonrpc":"2.0","method":"notifications/message","params":{}}\n');
    expect(run.stderr()).toContain('ImportError: no module named weather\n');
    const log = await records(dir);
    expect(log.find((r) => r.kind === 'stderr')).toMatchObject({ text: 'ImportError: no module named weather' });
    expect(log.find((r) => r.dir === 's2c')).toMatchObject({ kind: 'notification', method: 'notifications/message' });
    expect(log.at(-1)).toMatchObject({ event: 'exit', code: 3 });
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
    const done = await run.done;
    expect(done.code, run.stderr()).toBe(127);
    expect(run.stderr()).toMatch(/^mcptap: cannot start no-such-mcp-server-xyz: command not found\. Check the spelling and that it is on the PATH mcptap sees/m);
    expect(run.stdout()).toBe('');
    const log = await records(dir);
    expect(log.map((r) => r.kind)).toEqual(['lifecycle', 'lifecycle', 'lifecycle']);
    expect(log[1]).toMatchObject({ event: 'warning', level: 50 });
    expect(log[2]).toMatchObject({ event: 'exit', msg: 'The server could not be started; mcptap exits with 127.' });
  });
});

describe('signals and orphans', () => {
  test('SIGTERM while mcptap is still loading its tap (the server already runs) still ends the server', async () => {
    const dir = freshDir();
    const pidFile = join(tempDir('mcptap-pid-'), 'server.pid');
    const run = start(['--log-dir', dir, '--', 'sh', '-c', `echo $$ > '${pidFile}'; exec sleep 30`]);
    // The server writes its pid as soon as it runs; the tap then takes tens of milliseconds more to load.
    let server = 0;
    for (const giveUp = Date.now() + 10_000; !server && Date.now() < giveUp; ) {
      await new Promise((resolve) => setTimeout(resolve, 1));
      if (existsSync(pidFile)) server = Number(readFileSync(pidFile, 'utf8')) || 0;
    }
    run.child.kill('SIGTERM');
    expect(await run.done).toEqual({ code: 143, signal: null });
    expect(await until(() => !alive(server))).toBe(true);
  });

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
    expect(help).toContain('Usage: mcptap [options] <command> [args...]');
    for (const word of ['--log-dir', '--name', '--max-body', 'mcptap python weather.py', 'view']) expect(help).toContain(word);
  });

  test('nothing after -- is a plain sentence and exit 2', async () => {
    for (const words of [['--'], [], ['--log-dir', join(root, 'unused'), '--']]) {
      const run = start(words);
      run.child.stdin.end();
      expect((await run.done).code, `${words.join(' ')}: ${run.stderr()}`).toBe(2);
      expect(run.stderr()).toBe('mcptap: nothing to wrap. Put the MCP server\u2019s command after mcptap\u2019s options, for example: mcptap --log-dir logs python weather.py\n');
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
