import { describe, expect, it } from 'vitest';
import { readFileSync } from 'node:fs';
import { SseFramer } from '../../src/framing/sse.js';
import { OpenAiReplyAssembler, openAiReplyFromBody, summarizeOpenAiRequest } from '../../src/protocols/openai.js';
import { MAX_REPLY_CHARS, type LlmReply } from '../../src/protocols/llm.js';

const sse = readFileSync('fixtures/openai/turn1.response.sse');
const text = (p: string): string => readFileSync(p, 'utf8');

/** Frame the SSE bytes (in the given pieces) and reassemble, as the tap does. */
function assemble(pieces: Buffer[]): LlmReply {
  const framer = new SseFramer({ maxEventBytes: 1 << 20 });
  const assembler = new OpenAiReplyAssembler();
  for (const piece of pieces) for (const item of [...framer.push(piece)]) if (item.type === 'event') assembler.push(item.data ?? '', item.event);
  for (const item of framer.end()) if (item.type === 'event') assembler.push(item.data ?? '', item.event);
  return assembler.result();
}

describe('OpenAI streamed replies', () => {
  it('joins the captured tool-call deltas by index and parses the arguments, whatever the chunking', () => {
    const whole = assemble([sse]);
    for (let i = 1; i < sse.length; i++) expect(assemble([sse.subarray(0, i), sse.subarray(i)]), `split at ${i}`).toEqual(whole);
    expect(whole).toEqual({
      model: 'Qwen/Qwen2.5-32B-Instruct',
      content: '',
      toolCalls: [{ id: 'call_TMbE01', name: 'get_weather', arguments: { city: '上海' }, index: 0 }],
      finishReason: 'tool_calls',
      usage: { promptTokens: 180, completionTokens: 20, totalTokens: 200 },
      chunkCount: 7,
    });
  });

  it('keeps two interleaved calls apart, and the raw text of arguments that are not JSON', () => {
    const a = new OpenAiReplyAssembler();
    const chunk = (delta: unknown, finish: string | null = null): string => JSON.stringify({ model: 'gpt', choices: [{ index: 0, delta, finish_reason: finish }] });
    a.push(chunk({ role: 'assistant', tool_calls: [{ index: 0, id: 'call_a', type: 'function', function: { name: 'get_weather', arguments: '' } }] }));
    a.push(chunk({ tool_calls: [{ index: 1, id: 'call_b', type: 'function', function: { name: 'get_time', arguments: '{"tz":' } }] }));
    a.push(chunk({ tool_calls: [{ index: 0, function: { arguments: '{"city":"Oslo"}' } }] }));
    a.push(chunk({ tool_calls: [{ index: 1, function: { arguments: '"CET"' } }] }));
    a.push(chunk({}, 'tool_calls'));
    expect(a.push('[DONE]')).toEqual({ content: false, chunk: true, done: true });
    expect(a.result().toolCalls).toEqual([
      { id: 'call_a', name: 'get_weather', arguments: { city: 'Oslo' }, index: 0 },
      { id: 'call_b', name: 'get_time', arguments: '{"tz":"CET"', argumentsRaw: '{"tz":"CET"', index: 1 },
    ]);
  });

  it('collects content deltas and reasoning, and reports the first content', () => {
    const a = new OpenAiReplyAssembler();
    const role = a.push('{"choices":[{"index":0,"delta":{"role":"assistant","content":""}}]}');
    expect(role.content).toBe(false);
    a.push('{"choices":[{"index":0,"delta":{"reasoning_content":"hmm"}}]}');
    expect(a.push('{"choices":[{"index":0,"delta":{"content":"上海"}}]}')).toEqual({ content: true, chunk: true, delta: '上海', json: { choices: [{ index: 0, delta: { content: '上海' } }] } });
    a.push('{"choices":[{"index":0,"delta":{"content":"晴"}}],"usage":null}');
    expect(a.result()).toMatchObject({ content: '上海晴', thinking: 'hmm' });
  });

  it('reports an SSE error event', () => {
    const a = new OpenAiReplyAssembler();
    const info = a.push('{"error":{"message":"The server had an error while processing your request.","type":"server_error"}}', 'error');
    expect(info.error).toBe('The server had an error while processing your request.');
    expect(a.result().error).toBe('The server had an error while processing your request.');
  });

  it('follows the Responses API events', () => {
    const a = new OpenAiReplyAssembler();
    a.push('{"type":"response.created","response":{"id":"r1","model":"gpt-5"}}', 'response.created');
    a.push('{"type":"response.output_text.delta","delta":"Hel"}', 'response.output_text.delta');
    a.push('{"type":"response.output_text.delta","delta":"lo"}', 'response.output_text.delta');
    a.push(
      JSON.stringify({ type: 'response.completed', response: { model: 'gpt-5', status: 'completed', usage: { input_tokens: 5, output_tokens: 2 }, output: [{ type: 'function_call', call_id: 'fc_1', name: 'get_weather', arguments: '{"city":"Rome"}' }] } }),
      'response.completed',
    );
    expect(a.result()).toMatchObject({ content: 'Hello', toolCalls: [{ id: 'fc_1', name: 'get_weather', arguments: { city: 'Rome' } }], usage: { promptTokens: 5, completionTokens: 2, totalTokens: 7 }, finishReason: 'completed', model: 'gpt-5' });
  });
});

describe('OpenAI bodies and requests', () => {
  it('reads the captured non-streamed turns', () => {
    expect(openAiReplyFromBody(text('fixtures/openai/turn1.response.json'))).toEqual({
      model: 'Qwen/Qwen2.5-32B-Instruct',
      content: '',
      toolCalls: [{ id: '01964be6e485603d6a2a0acbbc7eba91', name: 'get_weather', arguments: { city: '上海' } }],
      finishReason: 'tool_calls',
      usage: { promptTokens: 180, completionTokens: 20, totalTokens: 200 },
      chunkCount: 0,
    });
    expect(openAiReplyFromBody(text('fixtures/openai/turn2.response.json'))).toMatchObject({ content: '上海当前的天气是晴天，温度是27摄氏度。', finishReason: 'stop' });
  });

  it('summarizes the captured requests: tools offered, the tool result carried back', () => {
    expect(summarizeOpenAiRequest(JSON.parse(text('fixtures/openai/turn1.request.json')))).toEqual({
      model: 'Qwen/Qwen2.5-32B-Instruct',
      stream: false,
      messageCount: 2,
      tools: ['get_weather'],
      toolResults: [],
      prompt: '帮我查询上海的天气',
    });
    const s = summarizeOpenAiRequest(JSON.parse(text('fixtures/openai/turn2.request.json')))!;
    expect(s.toolResults).toEqual([{ toolCallId: '01964beeb9ee27098b74149d86560b35', content: '{"Celsius": 27, "type": "sunny"}' }]);
    expect(s.historyToolCalls).toEqual([{ id: '01964beeb9ee27098b74149d86560b35', name: 'get_weather', arguments: { city: '上海' } }]);
  });

  it('reads content given as parts', () => {
    const s = summarizeOpenAiRequest({ model: 'm', stream: true, messages: [{ role: 'user', content: [{ type: 'text', text: 'a' }, { type: 'text', text: 'b' }] }] })!;
    expect(s).toMatchObject({ stream: true, prompt: 'ab' });
  });
});

describe('reassembly stays bounded', () => {
  it('caps a tool call\u2019s streamed arguments and marks the reply truncated', () => {
    const assembler = new OpenAiReplyAssembler();
    assembler.push(JSON.stringify({ choices: [{ index: 0, delta: { tool_calls: [{ index: 0, id: 'call_1', type: 'function', function: { name: 'f', arguments: '{"a":"' } }] } }] }));
    const piece = JSON.stringify({ choices: [{ index: 0, delta: { tool_calls: [{ index: 0, function: { arguments: 'y'.repeat(8192) } }] } }] });
    for (let i = 0; i < (MAX_REPLY_CHARS / 8192) * 2; i++) assembler.push(piece);
    const reply = assembler.result();
    expect(reply.toolCalls[0]!.argumentsRaw!.length).toBe(MAX_REPLY_CHARS);
    expect(reply.truncated).toBe(true);
  });
});
