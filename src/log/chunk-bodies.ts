/**
 * Puts back the response body of an http-end that leaves it to its llm-chunk records: `bodyInChunks` (log
 * format v3), an NDJSON stream whose lines are the chunks' raws, or `bodyInEvents` (v4), an SSE stream whose
 * events are the chunks' data, each in the form sseEventText writes. Fed every record in log order, it
 * holds the chunks of each stream until the stream's http-end. A reader that lacks some of those chunks gives
 * that http-end no body rather than a wrong one.
 */
import type { LlmChunkRecord, LogRecord } from './schema.js';
import { setBounded } from '../session/recent-map.js';

/** How an SSE body's lines end: `\n` (OpenAI, Anthropic) or `\r\n` (Gemini). */
export type EventLineEnd = '\n' | '\r\n';

/**
 * The text of an SSE event whose `event:` field is `event` (when it had one) and whose data is `data`, as
 * OpenAI, Anthropic and Gemini write theirs: one `data: ` line per line of the data, then a blank line.
 */
export function sseEventText(data: string, event: string | undefined, end: EventLineEnd): string {
  let text = event === undefined ? '' : `event: ${event}${end}`;
  for (const line of data.split('\n')) text += `data: ${line}${end}`;
  return `${text}${end}`;
}

export class ChunkBodies {
  /** The chunks so far of each stream, by session and exchange. */
  private readonly chunks = new Map<string, LlmChunkRecord[]>();

  /**
   * `maxStreams` bounds the streams held at once, for a reader that follows logs for hours (a stream cut off
   * never sees its http-end): past it the oldest tenth is let go, and their http-ends get no body.
   */
  constructor(private readonly maxStreams = Infinity) {}

  /** Note an llm-chunk; give an http-end that leaves its body to its chunks that body. */
  see(record: LogRecord): void {
    if (record.kind === 'llm-chunk') {
      // A chunk without its raw is not counted: the body is then not made without it.
      if (typeof record.raw !== 'string') return;
      const key = streamKey(record.session, record.exchange);
      const chunks = this.chunks.get(key);
      if (chunks) chunks.push(record);
      else setBounded(this.chunks, key, [record], this.maxStreams);
    } else if (record.kind === 'http-end') {
      const key = streamKey(record.session, record.exchange);
      const chunks = this.chunks.get(key);
      this.chunks.delete(key);
      if (chunks === undefined) return;
      if (record.bodyInChunks === chunks.length) record.body = chunks.map((chunk) => `${chunk.raw}\n`).join('');
      else if (record.bodyInEvents === chunks.length) {
        // A line end this reader does not know gives no body, not a wrong one.
        const end = record.eventLineEnd === undefined ? '\n' : record.eventLineEnd === '\r\n' ? '\r\n' : undefined;
        if (end !== undefined) record.body = chunks.map((chunk) => sseEventText(chunk.raw, chunk.event, end)).join('');
      }
    }
  }
}

function streamKey(session: string, exchange: string): string {
  return `${session}\u0000${exchange}`;
}
