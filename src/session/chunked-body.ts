/**
 * Whether a streamed response body is exactly its llm-chunk records. The http-end then leaves the body to them
 * rather than write every byte of the stream a second time, escaped into one string; the reader puts the body
 * back together (log/chunk-bodies.ts). ChunkedBody judges an NDJSON body (`bodyInChunks`, log format v3),
 * ChunkedEvents an SSE body (`bodyInEvents`, v4).
 */
import { sseEventText, type EventLineEnd } from '../log/chunk-bodies.js';

/** Whether an NDJSON body is exactly the raws of its llm-chunk records, each with its newline. */
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

/**
 * Whether an SSE body is exactly the events of its llm-chunk records, each as sseEventText writes it. The
 * events are compared with the body, so any other form (`data:` without its space, an `id:` field, a comment,
 * line ends of both kinds) keeps the body in the http-end.
 */
export class ChunkedEvents {
  /** The events' data and `event:` field, while they may still make the body. */
  private events: [string, string | undefined][] | undefined = [];
  private chars = 0;

  /** `maxChars`: a body longer than this is not kept whole, so neither are its events. */
  constructor(private readonly maxChars: number) {}

  /** An event of the body, and whether an llm-chunk record carries it. */
  event(data: string, event: string | undefined, carried: boolean): void {
    if (this.events === undefined) return;
    this.chars += data.length + (event?.length ?? 0);
    if (carried && this.chars <= this.maxChars) this.events.push([data, event]);
    else this.events = undefined;
  }

  /** Something of the body that is no event of a chunk (a comment). */
  broken(): void {
    this.events = undefined;
  }

  /**
   * How many llm-chunk records carry `body` (the whole body, as kept), and how its lines end; undefined when
   * they do not carry it.
   */
  carriers(body: string): { events: number; lineEnd: EventLineEnd } | undefined {
    const events = this.events;
    if (events === undefined || events.length === 0) return undefined;
    // An SSE body has a CR only where a line ends: the data of its events can hold none.
    const lineEnd = body.includes('\r') ? '\r\n' : '\n';
    let text = '';
    for (const [data, event] of events) text += sseEventText(data, event, lineEnd);
    return text === body ? { events: events.length, lineEnd } : undefined;
  }
}
