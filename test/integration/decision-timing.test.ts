/**
 * A LangGraph-style agent: it starts the tool as soon as the chunk that completes the model's tool call arrives,
 * while the upstream goes on for 5 ms before `[DONE]` and 5 ms more before it ends the response. The model's
 * decision is timed at that chunk, so `view` shows the tool call before the `tools/call` it caused, in the
 * timeline and in mermaid, and no interval is negative. Real processes: the `openai` 7.x client through
 * `mcptap http`, the official SDK Client through `mcptap -- node fixtures/weather-server.mjs`.
 * Spawns bin/mcptap.js: build first (npm test does).
 */
import { execFile } from 'node:child_process';
import { promisify } from 'node:util';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import OpenAI from 'openai7';
import { Client } from '@modelcontextprotocol/sdk/client/index.js';
import { StdioClientTransport } from '@modelcontextprotocol/sdk/client/stdio.js';
import { startHttpCli } from '../support/http-cli.js';
import { startScriptedLlm } from '../support/scripted-llm.js';
import { tempDir } from '../support/temp-dir.js';

const run = promisify(execFile);
const BIN = 'bin/mcptap.js';
const TOOLS = [{ type: 'function' as const, function: { name: 'get_weather', parameters: { type: 'object', properties: { city: { type: 'string' } } } } }];

/** The agent: streams the model's reply and calls the tool on the chunk that finishes the call, not after the stream. */
async function agent(llmUrl: string, mcp: Client): Promise<string> {
  const openai = new OpenAI({ baseURL: `${llmUrl}/v1`, apiKey: 'sk-test-not-a-real-key-0000', maxRetries: 0 });
  const messages: OpenAI.Chat.ChatCompletionMessageParam[] = [{ role: 'user', content: 'weather in Paris?' }];
  const stream = await openai.chat.completions.create({ model: 'gpt-test', messages, tools: TOOLS, stream: true });
  let id = '';
  let args = '';
  let running: Promise<unknown> | undefined;
  for await (const chunk of stream) {
    const choice = chunk.choices[0];
    for (const t of choice?.delta?.tool_calls ?? []) {
      if (t.id) id = t.id;
      args += t.function?.arguments ?? '';
    }
    if (choice?.finish_reason === 'tool_calls') running = mcp.callTool({ name: 'get_weather', arguments: JSON.parse(args) as Record<string, unknown> });
  }
  const result = (await running) as { content: { text: string }[] };
  messages.push({ role: 'assistant', content: null, tool_calls: [{ id, type: 'function', function: { name: 'get_weather', arguments: args } }] });
  messages.push({ role: 'tool', tool_call_id: id, content: result.content[0]!.text });
  let answer = '';
  for await (const chunk of await openai.chat.completions.create({ model: 'gpt-test', messages, tools: TOOLS, stream: true })) answer += chunk.choices[0]?.delta?.content ?? '';
  return answer;
}

describe('a model decision timed at the chunk that completed it', () => {
  let dir: string;
  let answer: string;

  beforeAll(async () => {
    dir = tempDir('mcptap-decision-');
    const llm = await startScriptedLlm({ doneDelayMs: 5, gapMs: 5 });
    const http = await startHttpCli(['--target', llm.url, '--log-dir', dir, '--name', 'llm']);
    const transport = new StdioClientTransport({ command: process.execPath, args: [BIN, '--log-dir', dir, '--name', 'weather', '--', process.execPath, 'fixtures/weather-server.mjs'], stderr: 'ignore' });
    const mcp = new Client({ name: 'langgraph-style-agent', version: '1.0.0' });
    await mcp.connect(transport);
    try {
      answer = await agent(http.url, mcp);
      await new Promise((resolve) => setTimeout(resolve, 30));
    } finally {
      await mcp.close();
      await http.stop();
      await llm.close();
    }
  });

  afterAll(() => {});

  it('runs the loop', () => {
    expect(answer).toBe('It is sunny in Paris.');
  });

  it('links the round trip with no negative interval', async () => {
    const { stdout } = await run(process.execPath, [BIN, 'view', '--format', 'json', dir]);
    const lines = stdout.trim().split('\n').map((l) => JSON.parse(l) as Record<string, unknown>);
    const trips = lines.filter((l) => l.type === 'tool-round-trip');
    expect(trips).toHaveLength(1);
    expect(trips[0]).toMatchObject({ tool: 'get_weather', fedBack: true, diagnostics: [], mcp: { server: 'weather' } });
    const timing = trips[0]!.timing as Record<string, number>;
    for (const k of ['decisionMs', 'dispatchMs', 'toolMs', 'feedBackMs', 'answerMs', 'totalMs']) expect(timing[k], k).toBeGreaterThanOrEqual(0);
    expect(lines.filter((l) => l.type === 'diagnostic' && l.level === 'warn')).toEqual([]);
  });

  it('draws the tool call before the tools/call it caused, in the timeline and in mermaid', async () => {
    const { stdout: mermaid } = await run(process.execPath, [BIN, 'view', '--format', 'mermaid', dir]);
    const asked = mermaid.indexOf('tool call get_weather');
    const called = mermaid.indexOf('tools/call get_weather');
    expect(asked).toBeGreaterThan(-1);
    expect(called).toBeGreaterThan(asked);
    const { stdout: text } = await run(process.execPath, [BIN, 'view', '--format', 'timeline', '--no-color', dir]);
    const timeline = text.split('\n');
    const at = (needle: string): number => timeline.findIndex((l) => l.includes(needle) && /^\+\d/.test(l.trim()));
    expect(at('tool call get_weather')).toBeGreaterThan(-1);
    expect(at('tools/call get_weather')).toBeGreaterThan(at('tool call get_weather'));
  });

  it('passes check', async () => {
    const { stdout } = await run(process.execPath, [BIN, 'check', dir]);
    expect(stdout).toMatch(/PASS/);
  });
});
