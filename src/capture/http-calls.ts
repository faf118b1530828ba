/**
 * What the HTTP tap tells its inspector (http-inspector.ts) over the channel: each event of each exchange, in
 * the order it was forwarded, as a small array (`[call, exchange, …arguments]`); a chunk of traffic as
 * `[call, exchange, chunk, time, mono]`, the chunk call's shape. The tap speaks through HttpCalls.
 */
import type { Channel } from '../inspect/channel.js';
import type { InspectorLogConfig } from '../inspect/inspector-log.js';
import type { HttpOutcome, RecordDraft } from '../log/schema.js';
import type { RequestHead } from '../protocols/detect.js';

export const HTTP_CALL = {
  begin: 0,
  requestData: 1,
  requestEnd: 2,
  responseHead: 3,
  responseData: 4,
  responseEnd: 5,
  fail: 6,
  skipped: 7,
  wsOpen: 8,
  /** A WebSocket's bytes from the client, and from the server: the direction is in the kind, so the call has a chunk call's shape. */
  wsDataC2S: 9,
  wsDataS2C: 10,
  wsEnd: 11,
  record: 12,
  close: 13,
} as const;

export type HttpCall = readonly unknown[];

/** Both clocks, for a call's time and mono. A chunk's listener reads them itself: spread, this builds an array. */
export const now = (): [number, number] => [Date.now(), performance.now()];

/** Everything the inspector needs that can cross to another thread (plain data only). */
export interface HttpInspectorConfig extends InspectorLogConfig {
  maxBody: number;
  chunks: boolean;
  targetPath: string;
}

export type ErrorSummary = { name: string; code?: string; message: string };

/**
 * The HTTP backlog bounds: many streams back to back may together fall far behind, but one exchange may hold
 * only a small part of the backlog, so that one endless body (a 1 GB download) is cut early and costs little
 * memory. A skip only ends the inspection of the exchange it cuts.
 */
export const HTTP_MAX_BACKLOG_BYTES = 64 * 1024 * 1024;
export const HTTP_MAX_EXCHANGE_BACKLOG_BYTES = 8 * 1024 * 1024;

/** The HTTP tap's side: one method per event, each becoming a call in traffic order. */
export class HttpCalls {
  private count = 0;
  /** Exchanges whose copies stopped once inspection fell behind: the rest of them is only counted. */
  private readonly skipping = new Set<number>();

  constructor(readonly channel: Channel) {}

  /** A request arrived; returns the exchange's number for the calls that follow. */
  begin(head: RequestHead, time: number, mono: number): number {
    const x = ++this.count;
    this.channel.post([HTTP_CALL.begin, x, head, time, mono]);
    return x;
  }

  requestData(x: number, chunk: Buffer, time: number, mono: number): void {
    this.copy(HTTP_CALL.requestData, x, chunk, 'c2s', time, mono);
  }

  /** The request body ended, with the request's trailers when it had any. */
  requestEnd(x: number, time: number, mono: number, trailers?: Record<string, string>): void {
    this.channel.post(trailers ? [HTTP_CALL.requestEnd, x, time, mono, trailers] : [HTTP_CALL.requestEnd, x, time, mono]);
  }

  responseHead(x: number, status: number, headers: Record<string, string | string[] | undefined>, time: number, mono: number): void {
    this.channel.post([HTTP_CALL.responseHead, x, status, headers, time, mono]);
  }

  responseData(x: number, chunk: Buffer, time: number, mono: number): void {
    this.copy(HTTP_CALL.responseData, x, chunk, 's2c', time, mono);
  }

  /** The response ended, with its trailers when it had any. */
  responseEnd(x: number, time: number, mono: number, trailers?: Record<string, string>): void {
    this.skipping.delete(x);
    this.channel.post(trailers ? [HTTP_CALL.responseEnd, x, time, mono, trailers] : [HTTP_CALL.responseEnd, x, time, mono]);
  }

  fail(x: number, outcome: Exclude<HttpOutcome, 'complete'>, error: ErrorSummary | undefined, time: number, mono: number): void {
    this.skipping.delete(x);
    this.channel.post([HTTP_CALL.fail, x, outcome, error, time, mono]);
  }

  /** The connection was upgraded to a WebSocket: its messages are decoded from here on. */
  wsOpen(x: number, headers: Record<string, string | string[] | undefined>, time: number, mono: number): void {
    this.channel.post([HTTP_CALL.wsOpen, x, headers, time, mono]);
  }

  wsData(x: number, dir: 'c2s' | 's2c', chunk: Buffer, time: number, mono: number): void {
    // A WebSocket message cut by a skipped copy cannot be decoded: its connection is only counted from then on.
    this.copy(dir === 'c2s' ? HTTP_CALL.wsDataC2S : HTTP_CALL.wsDataS2C, x, chunk, dir, time, mono);
  }

  wsEnd(x: number, time: number, mono: number): void {
    this.skipping.delete(x);
    this.channel.post([HTTP_CALL.wsEnd, x, time, mono]);
  }

  /** A record made by the tap itself (listen, refused requests). */
  record(draft: RecordDraft): void {
    this.channel.post([HTTP_CALL.record, draft]);
  }

  /** End every session, write `draft` (the close record) last, flush and close the log. */
  close(draft: RecordDraft, time: number, mono: number): Promise<void> {
    return this.channel.finish([HTTP_CALL.close, draft, time, mono]);
  }

  private copy(kind: number, x: number, chunk: Buffer, dir: 'c2s' | 's2c', time: number, mono: number): void {
    if (!this.skipping.has(x) && this.channel.postChunk(kind, x, chunk, time, mono)) return;
    this.skipping.add(x);
    this.channel.post([HTTP_CALL.skipped, x, dir, chunk.length, time]);
  }
}
