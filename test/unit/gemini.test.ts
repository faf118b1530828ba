import { describe, expect, it } from 'vitest';
import { readFileSync } from 'node:fs';
import { SseFramer } from '../../src/framing/sse.js';
import { JsonArrayFramer } from '../../src/framing/json-array.js';
import { GeminiReplyAssembler, geminiReplyFromBody, isGeminiPath, isGeminiTurnPath, summarizeGeminiRequest } from '../../src/protocols/gemini.js';
import type { LlmReply } from '../../src/protocols/llm.js';

const bytes = (p: string): Buffer => readFileSync(`fixtures/gemini/${p}`);
const json = (p: string): unknown => JSON.parse(bytes(p).toString('utf8'));
const ANSWER = "The weather service says it's always raining in California, so take an umbrella.";

function assembleSse(pieces: Buffer[]): LlmReply {
  const framer = new SseFramer({ maxEventBytes: 1 << 20 });
  const assembler = new GeminiReplyAssembler();
  for (const piece of pieces) for (const item of framer.push(piece)) if (item.type === 'event') assembler.push(item.data ?? '');
  for (const item of framer.end()) if (item.type === 'event') assembler.push(item.data ?? '');
  return assembler.result();
}

/** The JSON-array form of a stream: the SSE fixture's chunks, pretty-printed and joined as the API sends them. */
function asArray(sse: Buffer): Buffer {
  const chunks = sse
    .toString('utf8')
    .split('\r\n\r\n')
    .filter((e) => e.startsWith('data: '))
    .map((e) => JSON.stringify(JSON.parse(e.slice(6)), null, 2));
  return Buffer.from(`[${chunks.join('\n,\r\n')}\n]`);
}

function assembleArray(pieces: Buffer[]): LlmReply {
  const framer = new JsonArrayFramer({ maxElementBytes: 1 << 20 });
  const assembler = new GeminiReplyAssembler();
  for (const piece of pieces) for (const element of framer.push(piece)) assembler.push(element.text);
  return assembler.result();
}

describe('Gemini streamed replies', () => {
  it('joins the text of an SSE stream, whatever the chunking', () => {
    const sse = bytes('turn2.response.sse');
    const whole = assembleSse([sse]);
    for (let i = 1; i < sse.length; i += 5) expect(assembleSse([sse.subarray(0, i), sse.subarray(i)]), `split at ${i}`).toEqual(whole);
    expect(whole).toEqual({
      model: 'gemini-2.5-flash',
      content: ANSWER,
      toolCalls: [],
      finishReason: 'STOP',
      usage: { promptTokens: 131, completionTokens: 19, totalTokens: 150 },
      chunkCount: 3,
    });
  });

  it('reads the JSON-array form the same, split at every byte', () => {
    const array = asArray(bytes('turn2.response.sse'));
    const whole = assembleArray([array]);
    expect(whole).toEqual(assembleSse([bytes('turn2.response.sse')]));
    for (let i = 1; i < array.length; i++) expect(assembleArray([array.subarray(0, i), array.subarray(i)]), `split at ${i}`).toEqual(whole);
    // Strings holding brackets and escaped quotes do not end an element early.
    const tricky = Buffer.from('[{"candidates":[{"content":{"parts":[{"text":"a}\\"]{"}]}}]}\n,\r\n{"candidates":[{"content":{"parts":[{"text":"b"}]},"finishReason":"STOP"}]}]');
    expect(assembleArray([tricky]).content).toBe('a}"]{b');
  });

  it('takes a functionCall part whole, with object args', () => {
    const reply = assembleSse([bytes('turn1.response.sse')]);
    expect(reply.toolCalls).toEqual([{ name: 'get_weather', arguments: { location: 'California' } }]);
    expect(reply.finishReason).toBe('STOP');
    expect(geminiReplyFromBody(bytes('turn1.response.json').toString('utf8'))).toEqual({ ...reply, chunkCount: 0 });
  });

  it('says an error chunk is an error with its status, and thoughts are thinking', () => {
    const a = new GeminiReplyAssembler();
    const t = a.push('{"candidates":[{"content":{"parts":[{"text":"hmm","thought":true},{"text":"Hi"}]}}]}');
    expect(t).toMatchObject({ content: true, delta: 'Hi', thinking: 'hmm' });
    expect(a.push('{"error":{"code":503,"message":"The model is overloaded.","status":"UNAVAILABLE"}}')).toMatchObject({ error: 'The model is overloaded.', errorType: 'UNAVAILABLE' });
    expect(a.result()).toMatchObject({ content: 'Hi', thinking: 'hmm', error: 'The model is overloaded.', errorType: 'UNAVAILABLE' });
  });

  it('marks the chunk with a finishReason, or a blocked prompt, as the last', () => {
    expect(new GeminiReplyAssembler().push('{"candidates":[{"content":{"parts":[{"text":"x"}]}}]}').done).toBeUndefined();
    expect(new GeminiReplyAssembler().push('{"candidates":[{"finishReason":"MAX_TOKENS"}]}').done).toBe(true);
    const blocked = new GeminiReplyAssembler();
    expect(blocked.push('{"promptFeedback":{"blockReason":"SAFETY"}}').done).toBe(true);
    expect(blocked.result().finishReason).toBe('SAFETY');
  });
});

describe('Gemini requests', () => {
  it('takes the model and streaming from the path', () => {
    expect(summarizeGeminiRequest(json('turn1.request.json'), '/v1beta/models/gemini-2.5-flash:streamGenerateContent?alt=sse')).toEqual({
      stream: true,
      model: 'gemini-2.5-flash',
      messageCount: 1,
      tools: ['get_weather'],
      toolResults: [],
      maxTokens: 1024,
      thinkingConfig: { thinkingBudget: 0 },
      system: 'Answer weather questions with the tools you have.',
      prompt: 'what is the weather in California?',
    });
  });

  it('finds the functionResponse carried back, as the text it holds, and the call in the history', () => {
    const s = summarizeGeminiRequest(json('turn2.request.json'), '/v1/models/gemini-2.5-flash:generateContent')!;
    expect(s.stream).toBe(false);
    expect(s.toolResults).toEqual([{ name: 'get_weather', content: "It's always raining in California" }]);
    expect(s.historyToolCalls).toEqual([{ name: 'get_weather', arguments: { location: 'California' } }]);
    const mcpShaped = summarizeGeminiRequest({ contents: [{ role: 'user', parts: [{ functionResponse: { id: 'c1', name: 't', response: { content: [{ type: 'text', text: 'ok' }] } } }] }] })!;
    expect(mcpShaped.toolResults).toEqual([{ name: 't', toolCallId: 'c1', content: 'ok' }]);
    const failed = summarizeGeminiRequest({ contents: [{ role: 'user', parts: [{ functionResponse: { name: 't', response: { error: { content: [{ type: 'text', text: 'no such city' }], isError: true } } } }] }] })!;
    expect(failed.toolResults).toEqual([{ name: 't', content: 'no such city', isError: true }]);
  });

  it('knows its paths, Gemini API and Vertex AI', () => {
    expect(isGeminiTurnPath('/v1beta/models/gemini-2.5-flash:generateContent')).toBe(true);
    expect(isGeminiTurnPath('/v1/projects/p/locations/us-central1/publishers/google/models/gemini-2.5-pro:streamGenerateContent')).toBe(true);
    expect(isGeminiTurnPath('/v1beta/models/gemini-2.5-flash:countTokens')).toBe(false);
    expect(isGeminiPath('/v1beta/models/gemini-2.5-flash:countTokens')).toBe(true);
    expect(isGeminiPath('/v1/models')).toBe(false);
  });
});
