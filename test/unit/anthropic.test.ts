import { describe, expect, it } from 'vitest';
import { readFileSync } from 'node:fs';
import { SseFramer } from '../../src/framing/sse.js';
import { AnthropicReplyAssembler, anthropicReplyFromBody, isAnthropicPath, isAnthropicTurnPath, summarizeAnthropicRequest } from '../../src/protocols/anthropic.js';
import type { LlmReply } from '../../src/protocols/llm.js';

const bytes = (p: string): Buffer => readFileSync(`fixtures/anthropic/${p}`);
const json = (p: string): unknown => JSON.parse(bytes(p).toString('utf8'));

/** Frame the SSE bytes (in the given pieces) and reassemble, as the tap does. */
function assemble(pieces: Buffer[]): { reply: LlmReply; done: number; firstContent: number } {
  const framer = new SseFramer({ maxEventBytes: 1 << 20 });
  const assembler = new AnthropicReplyAssembler();
  let done = 0;
  let firstContent = -1;
  let n = 0;
  const push = (item: ReturnType<SseFramer['end']>[number]): void => {
    if (item.type !== 'event') return;
    const info = assembler.push(item.data ?? '', item.event);
    n++;
    if (info.done) done++;
    if (info.content && firstContent === -1) firstContent = n;
  };
  for (const piece of pieces) for (const item of framer.push(piece)) push(item);
  for (const item of framer.end()) push(item);
  return { reply: assembler.result(), done, firstContent };
}

const TURN1 = {
  model: 'claude-sonnet-4-5-20250929',
  content: "I'll look up the current weather in New York.",
  thinking: "The user wants the current weather in New York. I have a weather tool; I'll call it with the location.",
  toolCalls: [{ id: 'toolu_01A09q90qw90lq917835lq9', name: 'mcp__weather__get_weather', arguments: { location: 'New York' } }],
  finishReason: 'tool_use',
  usage: { promptTokens: 712, completionTokens: 89, cacheCreationTokens: 0, cacheReadTokens: 2048, totalTokens: 2849 },
};

describe('Anthropic streamed replies', () => {
  it('reassembles thinking, text and a tool call whose input came as JSON pieces, whatever the chunking', () => {
    const sse = bytes('turn1.response.sse');
    const whole = assemble([sse]);
    for (let i = 1; i < sse.length; i += 7) expect(assemble([sse.subarray(0, i), sse.subarray(i)]).reply, `split at ${i}`).toEqual(whole.reply);
    expect(whole.reply).toEqual({ ...TURN1, chunkCount: 20 });
    // Only message_stop ends the stream; the first thinking delta is the first content (event 4, after the ping).
    expect(whole.done).toBe(1);
    expect(whole.firstContent).toBe(4);
  });

  it('says the tool call is complete at its block’s content_block_stop, not before', () => {
    const a = new AnthropicReplyAssembler();
    const events = bytes('turn1.response.sse').toString('utf8').split('\n\n').filter(Boolean);
    const completed = events.map((e) => a.push(e.split('\ndata: ')[1]!, e.slice(7, e.indexOf('\n'))).completedCalls);
    // The tool_use block (index 2) stops at event 18 of 20; the thinking and text blocks' stops complete nothing.
    expect(completed.flatMap((c, i) => (c === undefined ? [] : [[i + 1, c]]))).toEqual([[18, 1]]);
  });

  it('reads the same turn from a non-streamed Message body', () => {
    expect(anthropicReplyFromBody(bytes('turn1.response.json').toString('utf8'))).toEqual({ ...TURN1, chunkCount: 0 });
    expect(anthropicReplyFromBody(bytes('turn2.response.json').toString('utf8'))).toMatchObject({
      content: "It's clear in New York right now, with a low around 65°F and a light southwest wind around 6 mph.",
      toolCalls: [],
      finishReason: 'end_turn',
      usage: { promptTokens: 845, completionTokens: 31 },
    });
  });

  it('says a mid-stream error event is an error, with its type', () => {
    const a = new AnthropicReplyAssembler();
    a.push('{"type":"message_start","message":{"model":"claude-x","usage":{"input_tokens":3,"output_tokens":1}}}', 'message_start');
    a.push('{"type":"content_block_delta","index":0,"delta":{"type":"text_delta","text":"Hi"}}', 'content_block_delta');
    const info = a.push('{"type":"error","error":{"type":"overloaded_error","message":"Overloaded"}}', 'error');
    expect(info).toMatchObject({ error: 'Overloaded', errorType: 'overloaded_error', chunk: true });
    expect(a.result()).toMatchObject({ content: 'Hi', error: 'Overloaded', errorType: 'overloaded_error' });
  });

  it('leaves out the tools the API runs itself, and keeps unparseable input raw', () => {
    const a = new AnthropicReplyAssembler();
    a.push(JSON.stringify({ type: 'content_block_start', index: 0, content_block: { type: 'server_tool_use', id: 'srvtoolu_1', name: 'web_search', input: {} } }));
    a.push(JSON.stringify({ type: 'content_block_start', index: 1, content_block: { type: 'tool_use', id: 'toolu_1', name: 'x', input: {} } }));
    a.push(JSON.stringify({ type: 'content_block_delta', index: 1, delta: { type: 'input_json_delta', partial_json: '{"a":' } }));
    expect(a.result().toolCalls).toEqual([{ id: 'toolu_1', name: 'x', arguments: '{"a":', argumentsRaw: '{"a":' }]);
  });

  it('ignores what is not an event of the reply', () => {
    const a = new AnthropicReplyAssembler();
    expect(a.push('')).toEqual({ content: false, chunk: false });
    expect(a.push('{"type":"ping"}', 'ping')).toMatchObject({ content: false, chunk: true });
    expect(a.push('not json', 'message_delta').error).toMatch(/not a JSON object/);
    expect(a.result().error).toBeUndefined();
  });
});

describe('Anthropic requests', () => {
  it('summarizes the first turn: model, system, tools, thinking, max_tokens, the prompt', () => {
    expect(summarizeAnthropicRequest(json('turn1.request.json'))).toEqual({
      stream: false,
      messageCount: 1,
      model: 'claude-sonnet-4-5-20250929',
      tools: ['mcp__weather__get_weather'],
      toolResults: [],
      maxTokens: 4096,
      thinkingConfig: { type: 'enabled', budget_tokens: 1024 },
      system: 'You are a helpful assistant. Use the tools you are given to answer questions about the weather.',
      prompt: "What's the weather in New York right now?",
    });
  });

  it('finds the tool_result carried back by its tool_use id, and the call in the history', () => {
    const s = summarizeAnthropicRequest({ ...(json('turn2.request.json') as object), stream: true })!;
    expect(s.stream).toBe(true);
    expect(s.toolResults).toEqual([{ toolCallId: 'toolu_01A09q90qw90lq917835lq9', content: 'Clear, with a low around 65. Southwest wind around 6 mph.' }]);
    expect(s.historyToolCalls).toEqual([{ id: 'toolu_01A09q90qw90lq917835lq9', name: 'mcp__weather__get_weather', arguments: { location: 'New York' } }]);
    expect(s.prompt).toBe("What's the weather in New York right now?");
  });

  it('keeps is_error and only the last user message’s results', () => {
    const s = summarizeAnthropicRequest({
      model: 'm',
      messages: [
        { role: 'user', content: [{ type: 'tool_result', tool_use_id: 'old', content: 'old' }] },
        { role: 'assistant', content: [{ type: 'tool_use', id: 'new', name: 't', input: {} }] },
        { role: 'user', content: [{ type: 'tool_result', tool_use_id: 'new', content: 'boom', is_error: true }] },
      ],
    })!;
    expect(s.toolResults).toEqual([{ toolCallId: 'new', content: 'boom', isError: true }]);
    expect(summarizeAnthropicRequest('nope')).toBeUndefined();
  });

  it('knows its paths, also under a gateway prefix', () => {
    expect(isAnthropicTurnPath('/v1/messages')).toBe(true);
    expect(isAnthropicTurnPath('/api/v1/messages')).toBe(true);
    expect(isAnthropicTurnPath('/v1/messages/count_tokens')).toBe(false);
    expect(isAnthropicPath('/v1/messages/count_tokens')).toBe(true);
    expect(isAnthropicPath('/v1/threads/t_1/messages')).toBe(false);
  });
});
