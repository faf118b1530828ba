/**
 * `--otlp-endpoint URL` on `stdio` and `http`: spans streamed to an OTLP/HTTP receiver while the tap runs.
 *
 * Best-effort and never in the way of the traffic:
 * - `observe(record)` only appends to a bounded array and arms an unref'd timer; when the array is full the
 *   record is dropped and counted. No span is built and nothing is sent on the caller's stack.
 * - every flush interval the records become spans (otlp-spans.ts, the same mapping as `mcptap export`), which wait
 *   in a second bounded queue (oldest dropped first); one POST at a time goes out through OpenTelemetry's own
 *   OTLPTraceExporter (JSON over HTTP, with its timeout), loaded just after start, off the start-up path.
 * - a receiver that is down or slow costs spans, not memory, and gives one notice.
 *
 * A tap sees only its own traffic; with `joinLogsIn(logDir)` a `tools/call` span is joined to the model's tool
 * call found in the LLM proxy's log in the same folder (live-join.ts). Span ids are the same as in `mcptap export
 * --format otlp`, so a live trace and a later export line up (the export also groups a turn's LLM calls in one
 * trace, which live spans cannot know yet).
 */
import type { LogRecord } from '../log/schema.js';
import { McptapError } from '../types.js';
import { SpanBuilder, type SpanData } from './otlp-spans.js';
import { LiveToolCallIndex } from './live-join.js';
import { parseRawObject } from '../log/reader.js';
import { asObject, peerInfo } from '../protocols/mcp.js';

/** Default number of records waiting to become spans, and of spans waiting to be sent. */
export const DEFAULT_LIVE_MAX_RECORDS = 10_000;
export const DEFAULT_LIVE_MAX_SPANS = 2_048;

export interface LiveSpanExporterOptions {
  /** OTLP/HTTP endpoint: a base URL (`http://127.0.0.1:4318`, `/v1/traces` is added) or the full traces URL. */
  endpoint: string;
  /** Records held before the next flush; more are dropped. */
  maxRecords?: number;
  /** Spans held while waiting to be sent; the oldest are dropped. */
  maxSpans?: number;
  /** Spans per POST. */
  batchSize?: number;
  /** How often records become spans and a batch is sent (ms). */
  flushIntervalMs?: number;
  /** Give up on one POST after this long (ms). */
  timeoutMs?: number;
  /** Called once when sending fails or spans are dropped (a sentence); defaults to a line on stderr. */
  warn?: (message: string) => void;
}

/** Counts of what happened to the records handed over. */
export interface LiveSpanStats {
  records: number;
  droppedRecords: number;
  spans: number;
  droppedSpans: number;
  sent: number;
  failed: number;
}

/** A running live exporter. */
export interface LiveSpanExporter {
  /** The OTLP traces URL spans go to. */
  readonly url: string;
  /**
   * Join `tools/call` spans to the model's tool call found in the other logs of `dir` (the LLM proxy's), so a live
   * round trip is one trace (see live-join.ts). `ownFile` (this tap's log) is not read.
   */
  joinLogsIn(dir: string, ownFile?: string): void;
  /** Hand over one record (as the log has it). Never throws, never waits. */
  observe(record: LogRecord): void;
  /** Turn what is left into spans and send them, waiting at most `timeoutMs` (default 2000). */
  close(timeoutMs?: number): Promise<void>;
  readonly stats: LiveSpanStats;
}

/** The OTLP/HTTP traces URL for an endpoint given by the user; throws McptapError for a URL that is not http(s). */
export function otlpTracesUrl(endpoint: string): string {
  let url: URL;
  try {
    url = new URL(endpoint);
  } catch {
    throw new McptapError('BAD_OTLP_ENDPOINT', `--otlp-endpoint must be a URL such as http://127.0.0.1:4318, not "${endpoint}".`);
  }
  if (url.protocol !== 'http:' && url.protocol !== 'https:') {
    throw new McptapError('BAD_OTLP_ENDPOINT', `--otlp-endpoint must be an http:// or https:// URL (OTLP over HTTP), not "${endpoint}".`);
  }
  // As OTEL_EXPORTER_OTLP_ENDPOINT: a base URL gets the signal's path; a URL with a path is taken as given.
  if (url.pathname === '/' || url.pathname === '') url.pathname = '/v1/traces';
  return url.toString();
}

type OtlpExporter = { export(spans: unknown[], done: (result: { code: number; error?: Error }) => void): void; shutdown(): Promise<void> };

/** Start a live exporter. Nothing is sent until records arrive. */
export function startLiveSpanExporter(options: LiveSpanExporterOptions): LiveSpanExporter {
  const exporter = new LiveExporter(options);
  // Load the exporter while the server starts up rather than in the middle of the first burst of traffic; the
  // timer is unref'd so a tap that ends at once does not wait for it.
  setTimeout(() => void exporter.load().catch(() => {}), 50).unref();
  return exporter;
}

type LoadedExporter = { exporter: OtlpExporter; toReadableSpans: (s: SpanData[]) => unknown[] };

/** The two bounded queues (records, then spans), the flush timer, and one POST at a time. */
class LiveExporter implements LiveSpanExporter {
  readonly url: string;
  readonly stats: LiveSpanStats = { records: 0, droppedRecords: 0, spans: 0, droppedSpans: 0, sent: 0, failed: 0 };
  private readonly maxRecords: number;
  private readonly maxSpans: number;
  private readonly batchSize: number;
  private readonly interval: number;
  private readonly timeoutMs: number;
  private readonly warn: (message: string) => void;
  private readonly warned = new Set<string>();
  private readonly builder = new SpanBuilder();
  private records: LogRecord[] = [];
  private spans: SpanData[] = [];
  private timer: NodeJS.Timeout | undefined;
  private building: Promise<void> | undefined;
  private inFlight: Promise<void> | undefined;
  private exporter: Promise<LoadedExporter> | undefined;
  private closed = false;
  private joinIndex: LiveToolCallIndex | undefined;
  /** This tap's server, as hosts may prefix its tools: its label and its serverInfo.name. */
  private readonly serverNames = new Set<string>();

  constructor(options: LiveSpanExporterOptions) {
    this.url = otlpTracesUrl(options.endpoint);
    this.maxRecords = options.maxRecords ?? DEFAULT_LIVE_MAX_RECORDS;
    this.maxSpans = options.maxSpans ?? DEFAULT_LIVE_MAX_SPANS;
    this.batchSize = options.batchSize ?? 128;
    this.interval = options.flushIntervalMs ?? 500;
    this.timeoutMs = options.timeoutMs ?? 5000;
    this.warn = options.warn ?? ((m: string) => process.stderr.write(`mcptap: ${m}\n`));
  }

  // The interface's methods are bound: taps are handed `observe` alone (onRecord), as callers may be.
  readonly joinLogsIn = (dir: string, ownFile?: string): void => {
    this.joinIndex = new LiveToolCallIndex(dir, ownFile);
    // The first look only notes where each file ends; do it now, not when the first tool call is waiting.
    void this.joinIndex.refresh().catch(() => {});
  };

  readonly observe = (record: LogRecord): void => {
    if (this.closed) return;
    this.stats.records++;
    if (this.records.length >= this.maxRecords) {
      this.stats.droppedRecords++;
      this.warnOnce('drop-records', `spans for ${this.url} are falling behind the traffic; records are being skipped (the traffic and the log are not affected).`);
      return;
    }
    this.records.push(record);
    this.arm();
  };

  readonly close = async (closeTimeoutMs = 2000): Promise<void> => {
    if (this.closed) return;
    this.closed = true;
    clearTimeout(this.timer);
    this.timer = undefined;
    await this.building;
    await this.build().catch(() => {});
    const drain = (async () => {
      if (this.inFlight) await this.inFlight;
      while (this.spans.length > 0) await this.send();
      if (this.exporter) await (await this.exporter).exporter.shutdown();
    })();
    let deadline: NodeJS.Timeout | undefined;
    await Promise.race([drain.catch(() => {}), new Promise<void>((resolve) => (deadline = setTimeout(resolve, closeTimeoutMs)))]);
    clearTimeout(deadline);
  };

  /** OpenTelemetry's exporter and the span mapping, loaded once. */
  load(): Promise<LoadedExporter> {
    this.exporter ??= (async () => {
      const [{ OTLPTraceExporter }, { toReadableSpans }] = await Promise.all([import('@opentelemetry/exporter-trace-otlp-http'), import('./otlp.js')]);
      return { exporter: new OTLPTraceExporter({ url: this.url, timeoutMillis: this.timeoutMs, concurrencyLimit: 2 }) as unknown as OtlpExporter, toReadableSpans: toReadableSpans as (s: SpanData[]) => unknown[] };
    })();
    return this.exporter;
  }

  private warnOnce(key: string, message: string): void {
    if (this.warned.has(key)) return;
    this.warned.add(key);
    this.warn(message);
  }

  private arm(): void {
    if (this.timer || this.closed) return;
    this.timer = setTimeout(() => this.tick(), this.interval);
    this.timer.unref();
  }

  /** Records become spans; then, if no POST is out, the spans are sent. */
  private tick(): void {
    this.timer = undefined;
    if (this.building) return this.arm();
    this.building = this.build().finally(() => {
      this.building = undefined;
      if (!this.inFlight && this.spans.length > 0) this.inFlight = this.pump().finally(() => (this.inFlight = undefined));
      if (this.records.length > 0 || this.spans.length > 0) this.arm();
    });
  }

  private async build(): Promise<void> {
    const batch = this.records;
    this.records = [];
    const fresh: SpanData[] = [];
    for (const r of batch) {
      if (this.joinIndex) noteServerNames(r, this.serverNames);
      try {
        fresh.push(...this.builder.push(r));
      } catch {
        // A record the mapping cannot read costs its span, never the tap.
      }
    }
    if (this.joinIndex && fresh.some((s) => s.toolCall && s.parentSpanId === undefined)) await this.joinToModel(this.joinIndex, fresh);
    this.stats.spans += fresh.length;
    for (const s of fresh) this.spans.push(s);
    if (this.spans.length > this.maxSpans) {
      const excess = this.spans.length - this.maxSpans;
      this.spans = this.spans.slice(excess);
      this.stats.droppedSpans += excess;
      this.warnOnce('drop-spans', `the OTLP receiver at ${this.url} is not keeping up; spans are being dropped (the traffic and the log are not affected).`);
    }
  }

  /** A tools/call span without a parent gets the model's tool call it answers, found in the other logs. */
  private async joinToModel(index: LiveToolCallIndex, fresh: SpanData[]): Promise<void> {
    try {
      await index.refresh();
      for (const s of fresh) {
        if (!s.toolCall || s.parentSpanId !== undefined) continue;
        const model = index.find(s.toolCall.name, s.toolCall.arguments, s.startTime, [...this.serverNames]);
        if (!model) continue;
        s.traceId = model.traceId;
        s.parentSpanId = model.spanId;
      }
    } catch {
      // The other logs could not be read: the spans go out unjoined.
    }
  }

  /** Send batch after batch until the queue is empty: small batches, so serializing one never holds the tap long. */
  private async pump(): Promise<void> {
    while (this.spans.length > 0 && !this.closed) await this.send();
  }

  private async send(): Promise<void> {
    const batch = this.spans.slice(0, this.batchSize);
    this.spans = this.spans.slice(batch.length);
    try {
      const { exporter, toReadableSpans } = await this.load();
      const result = await new Promise<{ code: number; error?: Error }>((resolve) => exporter.export(toReadableSpans(batch), resolve));
      if (result.code === 0) this.stats.sent += batch.length;
      else this.failed(batch.length, result.error?.message ?? 'export failed');
    } catch (error) {
      this.failed(batch.length, (error as Error).message);
    }
  }

  private failed(spans: number, why: string): void {
    this.stats.failed += spans;
    this.warnOnce('send', `could not send spans to ${this.url} (${why}); the traffic and the log are not affected.`);
  }
}

/** One OTLP/HTTP receiver that batches of spans are posted to, in order, until `close`. */
export interface SpanSender {
  /** Post these spans (512 a POST); throws McptapError with a plain sentence when the receiver did not take them. */
  send(spans: readonly SpanData[]): Promise<void>;
  close(): Promise<void>;
}

/** A sender to `endpoint` (for `mcptap export --format otlp --endpoint URL`, which posts its batches as they come). */
export async function openSpanSender(endpoint: string, timeoutMs = 10_000): Promise<SpanSender> {
  const url = otlpTracesUrl(endpoint);
  const [{ OTLPTraceExporter }, { toReadableSpans }] = await Promise.all([import('@opentelemetry/exporter-trace-otlp-http'), import('./otlp.js')]);
  const exporter = new OTLPTraceExporter({ url, timeoutMillis: timeoutMs });
  return {
    async send(list) {
      for (let i = 0; i < list.length; i += 512) {
        const batch = toReadableSpans(list.slice(i, i + 512));
        const result = await new Promise<{ code: number; error?: Error }>((resolve) => exporter.export(batch, resolve));
        if (result.code !== 0) {
          throw new McptapError('OTLP_SEND_FAILED', `the OTLP receiver at ${url} did not take the spans (${result.error?.message ?? 'export failed'}). Is it running, and is the URL right?`);
        }
      }
    },
    close: () => exporter.shutdown(),
  };
}

/**
 * Send spans once: resolves when the receiver accepted them, throws McptapError with a plain sentence when it
 * did not.
 */
export async function sendSpans(endpoint: string, list: readonly SpanData[], timeoutMs = 10_000): Promise<void> {
  const sender = await openSpanSender(endpoint, timeoutMs);
  try {
    await sender.send(list);
  } finally {
    await sender.close();
  }
}

/** The names a host may prefix this server's tools with: the tap's label, and serverInfo.name once it answers initialize. */
function noteServerNames(r: LogRecord, names: Set<string>): void {
  if (r.kind !== 'request' && r.kind !== 'response') return;
  names.add(r.label);
  if (r.kind === 'response' && r.method === 'initialize') {
    const name = peerInfo(asObject(parseRawObject(r.raw)?.result)?.serverInfo)?.name;
    if (name !== undefined) names.add(name);
  }
}
