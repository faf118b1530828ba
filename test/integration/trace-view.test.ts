/**
 * `mcptap view` formats over real logs, and the linker when two agents share one LLM proxy and one MCP server at
 * the same time: each model call must link to its own tools/call and feed-back, not the other agent's.
 */
import { execFile } from 'node:child_process';
import { join } from 'node:path';
import { promisify } from 'node:util';
import { beforeAll, describe, expect, it } from 'vitest';
import { Client } from '@modelcontextprotocol/sdk/client/index.js';
import { StdioClientTransport } from '@modelcontextprotocol/sdk/client/stdio.js';
import { startHttpTap } from '../../src/capture/http.js';
import { runOllamaAgent, runOpenAiAgent, toolboxFrom } from '../../src/demo/agent.js';
// @ts-expect-error -- a plain .mjs fixture without type declarations
import { startLlmUpstream } from '../../fixtures/llm-upstream.mjs';
import { tempDir } from '../support/temp-dir.js';

const run = promisify(execFile);
const BIN = 'bin/mcptap.js';
let root: string;
let dir: string;

beforeAll(async () => {
  root = tempDir('mcptap-view-');
  dir = join(root, 'logs');
  const upstream = (await startLlmUpstream({ speed: 0 })) as { url: string; close(): Promise<void> };
  const tap = await startHttpTap({ target: upstream.url, logDir: dir, label: 'llm' });
  const transport = new StdioClientTransport({
    command: process.execPath,
    args: [BIN, '--log-dir', dir, '--name', 'weather', '--', process.execPath, 'fixtures/weather-server.mjs'],
    stderr: 'ignore',
  });
  const client = new Client({ name: 'two-agents', version: '1.0.0' });
  await client.connect(transport);
  const toolbox = await toolboxFrom(client);

  try {
    // Both agents at once, through the same proxy and the same server session.
    await Promise.all([
      runOllamaAgent({ baseUrl: tap.url, model: 'qwen2.5:3b', prompt: 'what is the weather in California?', toolbox, stream: true }),
      runOpenAiAgent({ baseUrl: tap.url, model: 'Qwen/Qwen2.5-32B-Instruct', prompt: 'what is the weather in Shanghai?', toolbox }),
    ]);
  } finally {
    await client.close();
    await tap.close();
    await upstream.close();
  }
});

const view = async (...args: string[]): Promise<string> => (await run(process.execPath, [BIN, 'view', ...args, dir])).stdout;

describe('two agents at once, one proxy, one server', () => {
  it('links each model call to its own tools/call and feed-back', async () => {
    const lines = (await view('--format', 'json'))
      .trim()
      .split('\n')
      .map((l) => JSON.parse(l) as Record<string, any>);
    const trips = lines.filter((l) => l.type === 'tool-round-trip');
    const byChannel = Object.fromEntries(trips.map((t) => [t.llm.channel, t]));
    expect(trips).toHaveLength(2);
    expect(byChannel.ollama).toMatchObject({ arguments: { location: 'California' }, result: "It's always raining in California", fedBack: true, diagnostics: [] });
    expect(byChannel.openai).toMatchObject({ arguments: { city: '上海' }, result: '{"Celsius": 27, "type": "sunny"}', fedBack: true, diagnostics: [] });
    expect(byChannel.ollama.mcp.id).not.toBe(byChannel.openai.mcp.id);
    expect(byChannel.ollama.turn).not.toBe(byChannel.openai.turn);
    const turns = lines.filter((l) => l.type === 'turn');
    expect(turns.map((t) => [t.channel, t.llmCalls, t.toolCalls]).sort()).toEqual([
      ['ollama', 2, 1],
      ['openai', 2, 1],
    ]);
  });
});

describe('mcptap view formats', () => {
  it('pretty: every record, then the round-trip table', async () => {
    const out = await view('--no-color');
    expect(out).toMatch(/weather → request\s+tools\/call get_weather #\d/);
    expect(out).toContain('Tool round trips (model → MCP server → result fed back → answer)');
    expect(out).toContain('Turns');
  });

  it('timeline: the arrows between participants', async () => {
    const out = await view('--format', 'timeline', '--no-color');
    expect(out).toMatch(/LLM \(ollama\) → Host \/ client\s+tool call get_weather \{"location":"California"\}/);
    expect(out).toMatch(/LLM \(openai\) → Host \/ client\s+tool call get_weather \{"city":"上海"\}/);
  });

  it('mermaid: a sequenceDiagram with a participant per peer', async () => {
    const out = await view('--format', 'mermaid');
    const head = out.split('\n').slice(0, 6);
    expect(head.slice(0, 3)).toEqual(['sequenceDiagram', '  actor U0 as User', '  participant H1 as Host / client']);
    // The two agents ran at once: which LLM API spoke first (and is drawn first) varies.
    expect(head.slice(3, 5).map((l) => l.replace(/L\d/, 'L')).sort()).toEqual(['  participant L as LLM (ollama)', '  participant L as LLM (openai)']);
    expect(head[5]).toBe('  participant M4 as weather');
    expect(out).toContain('  H1->>M4: tools/call get_weather {"location":"California"}');
  });

  it('says plainly what is wrong with bad input', async () => {
    const missing = await run(process.execPath, [BIN, 'view', join(root, 'nope')]).catch((e: { code: number; stderr: string }) => e);
    expect(missing).toMatchObject({ code: 2 });
    expect((missing as { stderr: string }).stderr).toContain('There is no log at');
    const window = await run(process.execPath, [BIN, 'view', '--window', '-3', dir]).catch((e: { code: number; stderr: string }) => e);
    expect((window as { stderr: string }).stderr).toBe('mcptap: --window must be a number of seconds (0 or more), not -3.\n');
    const format = await run(process.execPath, [BIN, 'view', '--format', 'svg', dir]).catch((e: { code: number; stderr: string }) => e);
    expect((format as { code: number }).code).toBe(2);
  });
});
