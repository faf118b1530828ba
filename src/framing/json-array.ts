/**
 * The elements of a JSON array that arrives in pieces: Gemini's streamGenerateContent without `alt=sse` sends
 * `[{…}\r\n,\r\n{…}]`, one chunk object after another, and each must be read as it completes (for time to first
 * token), not once the array closes. Pure; bytes in, element texts out, split anywhere.
 *
 * Only the nesting is followed (brackets and braces outside strings, the escapes inside them): the elements are
 * parsed by whoever reads them. An element past `maxElementBytes` keeps its head and is marked truncated.
 */

/** One element of the array, as text. */
export interface JsonArrayElement {
  text: string;
  /** Full size of the element in bytes. */
  size: number;
  truncated: boolean;
}

const OPEN_BRACE = 0x7b;
const OPEN_BRACKET = 0x5b;
const CLOSE_BRACE = 0x7d;
const CLOSE_BRACKET = 0x5d;
const QUOTE = 0x22;
const BACKSLASH = 0x5c;

export class JsonArrayFramer {
  private readonly maxElementBytes: number;
  /** Inside the outer `[`. */
  private opened = false;
  /** Nesting inside the current element (0: between elements). */
  private depth = 0;
  private inString = false;
  private escaped = false;
  private pieces: Buffer[] = [];
  private kept = 0;
  private size = 0;

  constructor(options: { maxElementBytes: number }) {
    this.maxElementBytes = options.maxElementBytes;
  }

  /** The elements this piece completes. */
  push(chunk: Buffer): JsonArrayElement[] {
    const out: JsonArrayElement[] = [];
    let start = this.depth > 0 ? 0 : -1;
    for (let i = 0; i < chunk.length; i++) {
      const byte = chunk[i]!;
      if (this.depth === 0) {
        if (!this.opened) {
          if (byte === OPEN_BRACKET) this.opened = true;
          continue;
        }
        if (byte === OPEN_BRACE || byte === OPEN_BRACKET) {
          this.depth = 1;
          start = i;
        }
        continue;
      }
      if (this.inString) {
        if (this.escaped) this.escaped = false;
        else if (byte === BACKSLASH) this.escaped = true;
        else if (byte === QUOTE) this.inString = false;
        continue;
      }
      if (byte === QUOTE) this.inString = true;
      else if (byte === OPEN_BRACE || byte === OPEN_BRACKET) this.depth++;
      else if (byte === CLOSE_BRACE || byte === CLOSE_BRACKET) {
        this.depth--;
        if (this.depth === 0) {
          this.keep(chunk.subarray(start, i + 1));
          out.push(this.take());
          start = -1;
        }
      }
    }
    if (this.depth > 0 && start !== -1) this.keep(chunk.subarray(start));
    return out;
  }

  /** An element the stream ended inside of (cut off), if any. */
  end(): JsonArrayElement | undefined {
    if (this.depth === 0 || this.size === 0) return undefined;
    this.depth = 0;
    return this.take();
  }

  private keep(piece: Buffer): void {
    this.size += piece.length;
    const room = this.maxElementBytes - this.kept;
    if (room <= 0) return;
    const part = piece.length > room ? piece.subarray(0, room) : piece;
    // Copied: the caller's chunk buffer may be reused once push returns.
    this.pieces.push(Buffer.from(part));
    this.kept += part.length;
  }

  private take(): JsonArrayElement {
    const element = { text: Buffer.concat(this.pieces).toString('utf8'), size: this.size, truncated: this.size > this.kept };
    this.pieces = [];
    this.kept = 0;
    this.size = 0;
    this.inString = false;
    this.escaped = false;
    return element;
  }
}
