/**
 * Random chunkings for property tests: the same bytes cut at random points, as a socket or pipe may deliver them.
 */
import fc from 'fast-check';

/** Cut `data` at the given fractions (sorted, deduplicated), giving 1 + n chunks (some may be empty). */
export function split(data: Buffer, cuts: number[]): Buffer[] {
  const points = [...new Set(cuts.map((c) => Math.floor(c * data.length)))].sort((a, b) => a - b);
  const chunks: Buffer[] = [];
  let at = 0;
  for (const p of points) {
    chunks.push(data.subarray(at, p));
    at = p;
  }
  chunks.push(data.subarray(at));
  return chunks;
}

/** Up to `maxLength` cut points, as fractions of the data's length. */
export function cutPoints(maxLength = 12): fc.Arbitrary<number[]> {
  return fc.array(fc.double({ min: 0, max: 1, noNaN: true }), { maxLength });
}

/**
 * Cut `whole` into pieces of the given lengths, one after another, and the rest as a last piece (no empty pieces,
 * nothing lost): the pieces a stream of bytes or of streamed text might arrive in.
 */
export function cutIntoLengths<T extends Buffer | string>(whole: T, lengths: readonly number[]): T[] {
  const piece = (from: number, to?: number): T => (typeof whole === 'string' ? whole.slice(from, to) : whole.subarray(from, to)) as T;
  const pieces: T[] = [];
  let at = 0;
  for (const n of lengths) {
    if (at >= whole.length) break;
    pieces.push(piece(at, at + n));
    at += n;
  }
  if (at < whole.length) pieces.push(piece(at));
  return pieces;
}
