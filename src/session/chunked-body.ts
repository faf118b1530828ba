/**
 * Whether an NDJSON response body is exactly the raws of its llm-chunk records, each with its newline. The
 * http-end then leaves the body to them (`bodyInChunks`, log format v3) rather than write every byte of the
 * stream a second time, escaped into one string; the reader puts the body back together (log/chunk-bodies.ts).
 */
export class ChunkedBody {
  private lines = 0;
  private chars = 0;
  private every = true;

  /** A line of the body (without its newline), and whether an llm-chunk record carries it as its `raw`. */
  line(text: string, carried: boolean): void {
    if (!carried) this.every = false;
    this.lines++;
    this.chars += text.length + 1;
  }

  /** A last line without its newline: the lines no longer make the body. */
  broken(): void {
    this.every = false;
  }

  /** How many llm-chunk records carry `body` (the whole body, as kept), or 0 when they do not. */
  carriers(body: string): number {
    if (!this.every || this.lines === 0) return 0;
    // The framer takes a `\r` before a `\n` off its line: with none in the body, the lines split it exactly.
    return body.length === this.chars && body.endsWith('\n') && !body.includes('\r') ? this.lines : 0;
  }
}
