/**
 * A small agent loop with the real `ollama` npm client, streaming (NDJSON) like most agents do: ask the captured
 * question with the captured tools, run the tool call the model asks for with a fixed local tool, send the result
 * back, read the answer. Used to record fixtures/captures/ollama/agent.ndjson (scripts/make-fixtures.mjs) and to
 * check that `mcptap replay --listen` gives the same answer as the live stand-in it was recorded from.
 *
 * Plain ESM so scripts/make-fixtures.mjs can run it under plain Node 20.
 */
import { readFileSync } from 'node:fs';
import { dirname, join } from 'node:path';
import { fileURLToPath } from 'node:url';
import { Ollama } from 'ollama';

const FIXTURES = join(dirname(fileURLToPath(import.meta.url)), '..', '..', 'fixtures');
const TURN1 = JSON.parse(readFileSync(join(FIXTURES, 'ollama', 'turn1.request.json'), 'utf8'));

/** The tool result the agent's stand-in weather tool returns (the captured run's server said the same). */
export const WEATHER_RESULT = "It's always raining in California";

/**
 * Run the loop against an Ollama-compatible base URL. Tool calls go to `callTool` (for example an MCP client
 * session) when given, else to a stand-in that answers get_weather with WEATHER_RESULT.
 * @param {string} host e.g. http://127.0.0.1:11434
 * @param {{ callTool?: (name: string, args: Record<string, unknown>) => Promise<string> }} [options]
 * @returns {Promise<{answer: string, toolCalls: unknown[], llmCalls: number, chunks: number}>}
 */
export async function runOllamaAgent(host, options = {}) {
  const callTool = options.callTool ?? (async (name) => (name === 'get_weather' ? WEATHER_RESULT : 'unknown tool'));
  const ollama = new Ollama({ host });
  /** @type {import('ollama').Message[]} */
  const messages = [...TURN1.messages];
  const run = { answer: '', toolCalls: /** @type {unknown[]} */ ([]), llmCalls: 0, chunks: 0 };
  for (let round = 0; round < 4; round++) {
    const stream = await ollama.chat({ model: TURN1.model, messages, tools: TURN1.tools, stream: true });
    run.llmCalls++;
    let content = '';
    /** @type {import('ollama').ToolCall[]} */
    const calls = [];
    for await (const part of stream) {
      run.chunks++;
      content += part.message?.content ?? '';
      calls.push(...(part.message?.tool_calls ?? []));
    }
    messages.push({ role: 'assistant', content, ...(calls.length ? { tool_calls: calls } : {}) });
    if (calls.length === 0) {
      run.answer = content;
      return run;
    }
    for (const call of calls) {
      const result = await callTool(call.function.name, call.function.arguments);
      run.toolCalls.push({ name: call.function.name, arguments: call.function.arguments, result });
      messages.push({ role: 'tool', content: result, tool_name: call.function.name });
    }
  }
  return run;
}
