/**
 * Puts back the response body of an http-end that leaves it to its llm-chunk records (`bodyInChunks`, log
 * format v3): each chunk's `raw` is a line of the body. Fed every record in log order, it holds the raws of
 * each stream until the stream's http-end. A reader that lacks some of those chunks gives that http-end no body
 * rather than a wrong one.
 */
import type { LogRecord } from './schema.js';
import { setBounded } from '../session/recent-map.js';

export class ChunkBodies {
  /** The raws so far of each stream, by session and exchange. */
  private readonly lines = new Map<string, string[]>();

  /**
   * `maxStreams` bounds the streams held at once, for a reader that follows logs for hours (a stream cut off
   * never sees its http-end): past it the oldest tenth is let go, and their http-ends get no body.
   */
  constructor(private readonly maxStreams = Infinity) {}

  /** Note an llm-chunk's raw; give an http-end that leaves its body to its chunks that body. */
  see(record: LogRecord): void {
    if (record.kind === 'llm-chunk') {
      // A chunk without its raw is not counted: the body is then not made without it.
      if (typeof record.raw !== 'string') return;
      const key = streamKey(record.session, record.exchange);
      const lines = this.lines.get(key);
      if (lines) lines.push(record.raw);
      else setBounded(this.lines, key, [record.raw], this.maxStreams);
    } else if (record.kind === 'http-end') {
      const key = streamKey(record.session, record.exchange);
      const lines = this.lines.get(key);
      this.lines.delete(key);
      if (record.bodyInChunks !== undefined && lines?.length === record.bodyInChunks) record.body = `${lines.join('\n')}\n`;
    }
  }
}

function streamKey(session: string, exchange: string): string {
  return `${session}\u0000${exchange}`;
}
