/**
 * `mcptap export --format otlp`: the spans of otlp-spans.ts as OTLP/JSON (an ExportTraceServiceRequest, what an
 * OTLP/HTTP receiver takes at /v1/traces), serialized by OpenTelemetry's own @opentelemetry/otlp-transformer so
 * the encoding (hex ids, nanosecond strings, attribute values, resource grouping) is the SDK's, not ours.
 *
 * The spans are handed to the serializer as ReadableSpan objects, the shape the SDK's exporters take: the
 * timestamps and ids come from the logs, so spans are not started through a Tracer (which would stamp "now" and
 * fresh ids).
 */
import { JsonTraceSerializer } from '@opentelemetry/otlp-transformer';
import { resourceFromAttributes, type Resource } from '@opentelemetry/resources';
import type { ReadableSpan } from '@opentelemetry/sdk-trace';
import type { Attributes, HrTime, Link, SpanContext } from '@opentelemetry/api';
import type { LogRecord } from '../log/schema.js';
import { isLlmCall, type LinkOptions } from '../trace/link.js';
import { MCPTAP_VERSION } from '../version.js';
import type { SpanAttributeValue, SpanData } from './otlp-spans.js';
import { SPAN_BATCH, SpanStream, streamSpans } from './otlp-stream.js';
import { Redactor } from '../log/redact.js';

/** OpenTelemetry's SpanKind and SpanStatusCode numbers (from @opentelemetry/api; written out to avoid loading it). */
const KIND = { internal: 0, server: 1, client: 2 } as const;
const STATUS = { unset: 0, ok: 1, error: 2 } as const;
const SAMPLED = 1;

/** Span attributes leave mcptap (a collector, a file): the log's default rules apply to every text in them. */
let redactor: Redactor | undefined;
function redacted(text: string): string {
  redactor ??= new Redactor();
  return redactor.redactText(text);
}
function redactAttributes(attributes: Record<string, SpanAttributeValue>): Attributes {
  let copy: Record<string, SpanAttributeValue> | undefined;
  for (const [key, value] of Object.entries(attributes)) {
    const next = typeof value === 'string' ? redacted(value) : Array.isArray(value) ? value.map((v) => (typeof v === 'string' ? redacted(v) : v)) : value;
    if (next !== value && (typeof next === 'string' || (next as unknown[]).some((v, i) => v !== (value as unknown[])[i]))) (copy ??= { ...attributes })[key] = next as SpanAttributeValue;
  }
  return (copy ?? attributes) as Attributes;
}

/**
 * Turn plain spans into the ReadableSpan objects OpenTelemetry's exporters and serializers take (live and
 * exported spans both pass here), with every text redacted.
 */
export function toReadableSpans(spans: readonly SpanData[]): ReadableSpan[] {
  const resources = new Map<string, Resource>();
  const resourceOf = (s: SpanData): Resource => {
    const key = `${s.resource.label}\u0000${s.resource.session}\u0000${s.resource.channel}`;
    let resource = resources.get(key);
    if (!resource) {
      resource = resourceFromAttributes({
        'service.name': 'mcptap',
        'service.version': MCPTAP_VERSION,
        'mcptap.label': redacted(s.resource.label),
        'mcptap.session': s.resource.session,
        'mcptap.channel': s.resource.channel,
      });
      resources.set(key, resource);
    }
    return resource;
  };
  const scope = { name: 'mcptap', version: MCPTAP_VERSION };
  return spans.map((s): ReadableSpan => {
    const context: SpanContext = { traceId: s.traceId, spanId: s.spanId, traceFlags: SAMPLED };
    const links: Link[] = s.links.map((l) => ({ context: { traceId: l.traceId, spanId: l.spanId, traceFlags: SAMPLED }, attributes: redactAttributes(l.attributes) }));
    const startTime = hrTime(s.startTime);
    const endTime = hrTime(s.endTime);
    return {
      name: redacted(s.name),
      kind: KIND[s.kind],
      spanContext: () => context,
      ...(s.parentSpanId !== undefined ? { parentSpanContext: { traceId: s.traceId, spanId: s.parentSpanId, traceFlags: SAMPLED } } : {}),
      startTime,
      endTime,
      duration: hrTime(s.endTime - s.startTime),
      status: { code: STATUS[s.status.code], ...(s.status.message !== undefined ? { message: redacted(s.status.message) } : {}) },
      attributes: redactAttributes(s.attributes),
      links,
      events: s.events.map((e) => ({ name: e.name, time: hrTime(e.time), attributes: redactAttributes(e.attributes) })),
      ended: true,
      resource: resourceOf(s),
      instrumentationScope: scope,
      droppedAttributesCount: 0,
      droppedEventsCount: 0,
      droppedLinksCount: 0,
    };
  });
}

/** The OTLP/JSON text (ExportTraceServiceRequest) of these spans. */
export function serializeOtlpJson(spans: readonly SpanData[]): string {
  const bytes = JsonTraceSerializer.serializeRequest(toReadableSpans(spans));
  return new TextDecoder().decode(bytes ?? new Uint8Array());
}

const HEAD = '{"resourceSpans":[';
const TAIL = ']}';

/**
 * The `resourceSpans` entries of spans, as the text between the request's brackets ('' for none): one group per
 * resource for each SPAN_BATCH of them, so what the serializer builds at once stays small.
 */
function resourceSpansJson(spans: readonly SpanData[]): string {
  const parts: string[] = [];
  for (let i = 0; i < spans.length; i += SPAN_BATCH) {
    const text = serializeOtlpJson(spans.slice(i, i + SPAN_BATCH));
    if (!text.startsWith(HEAD) || !text.endsWith(TAIL)) throw new Error(`unexpected OTLP/JSON from the serializer: ${text.slice(0, 40)}`);
    if (text.length > HEAD.length + TAIL.length) parts.push(text.slice(HEAD.length, -TAIL.length));
  }
  return parts.join(',');
}

/**
 * Records of one or more logs → OTLP/JSON, with tool round trips joined into their LLM calls' traces: the
 * document `writeOtlp` writes, as one string.
 */
export function formatOtlp(records: readonly LogRecord[], options: LinkOptions = {}): string {
  const stream = new SpanStream({ ...options, haveLlm: options.haveLlm ?? records.some(isLlmCall) });
  const parts: string[] = [];
  const add = (spans: SpanData[]): void => {
    const text = resourceSpansJson(spans);
    if (text !== '') parts.push(text);
  };
  for (const r of records) add(stream.push(r));
  add(stream.end());
  return `${HEAD}${parts.join(',')}${TAIL}`;
}

/**
 * The OTLP/JSON document of a stream of records, written as the spans become final: one ExportTraceServiceRequest
 * whose `resourceSpans` come in batches (a resource appears once in each batch it has spans in), with only the
 * linker's window in memory. Nothing is written for a stream without records (that is an error).
 */
export async function writeOtlp(records: AsyncIterable<LogRecord>, out: { write(text: string): Promise<void> }, options: LinkOptions = {}): Promise<{ records: number; spans: number }> {
  let parts = 0;
  const done = await streamSpans(
    records,
    async (batch) => {
      const text = resourceSpansJson(batch);
      if (text !== '') await out.write(`${parts++ === 0 ? HEAD : ','}${text}`);
    },
    options,
  );
  if (done.records > 0) await out.write(`${parts === 0 ? HEAD : ''}${TAIL}\n`);
  return done;
}

/** Epoch milliseconds (fractions kept to the microsecond) as OpenTelemetry's [seconds, nanoseconds]. */
function hrTime(ms: number): HrTime {
  const whole = Math.floor(ms / 1000);
  const nanos = Math.round((ms - whole * 1000) * 1e6);
  return nanos >= 1e9 ? [whole + 1, nanos - 1e9] : [whole, nanos];
}
