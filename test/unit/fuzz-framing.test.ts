/**
 * Property tests: random bytes, cut into random chunks, through every stage of the stdio pipeline. Nothing may
 * throw, nothing may be lost, and whatever is not JSON-RPC must come out as an `invalid` record.
 */
import { createHash } from 'node:crypto';
import fc from 'fast-check';
import { describe, expect, it } from 'vitest';
import { LineFramer } from '../../src/framing/lines.js';
import { decodeJsonRpc } from '../../src/protocols/jsonrpc.js';
import { McpSession } from '../../src/session/mcp-session.js';
import type { RecordDraft, RecordSink } from '../../src/log/schema.js';
import type { Frame } from '../../src/types.js';
import { cutPoints, split } from '../support/chunks.js';

/** Bytes biased towards the ones that matter to a line framer: \n, \r, and JSON punctuation. */
const byte = fc.oneof({ weight: 6, arbitrary: fc.integer({ min: 0, max: 255 }) }, { weight: 2, arbitrary: fc.constantFrom(0x0a, 0x0d, 0x7b, 0x7d, 0x22) });
const bytes = fc.array(byte, { maxLength: 600 }).map((a) => Buffer.from(a));

const cuts = cutPoints(12);

function frameAll(framer: LineFramer, chunks: Buffer[]): Frame[] {
  const frames: Frame[] = [];
  for (const c of chunks) frames.push(...framer.push(c, 1, 1));
  const tail = framer.end(2, 2);
  if (tail) frames.push(tail);
  return frames;
}

describe('LineFramer under random bytes and random chunk splits', () => {
  it('gives back exactly the input: frame bytes plus their terminators', () => {
    fc.assert(
      fc.property(bytes, cuts, (data, at) => {
        const frames = frameAll(new LineFramer({ dir: 'c2s', maxFrameBytes: 1 << 20 }), split(data, at));
        const rebuilt = Buffer.concat(frames.map((f) => Buffer.concat([f.bytes, Buffer.from(f.partial ? '' : f.crlf ? '\r\n' : '\n')])));
        expect(rebuilt.equals(data)).toBe(true);
        for (const f of frames) {
          expect(f.size).toBe(f.bytes.length);
          expect(f.truncated).toBe(false);
        }
        // Only the last frame may be partial.
        expect(frames.slice(0, -1).some((f) => f.partial)).toBe(false);
      }),
      { numRuns: 400 },
    );
  });

  it('the same frames whatever the chunking', () => {
    fc.assert(
      fc.property(bytes, cuts, (data, at) => {
        const whole = frameAll(new LineFramer({ dir: 's2c', maxFrameBytes: 64 }), [data]);
        const pieces = frameAll(new LineFramer({ dir: 's2c', maxFrameBytes: 64 }), split(data, at));
        const view = (fs: Frame[]) => fs.map((f) => ({ b: f.bytes.toString('hex'), size: f.size, t: f.truncated, h: f.sha256, p: f.partial, c: f.crlf }));
        expect(view(pieces)).toEqual(view(whole));
      }),
      { numRuns: 400 },
    );
  });

  it('over the cap: keeps the head, counts the size, hashes the whole line', () => {
    fc.assert(
      fc.property(fc.array(fc.integer({ min: 0, max: 255 }).filter((b) => b !== 0x0a && b !== 0x0d), { minLength: 1, maxLength: 400 }), cuts, fc.integer({ min: 1, max: 64 }), (line, at, cap) => {
        const data = Buffer.from([...line, 0x0a]);
        const [frame] = frameAll(new LineFramer({ dir: 'c2s', maxFrameBytes: cap }), split(data, at));
        const full = Buffer.from(line);
        expect(frame!.size).toBe(full.length);
        expect(frame!.bytes.equals(full.subarray(0, cap))).toBe(true);
        expect(frame!.truncated).toBe(full.length > cap);
        if (frame!.truncated) expect(frame!.sha256).toBe(createHash('sha256').update(full).digest('hex'));
      }),
      { numRuns: 300 },
    );
  });
});

describe('decodeJsonRpc under random text', () => {
  it('never throws; text that is not JSON is one invalid message', () => {
    fc.assert(
      fc.property(fc.oneof(fc.string({ unit: 'binary' }), fc.json(), bytes.map((b) => b.toString('utf8'))), (text) => {
        const decoded = decodeJsonRpc(text);
        expect(decoded.messages.length).toBeGreaterThan(0);
        let json = true;
        try {
          JSON.parse(text);
        } catch {
          json = false;
        }
        if (!json) expect(decoded.messages).toEqual([expect.objectContaining({ type: 'invalid' })]);
      }),
      { numRuns: 500 },
    );
  });

  it('JSON-RPC-shaped values with random fields are classified, never thrown on', () => {
    const id = fc.oneof(fc.integer(), fc.string(), fc.constant(null), fc.double(), fc.boolean(), fc.object());
    const message = fc.record(
      { jsonrpc: fc.oneof(fc.constant('2.0'), fc.string()), id, method: fc.oneof(fc.string(), fc.integer()), params: fc.jsonValue(), result: fc.jsonValue(), error: fc.oneof(fc.record({ code: fc.integer(), message: fc.string() }), fc.jsonValue()) },
      { requiredKeys: [] },
    );
    fc.assert(
      fc.property(fc.oneof(message, fc.array(message, { maxLength: 4 })), (value) => {
        const decoded = decodeJsonRpc(JSON.stringify(value));
        expect(decoded.messages.length).toBe(Array.isArray(value) ? Math.max(1, value.length) : 1);
        for (const m of decoded.messages) expect(['request', 'notification', 'response', 'error', 'invalid']).toContain(m.type);
      }),
      { numRuns: 1000 },
    );
  });
});

describe('McpSession under random frames', () => {
  class ArraySink implements RecordSink {
    records: RecordDraft[] = [];
    write(draft: RecordDraft): number {
      this.records.push(draft);
      return this.records.length - 1;
    }
  }
  const KINDS = ['request', 'response', 'notification', 'invalid', 'pending'];

  it('random bytes in random chunks, both ways: never throws, at least one record per frame, bad input is invalid', () => {
    fc.assert(
      fc.property(bytes, cuts, bytes, cuts, (up, upCuts, down, downCuts) => {
        const sink = new ArraySink();
        const session = new McpSession({ sink, stdio: true, maxPending: 8 });
        const frames = [
          ...frameAll(new LineFramer({ dir: 'c2s', maxFrameBytes: 128 }), split(up, upCuts)),
          ...frameAll(new LineFramer({ dir: 's2c', maxFrameBytes: 128 }), split(down, downCuts)),
        ];
        for (const f of frames) session.observe(f);
        session.end(3, 3);
        expect(sink.records.length).toBeGreaterThanOrEqual(frames.length);
        for (const r of sink.records) {
          expect(KINDS).toContain(r.kind);
          expect(typeof r.msg).toBe('string');
          expect(r.msg.length).toBeGreaterThan(0);
        }
        for (const f of frames) {
          const text = f.bytes.toString('utf8');
          let parses = true;
          try {
            JSON.parse(text);
          } catch {
            parses = false;
          }
          if (!parses && !f.truncated) expect(sink.records.some((r) => r.kind === 'invalid' && 'raw' in r && (r.raw === text || r.raw === f.bytes.toString('base64')))).toBe(true);
        }
        // Nothing stays open after the session ends, and the correlator stayed within its bound.
        expect(session.openRequests).toBe(0);
      }),
      { numRuns: 300 },
    );
  });

  it('random JSON-RPC conversations: every request is answered or reported pending, once (an evicted one: evicted, then perhaps its late answer)', () => {
    const step = fc.record({ dir: fc.constantFrom('c2s' as const, 's2c' as const), kind: fc.constantFrom('request', 'response', 'notification', 'garbage'), id: fc.integer({ min: 0, max: 5 }) });
    fc.assert(
      // Up to 12 requests are open at once: a bound of 4 lets one go at a time, one of 10 two at once (keeping 9).
      fc.property(fc.array(step, { maxLength: 40 }), fc.constantFrom(4, 10), (steps, maxPending) => {
        const sink = new ArraySink();
        const session = new McpSession({ sink, stdio: true, maxPending });
        steps.forEach((s, i) => {
          const json =
            s.kind === 'request'
              ? { jsonrpc: '2.0', id: s.id, method: 'tools/call', params: { name: 't', arguments: {} } }
              : s.kind === 'response'
                ? { jsonrpc: '2.0', id: s.id, result: {} }
                : s.kind === 'notification'
                  ? { jsonrpc: '2.0', method: 'notifications/progress', params: { progressToken: s.id, progress: 1 } }
                  : undefined;
          const text = json ? JSON.stringify(json) : `garbage ${i}`;
          session.observe({ dir: s.dir, bytes: Buffer.from(text), size: text.length, truncated: false, time: i, mono: i });
        });
        session.end(1000, 1000);
        const requests = sink.records.map((r, seq) => ({ r, seq })).filter(({ r }) => r.kind === 'request');
        for (const { seq } of requests) {
          const closers = sink.records.flatMap((r): RecordDraft[] => {
            if (r.kind === 'evicted') return r.requests.filter((e) => e.requestSeq === seq).map(() => r);
            return (r.kind === 'response' || r.kind === 'pending') && r.requestSeq === seq ? [r] : [];
          });
          if (closers.length === 2) {
            expect(closers[0]).toMatchObject({ kind: 'evicted' });
            expect(closers[1]).toMatchObject({ kind: 'response', afterPending: true });
          } else expect(closers.length).toBe(1);
        }
      }),
      { numRuns: 500 },
    );
  });
});
