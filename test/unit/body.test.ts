import { describe, expect, it } from 'vitest';
import zlib from 'node:zlib';
import { BodyCapture, contentCoding, createBodyDecoder, trimPartialUtf8, type ContentCoding } from '../../src/framing/body.js';

/** Decode `bytes` fed in the given pieces; resolves with the output and any error. */
function decode(coding: ContentCoding, pieces: Buffer[]): Promise<{ out: Buffer; error?: string }> {
  return new Promise((resolve) => {
    const out: Buffer[] = [];
    let error: string | undefined;
    const decoder = createBodyDecoder(
      coding,
      (chunk) => out.push(chunk),
      () => resolve({ out: Buffer.concat(out), ...(error ? { error } : {}) }),
      (e) => (error = e.message),
    );
    for (const piece of pieces) decoder.push(piece);
    decoder.end();
  });
}

const text = Buffer.from(`data: {"jsonrpc":"2.0","id":1,"result":{"text":"上海当前的天气是晴天"}}\n\n`.repeat(3));

describe('BodyCapture', () => {
  it('keeps the whole body under the cap', () => {
    const c = new BodyCapture(100);
    c.push(Buffer.from('{"a":'));
    c.push(Buffer.from('1}'));
    expect(c.result()).toEqual({ body: '{"a":1}', bytes: 7 });
  });

  it('keeps the head over the cap, counts everything, and does not cut a character in half', () => {
    const c = new BodyCapture(8);
    c.push(Buffer.from('abcdefg上海'));
    expect(c.result()).toEqual({ body: 'abcdefg', bytes: 13, truncated: true });
    expect(trimPartialUtf8(Buffer.from('ab上').subarray(0, 4)).toString()).toBe('ab');
    expect(trimPartialUtf8(Buffer.from('ab上')).toString()).toBe('ab上');
  });

  it('keeps the last 256 bytes of a body over the cap', () => {
    const c = new BodyCapture(10);
    expect(c.tail()).toBeUndefined();
    c.push(Buffer.from('0123456789abcdef'));
    c.push(Buffer.from('Z'.repeat(300)));
    c.push(Buffer.from('"id":9}'));
    expect(c.tail()!.toString()).toBe(('Z'.repeat(300) + '"id":9}').slice(-256));
    const small = new BodyCapture(10);
    small.push(Buffer.from('0123456789'));
    expect(small.tail()).toBeUndefined();
  });

  it('logs binary bodies as base64, and an empty body as nothing', () => {
    const c = new BodyCapture(100);
    c.push(Buffer.from([0xff, 0x00, 0xfe]));
    expect(c.result()).toEqual({ body: '/wD+', bodyEncoding: 'base64', bytes: 3 });
    expect(new BodyCapture(100).result()).toEqual({ bytes: 0 });
    const zero = new BodyCapture(0);
    zero.push(Buffer.from('abc'));
    expect(zero.result()).toEqual({ bytes: 3, truncated: true });
  });
});

describe('content codings', () => {
  it('names the codings mcptap decodes', () => {
    expect(contentCoding(undefined)).toBe('identity');
    expect(contentCoding('GZIP')).toBe('gzip');
    expect(contentCoding('x-gzip')).toBe('gzip');
    expect(contentCoding('br')).toBe('br');
    expect(contentCoding('deflate')).toBe('deflate');
    expect(contentCoding('zstd')).toBeUndefined();
    expect(contentCoding('gzip, br')).toBeUndefined();
  });

  it.each([
    ['gzip', zlib.gzipSync(text)],
    ['br', zlib.brotliCompressSync(text)],
    ['deflate', zlib.deflateSync(text)],
    ['deflate', zlib.deflateRawSync(text)],
  ] as [ContentCoding, Buffer][])('decodes %s whatever the chunking', async (coding, compressed) => {
    expect((await decode(coding, [compressed])).out.equals(text)).toBe(true);
    for (let i = 1; i < compressed.length; i += 7) {
      const { out, error } = await decode(coding, [compressed.subarray(0, i), compressed.subarray(i)]);
      expect(error, `split at ${i}`).toBeUndefined();
      expect(out.equals(text), `split at ${i}`).toBe(true);
    }
  });

  it('hands out what a still-open compressed stream has so far', async () => {
    const gz = zlib.createGzip();
    const parts: Buffer[] = [];
    gz.on('data', (c: Buffer) => parts.push(c));
    gz.write('data: first\n\n');
    await new Promise<void>((r) => gz.flush(() => r()));
    const early: Buffer[] = [];
    const decoder = createBodyDecoder('gzip', (c) => early.push(c), () => {}, () => {});
    decoder.push(Buffer.concat(parts));
    // zlib answers from its thread pool: wait for the output (the stream itself is never ended here).
    for (let i = 0; i < 100 && early.length === 0; i++) await new Promise((r) => setTimeout(r, 10));
    expect(Buffer.concat(early).toString()).toBe('data: first\n\n');
  });

  it('reports a body that is not what its header says, once, and still ends', async () => {
    const { out, error } = await decode('gzip', [Buffer.from('this is not gzip at all')]);
    expect(out.length).toBe(0);
    expect(error).toBeDefined();
  });
});
