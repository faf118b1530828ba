/**
 * Newline framing for the MCP stdio transport: one JSON-RPC message per `\n`-terminated line, `\r\n` tolerated.
 *
 * This works on a *copy* of the traffic: the forwarding path never waits for a newline. It is pure and
 * synchronous (`push(chunk) → frames`), keeps at most `maxFrameBytes` of any one line (the rest is counted and
 * hashed, so a 100 MB line costs no more memory than the cap), and never throws on any input.
 */
import { createHash, type Hash } from 'node:crypto';
import type { Direction, Frame } from '../types.js';
import type { OverlongEnd } from './line-cap.js';

/** The tail of a line that has none yet: one shared empty buffer, not a new one for every line (about 60 ns each). */
export const NO_BYTES = Buffer.alloc(0);

const LF = 0x0a;
const CR = 0x0d;
/** How many last bytes of a truncated line are kept, for ids written after the payload. */
export const TAIL_BYTES = 256;

export interface LineFramerOptions {
  dir: Direction;
  /** Longest line head kept in a frame; longer lines are truncated (and hashed) in the copy only. */
  maxFrameBytes: number;
  /**
   * The caller cuts over-long lines itself (LineCap, on the thread that sees the traffic): past the cap the
   * framer only keeps the head, and the line ends with endOverlong() rather than with its `\n`.
   */
  overlongByCaller?: boolean;
  /**
   * The chunks are lent for the call of push() only (the inspection thread's view of the channel's ring): what
   * the framer keeps of them it copies, into buffers of its own that it fills again, and a frame's bytes are
   * valid only until the next push().
   */
  borrowed?: boolean;
}

/** A carry buffer grown past this is let go once its line is done, so a rare huge line holds no memory after. */
const MAX_KEPT_CARRY = 1024 * 1024;

/** Cuts a byte stream into lines. One instance per stream direction. */
export class LineFramer {
  private readonly dir: Direction;
  private readonly maxFrameBytes: number;
  /** Pieces of the current, unfinished line (only up to the cap). */
  private pieces: Buffer[] = [];
  private keptBytes = 0;
  /** Full length so far of the current line, including bytes beyond the cap. */
  private lineBytes = 0;
  /** Running hash of the current line, started only once it outgrows the cap. */
  private hash: Hash | undefined;
  /** Last bytes of the current line, kept only once it outgrows the cap. */
  private tail: Buffer = NO_BYTES;
  /** The previous chunk ended in `\r`, which may belong to a `\r\n` split across chunks. */
  private pendingCr = false;

  private readonly overlongByCaller: boolean;
  private readonly borrowed: boolean;
  /** With `borrowed`: the two buffers an unfinished line is copied into, in turn (a frame may view the other). */
  private readonly carries: [Buffer, Buffer] = [NO_BYTES, NO_BYTES];
  private carry: 0 | 1 = 0;
  /** The current line's kept bytes are in carries[carry]. */
  private carried = false;

  constructor(options: LineFramerOptions) {
    this.dir = options.dir;
    this.maxFrameBytes = options.maxFrameBytes;
    this.overlongByCaller = options.overlongByCaller === true;
    this.borrowed = options.borrowed === true;
  }

  /** An over-long line ended as the caller's LineCap says: its frame keeps the head this framer holds. */
  endOverlong(end: OverlongEnd, time: number, mono: number): Frame {
    const frame: Frame = {
      dir: this.dir,
      bytes: Buffer.concat(this.pieces, this.keptBytes).subarray(0, this.maxFrameBytes),
      size: end.size,
      truncated: true,
      sha256: end.sha256,
      tail: end.tail,
      time,
      mono,
    };
    if (end.partial) frame.partial = true;
    if (end.crlf) frame.crlf = true;
    this.reset();
    return frame;
  }

  /** Feed the next chunk; returns the lines it completes, in order. */
  push(chunk: Buffer, time: number, mono: number): Frame[] {
    const frames: Frame[] = [];
    let start = 0;
    for (;;) {
      const lf = chunk.indexOf(LF, start);
      if (lf === -1) break;
      this.append(chunk.subarray(start, lf));
      frames.push(this.finish(time, mono, false));
      start = lf + 1;
    }
    if (start < chunk.length) this.append(chunk.subarray(start));
    if (this.borrowed && this.pieces.length > 0) {
      this.pieces = [this.intoCarry()];
      this.carried = true;
    }
    return frames;
  }

  /**
   * The kept pieces of the current line, copied into carries[carry] after what it already holds of them; the
   * whole as a view of it. (A line carried over from an earlier chunk starts with that view.)
   */
  private intoCarry(): Buffer {
    let into = this.carries[this.carry];
    let at = 0;
    let from = 0;
    if (this.carried && into.length >= this.keptBytes) {
      at = this.pieces[0]!.length;
      from = 1;
    } else if (into.length < this.keptBytes) {
      into = this.carries[this.carry] = Buffer.allocUnsafeSlow(Math.max(this.keptBytes, 2 * into.length, 64 * 1024));
    }
    for (let i = from; i < this.pieces.length; i++) at += this.pieces[i]!.copy(into, at);
    return into.subarray(0, at);
  }

  /** The stream ended: returns the partial last line, if any bytes are waiting. */
  end(time: number, mono: number): Frame | undefined {
    if (this.lineBytes === 0 && !this.pendingCr) return undefined;
    return this.finish(time, mono, true);
  }

  /**
   * Bytes were left out of the copy (inspection fell behind) up to the end of a line: drop the unfinished line,
   * so the bytes that follow start a new one rather than finishing a line whose middle is missing.
   */
  dropPartial(): void {
    this.reset();
  }

  /** Bytes of the unfinished line so far (kept or not). */
  get partialBytes(): number {
    return this.lineBytes + (this.pendingCr ? 1 : 0);
  }

  /** True when bytes of an unfinished line are waiting. */
  get hasPartial(): boolean {
    return this.lineBytes > 0 || this.pendingCr;
  }

  private append(piece: Buffer): void {
    // Nothing new (a chunk starting with `\n`): a `\r` held back from the last chunk is this line's ending, not
    // part of the line, so it must stay held for finish() to see.
    if (piece.length === 0) return;
    if (this.pendingCr) {
      // The `\r` held back from the last chunk was not a line ending's: it is part of the line.
      this.pendingCr = false;
      this.take(Buffer.from([CR]));
    }
    if (piece.length > 0 && piece[piece.length - 1] === CR) {
      this.pendingCr = true;
      piece = piece.subarray(0, piece.length - 1);
    }
    if (piece.length > 0) this.take(piece);
  }

  private take(piece: Buffer): void {
    this.lineBytes += piece.length;
    const room = this.maxFrameBytes - this.keptBytes;
    if (this.overlongByCaller) {
      // The caller hashes over-long lines and copies at most cap + 1 bytes of one: keep those (a line of exactly
      // cap + 1 bytes arrives whole, with its `\n`, and is hashed here at finish).
      const keep = Math.min(room + 1, piece.length);
      if (keep > 0) {
        this.pieces.push(keep === piece.length ? piece : piece.subarray(0, keep));
        this.keptBytes += keep;
      }
      return;
    }
    if (room >= piece.length && this.hash === undefined) {
      this.pieces.push(piece);
      this.keptBytes += piece.length;
      return;
    }
    if (this.hash === undefined) {
      // The line just outgrew the cap: hash what was kept so far, then keep hashing without keeping.
      this.hash = createHash('sha256');
      for (const kept of this.pieces) this.hash.update(kept);
      this.tail = keepTail(Buffer.concat(this.pieces, this.keptBytes));
    }
    if (room > 0) {
      this.pieces.push(piece.subarray(0, room));
      this.keptBytes += room;
    }
    this.hash.update(piece);
    this.tail = keepTail(piece.length >= TAIL_BYTES ? piece : Buffer.concat([this.tail, piece]));
  }

  private finish(time: number, mono: number, partial: boolean): Frame {
    const crlf = this.pendingCr && !partial;
    if (this.pendingCr && partial) this.take(Buffer.from([CR]));
    this.pendingCr = false;
    let bytes: Buffer;
    if (this.carried) {
      bytes = this.pieces.length === 1 ? this.pieces[0]! : this.intoCarry();
      // The frame views this carry until the next push: an unfinished line after it goes into the other one.
      if (this.carries[this.carry].length > MAX_KEPT_CARRY) this.carries[this.carry] = NO_BYTES;
      this.carry = this.carry === 0 ? 1 : 0;
    } else bytes = this.pieces.length === 1 ? this.pieces[0]! : Buffer.concat(this.pieces, this.keptBytes);
    if (this.overlongByCaller && this.lineBytes > this.maxFrameBytes) {
      // One byte over the cap, and all of it here: hashed as the framer would have.
      this.hash = createHash('sha256').update(bytes);
      this.tail = keepTail(bytes);
      bytes = bytes.subarray(0, this.maxFrameBytes);
    }
    const frame: Frame = {
      dir: this.dir,
      bytes,
      size: this.lineBytes,
      truncated: this.hash !== undefined,
      time,
      mono,
    };
    if (this.hash !== undefined) {
      frame.sha256 = this.hash.digest('hex');
      frame.tail = this.tail;
    }
    if (partial) frame.partial = true;
    if (crlf) frame.crlf = true;
    this.reset();
    return frame;
  }

  private reset(): void {
    this.pendingCr = false;
    this.carried = false;
    this.pieces = [];
    this.keptBytes = 0;
    this.lineBytes = 0;
    this.hash = undefined;
    this.tail = NO_BYTES;
  }
}

/** A copy of the last TAIL_BYTES of `bytes` (a copy, so a big chunk is not kept alive by its view). */
function keepTail(bytes: Buffer): Buffer {
  return Buffer.from(bytes.subarray(Math.max(0, bytes.length - TAIL_BYTES)));
}

/**
 * The head of a truncated frame without a UTF-8 character the cap cut in half, so the head still reads as text
 * (and is not logged as base64 for want of one byte). Bytes that are not UTF-8 anyway are returned as they are.
 */
export function withoutCutCharacter(head: Buffer): Buffer {
  // Walk back over at most 3 continuation bytes (10xxxxxx) to the lead byte of the last character.
  let lead = head.length - 1;
  while (lead >= 0 && lead > head.length - 4 && (head[lead]! & 0xc0) === 0x80) lead--;
  if (lead < 0) return head;
  const byte = head[lead]!;
  const need = byte >= 0xc2 && byte <= 0xdf ? 2 : byte >= 0xe0 && byte <= 0xef ? 3 : byte >= 0xf0 && byte <= 0xf4 ? 4 : 1;
  if (need === 1) return head;
  return head.length - lead < need ? head.subarray(0, lead) : head;
}
