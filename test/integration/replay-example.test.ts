// The README's library example, verbatim (it imports 'mcptap' by name: the package resolves itself, so this runs
// against the built dist/ exactly as a user's test suite would). Keep the two in step.
import { readFileSync } from 'node:fs';
import { expect, test } from 'vitest';
import { Client } from '@modelcontextprotocol/sdk/client/index.js';
import { StdioClientTransport } from '@modelcontextprotocol/sdk/client/stdio.js';
import { Ollama } from 'ollama';
import { replay } from 'mcptap';

test('the recorded MCP server answers the recorded call, offline', async () => {
  const server = await replay({ logs: 'fixtures/captures/roundtrip/weather.ndjson' });
  const client = new Client({ name: 'my-agent', version: '1.0.0' });
  await client.connect(new StdioClientTransport({ command: server.command, args: server.args }));
  const result = await client.callTool({ name: 'get_weather', arguments: { location: 'California' } });
  expect(result.content).toEqual([{ type: 'text', text: "It's always raining in California" }]);
  await client.close();
});

test('the recorded LLM streams the recorded reply, no GPU needed', async () => {
  const llm = await replay({ logs: 'fixtures/captures/ollama/agent.ndjson', listen: 0, noDelay: true });
  try {
    const { model, messages, tools } = JSON.parse(readFileSync('fixtures/ollama/turn1.request.json', 'utf8'));
    const ollama = new Ollama({ host: llm.url });
    const calls = [];
    for await (const part of await ollama.chat({ model, messages, tools, stream: true })) calls.push(...(part.message.tool_calls ?? []));
    expect(calls).toEqual([{ function: { name: 'get_weather', arguments: { location: 'California' } } }]);
    expect(llm.misses).toEqual([]);
  } finally {
    await llm.close();
  }
});
