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
  const url = otlpTracesUrl(options.endpoint);
  const maxRecords = options.maxRecords ?? DEFAULT_LIVE_MAX_RECORDS;
  const maxSpans = options.maxSpans ?? DEFAULT_LIVE_MAX_SPANS;
  const batchSize = options.batchSize ?? 128;
  const interval = options.flushIntervalMs ?? 500;
  const timeoutMs = options.timeoutMs ?? 5000;
  const warn = options.warn ?? ((m: string) => process.stderr.write(`mcptap: ${m}\n`));
  const warned = new Set<string>();
  const warnOnce = (key: string, message: string): void => {
    if (warned.has(key)) return;
    warned.add(key);
    warn(message);
  };

  const stats: LiveSpanStats = { records: 0, droppedRecords: 0, spans: 0, droppedSpans: 0, sent: 0, failed: 0 };
  const builder = new SpanBuilder();
  let records: LogRecord[] = [];
  let spans: SpanData[] = [];
  let timer: NodeJS.Timeout | undefined;
  let inFlight: Promise<void> | undefined;
  let exporter: Promise<{ exporter: OtlpExporter; toReadableSpans: (s: SpanData[]) => unknown[] }> | undefined;
  let closed = false;
  let joinIndex: LiveToolCallIndex | undefined;
  /** This tap's server, as hosts may prefix its tools: its label and its serverInfo.name. */
  const serverNames = new Set<string>();

  const arm = (): void => {
    if (timer || closed) return;
    timer = setTimeout(tick, interval);
    timer.unref();
  };

  let building: Promise<void> | undefined;
  function tick(): void {
    timer = undefined;
    if (building) return arm();
    building = build().finally(() => {
      building = undefined;
      if (!inFlight && spans.length > 0) inFlight = pump().finally(() => (inFlight = undefined));
      if (records.length > 0 || spans.length > 0) arm();
    });
  }

  async function build(): Promise<void> {
    const batch = records;
    records = [];
    const fresh: SpanData[] = [];
    for (const r of batch) {
      if (joinIndex) noteServerNames(r, serverNames);
      try {
        fresh.push(...builder.push(r));
      } catch {
        // A record the mapping cannot read costs its span, never the tap.
      }
    }
    if (joinIndex && fresh.some((s) => s.toolCall && s.parentSpanId === undefined)) {
      try {
        await joinIndex.refresh();
        for (const s of fresh) {
          if (!s.toolCall || s.parentSpanId !== undefined) continue;
          const model = joinIndex.find(s.toolCall.name, s.toolCall.arguments, s.startTime, [...serverNames]);
          if (!model) continue;
          s.traceId = model.traceId;
          s.parentSpanId = model.spanId;
        }
      } catch {
        // The other logs could not be read: the spans go out unjoined.
      }
    }
    stats.spans += fresh.length;
    for (const s of fresh) spans.push(s);
    if (spans.length > maxSpans) {
      const excess = spans.length - maxSpans;
      spans = spans.slice(excess);
      stats.droppedSpans += excess;
      warnOnce('drop-spans', `the OTLP receiver at ${url} is not keeping up; spans are being dropped (the traffic and the log are not affected).`);
    }
  }

  function load(): NonNullable<typeof exporter> {
    exporter ??= (async () => {
      const [{ OTLPTraceExporter }, { toReadableSpans }] = await Promise.all([import('@opentelemetry/exporter-trace-otlp-http'), import('./otlp.js')]);
      return { exporter: new OTLPTraceExporter({ url, timeoutMillis: timeoutMs, concurrencyLimit: 2 }) as unknown as OtlpExporter, toReadableSpans: toReadableSpans as (s: SpanData[]) => unknown[] };
    })();
    return exporter;
  }

  /** Send batch after batch until the queue is empty: small batches, so serializing one never holds the tap long. */
  async function pump(): Promise<void> {
    while (spans.length > 0 && !closed) await send();
  }

  async function send(): Promise<void> {
    const batch = spans.slice(0, batchSize);
    spans = spans.slice(batch.length);
    try {
      const { exporter: e, toReadableSpans } = await load();
      const result = await new Promise<{ code: number; error?: Error }>((resolve) => e.export(toReadableSpans(batch), resolve));
      if (result.code === 0) stats.sent += batch.length;
      else {
        stats.failed += batch.length;
        warnOnce('send', `could not send spans to ${url} (${result.error?.message ?? 'export failed'}); the traffic and the log are not affected.`);
      }
    } catch (error) {
      stats.failed += batch.length;
      warnOnce('send', `could not send spans to ${url} (${(error as Error).message}); the traffic and the log are not affected.`);
    }
  }

  // Load the exporter while the server starts up rather than in the middle of the first burst of traffic; the
  // timer is unref'd so a tap that ends at once does not wait for it.
  setTimeout(() => void load().catch(() => {}), 50).unref();

  return {
    url,
    stats,
    joinLogsIn(dir: string, ownFile?: string): void {
      joinIndex = new LiveToolCallIndex(dir, ownFile);
      // The first look only notes where each file ends; do it now, not when the first tool call is waiting.
      void joinIndex.refresh().catch(() => {});
    },
    observe(record: LogRecord): void {
      if (closed) return;
      stats.records++;
      if (records.length >= maxRecords) {
        stats.droppedRecords++;
        warnOnce('drop-records', `spans for ${url} are falling behind the traffic; records are being skipped (the traffic and the log are not affected).`);
        return;
      }
      records.push(record);
      arm();
    },
    async close(closeTimeoutMs = 2000): Promise<void> {
      if (closed) return;
      closed = true;
      if (timer) clearTimeout(timer);
      timer = undefined;
      await building;
      await build().catch(() => {});
      const drain = (async () => {
        if (inFlight) await inFlight;
        while (spans.length > 0) await send();
        if (exporter) await (await exporter).exporter.shutdown();
      })();
      let deadline: NodeJS.Timeout | undefined;
      await Promise.race([drain.catch(() => {}), new Promise<void>((resolve) => (deadline = setTimeout(resolve, closeTimeoutMs)))]);
      if (deadline) clearTimeout(deadline);
    },
  };
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
