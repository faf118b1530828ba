/**
 * LineCap (on the thread that sees the traffic) plus a LineFramer told so (on the inspection thread) must give
 * exactly the frames a LineFramer alone gives for the same bytes: same heads, sizes, sha256, tails, CRLF and
 * partial flags, however the stream is cut. Only the bytes copied between them differ: at most cap + 1 per line.
 */
import { createHash } from 'node:crypto';
import fc from 'fast-check';
import { describe, expect, it } from 'vitest';
import { LineCap } from '../../src/framing/line-cap.js';
import { LineFramer } from '../../src/framing/lines.js';
import type { Frame } from '../../src/types.js';
import { cutIntoLengths } from '../support/chunks.js';

const view = (f: Frame) => ({ ...f, bytes: f.bytes.toString('latin1'), tail: f.tail?.toString('latin1') });

function alone(chunks: Buffer[], cap: number): Frame[] {
  const framer = new LineFramer({ dir: 's2c', maxFrameBytes: cap });
  const frames = chunks.flatMap((c, i) => framer.push(c, i, i));
  const tail = framer.end(99, 99);
  return tail ? [...frames, tail] : frames;
}

function split(chunks: Buffer[], cap: number): { frames: Frame[]; copied: number } {
  const lineCap = new LineCap(cap);
  const framer = new LineFramer({ dir: 's2c', maxFrameBytes: cap, overlongByCaller: true });
  const frames: Frame[] = [];
  let copied = 0;
  chunks.forEach((chunk, i) => {
    for (const piece of lineCap.cut(chunk)) {
      if ('copy' in piece) {
        copied += piece.copy.length;
        frames.push(...framer.push(piece.copy, i, i));
      } else frames.push(framer.endOverlong(piece.end, i, i));
    }
  });
  const end = lineCap.end();
  if (end) frames.push(framer.endOverlong(end, 99, 99));
  else {
    const tail = framer.end(99, 99);
    if (tail) frames.push(tail);
  }
  return { frames, copied };
}

const byte = fc.oneof({ weight: 4, arbitrary: fc.integer({ min: 0x20, max: 0x7e }) }, { weight: 2, arbitrary: fc.constantFrom(0x0a, 0x0d) });

describe('LineCap', () => {
  it('gives the frames LineFramer alone gives, however the stream is cut (random bytes, small caps)', () => {
    fc.assert(
      fc.property(fc.array(byte, { maxLength: 300 }), fc.array(fc.integer({ min: 1, max: 40 }), { maxLength: 30 }), fc.integer({ min: 0, max: 12 }), (bytes, cuts, cap) => {
        const chunks = cutIntoLengths(Buffer.from(bytes), cuts);
        expect(split(chunks, cap).frames.map(view)).toEqual(alone(chunks, cap).map(view));
      }),
      { numRuns: 3000 },
    );
  });

  it('copies a chunk whose lines all fit as it is, and still cuts a line that outgrows the cap in a later chunk', () => {
    const lineCap = new LineCap(100);
    const first = Buffer.from(`${'a'.repeat(60)}\n${'b'.repeat(30)}`);
    expect(lineCap.cut(first)).toEqual([{ copy: first }]);
    // The `b` line had 30 bytes: 71 more bring it to cap + 1 = 101, the 72nd takes it over, so those 71 are copied.
    const pieces = lineCap.cut(Buffer.from(`${'b'.repeat(80)}\nc\n`));
    expect(pieces).toHaveLength(3);
    expect((pieces[0] as { copy: Buffer }).copy.toString()).toBe('b'.repeat(71));
    expect((pieces[1] as { end: { size: number } }).end.size).toBe(110);
    expect((pieces[2] as { copy: Buffer }).copy.toString()).toBe('c\n');
  });

  it('copies only the head of an over-long line and hashes the rest: a 5 MB line costs 1 KiB + 1 of copies', () => {
    const line = Buffer.concat([Buffer.from('{"jsonrpc":"2.0","id":1,"result":"'), Buffer.alloc(5 * 1024 * 1024, 0x61), Buffer.from('"}\r\n')]);
    const chunks = Array.from({ length: Math.ceil(line.length / 65536) }, (_, i) => line.subarray(i * 65536, (i + 1) * 65536));
    const { frames, copied } = split(chunks, 1024);
    expect(copied).toBe(1025);
    const content = line.subarray(0, line.length - 2);
    expect(frames).toHaveLength(1);
    expect(frames[0]).toMatchObject({ size: content.length, truncated: true, crlf: true, sha256: createHash('sha256').update(content).digest('hex') });
    expect(frames[0]!.bytes.equals(content.subarray(0, 1024))).toBe(true);
    expect(frames[0]!.tail!.equals(content.subarray(content.length - 256))).toBe(true);
  });
});
