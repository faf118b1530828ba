/**
 * Server-Sent Events framing, per the WHATWG event-stream rules: lines end in CRLF, LF or CR; `field: value`
 * lines build an event (`data` lines join with `\n`, `id`, `event`, `retry` of digits only); a blank line ends
 * it; lines starting with `:` are comments; a leading BOM is dropped.
 *
 * This works on a *copy* of the stream: the forwarding path never waits for an event boundary. Pure and
 * synchronous (`push(chunk) → items`), keeps at most `maxEventBytes` of any one event (the rest is counted),
 * and never throws. Unlike a browser it also reports what a browser drops silently — events with no data
 * (priming events), comments (keep-alives), a last event cut off by the end of the stream — because that is
 * what someone debugging the stream wants to see.
 */

const LF = 0x0a;
const CR = 0x0d;
const BOM = Buffer.from([0xef, 0xbb, 0xbf]);
/** How many of the last bytes of a cut event are kept (as the line framer does). */
const TAIL_BYTES = 256;

/** A copy of the last TAIL_BYTES of `bytes`, so a big chunk is not kept alive by a view of it. */
function keepTail(bytes: Buffer): Buffer {
  return Buffer.from(bytes.subarray(Math.max(0, bytes.length - TAIL_BYTES)));
}

/** One event: the fields it set, as a client would see them. */
export interface SseEvent {
  type: 'event';
  /** `event:` field; absent means the default type "message". */
  event?: string;
  /** `id:` field, when the event set one. */
  id?: string;
  /** The `data:` lines joined with `\n`; absent when the event had no data line. */
  data?: string;
  /** `retry:` in milliseconds, when set to a valid number. */
  retry?: number;
  /** Byte length of the event's lines (comments inside it included), line terminators not counted. */
  size: number;
  /** True when the event outgrew the cap and its data holds only the head. */
  truncated?: boolean;
  /**
   * With `truncated`: the last bytes (at most 256) of the event's data, so a message whose `id` comes after a
   * large payload (as the TypeScript SDK writes them) can still be correlated.
   */
  tail?: Buffer;
  /** With `truncated`: the full byte length of the data (the lines joined with `\n`), as a client would get it. */
  dataSize?: number;
  /** True when the stream ended before the blank line that ends the event. */
  partial?: boolean;
}

/** One comment line (`: keepalive`), without the colon and one leading space. */
export interface SseComment {
  type: 'comment';
  text: string;
}

export type SseItem = SseEvent | SseComment;

export interface SseFramerOptions {
  /** Longest event kept; longer data is cut in the copy only. */
  maxEventBytes: number;
}

/** Cuts an event stream into events and comments. One instance per stream. */
export class SseFramer {
  private readonly maxEventBytes: number;
  /** Pieces of the current, unfinished line, up to the cap. */
  private line: Buffer[] = [];
  private lineKept = 0;
  private lineCut = false;
  /** Full byte length of the current line, including what the cap dropped. */
  private lineFull = 0;
  /** Full byte length of the current event's data so far. */
  private dataFull = 0;
  /** Last bytes of the current line, kept once the line outgrew the cap. */
  private lineTail: Buffer | undefined;
  /** Last bytes of the current event's data, kept once the event outgrew the cap. */
  private dataTail: Buffer | undefined;
  private pendingCr = false;
  /** Bytes seen so far while the stream might still open with a BOM; undefined once that is decided. */
  private bomCheck: Buffer | undefined = Buffer.alloc(0);
  // The event being built.
  private data: string[] = [];
  private dataBytes = 0;
  private hasData = false;
  private event: string | undefined;
  private id: string | undefined;
  private retry: number | undefined;
  private size = 0;
  private touched = false;
  private truncated = false;

  constructor(options: SseFramerOptions) {
    this.maxEventBytes = options.maxEventBytes;
  }

  /** Feed the next chunk; returns the events and comments it completes, in order. */
  push(chunk: Buffer): SseItem[] {
    const items: SseItem[] = [];
    let i = 0;
    if (this.bomCheck) {
      // A UTF-8 BOM may open the stream, and may itself be split across chunks: hold back a matching prefix.
      const seen = this.bomCheck.length ? Buffer.concat([this.bomCheck, chunk]) : chunk;
      const n = Math.min(seen.length, 3);
      if (seen.subarray(0, n).equals(BOM.subarray(0, n))) {
        if (seen.length < 3) {
          this.bomCheck = seen;
          return items;
        }
        this.bomCheck = undefined;
        chunk = seen.subarray(3);
      } else {
        this.bomCheck = undefined;
        chunk = seen;
      }
    }
    if (this.pendingCr && i < chunk.length) {
      this.pendingCr = false;
      // The CR that ended the last chunk's line may be the first half of a CRLF.
      if (chunk[i] === LF) i++;
    }
    let start = i;
    for (; i < chunk.length; i++) {
      const b = chunk[i];
      if (b !== LF && b !== CR) continue;
      this.appendLine(chunk.subarray(start, i));
      if (b === CR) {
        if (i + 1 < chunk.length) {
          if (chunk[i + 1] === LF) i++;
        } else {
          this.pendingCr = true;
        }
      }
      this.endLine(items);
      start = i + 1;
    }
    if (start < chunk.length) this.appendLine(chunk.subarray(start));
    return items;
  }

  /** The stream ended: returns an event cut off before its blank line, if one was being built. */
  end(): SseItem[] {
    const items: SseItem[] = [];
    if (this.bomCheck?.length) {
      // The stream ended inside what looked like a BOM: those bytes were content after all.
      const held = this.bomCheck;
      this.bomCheck = undefined;
      items.push(...this.push(held));
    }
    if (this.lineKept > 0 || this.lineCut) this.endLine(items);
    if (this.touched) {
      const event = this.dispatch();
      event.partial = true;
      items.push(event);
    }
    return items;
  }

  private appendLine(piece: Buffer): void {
    this.size += piece.length;
    this.lineFull += piece.length;
    if (piece.length === 0) return;
    const room = this.maxEventBytes - this.lineKept;
    if (this.lineCut || piece.length > room) {
      if (!this.lineCut) this.lineTail = keepTail(Buffer.concat([...this.line, piece]));
      else this.lineTail = keepTail(piece.length >= TAIL_BYTES ? piece : Buffer.concat([this.lineTail ?? Buffer.alloc(0), piece]));
      this.lineCut = true;
      if (room <= 0) return;
      piece = piece.subarray(0, room);
    }
    this.line.push(piece);
    this.lineKept += piece.length;
  }

  private endLine(items: SseItem[]): void {
    const bytes = this.line.length === 1 ? this.line[0]! : Buffer.concat(this.line, this.lineKept);
    const cut = this.lineCut;
    const lineTail = this.lineTail;
    const lineFull = this.lineFull;
    this.lineFull = 0;
    this.line = [];
    this.lineKept = 0;
    this.lineCut = false;
    this.lineTail = undefined;
    if (bytes.length === 0 && !cut) {
      // Blank line: the event is complete.
      if (this.touched) items.push(this.dispatch());
      else this.size = 0;
      return;
    }
    const text = bytes.toString('utf8');
    if (text.startsWith(':')) {
      items.push({ type: 'comment', text: text.slice(1).replace(/^ /, '') });
      // A comment is not part of an event's size unless an event is being built around it.
      if (!this.touched) this.size = 0;
      return;
    }
    this.touched = true;
    const colon = text.indexOf(':');
    const field = colon === -1 ? text : text.slice(0, colon);
    let value = colon === -1 ? '' : text.slice(colon + 1);
    if (value.startsWith(' ')) value = value.slice(1);
    switch (field) {
      case 'data': {
        // "data:" and the one space dropped are ASCII, so the value's full size follows from the line's.
        this.dataFull += (this.hasData ? 1 : 0) + (colon === -1 ? 0 : lineFull - (colon + 1) - (text[colon + 1] === ' ' ? 1 : 0));
        this.hasData = true;
        const room = this.maxEventBytes - this.dataBytes;
        if (cut || Buffer.byteLength(value) > room) this.truncated = true;
        if (this.truncated) {
          // The end of the data as it really was: the line's own tail when the line itself was cut.
          const end = cut && lineTail ? lineTail : Buffer.from(value);
          this.dataTail = keepTail(this.dataTail && !cut ? Buffer.concat([this.dataTail, Buffer.from('\n'), end]) : end);
        }
        if (room > 0) {
          const kept = Buffer.byteLength(value) > room ? Buffer.from(value).subarray(0, room).toString('utf8') : value;
          this.data.push(kept);
          this.dataBytes += Buffer.byteLength(kept) + 1;
        }
        return;
      }
      case 'event':
        this.event = value;
        return;
      case 'id':
        // An id containing NULL is ignored by clients.
        if (!value.includes('\u0000')) this.id = value;
        return;
      case 'retry':
        if (/^\d+$/.test(value)) this.retry = Number(value);
        return;
      default:
        // Unknown fields are ignored by clients; the bytes still passed through.
        return;
    }
  }

  private dispatch(): SseEvent {
    const event: SseEvent = { type: 'event', size: this.size };
    if (this.event !== undefined) event.event = this.event;
    if (this.id !== undefined) event.id = this.id;
    if (this.hasData) event.data = this.data.join('\n');
    if (this.retry !== undefined) event.retry = this.retry;
    if (this.truncated) {
      event.truncated = true;
      if (this.dataTail) event.tail = this.dataTail;
      event.dataSize = this.dataFull;
    }
    this.dataFull = 0;
    this.dataTail = undefined;
    this.data = [];
    this.dataBytes = 0;
    this.hasData = false;
    this.event = undefined;
    this.id = undefined;
    this.retry = undefined;
    this.size = 0;
    this.touched = false;
    this.truncated = false;
    return event;
  }
}
