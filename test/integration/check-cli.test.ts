/**
 * `mcptap check` as CI runs it: the built CLI on real captures (fixtures/captures, made with
 * mcptap by scripts/make-fixtures.mjs). Needs a fresh build (bin/mcptap.js runs dist/).
 */
import { spawnSync } from 'node:child_process';
import { readFileSync } from 'node:fs';
import { join } from 'node:path';
import { describe, expect, test } from 'vitest';
import { tempDir } from '../support/temp-dir.js';

const run = (...args: string[]) => {
  const r = spawnSync(process.execPath, ['bin/mcptap.js', ...args], { encoding: 'utf8', env: { ...process.env, NO_COLOR: '1' } });
  return { code: r.status, out: r.stdout, err: r.stderr };
};
const CLEAN = 'fixtures/captures/mcp-stdio/everything-sdk.ndjson';
const POLLUTED = 'fixtures/captures/mcp-stdio/polluted.ndjson';
const UNANSWERED = 'fixtures/captures/mcp-stdio/unanswered.ndjson';

describe('mcptap check', () => {
  test('passes a clean capture', () => {
    const r = run('check', CLEAN);
    expect(r.code).toBe(0);
    expect(r.out.split('\n')[0]).toBe('mcptap check: PASS — 1 session, failing on start, errors, invalid, unanswered, broken');
    // The scenario's call to an unknown tool is an isError result: reported, but not failed on by default.
    expect(r.out).toContain('1 tool-errors');
    expect(run('check', '--fail-on', 'tool-errors', CLEAN).code).toBe(1);
  });

  test('fails a capture with stdout pollution, naming the line', () => {
    const r = run('check', POLLUTED);
    expect(r.code).toBe(1);
    expect(r.out).toContain('mcptap check: FAIL');
    expect(r.out).toMatch(/invalid +polluted #\d+: The server wrote a line that is not JSON-RPC to stdout/);
    expect(r.out).toContain('Everything server boo');
  });

  test('fails a capture with an unanswered request; --fail-on can leave that signal out', () => {
    const r = run('check', UNANSWERED);
    expect(r.code).toBe(1);
    expect(r.out).toMatch(/unanswered +unanswered #\d+: The client’s request tools\/call trigger-long-running-operation #2 was never answered/);
    expect(run('check', '--fail-on', 'errors,invalid', UNANSWERED).code).toBe(0);
  });

  test('a whole round trip passes; one whose tool call no MCP server ran fails as broken', () => {
    const whole = run('check', 'fixtures/captures/roundtrip');
    expect(whole.code).toBe(0);
    expect(whole.out).toMatch(/✓ weather .*\n.*✓ ollama /);
    // The host had the weather server connected but answered the model's get_weather call itself.
    const broken = run('check', 'fixtures/captures/broken-roundtrip');
    expect(broken.code).toBe(1);
    expect(broken.out).toMatch(/broken +ollama #\d+: The model asked for get_weather \{"location":"California"\}/);
    expect(run('check', '--fail-on', 'errors,invalid,unanswered', 'fixtures/captures/broken-roundtrip').code).toBe(0);
    // The LLM's log alone cannot say where a tool ran: not a broken round trip.
    expect(run('check', 'fixtures/captures/broken-roundtrip/ollama.ndjson').code).toBe(0);
  });

  test('--format junit writes a report CI systems read; a folder checks every log in it', () => {
    const dir = tempDir('mcptap-junit-');
    const file = join(dir, 'report.xml');
    const r = run('check', '--format', 'junit', '-o', file, 'fixtures/captures/mcp-stdio');
    expect(r.code).toBe(1);
    const xml = readFileSync(file, 'utf8');
    expect(xml.match(/<testsuite /g)).toHaveLength(3);
    expect(xml).toMatch(/<testsuites name="mcptap check" tests="18" failures="2">/);
    expect(xml).toContain('<failure type="invalid"');
    expect(xml).toContain('<failure type="unanswered"');
  });

  test('fails a server that never started: a command not found, a file that is not executable', () => {
    const dir = tempDir('mcptap-never-started-');
    const init = '{"jsonrpc":"2.0","id":0,"method":"initialize","params":{}}\n';
    for (const [name, command] of [
      ['missing', '/nonexistent/server'],
      ['notexec', 'fixtures/weather-server.mjs'],
    ] as const) {
      spawnSync(process.execPath, ['bin/mcptap.js', '--log-dir', join(dir, name), '--name', name, '--', command], { input: init, encoding: 'utf8' });
      const r = run('check', join(dir, name));
      expect(r.code, r.out).toBe(1);
      expect(r.out).toMatch(new RegExp(`start +${name} #\\d+: The server ${name} never started: mcptap could not start`));
    }
  });

  test('bad input: a plain sentence and exit 2', () => {
    expect(run('check', 'no/such.ndjson')).toMatchObject({ code: 2, out: '', err: expect.stringContaining('mcptap: There is no log at no/such.ndjson.') });
    expect(run('check', '--fail-on', 'typos', CLEAN)).toMatchObject({ code: 2, err: 'mcptap: --fail-on takes start, errors, invalid, unanswered, broken, tool-errors or all, not "typos".\n' });
  });
});
