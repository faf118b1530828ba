/**
 * Whether a response body is carried by the records of its frames. The http-end then leaves the body to them
 * rather than write every byte a second time, escaped into one string; the reader puts the body back together
 * (log/chunk-bodies.ts). ChunkedBody judges an LLM's NDJSON body (`bodyInChunks`, log format v3), ChunkedEvents
 * an LLM's SSE body (`bodyInEvents`, v4), FramedBody an MCP server's answer (`bodyInFrames`, v5).
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
    // Each event is compared where it lies in the body: the events are never joined into a copy of it.
    let at = 0;
    for (const [data, event] of events) {
      const text = sseEventText(data, event, lineEnd);
      if (!body.startsWith(text, at)) return undefined;
      at += text.length;
    }
    return at === body.length ? { events: events.length, lineEnd } : undefined;
  }
}

/**
 * Whether the answer to an MCP POST (a JSON body, or an SSE stream with its priming events and ids) is the raws
 * of its frame records with the text around them: `around(body)` gives that text, one piece more than the
 * raws, and the body is exactly the pieces and raws taken in turn. Fed the raws as the records carry them, in
 * the order they are written, so a reader that finds those records rebuilds the body byte for byte.
 */
export class FramedBody {
  /** The raws so far, while they may still make the body. */
  private raws: string[] | undefined = [];
  private chars = 0;

  /**
   * `session`: the one the exchange's http-request was written with, where a reader starts looking for the
   * frames. `maxChars`: a body longer than this is not kept whole, so neither are its frames.
   */
  constructor(
    private readonly session: string,
    private readonly maxChars: number,
  ) {}

  /** A frame record of the answer, as written: its raw (if any) and its session. */
  frame(raw: unknown, session: string): void {
    if (this.raws === undefined) return;
    this.chars += typeof raw === 'string' ? raw.length : 0;
    // Every one of them must be found again: one the reader would count but not match spoils the body.
    if (typeof raw === 'string' && session === this.session && this.chars <= this.maxChars) this.raws.push(raw);
    else this.raws = undefined;
  }

  /** The pieces of `body` around the raws, when its http-end is of their session; undefined otherwise. */
  around(body: string, session: string | undefined): { frames: number; around: string[] } | undefined {
    const raws = this.raws;
    if (raws === undefined || raws.length === 0 || session !== this.session) return undefined;
    const around: string[] = [];
    let at = 0;
    for (const raw of raws) {
      const found = body.indexOf(raw, at);
      if (found === -1) return undefined;
      around.push(body.slice(at, found));
      at = found + raw.length;
    }
    around.push(body.slice(at));
    return { frames: raws.length, around };
  }
}
