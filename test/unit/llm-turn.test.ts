/**
 * LlmTurn's rule for a stream's end: a reply is cut off only when its protocol's terminator never came (OpenAI
 * `[DONE]`, Ollama `done: true`, Responses `response.completed`), whatever the connection did afterwards.
 */
import { describe, expect, it } from 'vitest';
import { LlmTurn } from '../../src/session/llm-turn.js';
import type { RecordDraft } from '../../src/log/schema.js';

function turn(channel: 'ollama' | 'openai', endpoint: string): { turn: LlmTurn; records: RecordDraft[] } {
  const records: RecordDraft[] = [];
  const t = new LlmTurn({ sink: { write: (d) => records.push(d) }, channel, exchange: 'x1', endpoint, chunks: false });
  t.request('{"model":"m","stream":true,"messages":[]}', 1, 0);
  t.responseHead(200);
  return { turn: t, records };
}

const STREAMS: [string, 'ollama' | 'openai', string, string[], string][] = [
  ['OpenAI chat', 'openai', '/v1/chat/completions', ['{"choices":[{"index":0,"delta":{"content":"hi"}}]}', '{"choices":[{"index":0,"delta":{},"finish_reason":"stop"}]}'], '[DONE]'],
  ['Ollama', 'ollama', '/api/chat', ['{"model":"m","message":{"role":"assistant","content":"hi"},"done":false}'], '{"model":"m","message":{"role":"assistant","content":""},"done":true,"done_reason":"stop"}'],
  ['OpenAI Responses', 'openai', '/v1/responses', ['{"type":"response.output_text.delta","delta":"hi"}'], '{"type":"response.completed","response":{"status":"completed","output":[]}}'],
];

describe.each(STREAMS)('the end of a %s stream', (_, channel, endpoint, body, terminator) => {
  for (const cut of ['the client stopped reading the reply', 'the upstream broke off the reply']) {
    it(`is complete when the terminator came before ${cut.split(' ')[1]} closed the connection`, () => {
      const { turn: t, records } = turn(channel, endpoint);
      for (const f of [...body, terminator]) t.frame(f, undefined, 2, 1);
      expect(t.complete).toBe(true);
      t.end(undefined, 3, 2, cut);
      expect(records.filter((r) => r.kind === 'llm-error')).toEqual([]);
      const reply = records.find((r) => r.kind === 'llm-response')!;
      expect(reply.msg).not.toMatch(/cut off/);
      expect(reply.level).toBeUndefined();
    });

    it(`is cut off when ${cut.split(' ')[1]} closed the connection before the terminator`, () => {
      const { turn: t, records } = turn(channel, endpoint);
      for (const f of body) t.frame(f, undefined, 2, 1);
      expect(t.complete).toBe(false);
      t.end(undefined, 3, 2, cut);
      expect(records.filter((r) => r.kind === 'llm-error').map((r) => r.msg)).toEqual([expect.stringContaining(`${cut} after ${body.length} chunk`)]);
      expect(records.find((r) => r.kind === 'llm-response')!.msg).toMatch(/^The reply was cut off/);
    });
  }
});

describe('when the model decided on each tool call', () => {
  const reply = (records: RecordDraft[]) => records.find((r) => r.kind === 'llm-response') as Extract<RecordDraft, { kind: 'llm-response' }>;

  it('OpenAI chat: a call is complete when the next one starts, the last at finish_reason', () => {
    const { turn: t, records } = turn('openai', '/v1/chat/completions');
    const frames: [number, string][] = [
      [10, '{"choices":[{"index":0,"delta":{"tool_calls":[{"index":0,"id":"a","function":{"name":"f","arguments":"{\\"x\\":"}}]}}]}'],
      [20, '{"choices":[{"index":0,"delta":{"tool_calls":[{"index":0,"function":{"arguments":"1}"}}]}}]}'],
      [30, '{"choices":[{"index":0,"delta":{"tool_calls":[{"index":1,"id":"b","function":{"name":"g","arguments":"{}"}}]}}]}'],
      [40, '{"choices":[{"index":0,"delta":{},"finish_reason":"tool_calls"}]}'],
      [55, '[DONE]'],
    ];
    for (const [mono, f] of frames) t.frame(f, undefined, 2, mono);
    t.end(undefined, 3, 70);
    expect(reply(records).toolCalls.map((c) => [c.name, c.completedMs])).toEqual([
      ['f', 30],
      ['g', 40],
    ]);
  });

  it('Ollama: each call at the chunk that carries it', () => {
    const { turn: t, records } = turn('ollama', '/api/chat');
    t.frame('{"message":{"role":"assistant","content":"","tool_calls":[{"function":{"name":"f","arguments":{}}}]},"done":false}', undefined, 2, 12);
    t.frame('{"message":{"role":"assistant","content":""},"done":true}', undefined, 2, 30);
    t.end(undefined, 3, 35);
    expect(reply(records).toolCalls.map((c) => c.completedMs)).toEqual([12]);
  });

  it('Responses: each call at its output_item.done', () => {
    const { turn: t, records } = turn('openai', '/v1/responses');
    t.frame('{"type":"response.function_call_arguments.delta","delta":"{}"}', undefined, 2, 5);
    t.frame('{"type":"response.output_item.done","item":{"type":"function_call","name":"f","arguments":"{}","call_id":"c"}}', undefined, 2, 8);
    t.frame('{"type":"response.completed","response":{"status":"completed","output":[{"type":"function_call","name":"f","arguments":"{}","call_id":"c"}]}}', undefined, 2, 20);
    t.end(undefined, 3, 25);
    expect(reply(records).toolCalls.map((c) => c.completedMs)).toEqual([8]);
  });

  it('a whole (non-streamed) reply: decided at its end, no completedMs', () => {
    const { turn: t, records } = turn('openai', '/v1/chat/completions');
    t.end('{"choices":[{"index":0,"message":{"role":"assistant","tool_calls":[{"id":"a","function":{"name":"f","arguments":"{}"}}]},"finish_reason":"tool_calls"}]}', 3, 25);
    expect(reply(records).toolCalls.map((c) => c.completedMs)).toEqual([undefined]);
  });
});
