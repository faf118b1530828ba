import { describe, expect, it } from 'vitest';
import { readFileSync } from 'node:fs';
import { SseFramer, type SseItem } from '../../src/framing/sse.js';

const MAX = 1024 * 1024;

/** Feed `bytes` in the given pieces, then end the stream; return every item. */
function frame(pieces: Buffer[], max = MAX): SseItem[] {
  const framer = new SseFramer({ maxEventBytes: max });
  const items: SseItem[] = [];
  for (const piece of pieces) items.push(...framer.push(piece));
  items.push(...framer.end());
  return items;
}

/** Every way of cutting `bytes` in two, plus one byte at a time: all must give the same items as one piece. */
function expectSplitInvariant(bytes: Buffer, max = MAX): SseItem[] {
  const whole = frame([bytes], max);
  for (let i = 1; i < bytes.length; i++) {
    expect(frame([bytes.subarray(0, i), bytes.subarray(i)], max), `split at byte ${i}`).toEqual(whole);
  }
  const single: Buffer[] = [];
  for (let i = 0; i < bytes.length; i++) single.push(bytes.subarray(i, i + 1));
  expect(frame(single, max)).toEqual(whole);
  return whole;
}

describe('SseFramer', () => {
  it('cuts the captured OpenAI stream into its events, whatever the chunking', () => {
    const bytes = readFileSync('fixtures/openai/turn1.response.sse');
    const items = expectSplitInvariant(bytes);
    expect(items).toHaveLength(7);
    for (const item of items) expect(item.type).toBe('event');
    const events = items as Extract<SseItem, { type: 'event' }>[];
    expect(events.at(-1)!.data).toBe('[DONE]');
    // Multi-byte characters split across chunks come out whole.
    expect(events[2]!.data).toContain('"ty\\": \\"上"');
    expect(JSON.parse(events[1]!.data!).choices[0].delta.tool_calls[0].function.arguments).toBe('{"ci');
  });

  it('reads a Streamable HTTP stream as the MCP SDK writes it: priming event, id, event type, retry, keep-alive', () => {
    const text =
      'id: 0b1c\nretry: 3000\ndata: \n\n' +
      'event: message\nid: 7f2e\ndata: {"jsonrpc":"2.0","method":"notifications/progress","params":{"progressToken":1,"progress":1}}\n\n' +
      ': keepalive\n\n' +
      'event: message\nid: 8a3d\ndata: {"jsonrpc":"2.0","id":2,"result":{}}\n\n';
    const items = expectSplitInvariant(Buffer.from(text));
    expect(items).toEqual([
      { type: 'event', id: '0b1c', retry: 3000, data: '', size: 25 },
      { type: 'event', event: 'message', id: '7f2e', data: '{"jsonrpc":"2.0","method":"notifications/progress","params":{"progressToken":1,"progress":1}}', size: expect.any(Number) },
      { type: 'comment', text: 'keepalive' },
      { type: 'event', event: 'message', id: '8a3d', data: '{"jsonrpc":"2.0","id":2,"result":{}}', size: expect.any(Number) },
    ]);
  });

  it('accepts CRLF, CR and LF line endings alike', () => {
    const lf = frame([Buffer.from('event: a\ndata: one\ndata: two\n\n')]);
    const crlf = expectSplitInvariant(Buffer.from('event: a\r\ndata: one\r\ndata: two\r\n\r\n'));
    const cr = expectSplitInvariant(Buffer.from('event: a\rdata: one\rdata: two\r\r'));
    const mixed = expectSplitInvariant(Buffer.from('event: a\r\ndata: one\rdata: two\n\r\n'));
    expect(lf).toEqual([{ type: 'event', event: 'a', data: 'one\ntwo', size: 26 }]);
    expect(crlf).toEqual(lf);
    expect(cr).toEqual(lf);
    expect(mixed).toEqual(lf);
  });

  it('follows the field rules: one leading space dropped, no colon means empty value, bad retry and NUL ids ignored', () => {
    const items = expectSplitInvariant(Buffer.from('data:  two spaces\ndata\nretry: 12x\nid: a\u0000b\nfoo: bar\n\n'));
    expect(items).toEqual([{ type: 'event', data: ' two spaces\n', size: expect.any(Number) }]);
  });

  it('drops a BOM at the start of the stream', () => {
    const items = expectSplitInvariant(Buffer.concat([Buffer.from([0xef, 0xbb, 0xbf]), Buffer.from('data: x\n\n')]));
    expect(items).toEqual([{ type: 'event', data: 'x', size: 7 }]);
  });

  it('reports the endpoint event of a legacy SSE session', () => {
    const items = expectSplitInvariant(Buffer.from('event: endpoint\ndata: /message?sessionId=76b7dd09-a988\n\n'));
    expect(items).toEqual([{ type: 'event', event: 'endpoint', data: '/message?sessionId=76b7dd09-a988', size: expect.any(Number) }]);
  });

  it('reports an event cut off by the end of the stream as partial', () => {
    expect(frame([Buffer.from('data: {"jsonrpc":"2.0","id":1,"res')])).toEqual([{ type: 'event', data: '{"jsonrpc":"2.0","id":1,"res', size: 34, partial: true }]);
    expect(frame([Buffer.from('data: x\n')])).toEqual([{ type: 'event', data: 'x', size: 7, partial: true }]);
    expect(frame([Buffer.from('data: x\n\n')])).toEqual([{ type: 'event', data: 'x', size: 7 }]);
  });

  it('keeps only the head of an event over the cap and says so', () => {
    const items = expectSplitInvariant(Buffer.from(`data: ${'a'.repeat(30)}\ndata: ${'b'.repeat(30)}\n\ndata: ok\n\n`), 16);
    expect(items[0]).toMatchObject({ type: 'event', truncated: true });
    expect(Buffer.byteLength((items[0] as { data: string }).data)).toBeLessThanOrEqual(16);
    expect(items[1]).toEqual({ type: 'event', data: 'ok', size: 8 });
  });

  it('keeps the tail and full size of a cut event, so a message with its id at the end can be correlated', () => {
    const data = `{"result":{"content":[{"type":"text","text":"${'x'.repeat(300)}"}]},"jsonrpc":"2.0","id":7}`;
    const items = expectSplitInvariant(Buffer.from(`event: message\ndata: ${data}\n\n`), 64);
    const event = items[0] as Extract<SseItem, { type: 'event' }>;
    expect(event.truncated).toBe(true);
    expect(event.dataSize).toBe(Buffer.byteLength(data));
    expect(event.tail!.toString()).toBe(data.slice(-256));
    expect(event.tail!.toString().endsWith('"jsonrpc":"2.0","id":7}')).toBe(true);
  });

  it('never throws on arbitrary bytes', () => {
    const junk = Buffer.from(Array.from({ length: 512 }, (_, i) => (i * 37 + 11) % 256));
    expect(() => expectSplitInvariant(junk)).not.toThrow();
  });
});
