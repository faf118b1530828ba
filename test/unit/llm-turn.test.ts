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
