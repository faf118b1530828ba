/**
 * Property tests for HTTP body capture and decoding of the copy: random bodies in random chunks, compressed or
 * not, or garbage claiming to be compressed. The capture keeps exactly the head and counts every byte; a
 * decoder gives back exactly what was compressed, or reports one error and never throws.
 */
import { brotliCompressSync, deflateRawSync, deflateSync, gzipSync } from 'node:zlib';
import fc from 'fast-check';
import { describe, expect, it } from 'vitest';
import { BodyCapture, createBodyDecoder, type ContentCoding } from '../../src/framing/body.js';
import { cutPoints, split } from '../support/chunks.js';

const cuts = cutPoints(12);
const bytes = fc.uint8Array({ maxLength: 3000 }).map((a) => Buffer.from(a));

describe('BodyCapture', () => {
  it('keeps exactly the first maxBytes, counts every byte, whatever the chunking', () => {
    fc.assert(
      fc.property(bytes, cuts, fc.integer({ min: 0, max: 2000 }), (data, at, max) => {
        const capture = new BodyCapture(max);
        for (const c of split(data, at)) capture.push(c);
        expect(capture.bytes).toBe(data.length);
        expect(capture.head().equals(data.subarray(0, max))).toBe(true);
        const result = capture.result();
        expect(result.bytes).toBe(data.length);
        expect(Boolean(result.truncated)).toBe(data.length > max);
        if (data.length > max) expect(capture.tail()!.equals(data.subarray(Math.max(0, data.length - 256)))).toBe(true);
      }),
      { numRuns: 500 },
    );
  });
});

function decode(coding: ContentCoding, chunks: Buffer[]): Promise<{ out: Buffer; errors: number }> {
  return new Promise((resolve) => {
    const out: Buffer[] = [];
    let errors = 0;
    let settled = false;
    const done = () => {
      if (settled) return;
      settled = true;
      resolve({ out: Buffer.concat(out), errors });
    };
    const decoder = createBodyDecoder(
      coding,
      (c) => out.push(c),
      done,
      () => {
        errors++;
        setImmediate(done);
      },
    );
    for (const c of chunks) decoder.push(c);
    decoder.end();
  });
}

const compress: Record<string, (b: Buffer) => Buffer> = {
  gzip: gzipSync,
  deflate: deflateSync,
  'deflate-raw': deflateRawSync,
  br: brotliCompressSync,
};

describe('createBodyDecoder', () => {
  it('decodes gzip, deflate (zlib and raw) and br back to the original, in any chunking', async () => {
    await fc.assert(
      fc.asyncProperty(bytes, cuts, fc.constantFrom('gzip', 'deflate', 'deflate-raw', 'br'), async (data, at, kind) => {
        const coding = (kind === 'deflate-raw' ? 'deflate' : kind) as ContentCoding;
        const { out, errors } = await decode(coding, split(compress[kind]!(data), at));
        expect(errors).toBe(0);
        expect(out.equals(data)).toBe(true);
      }),
      { numRuns: 200 },
    );
  });

  it('garbage that claims to be compressed: at most one error, no throw, and it ends', async () => {
    await fc.assert(
      fc.asyncProperty(bytes, cuts, fc.constantFrom<ContentCoding>('gzip', 'deflate', 'br'), async (data, at, coding) => {
        const { errors } = await decode(coding, split(data, at));
        expect(errors).toBeLessThanOrEqual(1);
      }),
      { numRuns: 200 },
    );
  });
});
