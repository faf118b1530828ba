import { createHash } from 'node:crypto';
import fc from 'fast-check';
import { describe, expect, test } from 'vitest';
import { LineFramer, TAIL_BYTES, withoutCutCharacter } from '../../src/framing/lines.js';
import type { Frame } from '../../src/types.js';

const framer = (maxFrameBytes = 1024) => new LineFramer({ dir: 's2c', maxFrameBytes });
const sha = (b: Buffer | string) => createHash('sha256').update(b).digest('hex');

/** Feed chunks, then end; return every frame (the partial tail last). */
function run(chunks: Buffer[], maxFrameBytes = 1024): Frame[] {
  const f = framer(maxFrameBytes);
  const frames: Frame[] = [];
  chunks.forEach((c, i) => frames.push(...f.push(c, 1000 + i, i)));
  const tail = f.end(2000, 99);
  if (tail) frames.push(tail);
  return frames;
}
const texts = (frames: Frame[]) => frames.map((fr) => fr.bytes.toString('latin1'));

describe('LineFramer', () => {
  const input = Buffer.from('{"a":1}\r\n\nplain text\r\n{"b":"x\ry"}\npartial', 'latin1');
  const expected = ['{"a":1}', '', 'plain text', '{"b":"x\ry"}', 'partial'];

  test('one chunk', () => {
    const frames = run([input]);
    expect(texts(frames)).toEqual(expected);
    expect(frames.map((f) => f.crlf ?? false)).toEqual([true, false, true, false, false]);
    expect(frames.map((f) => f.partial ?? false)).toEqual([false, false, false, false, true]);
    expect(frames.map((f) => f.size)).toEqual(expected.map((e) => e.length));
    expect(frames.every((f) => f.dir === 's2c' && !f.truncated && f.sha256 === undefined)).toBe(true);
  });

  test('dropPartial() drops the unfinished line: the bytes that follow start a new one', () => {
    const f = framer();
    expect(texts(f.push(Buffer.from('{"a":1}\n{"half'), 1, 1))).toEqual(['{"a":1}']);
    // The rest of that line was left out of the copy (inspection fell behind), up to its newline.
    f.dropPartial();
    expect(f.hasPartial).toBe(false);
    expect(texts(f.push(Buffer.from('{"b":3}\n{"c"'), 3, 3))).toEqual(['{"b":3}']);
    expect(texts([f.end(4, 4)!])).toEqual(['{"c"']);
  });

  test('every split point into two chunks gives the same frames', () => {
    for (let i = 0; i <= input.length; i++) {
      const frames = run([input.subarray(0, i), input.subarray(i)]);
      expect(texts(frames), `split at ${i}`).toEqual(expected);
      expect(frames.map((f) => f.crlf ?? false), `split at ${i}`).toEqual([true, false, true, false, false]);
    }
  });

  test('every split point into three chunks, and one byte at a time', () => {
    for (let i = 0; i <= input.length; i++) {
      for (let j = i; j <= input.length; j += 3) {
        expect(texts(run([input.subarray(0, i), input.subarray(i, j), input.subarray(j)])), `split at ${i},${j}`).toEqual(expected);
      }
    }
    const bytes = [...input].map((b) => Buffer.from([b]));
    expect(texts(run(bytes))).toEqual(expected);
  });

  test('\\r\\n split across chunks is one CRLF line ending', () => {
    const frames = run([Buffer.from('abc\r'), Buffer.from('\ndef\n')]);
    expect(texts(frames)).toEqual(['abc', 'def']);
    expect(frames[0]!.crlf).toBe(true);
    expect(frames[1]!.crlf).toBeUndefined();
  });

  test('a lone \\r inside a line, also at a chunk boundary, stays in the line', () => {
    expect(texts(run([Buffer.from('a\rb\n')]))).toEqual(['a\rb']);
    const split = run([Buffer.from('a\r'), Buffer.from('b\n')]);
    expect(texts(split)).toEqual(['a\rb']);
    expect(split[0]!.size).toBe(3);
    expect(split[0]!.crlf).toBeUndefined();
    // Two \r before the \n: only the last belongs to the line ending.
    const two = run([Buffer.from('a\r'), Buffer.from('\r'), Buffer.from('\n')]);
    expect(texts(two)).toEqual(['a\r']);
    expect(two[0]!.crlf).toBe(true);
  });

  test('a trailing \\r at end of stream belongs to the partial line', () => {
    const frames = run([Buffer.from('x\n'), Buffer.from('tail\r')]);
    expect(texts(frames)).toEqual(['x', 'tail\r']);
    expect(frames[1]!.partial).toBe(true);
    expect(frames[1]!.crlf).toBeUndefined();
    expect(frames[1]!.size).toBe(5);
    // A lone \r as the whole rest of the stream is a partial line too.
    expect(texts(run([Buffer.from('\r')]))).toEqual(['\r']);
  });

  test('no partial frame when the stream ends on a newline; hasPartial tells', () => {
    const f = framer();
    expect(f.push(Buffer.from('a\nb'), 1, 1)).toHaveLength(1);
    expect(f.hasPartial).toBe(true);
    expect(f.push(Buffer.from('\n'), 2, 2)).toHaveLength(1);
    expect(f.hasPartial).toBe(false);
    expect(f.end(3, 3)).toBeUndefined();
    expect(framer().end(0, 0)).toBeUndefined();
  });

  test('empty lines are frames of size 0', () => {
    const frames = run([Buffer.from('\n\r\n\n')]);
    expect(frames.map((f) => f.size)).toEqual([0, 0, 0]);
    expect(frames.map((f) => f.crlf ?? false)).toEqual([false, true, false]);
  });

  test('a frame takes the time and mono of the chunk that completes it', () => {
    const f = framer();
    expect(f.push(Buffer.from('abc'), 10, 1.5)).toEqual([]);
    const [frame] = f.push(Buffer.from('def\n'), 20, 2.5);
    expect(frame).toMatchObject({ time: 20, mono: 2.5, size: 6 });
  });

  test('bytes that are not UTF-8 pass through the framer untouched', () => {
    const raw = Buffer.from([0xff, 0xfe, 0x00, 0xc3, 0x28, 0x0a]);
    const frames = run([raw.subarray(0, 4), raw.subarray(4)]);
    expect(frames).toHaveLength(1);
    expect(frames[0]!.bytes.equals(raw.subarray(0, 5))).toBe(true);
  });

  describe('the cap', () => {
    test('a line at exactly the cap is kept whole', () => {
      const [frame] = run([Buffer.from(`${'a'.repeat(16)}\n`)], 16);
      expect(frame).toMatchObject({ size: 16, truncated: false });
      expect(frame!.sha256).toBeUndefined();
    });

    test('a longer line keeps its head, its full size, its tail and the sha256 of the whole line', () => {
      const line = Buffer.from(Array.from({ length: 5000 }, (_, i) => String.fromCharCode(65 + (i % 26))).join(''));
      for (const chunkSize of [1, 7, 16, 17, 300, 5000, 5001]) {
        const data = Buffer.concat([line, Buffer.from('\r\nnext\n')]);
        const chunks: Buffer[] = [];
        for (let i = 0; i < data.length; i += chunkSize) chunks.push(data.subarray(i, i + chunkSize));
        const frames = run(chunks, 16);
        expect(frames, `chunk ${chunkSize}`).toHaveLength(2);
        const big = frames[0]!;
        expect(big.truncated).toBe(true);
        expect(big.size).toBe(5000);
        expect(big.bytes.equals(line.subarray(0, 16))).toBe(true);
        expect(big.sha256).toBe(sha(line));
        expect(big.crlf).toBe(true);
        expect(big.tail!.equals(line.subarray(5000 - TAIL_BYTES))).toBe(true);
        expect(frames[1]).toMatchObject({ size: 4, truncated: false });
        expect(frames[1]!.tail).toBeUndefined();
      }
    });

    test('a line just over the cap: the tail overlaps the head', () => {
      const [frame] = run([Buffer.from('0123456789ABCDEFG\n')], 16);
      expect(frame!.truncated).toBe(true);
      expect(frame!.bytes.toString()).toBe('0123456789ABCDEF');
      expect(frame!.tail!.toString()).toBe('0123456789ABCDEFG');
      expect(frame!.sha256).toBe(sha('0123456789ABCDEFG'));
    });

    test('a lone \\r held across a chunk boundary is hashed as part of the long line', () => {
      const frames = run([Buffer.from('x'.repeat(20) + '\r'), Buffer.from('y'.repeat(20) + '\n')], 8);
      expect(frames[0]!.sha256).toBe(sha('x'.repeat(20) + '\r' + 'y'.repeat(20)));
      expect(frames[0]!.size).toBe(41);
    });

    test('a truncated partial last line', () => {
      const frames = run([Buffer.from('z'.repeat(100))], 10);
      expect(frames[0]).toMatchObject({ partial: true, truncated: true, size: 100 });
      expect(frames[0]!.sha256).toBe(sha('z'.repeat(100)));
    });

    test('a cap of 0 keeps nothing but still counts and hashes', () => {
      const [frame] = run([Buffer.from('hello\n')], 0);
      expect(frame).toMatchObject({ size: 5, truncated: true });
      expect(frame!.bytes.length).toBe(0);
      expect(frame!.sha256).toBe(sha('hello'));
    });

    test('state resets after a truncated line', () => {
      const frames = run([Buffer.from(`${'q'.repeat(50)}\nshort\n${'r'.repeat(30)}\n`)], 10);
      expect(frames.map((f) => [f.size, f.truncated])).toEqual([
        [50, true],
        [5, false],
        [30, true],
      ]);
      expect(frames[2]!.sha256).toBe(sha('r'.repeat(30)));
      expect(frames[2]!.tail!.toString()).toBe('r'.repeat(30));
    });
  });

  test('withoutCutCharacter drops only an incomplete UTF-8 sequence at the end', () => {
    const euro = Buffer.from('€'); // e2 82 ac
    const emoji = Buffer.from('😀'); // f0 9f 98 80
    const cases: [Buffer, string][] = [
      [Buffer.from('abc'), 'abc'],
      [Buffer.concat([Buffer.from('a'), euro]), 'a€'],
      [Buffer.concat([Buffer.from('a'), euro.subarray(0, 1)]), 'a'],
      [Buffer.concat([Buffer.from('a'), euro.subarray(0, 2)]), 'a'],
      [Buffer.concat([Buffer.from('a'), emoji.subarray(0, 3)]), 'a'],
      [Buffer.concat([Buffer.from('a'), emoji]), 'a😀'],
      [Buffer.alloc(0), ''],
    ];
    for (const [input, expected] of cases) expect(withoutCutCharacter(input).toString('utf8'), input.toString('hex')).toBe(expected);
    // Bytes that are not UTF-8 at all are left alone (the caller logs them as base64).
    const binary = Buffer.from([0x41, 0xff, 0xfe]);
    expect(withoutCutCharacter(binary)).toEqual(binary);
    const lone = Buffer.from([0x41, 0x80, 0x80, 0x80, 0x80]);
    expect(withoutCutCharacter(lone)).toEqual(lone);
  });
});

describe('LineFramer properties (fast-check)', () => {
  test('any bytes, any chunking: the same frames as one push, and the frames rebuild the input', () => {
    const byte = fc.oneof(fc.constantFrom(0x0a, 0x0d, 0x7b, 0x22), fc.integer({ min: 0, max: 255 }));
    fc.assert(
      fc.property(fc.array(byte, { maxLength: 200 }), fc.array(fc.integer({ min: 0, max: 200 }), { maxLength: 6 }), fc.integer({ min: 0, max: 40 }), (bytes, cuts, cap) => {
        const input = Buffer.from(bytes);
        const points = [...new Set(cuts.map((c) => Math.min(c, input.length)))].sort((a, b) => a - b);
        const chunks: Buffer[] = [];
        let last = 0;
        for (const p of points) {
          chunks.push(input.subarray(last, p));
          last = p;
        }
        chunks.push(input.subarray(last));
        const whole = run([input], cap);
        const split = run(chunks, cap);
        const view = (frames: Frame[]) => frames.map((f) => [f.bytes.toString('hex'), f.size, f.truncated, f.sha256, f.crlf, f.partial, f.tail?.toString('hex')]);
        expect(view(split)).toEqual(view(whole));
        // Untruncated frames, with their terminators, are exactly the input.
        if (whole.every((f) => !f.truncated)) {
          const rebuilt = Buffer.concat(whole.map((f) => Buffer.concat([f.bytes, Buffer.from(f.partial ? '' : f.crlf ? '\r\n' : '\n')])));
          expect(rebuilt.equals(input)).toBe(true);
        }
        for (const f of whole) {
          expect(f.bytes.length).toBe(Math.min(f.size, cap));
          expect(f.truncated).toBe(f.size > cap);
        }
      }),
      { numRuns: 500 },
    );
  });

  test('borrowed chunks: frames read before the next push are the same, though each chunk is overwritten after its push', () => {
    // As the inspection thread reads the channel's ring: every chunk lies in one buffer that the next chunk
    // overwrites, so whatever the framer kept of it without copying would read back as later bytes.
    const line = fc.tuple(fc.integer({ min: 0, max: 200_000 }), fc.constantFrom('\n', '\r\n', '\r', ''), fc.integer({ min: 0, max: 25 })).map(([n, end, c]) => String.fromCharCode(97 + c).repeat(n % 7 === 0 ? n : n % 300) + end);
    fc.assert(
      fc.property(fc.array(line, { maxLength: 12 }), fc.array(fc.integer({ min: 1, max: 90_000 }), { minLength: 1, maxLength: 8 }), fc.constantFrom(1024, 1024 * 1024), (lines, sizes, cap) => {
        const input = Buffer.from(lines.join(''), 'latin1');
        const ring = Buffer.alloc(90_000);
        const lent = new LineFramer({ dir: 's2c', maxFrameBytes: cap, borrowed: true });
        const seen: unknown[] = [];
        const view = (f: Frame) => [f.bytes.toString('latin1'), f.size, f.truncated, f.sha256, f.crlf, f.partial, f.tail?.toString('hex')];
        for (let at = 0, i = 0; at < input.length; i++) {
          const n = Math.min(sizes[i % sizes.length]!, input.length - at);
          input.copy(ring, 0, at, at + n);
          seen.push(...lent.push(ring.subarray(0, n), i, i).map(view));
          ring.fill(0x2a);
          at += n;
        }
        const tail = lent.end(0, 0);
        if (tail) seen.push(view(tail));
        expect(seen).toEqual(run([input], cap).map(view));
      }),
      { numRuns: 200 },
    );
  });
});
