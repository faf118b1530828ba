/**
 * Property tests for the SSE framer: random bytes in random chunks never throw and give the same items however
 * they are cut; random well-formed streams (any line ending, comments, multi-line data) come back event for event.
 */
import fc from 'fast-check';
import { describe, expect, it } from 'vitest';
import { SseFramer, type SseItem } from '../../src/framing/sse.js';
import { cutPoints, split } from '../support/chunks.js';

const cuts = cutPoints(16);

function parse(chunks: Buffer[], maxEventBytes = 1 << 20): SseItem[] {
  const framer = new SseFramer({ maxEventBytes });
  const items: SseItem[] = [];
  for (const c of chunks) items.push(...framer.push(c));
  items.push(...framer.end());
  return items;
}

const byte = fc.oneof({ weight: 5, arbitrary: fc.integer({ min: 0, max: 255 }) }, { weight: 3, arbitrary: fc.constantFrom(0x0a, 0x0d, 0x3a, 0x20, 0xef, 0xbb, 0xbf) });
const words = fc.constantFrom('data', 'id', 'event', 'retry', '', ' ', ':', 'data:', 'id:', '\n', '\r\n', '\r', '\n\n', '123', 'x');
const streamish = fc.oneof(
  fc.array(byte, { maxLength: 500 }).map((a) => Buffer.from(a)),
  fc.array(words, { maxLength: 80 }).map((w) => Buffer.from(w.join(''))),
);

describe('SseFramer under random bytes', () => {
  it('never throws, and the chunking does not change what comes out', () => {
    fc.assert(
      fc.property(streamish, cuts, fc.integer({ min: 1, max: 64 }), (data, at, cap) => {
        const whole = parse([data], cap);
        const pieces = parse(split(data, at), cap);
        expect(pieces).toEqual(whole);
      }),
      { numRuns: 1000 },
    );
  });
});

describe('SseFramer on random well-formed streams', () => {
  // Field text: no line breaks, no leading BOM, no NUL (an id with NUL is ignored by the spec).
  const text = fc.string({ unit: 'grapheme', maxLength: 20 }).filter((s) => !/[\r\n\0\uFEFF]/.test(s));
  const event = fc.record({
    comment: fc.option(text, { nil: undefined }),
    event: fc.option(text.filter((s) => s.length > 0), { nil: undefined }),
    id: fc.option(text, { nil: undefined }),
    data: fc.array(text, { minLength: 1, maxLength: 4 }),
  });

  it('comes back event for event, with any line ending, in any chunks', () => {
    fc.assert(
      fc.property(fc.array(event, { minLength: 1, maxLength: 8 }), fc.constantFrom('\n', '\r\n', '\r'), cuts, (events, eol, at) => {
        let wire = '';
        const expected: unknown[] = [];
        for (const e of events) {
          if (e.comment !== undefined) {
            wire += `: ${e.comment}${eol}`;
            expected.push({ type: 'comment', text: e.comment });
          }
          if (e.event !== undefined) wire += `event: ${e.event}${eol}`;
          if (e.id !== undefined) wire += `id: ${e.id}${eol}`;
          for (const line of e.data) wire += `data: ${line}${eol}`;
          wire += eol;
          expected.push({ type: 'event', ...(e.event !== undefined ? { event: e.event } : {}), ...(e.id !== undefined ? { id: e.id } : {}), data: e.data.join('\n') });
        }
        const items = parse(split(Buffer.from(wire), at)).map((item) =>
          item.type === 'comment'
            ? { type: 'comment', text: item.text }
            : { type: 'event', ...(item.event !== undefined ? { event: item.event } : {}), ...(item.id !== undefined ? { id: item.id } : {}), ...(item.data !== undefined ? { data: item.data } : {}) },
        );
        expect(items).toEqual(expected);
      }),
      { numRuns: 500 },
    );
  });
});
