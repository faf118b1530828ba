// The channel's ring (inspect/channel.ts): copies written in order, read back byte for byte wherever they fall,
// refused when they do not fit beside the bytes not yet released or beside their subject's share, and written
// from the start once all are released.
import { describe, expect, it } from 'vitest';
import { RingWriter, readRing } from '../../src/inspect/ring.js';

function ring(size: number, maxSubjectBytes?: number): { writer: RingWriter; bytes: Buffer; release: (n: number) => void } {
  const shared = new SharedArrayBuffer(size);
  let released = 0;
  const writer = new RingWriter(shared, () => released, maxSubjectBytes);
  return { writer, bytes: Buffer.from(shared), release: (n) => void (released = (released + n) | 0) };
}

describe('the channel ring', () => {
  it('reads back a copy that wraps around the end, and refuses one that does not fit', () => {
    const { writer, bytes, release } = ring(10);
    expect(writer.write(Buffer.from('abcdef'))).toBe(0);
    expect(writer.write(Buffer.from('gh'))).toBe(6);
    // 8 of 10 bytes in use: 3 more do not fit until the first copy is released.
    expect(writer.write(Buffer.from('ijk'))).toBe(-1);
    release(6);
    const at = writer.write(Buffer.from('ijklm'));
    expect(at).toBe(8);
    expect(readRing(bytes, at, 5).toString()).toBe('ijklm');
    expect(readRing(bytes, 6, 2).toString()).toBe('gh');
  });

  it('lends a copy that lies in one piece as a view of the ring, and copies one that wraps', () => {
    const { writer, bytes, release } = ring(10);
    writer.write(Buffer.from('abcdef'));
    release(6);
    writer.write(Buffer.from('gh'));
    const at = writer.write(Buffer.from('ijklm'));
    const lent = readRing(bytes, 6, 2, true);
    expect(lent.buffer).toBe(bytes.buffer);
    expect(lent.toString()).toBe('gh');
    const wrapped = readRing(bytes, at, 5, true);
    expect(wrapped.buffer).not.toBe(bytes.buffer);
    expect(wrapped.toString()).toBe('ijklm');
    expect(readRing(bytes, 6, 2).buffer).not.toBe(bytes.buffer);
  });

  it('starts again at the beginning once every copy is released, so a small backlog touches little of it', () => {
    const { writer, release } = ring(100);
    expect(writer.write(Buffer.alloc(30))).toBe(0);
    release(30);
    writer.refresh();
    expect(writer.write(Buffer.alloc(30))).toBe(0);
    expect(writer.write(Buffer.alloc(30))).toBe(30);
  });

  it('refuses a copy larger than the ring, and takes one exactly its size', () => {
    const { writer } = ring(8);
    expect(writer.write(Buffer.alloc(9))).toBe(-1);
    expect(writer.write(Buffer.alloc(8))).toBe(0);
    expect(writer.write(Buffer.alloc(1))).toBe(-1);
  });

  it("refuses a copy past its subject's share while other subjects still fit, and gives the share back as copies are released", () => {
    const { writer, release } = ring(100, 10);
    expect(writer.write(Buffer.alloc(5), 1)).toBe(0);
    expect(writer.write(Buffer.alloc(5), 2)).toBe(5);
    expect(writer.write(Buffer.alloc(5), 1)).toBe(10);
    // Subject 1 holds its 10 bytes: one more is refused, though the ring has room; subject 2 still fits.
    expect(writer.write(Buffer.alloc(1), 1)).toBe(-1);
    expect(writer.write(Buffer.alloc(5), 2)).toBe(15);
    // The thread releases the oldest copies first: 5 of subject 1's bytes, then 5 of subject 2's.
    release(5);
    expect(writer.write(Buffer.alloc(5), 1)).toBe(20);
    expect(writer.write(Buffer.alloc(1), 2)).toBe(-1);
    release(5);
    expect(writer.write(Buffer.alloc(5), 2)).toBe(25);
    expect(writer.write(Buffer.alloc(1), 1)).toBe(-1);
  });

  it('gives a share back copy by copy when one subject wrote several in a row', () => {
    const { writer, release } = ring(100, 10);
    for (let i = 0; i < 5; i++) expect(writer.write(Buffer.alloc(2), 1)).toBe(2 * i);
    expect(writer.write(Buffer.alloc(1), 1)).toBe(-1);
    release(2);
    expect(writer.write(Buffer.alloc(2), 1)).toBe(10);
    expect(writer.write(Buffer.alloc(1), 1)).toBe(-1);
    release(6);
    expect(writer.write(Buffer.alloc(6), 1)).toBe(12);
  });
});
