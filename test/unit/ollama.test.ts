import { describe, expect, it } from 'vitest';
import { readFileSync } from 'node:fs';
import { LineFramer } from '../../src/framing/lines.js';
import { OllamaReplyAssembler, ollamaUsage, summarizeOllamaRequest } from '../../src/protocols/ollama.js';
import { MAX_REPLY_CHARS, type LlmChunkInfo, type LlmReply } from '../../src/protocols/llm.js';

const turn1 = readFileSync('fixtures/ollama/turn1.response.ndjson');
const turn2 = readFileSync('fixtures/ollama/turn2.response.ndjson');
const json = (p: string): unknown => JSON.parse(readFileSync(p, 'utf8'));

/** Frame the NDJSON bytes (in the given pieces) into lines and reassemble the reply, as the tap does. */
function assemble(pieces: Buffer[]): { reply: LlmReply; infos: LlmChunkInfo[] } {
  const lines = new LineFramer({ dir: 's2c', maxFrameBytes: 1 << 20 });
  const assembler = new OllamaReplyAssembler();
  const infos: LlmChunkInfo[] = [];
  for (const piece of pieces) for (const frame of lines.push(piece, 0, 0)) infos.push(assembler.push(frame.bytes.toString('utf8')));
  const tail = lines.end(0, 0);
  if (tail) infos.push(assembler.push(tail.bytes.toString('utf8')));
  return { reply: assembler.result(), infos };
}

function expectSplitInvariant(bytes: Buffer): LlmReply {
  const whole = assemble([bytes]).reply;
  for (let i = 1; i < bytes.length; i++) expect(assemble([bytes.subarray(0, i), bytes.subarray(i)]).reply, `split at ${i}`).toEqual(whole);
  return whole;
}

describe('Ollama replies', () => {
  it('reassembles the captured tool-call turn: one whole call, object arguments, no id, durations in ms', () => {
    const reply = expectSplitInvariant(turn1);
    expect(reply).toEqual({
      model: 'qwen2.5:3b',
      content: '',
      toolCalls: [{ name: 'get_weather', arguments: { location: 'California' } }],
      finishReason: 'stop',
      usage: { promptTokens: 273, completionTokens: 20, totalTokens: 293, totalMs: 7427.76, loadMs: 3209.95, promptEvalMs: 3245.53, evalMs: 965.04, tokensPerSecond: 20.72 },
      chunkCount: 2,
    });
  });

  it('reassembles the captured answer turn from its 56 token chunks', () => {
    const reply = expectSplitInvariant(turn2);
    expect(reply.content).toMatch(/^The weather report indicates that it's always raining in California\. This might be due to/);
    expect(reply.toolCalls).toEqual([]);
    expect(reply.chunkCount).toBe(turn2.toString('utf8').trim().split('\n').length);
    const { infos } = assemble([turn2]);
    // The parsed line comes along, for the log's redaction to reuse.
    expect(infos[0]).toEqual({ content: true, chunk: true, delta: 'The', json: JSON.parse(turn2.toString('utf8').split('\n')[0]!) });
    expect(infos.at(-1)!.done).toBe(true);
  });

  it('keeps newer servers\' tool-call ids and indexes', () => {
    const a = new OllamaReplyAssembler();
    a.push('{"model":"qwen3","message":{"role":"assistant","content":"","tool_calls":[{"id":"call_x1","function":{"index":0,"name":"get_weather","arguments":{"city":"Paris"}}}]},"done":false}');
    a.push('{"model":"qwen3","message":{"role":"assistant","content":""},"done":true,"done_reason":"stop"}');
    expect(a.result().toolCalls).toEqual([{ id: 'call_x1', name: 'get_weather', arguments: { city: 'Paris' }, index: 0 }]);
  });

  it('collects thinking, and /api/generate text', () => {
    const a = new OllamaReplyAssembler();
    a.push('{"model":"qwen3","message":{"role":"assistant","content":"","thinking":"Let me think"},"done":false}');
    a.push('{"model":"qwen3","message":{"role":"assistant","content":"Hi"},"done":true}');
    expect(a.result()).toMatchObject({ content: 'Hi', thinking: 'Let me think' });
    const g = new OllamaReplyAssembler();
    g.push('{"model":"llama3","response":"Hel","done":false}');
    g.push('{"model":"llama3","response":"lo","done":true,"context":[1,2]}');
    expect(g.result().content).toBe('Hello');
  });

  it('reports an error line inside a stream', () => {
    const a = new OllamaReplyAssembler();
    a.push('{"model":"m","message":{"role":"assistant","content":"The"},"done":false}');
    const info = a.push('{"error":"an error was encountered while running the model: unexpected EOF"}');
    expect(info.error).toBe('an error was encountered while running the model: unexpected EOF');
    expect(a.result()).toMatchObject({ content: 'The', error: 'an error was encountered while running the model: unexpected EOF' });
    expect(new OllamaReplyAssembler().push('not json').error).toMatch(/not a JSON object/);
  });

  it('converts nanoseconds and leaves out what is missing', () => {
    expect(ollamaUsage({ eval_count: 10, eval_duration: 500_000_000 })).toEqual({ completionTokens: 10, totalTokens: 10, evalMs: 500, tokensPerSecond: 20 });
    expect(ollamaUsage({})).toBeUndefined();
  });
});

describe('Ollama requests', () => {
  it('summarizes the captured first turn: model, stream, the tools offered', () => {
    expect(summarizeOllamaRequest(json('fixtures/ollama/turn1.request.json'))).toEqual({
      model: 'qwen2.5:3b',
      stream: true,
      messageCount: 1,
      tools: ['add', 'multiple', 'get_weather'],
      toolResults: [],
      prompt: 'what is the weather in California?',
    });
  });

  it('finds the tool result the second turn carries back, and the call it answers', () => {
    const s = summarizeOllamaRequest(json('fixtures/ollama/turn2.request.json'))!;
    expect(s.toolResults).toEqual([{ content: "It's always raining in California" }]);
    expect(s.historyToolCalls).toEqual([{ name: 'get_weather', arguments: { location: 'California' } }]);
    expect(s.messageCount).toBe(3);
  });

  it('defaults stream to true as the Ollama server does, and keeps tool_name', () => {
    const s = summarizeOllamaRequest({ model: 'm', messages: [{ role: 'user', content: 'q' }, { role: 'assistant', content: '', tool_calls: [] }, { role: 'tool', content: '12°C', tool_name: 'get_weather' }] })!;
    expect(s.stream).toBe(true);
    expect(s.toolResults).toEqual([{ name: 'get_weather', content: '12°C' }]);
    expect(summarizeOllamaRequest('nope')).toBeUndefined();
  });
});

describe('reassembly stays bounded', () => {
  it('keeps at most MAX_REPLY_CHARS of an endless stream and marks the reply truncated', () => {
    const assembler = new OllamaReplyAssembler();
    const line = JSON.stringify({ model: 'm', message: { role: 'assistant', content: 'x'.repeat(4096) }, done: false });
    for (let i = 0; i < (MAX_REPLY_CHARS / 4096) * 3; i++) assembler.push(line);
    assembler.push(JSON.stringify({ model: 'm', message: { role: 'assistant', content: '' }, done: true, done_reason: 'stop' }));
    const reply = assembler.result();
    expect(reply.content.length).toBe(MAX_REPLY_CHARS);
    expect(reply.truncated).toBe(true);
    expect(reply.chunkCount).toBe((MAX_REPLY_CHARS / 4096) * 3 + 1);
  });
});
