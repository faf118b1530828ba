/**
 * The "must show": an agent loop with the real `ollama` client and one with the real `openai` client,
 * each with its LLM behind `mcptap http` (the CLI, in front of the recorded LLM stand-in) and its tools behind
 * `mcptap -- node fixtures/weather-server.mjs` (the CLI, started by the official SDK Client), both logging into
 * one folder, give linked `tool-round-trip` lines with `fedBack: true` in `mcptap view --format json DIR`.
 *
 * Spawns bin/mcptap.js, which runs the built dist/: build first (npm test does).
 */
import { execFile } from 'node:child_process';
import { mkdtempSync, rmSync, readdirSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { promisify } from 'node:util';
import { afterEach, describe, expect, it } from 'vitest';
import { Client } from '@modelcontextprotocol/sdk/client/index.js';
import { StdioClientTransport } from '@modelcontextprotocol/sdk/client/stdio.js';
import { readAllRecords } from '../../src/log/reader.js';
import { runAnthropicAgent, runGeminiAgent, runOllamaAgent, runOpenAiAgent, toolboxFrom, type AgentOptions, type AgentRun, type Toolbox } from '../../src/demo/agent.js';
// @ts-expect-error -- a plain .mjs fixture without type declarations
import { startLlmUpstream } from '../../fixtures/llm-upstream.mjs';
import { startHttpCli } from '../support/http-cli.js';

const BIN = 'bin/mcptap.js';
const run = promisify(execFile);
const dirs: string[] = [];
afterEach(() => {
  for (const d of dirs.splice(0)) rmSync(d, { recursive: true, force: true });
});

/** The official SDK Client talking to the weather server through `mcptap -- node fixtures/weather-server.mjs`. */
async function connectWeather(logDir: string): Promise<{ toolbox: Toolbox; close(): Promise<void> }> {
  const transport = new StdioClientTransport({
    command: process.execPath,
    args: [BIN, '--log-dir', logDir, '--name', 'weather', '--', process.execPath, 'fixtures/weather-server.mjs'],
    stderr: 'ignore',
  });
  const client = new Client({ name: 'trace-test-agent', version: '1.0.0' });
  await client.connect(transport);
  return {
    toolbox: await toolboxFrom(client),
    close: () => client.close(),
  };
}

async function viewJson(dir: string): Promise<Record<string, unknown>[]> {
  const { stdout } = await run(process.execPath, [BIN, 'view', '--format', 'json', dir]);
  return stdout
    .trim()
    .split('\n')
    .map((l) => JSON.parse(l) as Record<string, unknown>);
}

async function agentRun(agent: (o: AgentOptions) => Promise<AgentRun>, model: string, prompt: string, stream = false): Promise<{ dir: string; result: AgentRun; lines: Record<string, unknown>[] }> {
  const dir = mkdtempSync(join(tmpdir(), 'mcptap-trace-'));
  dirs.push(dir);
  const upstream = (await startLlmUpstream({ speed: 0 })) as { url: string; close(): Promise<void> };
  const http = await startHttpCli(['--target', upstream.url, '--log-dir', dir, '--name', 'llm']);
  const mcp = await connectWeather(dir);
  let result: AgentRun;
  try {
    result = await agent({ baseUrl: http.url, model, prompt, toolbox: mcp.toolbox, stream });
  } finally {
    await mcp.close();
    await http.stop();
    await upstream.close();
  }
  expect(readdirSync(dir).filter((f) => f.endsWith('.ndjson')).sort().map((f) => f.replace(/-.*/, ''))).toEqual(['llm', 'weather']);
  // The replies really came the way asked: streamed ones leave llm-chunk records, whole ones none.
  const chunks = (await readAllRecords([dir])).filter((r) => r.kind === 'llm-chunk').length;
  if (stream) expect(chunks).toBeGreaterThan(1);
  else expect(chunks).toBe(0);
  return { dir, result, lines: await viewJson(dir) };
}

describe.each([
  ['whole replies', false],
  ['streamed replies', true],
])('mcptap view --format json over an LLM proxy log and an MCP server log (%s)', (_, stream) => {
  it('links the ollama client loop: tool call → tools/call → result fed back → answer', async () => {
    const { result, lines } = await agentRun(runOllamaAgent, 'qwen2.5:3b', 'what is the weather in California?', stream);
    expect(result.toolCalls).toEqual([{ name: 'get_weather', arguments: { location: 'California' }, result: "It's always raining in California" }]);

    const trips = lines.filter((l) => l.type === 'tool-round-trip');
    expect(trips).toHaveLength(1);
    expect(trips[0]).toMatchObject({
      tool: 'get_weather',
      arguments: { location: 'California' },
      llm: { channel: 'ollama', model: 'qwen2.5:3b', endpoint: '/api/chat', toolCallId: null, label: 'llm' },
      mcp: { server: 'weather', label: 'weather', id: 2, isError: false },
      result: "It's always raining in California",
      fedBack: true,
      diagnostics: [],
    });
    expect(trips[0]!.answerPreview).toMatch(/^The weather report indicates that it's always raining in California/);
    const timing = trips[0]!.timing as Record<string, number>;
    for (const k of ['decisionMs', 'dispatchMs', 'toolMs', 'feedBackMs', 'answerMs', 'totalMs']) expect(typeof timing[k]).toBe('number');
    expect(timing.totalMs).toBeGreaterThanOrEqual(timing.toolMs!);

    const turns = lines.filter((l) => l.type === 'turn');
    expect(turns).toMatchObject([{ turn: 1, llmCalls: 2, toolCalls: 1, prompt: 'what is the weather in California?' }]);
    expect(lines.filter((l) => l.type === 'session').map((s) => [s.label, s.role])).toEqual(
      expect.arrayContaining([
        ['llm', 'llm'],
        ['weather', 'mcp'],
      ]),
    );
    expect(lines.filter((l) => l.type === 'diagnostic')).toEqual([]);
  });

  it('links the openai client loop by tool-call id', async () => {
    const { result, lines } = await agentRun(runOpenAiAgent, 'Qwen/Qwen2.5-32B-Instruct', 'what is the weather in Shanghai?', stream);
    expect(result.toolCalls).toEqual([{ name: 'get_weather', arguments: { city: '上海' }, result: '{"Celsius": 27, "type": "sunny"}' }]);
    expect(result.answer).toBe('上海当前的天气是晴天，温度是27摄氏度。');
    // The streamed capture (turn1.response.sse) has its own call id; the JSON one another.
    const callId = stream ? 'call_TMbE01' : '01964be6e485603d6a2a0acbbc7eba91';

    const trips = lines.filter((l) => l.type === 'tool-round-trip');
    expect(trips).toHaveLength(1);
    expect(trips[0]).toMatchObject({
      tool: 'get_weather',
      arguments: { city: '上海' },
      llm: { channel: 'openai', endpoint: '/v1/chat/completions', toolCallId: callId },
      mcp: { server: 'weather', id: 2, isError: false },
      result: '{"Celsius": 27, "type": "sunny"}',
      fedBack: true,
      answerPreview: '上海当前的天气是晴天，温度是27摄氏度。',
      diagnostics: [],
    });
    expect(lines.filter((l) => l.type === 'diagnostic')).toEqual([]);
  });
});

describe.each([
  ['whole replies', false],
  ['streamed replies', true],
])('the Anthropic and Gemini clients over an LLM proxy log and an MCP server log (%s)', (_, stream) => {
  it('links a Claude-Code-named tool call (mcp__weather__get_weather) to the server’s tools/call, by tool_use id', async () => {
    const { result, lines } = await agentRun(runAnthropicAgent, 'claude-sonnet-4-5-20250929', "What's the weather in New York right now?", stream);
    expect(result.toolCalls).toEqual([{ name: 'get_weather', arguments: { location: 'New York' }, result: 'Clear, with a low around 65. Southwest wind around 6 mph.' }]);
    const trips = lines.filter((l) => l.type === 'tool-round-trip');
    expect(trips).toHaveLength(1);
    expect(trips[0]).toMatchObject({
      tool: 'mcp__weather__get_weather',
      arguments: { location: 'New York' },
      llm: { channel: 'anthropic', endpoint: '/v1/messages', model: 'claude-sonnet-4-5-20250929', toolCallId: 'toolu_01A09q90qw90lq917835lq9' },
      mcp: { server: 'weather', id: 2, isError: false },
      result: 'Clear, with a low around 65. Southwest wind around 6 mph.',
      fedBack: true,
      answerPreview: "It's clear in New York right now, with a low around 65°F and a light southwest wind around 6 mph.",
      diagnostics: [],
    });
    // The one finding: how the host named the server's tool for the model (info, not a problem).
    expect(lines.filter((l) => l.type === 'diagnostic').map((d) => [d.code, d.level, d.tool])).toEqual([['tool-name-mapped', 'info', 'get_weather']]);
  });

  it('links the Gemini functionCall to the server’s tools/call and the functionResponse that carries it back', async () => {
    const { result, lines } = await agentRun(runGeminiAgent, 'gemini-2.5-flash', 'what is the weather in California?', stream);
    expect(result.answer).toBe("The weather service says it's always raining in California, so take an umbrella.");
    const trips = lines.filter((l) => l.type === 'tool-round-trip');
    expect(trips).toMatchObject([
      {
        tool: 'get_weather',
        arguments: { location: 'California' },
        llm: { channel: 'gemini', model: 'gemini-2.5-flash', toolCallId: null },
        mcp: { server: 'weather', isError: false },
        result: "It's always raining in California",
        fedBack: true,
        diagnostics: [],
      },
    ]);
    expect(lines.filter((l) => l.type === 'diagnostic')).toEqual([]);
  });
});

describe('diagnostics from real traffic', () => {
  it('says so when the host never feeds the result back', async () => {
    // An agent that runs the tool and then forgets it: the classic bug the trace is for.
    const forgetful = async (o: AgentOptions): Promise<AgentRun> => {
      const first = await runOllamaAgent({ ...o, maxRounds: 1 });
      return first;
    };
    const { lines } = await agentRun(forgetful, 'qwen2.5:3b', 'what is the weather in California?');
    const trips = lines.filter((l) => l.type === 'tool-round-trip');
    expect(trips).toMatchObject([{ tool: 'get_weather', fedBack: false, mcp: { server: 'weather' }, diagnostics: ['result-not-fed-back'] }]);
    expect(lines.filter((l) => l.type === 'diagnostic').map((d) => d.code)).toEqual(['result-not-fed-back']);
  });

  it('says so for a Claude-Code-style agent too, and check fails on it', async () => {
    const { dir, lines } = await agentRun((o) => runAnthropicAgent({ ...o, maxRounds: 1 }), 'claude-sonnet-4-5-20250929', "What's the weather in New York right now?");
    expect(lines.filter((l) => l.type === 'tool-round-trip')).toMatchObject([{ tool: 'mcp__weather__get_weather', fedBack: false, mcp: { server: 'weather' }, diagnostics: ['result-not-fed-back'] }]);
    expect(lines.filter((l) => l.type === 'diagnostic' && l.level === 'warn').map((d) => d.code)).toEqual(['result-not-fed-back']);
    const failed = await run(process.execPath, [BIN, 'check', dir]).then(
      () => 0,
      (error: { code: number }) => error.code,
    );
    expect(failed).toBe(1);
  });
});
