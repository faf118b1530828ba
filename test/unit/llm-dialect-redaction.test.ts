/**
 * A key the model streams back, cut at every position across two events, leaves no piece of itself in any record
 * of an Anthropic or Gemini exchange: the llm-chunks, the reassembled llm-response, the http-end body. The
 * exchange is fed to the HTTP observer as literal bytes and each record goes through the Redactor as LogWriter
 * hands it over.
 */
import { describe, expect, it } from 'vitest';
import { HttpObserver } from '../../src/session/http-exchange.js';
import { Redactor, redactPathQuery } from '../../src/log/redact.js';
import type { RecordDraft } from '../../src/log/schema.js';

// Credential-shaped values built at run time, so this file itself holds no key-looking literal.
const ANTHROPIC_KEY = ['sk', 'ant', 'api03', 'Q9w8E7r6T5y4U3i2O1p0AsDfGhJkLzXcVbNm'].join('-');
const GOOGLE_KEY = `AIza${'SyD4e5F6g7H8i9J0kLmNoPqRsTuVwXyZ012'}`;

/** Every record of one exchange, redacted as LogWriter would write it. */
function exchange(head: { path: string; headers?: Record<string, string> }, request: unknown, contentType: string, body: string[]): string[] {
  const redactor = new Redactor();
  const lines: string[] = [];
  const sink = { write: (draft: RecordDraft): number => lines.push(redactor.redactJson({ ...draft, session: 's' }, JSON.stringify({ ...draft, session: 's' }))) - 1 };
  const observer = new HttpObserver({ sink, session: 's', maxBody: 1 << 20, chunks: true, redactor });
  const x = observer.begin({ method: 'POST', path: head.path, headers: { 'content-type': 'application/json', ...head.headers } }, 1, 1);
  x.requestData(Buffer.from(JSON.stringify(request)));
  x.requestEnd(2, 2);
  x.responseHead(200, { 'content-type': contentType }, 3, 3);
  body.forEach((piece, i) => x.responseData(Buffer.from(piece), 4 + i, 4 + i));
  x.responseEnd(10, 10);
  return lines;
}

function expectNoPieceOf(secret: string, lines: string[], where: string): void {
  const text = lines.join('\n');
  for (let i = 0; i + 6 <= secret.length; i++) expect(text.includes(secret.slice(i, i + 6)), `${where}: "${secret.slice(i, i + 6)}" is in the log`).toBe(false);
}

const sse = (event: string, data: unknown): string => `event: ${event}\ndata: ${JSON.stringify(data)}\n\n`;

describe('Anthropic: a key cut across events', () => {
  const text = (t: string): string => sse('content_block_delta', { type: 'content_block_delta', index: 0, delta: { type: 'text_delta', text: t } });
  const json = (j: string): string => sse('content_block_delta', { type: 'content_block_delta', index: 1, delta: { type: 'input_json_delta', partial_json: j } });
  const start = sse('message_start', { type: 'message_start', message: { model: 'claude-x', usage: { input_tokens: 3, output_tokens: 1 } } });
  const stop = sse('message_delta', { type: 'message_delta', delta: { stop_reason: 'tool_use' }, usage: { output_tokens: 9 } }) + sse('message_stop', { type: 'message_stop' });

  it('in text_delta and in a tool call’s input_json_delta, at every position', () => {
    const said = `Your key is ${ANTHROPIC_KEY}, keep it.`;
    const input = `{"note": "use ${ANTHROPIC_KEY} here"}`;
    const at = said.indexOf(ANTHROPIC_KEY);
    const jat = input.indexOf(ANTHROPIC_KEY);
    for (let i = 1; i < ANTHROPIC_KEY.length; i++) {
      const events = [
        start,
        sse('content_block_start', { type: 'content_block_start', index: 0, content_block: { type: 'text', text: '' } }),
        text(said.slice(0, at + i)),
        sse('ping', { type: 'ping' }),
        text(said.slice(at + i)),
        sse('content_block_start', { type: 'content_block_start', index: 1, content_block: { type: 'tool_use', id: 'toolu_1', name: 'mcp__vault__store', input: {} } }),
        json(input.slice(0, jat + i)),
        json(input.slice(jat + i)),
        stop,
      ];
      const lines = exchange({ path: '/v1/messages', headers: { 'x-api-key': ANTHROPIC_KEY, 'anthropic-version': '2023-06-01' } }, { model: 'claude-x', stream: true, messages: [] }, 'text/event-stream', events);
      expectNoPieceOf(ANTHROPIC_KEY, lines, `cut at ${i}`);
      const reply = JSON.parse(lines.find((l) => l.includes('"kind":"llm-response"'))!) as { content: string; toolCalls: { arguments: { note: string } }[] };
      expect(reply.content).toBe('Your key is [redacted], keep it.');
      expect(reply.toolCalls[0]!.arguments.note).toBe('use [redacted] here');
    }
  });
});

describe('Gemini: a key cut across chunks', () => {
  const chunk = (t: string, last = false): Record<string, unknown> => ({ candidates: [{ content: { parts: [{ text: t }], role: 'model' }, index: 0, ...(last ? { finishReason: 'STOP' } : {}) }], modelVersion: 'gemini-2.5-flash' });
  const said = `Your key is ${GOOGLE_KEY}, keep it.`;
  const at = said.indexOf(GOOGLE_KEY);

  it('in SSE chunks (alt=sse), at every position, and the ?key= of the path', () => {
    for (let i = 1; i < GOOGLE_KEY.length; i++) {
      const body = [chunk(said.slice(0, at + i)), chunk(said.slice(at + i), true)].map((c) => `data: ${JSON.stringify(c)}\r\n\r\n`);
      const lines = exchange({ path: `/v1beta/models/gemini-2.5-flash:streamGenerateContent?alt=sse&key=${GOOGLE_KEY}` }, { contents: [] }, 'text/event-stream', body);
      expectNoPieceOf(GOOGLE_KEY, lines, `cut at ${i}`);
      expect(lines.some((l) => l.includes(':streamGenerateContent?alt=sse&key=[redacted]'))).toBe(true);
    }
  });

  it('in the JSON-array form, at every position', () => {
    for (let i = 1; i < GOOGLE_KEY.length; i++) {
      const body = [`[${JSON.stringify(chunk(said.slice(0, at + i)), null, 2)}`, `\n,\r\n${JSON.stringify(chunk(said.slice(at + i), true), null, 2)}\n]`];
      const lines = exchange({ path: '/v1beta/models/gemini-2.5-flash:streamGenerateContent', headers: { 'x-goog-api-key': GOOGLE_KEY } }, { contents: [] }, 'application/json; charset=UTF-8', body);
      expectNoPieceOf(GOOGLE_KEY, lines, `cut at ${i}`);
      expect(lines.filter((l) => l.includes('"kind":"llm-chunk"'))).toHaveLength(2);
    }
  });
});

describe('credentials in a path’s query', () => {
  it('are redacted by name, whatever their shape; other parameters stay; --no-redact keeps them', () => {
    expect(redactPathQuery('/v1beta/models/m:streamGenerateContent?alt=sse&key=not-a-google-shape-123')).toBe('/v1beta/models/m:streamGenerateContent?alt=sse&key=[redacted]');
    expect(redactPathQuery('/x?access_token=abc&page=2&api%5Fkey=def')).toBe('/x?access_token=[redacted]&page=2&api%5Fkey=[redacted]');
    expect(redactPathQuery('/sse?sessionId=3f2a&pageToken=p1')).toBe('/sse?sessionId=3f2a&pageToken=p1');
    expect(redactPathQuery('/x?key=abc', false)).toBe('/x?key=abc');
    expect(redactPathQuery('/x?tenant=acme', new Redactor({ keys: ['tenant'] }))).toBe('/x?tenant=[redacted]');
  });
});
