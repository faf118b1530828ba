/**
 * `mcptap demo` (what `npm run demo` runs after its build): offline, the round trip printed (the get_weather call
 * and its tools/call), the logs where it says they are. Spawns the built CLI (npm test builds first), not `npm
 * run demo`: its build would rewrite dist/ while other test files start the CLI from it. How long it takes is
 * measured by hand and in bench/, not here.
 */
import { execFile } from 'node:child_process';
import { existsSync, mkdtempSync, readdirSync, rmSync } from 'node:fs';
import { createServer } from 'node:net';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { promisify } from 'node:util';
import { afterEach, describe, expect, it } from 'vitest';

const run = promisify(execFile);
const dirs: string[] = [];
afterEach(() => {
  for (const d of dirs.splice(0)) rmSync(d, { recursive: true, force: true });
});
const fresh = (): string => {
  const d = mkdtempSync(join(tmpdir(), 'mcptap-demo-'));
  dirs.push(d);
  return join(d, 'logs');
};

describe('mcptap demo', () => {
  it('prints the model tool call, the tools/call that ran it, the round-trip table and where the logs are', async () => {
    const logs = fresh();
    // NO_COLOR and a pipe: plain text. No network is needed: the LLM is the recorded stand-in on 127.0.0.1.
    const { stdout, stderr } = await run(process.execPath, ['bin/mcptap.js', 'demo', '--log-dir', logs], { env: { ...process.env, NO_COLOR: '1' } });
    expect(stdout).toMatch(/User → Host \/ client\s+what is the weather in California\?/);
    expect(stdout).toMatch(/LLM \(ollama\) → Host \/ client\s+tool call get_weather \{"location":"California"\}/);
    expect(stdout).toMatch(/Host \/ client → weather\s+tools\/call get_weather \{"location":"California"\}/);
    expect(stdout).toMatch(/weather → Host \/ client\s+result: It's always raining in California/);
    expect(stdout).toMatch(/Host \/ client → LLM \(ollama\)\s+tool result fed back: get_weather/);
    // The table row: tool, arguments, which MCP call ran it, fed back.
    expect(stdout).toMatch(/^1\s+1\s+get_weather\s+\{"location":"California"\}\s+ollama qwen2\.5:3b \d+ ms\s+weather tools\/call #2\s+\d+(\.\d)? ms\s+yes/m);
    expect(stdout).toContain(`Logs (2 sessions,`);
    expect(stdout).toContain(logs);
    expect(stdout).not.toContain('Findings');
    expect(stdout).not.toContain('\u001b[');
    expect(stderr).toContain('agent (ollama npm client)');
    expect(readdirSync(logs).map((f) => f.replace(/-.*/, '')).sort()).toEqual(['ollama', 'weather']);
  });

  it('runs the openai client too, and says plainly when a flag is wrong', async () => {
    const logs = fresh();
    const { stdout } = await run(process.execPath, ['bin/mcptap.js', 'demo', '--client', 'openai', '--speed', '0', '--log-dir', logs, '--no-color']);
    expect(stdout).toMatch(/LLM \(openai\) → Host \/ client\s+tool call get_weather \{"city":"上海"\}/);
    expect(stdout).toMatch(/Host \/ client → weather\s+tools\/call get_weather \{"city":"上海"\}/);
    expect(stdout).toContain('上海当前的天气是晴天，温度是27摄氏度。');

    const bad = await run(process.execPath, ['bin/mcptap.js', 'demo', '--speed', '-1']).then(
      () => undefined,
      (error: { code: number; stderr: string }) => error,
    );
    expect(bad?.code).toBe(2);
    expect(bad?.stderr).toBe('mcptap: --speed must be a number, 0 or more (0 plays the recording without pauses), not -1.\n');
  });

  it('runs the @anthropic-ai/sdk client with Claude Code tool names, and the @google/genai client', async () => {
    const anthropic = await run(process.execPath, ['bin/mcptap.js', 'demo', '--client', 'anthropic', '--speed', '0', '--log-dir', fresh(), '--no-color']);
    expect(anthropic.stdout).toMatch(/LLM \(anthropic\) → Host \/ client\s+tool call mcp__weather__get_weather \{"location":"New York"\}/);
    expect(anthropic.stdout).toMatch(/Host \/ client → weather\s+tools\/call get_weather \{"location":"New York"\}/);
    expect(anthropic.stdout).toMatch(/^1\s+1\s+mcp__weather__get_weather\s+.*weather tools\/call (get_weather )?#2\s+\d+(\.\d)? ms\s+yes/m);
    const gemini = await run(process.execPath, ['bin/mcptap.js', 'demo', '--client', 'gemini', '--speed', '0', '--log-dir', fresh(), '--no-color']);
    expect(gemini.stdout).toMatch(/LLM \(gemini\) → Host \/ client\s+tool call get_weather \{"location":"California"\}/);
    expect(gemini.stdout).toContain("The weather service says it's always raining in California");
  });

  it('a demo that fails takes back what it wrote: its folder, and ./logs when it made that too', async () => {
    // A port nothing listens on: the agent's first model call fails.
    const server = createServer().listen(0, '127.0.0.1');
    await new Promise((done) => server.once('listening', done));
    const { port } = server.address() as { port: number };
    await new Promise((done) => server.close(done));
    const cwd = fresh().replace(/logs$/, '');
    const failed = await run(process.execPath, [join(process.cwd(), 'bin/mcptap.js'), 'demo', '--llm', `http://127.0.0.1:${port}`], { cwd }).then(
      () => undefined,
      (error: { code: number; stderr: string }) => error,
    );
    expect(failed?.code).toBe(1);
    expect(failed?.stderr).toMatch(/^mcptap: /m);
    expect(readdirSync(cwd)).toEqual([]);
    expect(existsSync(join(cwd, 'logs'))).toBe(false);
  });
});
