/**
 * The channel's ring: shared memory the tap copies each chunk into and the inspection thread reads it from. It
 * is the backlog's bound. A copy that does not fit beside the bytes the thread has not yet released is refused,
 * and so is one that would give a single subject (an HTTP exchange) more than its share of the ring.
 */

/**
 * The ring's writing end. Copies are read and released by the thread in the order they were written, so the
 * bytes in use are the `used` bytes before `at`; once the thread has released them all, writing starts again
 * at the ring's start, so only as much of the ring is ever touched as the largest backlog needed.
 */
export class RingWriter {
  private readonly bytes: Buffer;
  private at = 0;
  /** Bytes written and released, each mod 2^32 (the thread counts releases in SLOT.taken). */
  private written = 0;
  private releasedSeen = 0;
  /** What each subject holds, when a subject's share is bounded. */
  private readonly shares: SubjectShares | undefined;

  /** `maxSubjectBytes`: the most one subject may hold at once (by default the whole ring). */
  constructor(
    readonly ring: SharedArrayBuffer,
    private readonly released: () => number,
    maxSubjectBytes = Infinity,
  ) {
    this.bytes = Buffer.from(ring);
    if (maxSubjectBytes < ring.byteLength) this.shares = new SubjectShares(maxSubjectBytes);
  }

  /** Bytes written and not yet released, as of the thread's count last read (never less than there are). */
  private get used(): number {
    return (this.written - this.releasedSeen) >>> 0;
  }

  /** Look at the thread's count again (once a batch, and when a copy seems not to fit). */
  refresh(): void {
    const released = this.released();
    this.shares?.release((released - this.releasedSeen) >>> 0);
    this.releasedSeen = released;
  }

  /**
   * Copy `chunk` in for `subject`; where it starts, or -1 (nothing written) when it does not fit beside the
   * bytes in use, or beside what `subject` already holds.
   */
  write(chunk: Buffer, subject = 0): number {
    if (!this.fits(chunk.length, subject)) {
      this.refresh();
      if (!this.fits(chunk.length, subject)) return -1;
    }
    const size = this.bytes.length;
    if (this.used === 0) this.at = 0;
    const start = this.at;
    const first = Math.min(chunk.length, size - start);
    chunk.copy(this.bytes, start, 0, first);
    if (first < chunk.length) chunk.copy(this.bytes, 0, first);
    this.at = (start + chunk.length) % size;
    this.written = (this.written + chunk.length) | 0;
    this.shares?.add(subject, chunk.length);
    return start;
  }

  private fits(length: number, subject: number): boolean {
    return this.used + length <= this.bytes.length && (this.shares === undefined || this.shares.fits(subject, length));
  }
}

/**
 * The bytes each subject holds in the ring. The thread releases bytes in the order they were written, so the
 * runs of bytes not yet released, oldest first, each of one subject, say whose bytes a release gave back. A
 * stream's chunks come one after another, so a run is usually many copies.
 */
class SubjectShares {
  private readonly held = new Map<number, number>();
  /** Subject and length of each run not yet released, oldest from `head` on. */
  private runs: number[] = [];
  private head = 0;

  constructor(private readonly max: number) {}

  fits(subject: number, length: number): boolean {
    return (this.held.get(subject) ?? 0) + length <= this.max;
  }

  add(subject: number, length: number): void {
    this.held.set(subject, (this.held.get(subject) ?? 0) + length);
    const last = this.runs.length - 2;
    if (last >= this.head && this.runs[last] === subject) this.runs[last + 1]! += length;
    else this.runs.push(subject, length);
  }

  /** The thread released `bytes` more, the oldest. */
  release(bytes: number): void {
    const runs = this.runs;
    while (bytes > 0 && this.head < runs.length) {
      const subject = runs[this.head]!;
      const taken = Math.min(bytes, runs[this.head + 1]!);
      bytes -= taken;
      runs[this.head + 1]! -= taken;
      if (runs[this.head + 1] === 0) this.head += 2;
      const left = this.held.get(subject)! - taken;
      if (left === 0) this.held.delete(subject);
      else this.held.set(subject, left);
    }
    // The released front is dropped once it is most of the list, so the list stays as long as the backlog.
    if (this.head === runs.length) this.runs = [];
    else if (this.head < runs.length / 2) return;
    else this.runs = runs.slice(this.head);
    this.head = 0;
  }
}

/**
 * A chunk's bytes out of the ring, into a buffer of their own (they may wrap around its end); or, for an
 * inspector that keeps nothing of a chunk past its call (`lend`), a view of them where they lie in one piece:
 * the thread releases them only once the call is carried out.
 */
export function readRing(ring: Buffer, at: number, length: number, lend = false): Buffer {
  if (lend && at + length <= ring.length) return ring.subarray(at, at + length);
  const chunk = Buffer.allocUnsafe(length);
  const first = Math.min(length, ring.length - at);
  ring.copy(chunk, 0, at, at + first);
  if (first < length) ring.copy(chunk, first, 0, length - first);
  return chunk;
}
