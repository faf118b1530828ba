/**
 * Puts back the response body of an http-end that leaves it to the records of its frames: `bodyInChunks` (log
 * format v3), an LLM's NDJSON stream whose lines are its llm-chunks' raws; `bodyInEvents` (v4), an LLM's SSE
 * stream whose events are its chunks' data, each in the form sseEventText writes; `bodyInFrames` (v5), an MCP
 * answer whose messages are its frame records' raws, with the text around them in `bodyAround`. Fed every
 * record in log order, it holds each response's records until its http-end. A reader that lacks some of
 * those records gives that http-end no body rather than a wrong one.
 */
import type { HttpEndRecord, LlmChunkRecord, LogRecord } from './schema.js';
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
  /** The raws so far of the frame records of each answer to an MCP POST, by session and exchange. */
  private readonly frames = new Map<string, unknown[]>();

  /**
   * `maxStreams` bounds the streams held at once, for a reader that follows logs for hours (a stream cut off
   * never sees its http-end): past it the oldest tenth is let go, and their http-ends get no body.
   */
  constructor(private readonly maxStreams = Infinity) {}

  /** Note an llm-chunk or a frame of an answer; give an http-end that leaves its body to them that body. */
  see(record: LogRecord): void {
    if (record.kind === 'llm-chunk') {
      // A chunk without its raw is not counted: the body is then not made without it.
      if (typeof record.raw !== 'string') return;
      holdChunk(this.chunks, streamKey(record.session, record.exchange), record, this.maxStreams);
    } else if (record.kind === 'http-end') {
      const key = streamKey(record.session, record.exchange);
      const chunks = this.chunks.get(key);
      const frames = this.frames.get(key);
      this.chunks.delete(key);
      this.frames.delete(key);
      if (chunks !== undefined) record.body = chunkedBody(record, chunks);
      else if (frames !== undefined) record.body = framedBody(record, frames);
      if (record.body === undefined) delete record.body;
    } else if (record.kind === 'http-request') {
      // Only a POST's answer is left to its frames (the tap's rule too): a GET's stream may stay open for hours.
      if (record.method === 'POST' && record.channel === 'mcp-http') setBounded(this.frames, streamKey(record.session, record.exchange), [], this.maxStreams);
    } else if (this.frames.size > 0 && 'raw' in record && record.dir === 's2c' && 'exchange' in record && typeof record.exchange === 'string') {
      // Every frame record of the answer counts, as the tap counted them: one without a string raw spoils it.
      this.frames.get(streamKey(record.session, record.exchange))?.push(record.raw);
    }
  }
}

function holdChunk(held: Map<string, LlmChunkRecord[]>, key: string, chunk: LlmChunkRecord, maxStreams: number): void {
  const chunks = held.get(key);
  if (chunks) chunks.push(chunk);
  else setBounded(held, key, [chunk], maxStreams);
}

/** v3 and v4: the body its llm-chunks make, when there are as many as the http-end says. */
function chunkedBody(end: HttpEndRecord, chunks: LlmChunkRecord[]): string | undefined {
  if (end.bodyInChunks === chunks.length) return chunks.map((chunk) => `${chunk.raw}\n`).join('');
  if (end.bodyInEvents !== chunks.length) return end.body;
  // A line end this reader does not know gives no body, not a wrong one.
  const lineEnd = end.eventLineEnd === undefined ? '\n' : end.eventLineEnd === '\r\n' ? '\r\n' : undefined;
  return lineEnd === undefined ? undefined : chunks.map((chunk) => sseEventText(chunk.raw, chunk.event, lineEnd)).join('');
}

/** v5: the pieces around the frames' raws and the raws, in turn, when the counts agree. */
function framedBody(end: HttpEndRecord, raws: unknown[]): string | undefined {
  const around = end.bodyAround;
  if (end.bodyInFrames !== raws.length || !Array.isArray(around) || around.length !== raws.length + 1) return end.body;
  let body = String(around[0]);
  for (const [i, raw] of raws.entries()) {
    if (typeof raw !== 'string') return undefined;
    body += `${raw}${String(around[i + 1])}`;
  }
  return body;
}

function streamKey(session: string, exchange: string): string {
  return `${session}\u0000${exchange}`;
}
