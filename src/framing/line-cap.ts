/**
 * The main thread's part of framing a line longer than the log keeps (--max-body): it copies only the line's
 * head to the inspection thread and hashes the rest itself, so a 100 MB tool result costs the thread neither
 * 100 MB of copies nor, when the machine is busy, its record.
 *
 * Pure and synchronous: `cut(chunk)` says which bytes of the chunk to copy and where an over-long line ended,
 * with the size, sha256, tail and CRLF flag the LineFramer would have found (the framer, told with endOverlong,
 * uses them instead of hashing). A line is copied whole while it has at most cap + 1 bytes before its `\n`;
 * only a line known to be over the cap (cap + 2 bytes or more, so its head holds no line-ending `\r`) is cut.
 */
import { createHash, type Hash } from 'node:crypto';
import { NO_BYTES, TAIL_BYTES } from './lines.js';

const LF = 0x0a;
const CR = 0x0d;

/** How an over-long line ended, as its frame will say. */
export interface OverlongEnd {
  /** Bytes of the line, its terminator excluded (a trailing `\r` before `\n` is part of the terminator). */
  size: number;
  sha256: string;
  /** Its last TAIL_BYTES bytes. */
  tail: Buffer;
  crlf: boolean;
  /** The stream ended before the line's `\n`. */
  partial?: boolean;
}

/** What to do with the bytes of a chunk, in order. */
export type CapPiece = { copy: Buffer } | { end: OverlongEnd };

export class LineCap {
  /** Bytes of the current line so far (its `\n` excluded). */
  private lineBytes = 0;
  /** The current line's bytes while it may still fit (at most cap + 1 of them): hashed if it outgrows that. */
  private head: Buffer[] = [];
  /** Set once the current line is known to be over the cap. */
  private hash: Hash | undefined;
  private tail: Buffer = NO_BYTES;
  /** A `\r` that ended the last piece of an over-long line: content, or the start of its `\r\n`. */
  private heldCr = false;
  /** The over-long line ended with `\r\n`. */
  private crlf = false;

  constructor(private readonly cap: number) {}

  cut(chunk: Buffer): CapPiece[] {
    if (!this.hash && chunk.length > 0 && this.lineBytes + chunk.length <= this.cap + 1) return this.copyWhole(chunk);
    const pieces: CapPiece[] = [];
    let pos = 0;
    /** Start of the bytes being copied, or -1 while an over-long line's bytes are hashed instead. */
    let copyFrom = this.hash ? -1 : 0;
    while (pos < chunk.length) {
      const lf = chunk.indexOf(LF, pos);
      const end = lf === -1 ? chunk.length : lf;
      if (this.hash) {
        this.feed(chunk.subarray(pos, end), lf !== -1);
        if (lf === -1) break;
        pieces.push({ end: this.finish(false) });
        pos = copyFrom = lf + 1;
        continue;
      }
      const room = this.cap + 1 - this.lineBytes;
      if (end - pos <= room) {
        if (lf === -1) {
          this.head.push(chunk.subarray(pos, end));
          this.lineBytes += end - pos;
          break;
        }
        // The line ends within the cap: copied as it is, its `\n` included.
        this.reset();
        pos = lf + 1;
        continue;
      }
      // The line outgrows cap + 1 bytes here: copy up to that, hash everything from its start on.
      const split = pos + room;
      if (split > copyFrom) pieces.push({ copy: chunk.subarray(copyFrom, split) });
      copyFrom = -1;
      this.head.push(chunk.subarray(pos, split));
      this.lineBytes += room;
      this.hash = createHash('sha256');
      for (const piece of this.head) this.hash.update(piece);
      this.tail = keepTail(Buffer.concat(this.head));
      this.head = [];
      pos = split;
    }
    if (copyFrom !== -1 && copyFrom < chunk.length) pieces.push({ copy: chunk.subarray(copyFrom) });
    return pieces;
  }

  /**
   * A chunk in which no line can outgrow the cap (the current line's bytes and the whole chunk fit): it is
   * copied whole, and only where its last line starts matters, found from the chunk's end. Scanning it for every
   * `\n` from the front, as cut does, read all of every chunk: relaying 64 KiB frames, perf found that scan
   * (memchr) in 22 of the main thread's 1050 samples.
   */
  private copyWhole(chunk: Buffer): CapPiece[] {
    const lastLf = chunk.lastIndexOf(LF);
    if (lastLf === -1) {
      this.head.push(chunk);
      this.lineBytes += chunk.length;
    } else {
      this.reset();
      if (lastLf + 1 < chunk.length) {
        this.head.push(chunk.subarray(lastLf + 1));
        this.lineBytes = chunk.length - lastLf - 1;
      }
    }
    return [{ copy: chunk }];
  }

  /** The stream ended: an over-long line without its `\n` ends here (partial); otherwise nothing. */
  end(): OverlongEnd | undefined {
    if (!this.hash) {
      this.reset();
      return undefined;
    }
    return this.finish(true);
  }

  /** Forget the current line (its copy was skipped): the next bytes start a new one. */
  reset(): void {
    this.lineBytes = 0;
    this.head = [];
    this.hash = undefined;
    this.tail = NO_BYTES;
    this.heldCr = false;
  }

  /** Hash the next bytes of an over-long line; `lineEnds` when a `\n` follows them. */
  private feed(bytes: Buffer, lineEnds: boolean): void {
    if (this.heldCr) {
      this.heldCr = false;
      // A held `\r` right before the `\n` is the terminator; anywhere else it is content.
      if (bytes.length === 0 && lineEnds) {
        this.crlf = true;
        return;
      }
      this.take(Buffer.from([CR]));
    }
    if (bytes.length > 0 && bytes[bytes.length - 1] === CR) {
      this.take(bytes.subarray(0, bytes.length - 1));
      if (lineEnds) this.crlf = true;
      else this.heldCr = true;
      return;
    }
    this.take(bytes);
  }

  private take(bytes: Buffer): void {
    if (bytes.length === 0) return;
    this.hash!.update(bytes);
    this.lineBytes += bytes.length;
    this.tail = keepTail(bytes.length >= TAIL_BYTES ? bytes : Buffer.concat([this.tail, bytes]));
  }

  private finish(partial: boolean): OverlongEnd {
    // A partial line keeps a trailing `\r` as content, as the framer does.
    if (this.heldCr) {
      this.heldCr = false;
      this.take(Buffer.from([CR]));
    }
    const end: OverlongEnd = { size: this.lineBytes, sha256: this.hash!.digest('hex'), tail: this.tail, crlf: this.crlf && !partial };
    if (partial) end.partial = true;
    this.crlf = false;
    this.reset();
    return end;
  }
}

/** A copy of the last TAIL_BYTES of `bytes`. */
function keepTail(bytes: Buffer): Buffer {
  return Buffer.from(bytes.subarray(Math.max(0, bytes.length - TAIL_BYTES)));
}
