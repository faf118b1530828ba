/**
 * A WebSocket connection's two directions are decoded in the order their bytes passed, even when one message
 * is compressed (inflated asynchronously) and the answer that follows it is not.
 */
import { deflateRawSync, constants } from 'node:zlib';
import { describe, expect, it } from 'vitest';
import { HttpObserver } from '../../src/session/http-exchange.js';
import { WebSocketSession } from '../../src/session/ws-session.js';
import type { RecordDraft } from '../../src/log/schema.js';

/** One text frame, FIN set: compressed (RSV1, permessage-deflate) and/or masked (client to server) as asked. */
function textFrame(text: string, { compressed, masked }: { compressed: boolean; masked: boolean }): Buffer {
  let payload = Buffer.from(text);
  // permessage-deflate: a raw deflate stream flushed with SYNC_FLUSH, its last 4 bytes (00 00 ff ff) left out.
  if (compressed) payload = deflateRawSync(payload, { finishFlush: constants.Z_SYNC_FLUSH }).subarray(0, -4);
  const length = payload.length;
  const head = length < 126 ? Buffer.from([0, length]) : length < 65536 ? Buffer.from([0, 126, length >> 8, length & 255]) : Buffer.concat([Buffer.from([0, 127]), Buffer.from(new BigUint64Array([BigInt(length)]).buffer).reverse()]);
  head[0] = 0x80 | (compressed ? 0x40 : 0) | 0x1;
  if (!masked) return Buffer.concat([head, payload]);
  head[1]! |= 0x80;
  const mask = Buffer.from([1, 2, 3, 4]);
  const body = Buffer.from(payload.map((byte, i) => byte ^ mask[i % 4]!));
  return Buffer.concat([head, mask, body]);
}

describe('WebSocketSession', () => {
  it('logs a large compressed request before the small uncompressed answer that came right after it', async () => {
    const records: RecordDraft[] = [];
    const observer = new HttpObserver({ sink: { write: (draft) => records.push(draft) - 1 }, session: 's', maxBody: 1 << 20, chunks: false });
    const session = new WebSocketSession(observer, 'x1', 'permessage-deflate');
    // Big and varied, so that inflating it takes a while.
    const pad = Array.from({ length: 20000 }, (_, i) => `w${(i * 7919) % 10007}`).join(' ');
    const request = JSON.stringify({ jsonrpc: '2.0', id: 1, method: 'tools/call', params: { name: 'get_weather', arguments: { pad } } });
    session.data('c2s', textFrame(request, { compressed: true, masked: true }), 1, 1);
    session.data('s2c', textFrame('{"jsonrpc":"2.0","id":1,"result":{"content":[]}}', { compressed: false, masked: false }), 2, 2);
    await new Promise((resolve) => setTimeout(resolve, 200));
    session.end(3, 3);
    const messages = records.filter((r) => r.kind === 'request' || r.kind === 'response');
    expect(messages.map((r) => r.kind)).toEqual(['request', 'response']);
    expect(messages[1]).toMatchObject({ method: 'tools/call', latencyMs: 1 });
  });
});
