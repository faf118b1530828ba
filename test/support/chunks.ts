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
