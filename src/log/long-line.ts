/**
 * A log line too long to hold, read as it streams by: the record's text is kept, but of its frame (`raw`) only
 * the head, as a JSON string, the record marked `truncated` as the writer marks a frame it cut. For readers that
 * print no frames (reader.ts, `slim`). Pure: bytes in, the line's reduced text out.
 */

/** Bytes of a frame kept: the writer's default cap (`--max-body`). */
export const FRAME_HEAD_BYTES = 1024 * 1024;

const QUOTE = 0x22;
const BACKSLASH = 0x5c;
const RAW_KEY = Buffer.from('"raw":');

/** The frame's value as it is read: a string or JSON, where its scan is, and the head kept. */
interface Frame {
  string: boolean;
  depth: number;
  inString: boolean;
  escaped: boolean;
  head: Buffer[];
  headBytes: number;
}

export class LongLine {
  /** The line's bytes kept: all but the frame's value. */
  private readonly kept: Buffer[] = [];
  private keptBytes = 0;
  /** The last bytes kept, to find `"raw":` across chunks. */
  private tail = Buffer.alloc(0);
  private depth = 0;
  private inString = false;
  private escaped = false;
  private frame: Frame | undefined;
  private frameDone = false;

  constructor(private readonly headBytes = FRAME_HEAD_BYTES) {}

  push(chunk: Buffer): void {
    let from = 0;
    for (let i = 0; i < chunk.length; i++) {
      const c = chunk[i]!;
      if (this.frame) {
        if (!frameByte(this.frame, c)) continue;
        this.endFrame(chunk.subarray(from, i + 1));
        from = i + 1;
        continue;
      }
      if (this.inString) {
        if (this.escaped) this.escaped = false;
        else if (c === BACKSLASH) this.escaped = true;
        else if (c === QUOTE) this.inString = false;
        continue;
      }
      const opens = c === 0x7b || c === 0x5b;
      // A value right after `"raw":` at the record's own level is the frame.
      if ((c === QUOTE || opens) && this.depth === 1 && !this.frameDone && this.afterRawKey(chunk.subarray(from, i))) {
        this.keep(chunk.subarray(from, i));
        this.frame = { string: c === QUOTE, depth: opens ? 1 : 0, inString: c === QUOTE, escaped: false, head: [], headBytes: 0 };
        from = i;
        continue;
      }
      if (c === QUOTE) this.inString = true;
      else if (opens) this.depth++;
      else if (c === 0x7d || c === 0x5d) this.depth--;
    }
    if (this.frame) this.frameHead(chunk.subarray(from));
    else this.keep(chunk.subarray(from));
  }

  /** The line as a record's text, the frame's head in its place (as it was, when the line ended inside it: torn). */
  finish(): string {
    const text = Buffer.concat(this.kept, this.keptBytes).toString('utf8');
    if (!this.frameDone) return text;
    const close = text.lastIndexOf('}');
    return close === -1 ? text : `${text.slice(0, close)},"truncated":true${text.slice(close)}`;
  }

  /** Whether what was kept and then `pending` end with `"raw":` (the writer writes no space). */
  private afterRawKey(pending: Buffer): boolean {
    const end = pending.length >= RAW_KEY.length ? pending.subarray(pending.length - RAW_KEY.length) : Buffer.concat([this.tail, pending]).subarray(-RAW_KEY.length);
    return end.equals(RAW_KEY);
  }

  private keep(bytes: Buffer): void {
    if (bytes.length === 0) return;
    const copy = Buffer.from(bytes);
    this.kept.push(copy);
    this.keptBytes += copy.length;
    this.tail = Buffer.concat([this.tail, copy]).subarray(-RAW_KEY.length);
  }

  /** Keep the frame's bytes while its head has room (a few bytes over, for its quote and a cut escape). */
  private frameHead(bytes: Buffer): void {
    const f = this.frame!;
    const room = this.headBytes + 8 - f.headBytes;
    if (room <= 0 || bytes.length === 0) return;
    const part = Buffer.from(bytes.subarray(0, room));
    f.head.push(part);
    f.headBytes += part.length;
  }

  /** The frame's last bytes: its head goes into the line as a JSON string. */
  private endFrame(last: Buffer): void {
    this.frameHead(last);
    const f = this.frame!;
    const value = Buffer.concat(f.head, f.headBytes);
    this.frame = undefined;
    this.frameDone = true;
    this.keep(Buffer.from(JSON.stringify(f.string ? stringHead(value, this.headBytes) : wholeChars(value.subarray(0, this.headBytes)).toString('utf8'))));
  }
}

/** One byte of the frame's value (after its first); true at its last. */
function frameByte(f: Frame, c: number): boolean {
  if (f.inString) {
    if (f.escaped) f.escaped = false;
    else if (c === BACKSLASH) f.escaped = true;
    else if (c === QUOTE) {
      f.inString = false;
      return f.string;
    }
    return false;
  }
  if (c === QUOTE) f.inString = true;
  else if (c === 0x7b || c === 0x5b) f.depth++;
  else if (c === 0x7d || c === 0x5d) return --f.depth === 0;
  return false;
}

/** The text of a JSON string's head (from its opening quote), at most `max` bytes of it, cut between escapes. */
function stringHead(value: Buffer, max: number): string {
  const body = value.subarray(1, Math.min(value.length, max + 1));
  let safe = 0;
  for (let i = 0; i < body.length && body[i] !== QUOTE; ) {
    i += body[i] === BACKSLASH ? (body[i + 1] === 0x75 ? 6 : 2) : 1;
    if (i <= body.length) safe = i;
  }
  try {
    return JSON.parse(`"${wholeChars(body.subarray(0, safe)).toString('utf8')}"`) as string;
  } catch {
    return '';
  }
}

/** The bytes without a UTF-8 character cut at their end. */
function wholeChars(bytes: Buffer): Buffer {
  let lead = bytes.length - 1;
  while (lead >= 0 && bytes.length - lead < 4 && (bytes[lead]! & 0xc0) === 0x80) lead--;
  if (lead < 0) return bytes;
  const b = bytes[lead]!;
  const need = b >= 0xf0 ? 4 : b >= 0xe0 ? 3 : b >= 0xc0 ? 2 : 1;
  return bytes.length - lead < need ? bytes.subarray(0, lead) : bytes;
}
