/**
 * What the HTTP tap tells its inspector, inline or on the inspection thread: each event of each exchange, in the
 * order it was forwarded, as a small array (`[call, exchange, …arguments]`) that crosses threads cheaply; a
 * chunk of traffic as `[call, exchange, chunk, time, mono]`, the shape call-batch.ts sends as numbers. The tap
 * speaks through HttpInspectionClient; http-inspector.ts carries the calls out.
 */
import type { InspectorLogConfig } from './inspector-log.js';
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

/** Calls that carry a chunk of traffic carry it here, so the thread can count the bytes it takes in. */
export const CHUNK_INDEX = 2;

export type HttpCall = readonly unknown[];

/** Everything the inspector needs that can cross to another thread (plain data only). */
export interface HttpInspectorConfig extends InspectorLogConfig {
  maxBody: number;
  chunks: boolean;
  targetPath: string;
}

export type ErrorSummary = { name: string; code?: string; message: string };

/** Where the client's calls go: to the thread (which may refuse copies while behind), or inline. */
export interface HttpCallChannel {
  send(call: HttpCall): void;
  /**
   * Send the call `[kind, x, chunk, time, mono]` for a chunk relayed at `time` (Date.now()); false when the
   * copy was refused because inspection is behind.
   */
  sendChunk(kind: number, x: number, chunk: Buffer, time: number, mono: number): boolean;
  /** Send the close call and resolve once the inspector has written its last record. */
  close(call: HttpCall): Promise<void>;
}

/** The HTTP tap's side: one method per event, each becoming a call in traffic order. */
export class HttpInspectionClient {
  private count = 0;
  /** Exchanges whose copies stopped once inspection fell behind: the rest of them is only counted. */
  private readonly skipping = new Set<number>();

  constructor(private readonly channel: HttpCallChannel) {}

  /** A request arrived; returns the exchange's number for the calls that follow. */
  begin(head: RequestHead, time: number, mono: number): number {
    const x = ++this.count;
    this.channel.send([HTTP_CALL.begin, x, head, time, mono]);
    return x;
  }

  requestData(x: number, chunk: Buffer, time: number, mono: number): void {
    this.copy(HTTP_CALL.requestData, x, chunk, 'c2s', time, mono);
  }

  /** The request body ended, with the request's trailers when it had any. */
  requestEnd(x: number, time: number, mono: number, trailers?: Record<string, string>): void {
    this.channel.send(trailers ? [HTTP_CALL.requestEnd, x, time, mono, trailers] : [HTTP_CALL.requestEnd, x, time, mono]);
  }

  responseHead(x: number, status: number, headers: Record<string, string | string[] | undefined>, time: number, mono: number): void {
    this.channel.send([HTTP_CALL.responseHead, x, status, headers, time, mono]);
  }

  responseData(x: number, chunk: Buffer, time: number, mono: number): void {
    this.copy(HTTP_CALL.responseData, x, chunk, 's2c', time, mono);
  }

  /** The response ended, with its trailers when it had any. */
  responseEnd(x: number, time: number, mono: number, trailers?: Record<string, string>): void {
    this.skipping.delete(x);
    this.channel.send(trailers ? [HTTP_CALL.responseEnd, x, time, mono, trailers] : [HTTP_CALL.responseEnd, x, time, mono]);
  }

  fail(x: number, outcome: Exclude<HttpOutcome, 'complete'>, error: ErrorSummary | undefined, time: number, mono: number): void {
    this.skipping.delete(x);
    this.channel.send([HTTP_CALL.fail, x, outcome, error, time, mono]);
  }

  /** The connection was upgraded to a WebSocket: its messages are decoded from here on. */
  wsOpen(x: number, headers: Record<string, string | string[] | undefined>, time: number, mono: number): void {
    this.channel.send([HTTP_CALL.wsOpen, x, headers, time, mono]);
  }

  wsData(x: number, dir: 'c2s' | 's2c', chunk: Buffer, time: number, mono: number): void {
    // A WebSocket message cut by a skipped copy cannot be decoded: its connection is only counted from then on.
    this.copy(dir === 'c2s' ? HTTP_CALL.wsDataC2S : HTTP_CALL.wsDataS2C, x, chunk, dir, time, mono);
  }

  wsEnd(x: number, time: number, mono: number): void {
    this.skipping.delete(x);
    this.channel.send([HTTP_CALL.wsEnd, x, time, mono]);
  }

  /** A record made by the tap itself (listen, refused requests). */
  record(draft: RecordDraft): void {
    this.channel.send([HTTP_CALL.record, draft]);
  }

  /** End every session, write `draft` (the close record) last, flush and close the log. */
  close(draft: RecordDraft, time: number, mono: number): Promise<void> {
    return this.channel.close([HTTP_CALL.close, draft, time, mono]);
  }

  private copy(kind: number, x: number, chunk: Buffer, dir: 'c2s' | 's2c', time: number, mono: number): void {
    if (!this.skipping.has(x) && this.channel.sendChunk(kind, x, chunk, time, mono)) return;
    this.skipping.add(x);
    this.channel.send([HTTP_CALL.skipped, x, dir, chunk.length, time]);
  }
}
