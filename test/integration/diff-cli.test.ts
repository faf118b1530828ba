/**
 * `mcptap diff` as CI runs it: the built CLI on real captures (fixtures/captures, made with
 * mcptap by scripts/make-fixtures.mjs). Needs a fresh build (bin/mcptap.js runs dist/).
 */
import { spawnSync } from 'node:child_process';
import { readFileSync, writeFileSync } from 'node:fs';
import { join } from 'node:path';
import { tempDir } from '../support/temp-dir.js';
import { describe, expect, test } from 'vitest';

const run = (...args: string[]) => {
  const r = spawnSync(process.execPath, ['bin/mcptap.js', ...args], { encoding: 'utf8', env: { ...process.env, NO_COLOR: '1' } });
  return { code: r.status, out: r.stdout, err: r.stderr };
};
const CLEAN = 'fixtures/captures/mcp-stdio/everything-sdk.ndjson';
const POLLUTED = 'fixtures/captures/mcp-stdio/polluted.ndjson';

describe('mcptap diff', () => {
  test('the same capture: no differences, exit 0 even with --exit-code', () => {
    const r = run('diff', CLEAN, CLEAN, '--exit-code');
    expect(r.code).toBe(0);
    expect(r.out).toBe('Tools: the same.\nCalls: every call made in both captures has the same outcome.\nLatency: no regressions past the threshold.\n');
  });

  test('a client without sampling, elicitation and roots sees fewer tools: reported, and --exit-code fails', () => {
    // polluted.ndjson was recorded with a client that offered no capabilities, so server-everything did not
    // register its conditional tools.
    const r = run('diff', POLLUTED, CLEAN, '--exit-code');
    expect(r.code).toBe(1);
    expect(r.out).toContain('Tools:\n  + get-roots-list (added)\n  + trigger-elicitation-request (added)\n  + trigger-sampling-request (added)\n');
    const json = JSON.parse(run('diff', CLEAN, POLLUTED, '--format', 'json').out) as { toolsRemoved: string[] };
    expect(json.toolsRemoved).toEqual(['get-roots-list', 'trigger-elicitation-request', 'trigger-sampling-request']);
  });

  test('a call that vanished: --exit-code returns 1 and the report names it', () => {
    const dir = tempDir('mcptap-diff-vanished-');
    const without = join(dir, 'without-echo.ndjson');
    // The same capture without its echo call (request seq 14, response seq 15).
    const lines = readFileSync(CLEAN, 'utf8').split('\n').filter((l) => !/"seq":1[45],/.test(l));
    writeFileSync(without, lines.join('\n'));
    const r = run('diff', CLEAN, without, '--exit-code');
    expect(r.code).toBe(1);
    expect(r.out).toMatch(/Calls only in .*everything-sdk\.ndjson .*:\n {2}- echo \{"message":/);
  });

  test('the same scenario over stdio and over HTTP: same tools and outcomes', () => {
    const r = run('diff', CLEAN, 'fixtures/captures/mcp-http/everything-sdk.ndjson', '--min-ms', '100000');
    expect(r.code).toBe(0);
    expect(r.out).toContain('Tools: the same.');
    expect(r.out).toContain('Calls: every call made in both captures has the same outcome.');
  });
});
