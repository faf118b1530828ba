/**
 * The same agent loop with the real `openai` npm client, streaming (SSE deltas; tool-call arguments joined per
 * index, as the OpenAI docs say): the captured question and tool from fixtures/openai/turn1.request.json, the
 * tool run by `callTool` (or a stand-in answering as the captured weather server did), the answer read back.
 * Used to record fixtures/captures/openai/agent.ndjson and to check `mcptap replay --listen` against it.
 *
 * Plain ESM so scripts/make-fixtures.mjs can run it under plain Node 20.
 */
import { readFileSync } from 'node:fs';
import { dirname, join } from 'node:path';
import { fileURLToPath } from 'node:url';
import OpenAI from 'openai';

const FIXTURES = join(dirname(fileURLToPath(import.meta.url)), '..', '..', 'fixtures');
const TURN1 = JSON.parse(readFileSync(join(FIXTURES, 'openai', 'turn1.request.json'), 'utf8'));

/** What the captured weather server answered for 上海. */
export const WEATHER_RESULT = '{"Celsius": 27, "type": "sunny"}';

/**
 * Run the loop against an OpenAI-compatible base URL (without /v1).
 * @param {string} baseUrl
 * @param {{ callTool?: (name: string, args: Record<string, unknown>) => Promise<string> }} [options]
 * @returns {Promise<{answer: string, toolCalls: unknown[], llmCalls: number, chunks: number}>}
 */
export async function runOpenAiAgent(baseUrl, options = {}) {
  const callTool = options.callTool ?? (async (name) => (name === 'get_weather' ? WEATHER_RESULT : 'unknown tool'));
  // A stand-in key: the tap redacts it, the stand-in LLM does not check it.
  const openai = new OpenAI({ baseURL: `${baseUrl.replace(/\/$/, '')}/v1`, apiKey: 'sk-fixture-not-a-real-key', maxRetries: 0 });
  /** @type {import('openai').OpenAI.Chat.ChatCompletionMessageParam[]} */
  const messages = [...TURN1.messages];
  const run = { answer: '', toolCalls: /** @type {unknown[]} */ ([]), llmCalls: 0, chunks: 0 };
  for (let round = 0; round < 4; round++) {
    const stream = await openai.chat.completions.create({ model: TURN1.model, messages, tools: TURN1.tools, tool_choice: 'auto', stream: true });
    run.llmCalls++;
    let content = '';
    /** @type {Map<number, {id: string, name: string, arguments: string}>} */
    const calls = new Map();
    for await (const chunk of stream) {
      run.chunks++;
      const delta = chunk.choices[0]?.delta;
      if (!delta) continue;
      content += delta.content ?? '';
      for (const part of delta.tool_calls ?? []) {
        const call = calls.get(part.index) ?? { id: '', name: '', arguments: '' };
        if (part.id) call.id = part.id;
        if (part.function?.name) call.name += part.function.name;
        if (part.function?.arguments) call.arguments += part.function.arguments;
        calls.set(part.index, call);
      }
    }
    const list = [...calls.values()];
    messages.push({
      role: 'assistant',
      content,
      ...(list.length ? { tool_calls: list.map((c) => ({ id: c.id, type: 'function', function: { name: c.name, arguments: c.arguments } })) } : {}),
    });
    if (list.length === 0) {
      run.answer = content;
      return run;
    }
    for (const call of list) {
      const args = JSON.parse(call.arguments || '{}');
      const result = await callTool(call.name, args);
      run.toolCalls.push({ name: call.name, arguments: args, result });
      messages.push({ role: 'tool', tool_call_id: call.id, content: result });
    }
  }
  return run;
}
