/**
 * mcptap is a pipe: EOF, a broken pipe and a closed stderr reach the server as they would without it, and an
 * unfinished line is logged whoever ends the session.
 *
 * Spawns bin/mcptap.js, which runs the built CLI: build first (`npx tsc -p .`, or `npm test`).
 */
import { describe, expect, test } from 'vitest';
import { alive, logDirs, records, start, until } from './stdio-helpers.js';

const { freshDir } = logDirs('mcptap-pipes-');

describe('stdin EOF', () => {
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

  test('a server that ignores EOF is ended once nothing is left to answer: 2 s, SIGTERM (as the SDK client does)', async () => {
    const dir = freshDir();
    // Answers one request after 1 s, then idles forever, ignoring EOF.
    const script = "process.stdin.on('data', (d) => { const m = JSON.parse(d); setTimeout(() => process.stdout.write(JSON.stringify({ jsonrpc: '2.0', id: m.id, result: {} }) + '\\n'), 1000); }); setInterval(() => {}, 1000)";
    const run = start(['--log-dir', dir, '--', process.execPath, '-e', script]);
    const started = Date.now();
    run.child.stdin.end('{"jsonrpc":"2.0","id":1,"method":"ping"}\n');
    expect(await run.done).toEqual({ code: 143, signal: null });
    // 1 s for the answer it still owed, then the 2 s grace: not cut off before it answered.
    expect(Date.now() - started).toBeGreaterThanOrEqual(2900);
    expect(run.stdout()).toBe('{"jsonrpc":"2.0","id":1,"result":{}}\n');
    const log = await records(dir);
    expect(log.find((r) => r.kind === 'response')).toMatchObject({ method: 'ping', id: 1 });
    expect(log.at(-1)).toMatchObject({ event: 'exit', signal: 'SIGTERM' });
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
      // A hang guard, not a timing: mcptap writes the log of every line `yes` got out before it exits (on a busy
      // machine, with the inspection thread at nice 10, that takes seconds).
      const done = await Promise.race([run.done, new Promise((r) => setTimeout(() => r('still running after 40 s'), 40_000))]);
      expect(done).toEqual({ code: 1, signal: null });
      if (child) expect(await until(() => !alive(child))).toBe(true);
    } finally {
      // Leave nothing spinning behind if it failed.
      run.child.kill('SIGKILL');
      if (child && alive(child)) process.kill(child, 'SIGKILL');
    }
    const log = await records(dir);
    // `yes` floods: the log may also say it dropped records or skipped bytes to keep up; the EPIPE is said too.
    const warnings = log.filter((r) => r.kind === 'lifecycle' && r.event === 'warning').map((r) => r.msg);
    expect(warnings).toContainEqual(expect.stringMatching(/^the client stopped reading mcptap's stdout \(EPIPE\)/));
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
