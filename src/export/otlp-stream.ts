/**
 * The spans of records as they stream by (otlp-spans.ts), joined into the trace the streaming linker finds, and
 * handed on in batches once nothing it will still say can change them: the export holds the linker's window, not
 * the log. An LLM call waits for its turn, a client's `tools/call` for its round trip; other spans are final at once.
 */
import type { LogRecord } from '../log/schema.js';
import type { LinkOptions, ToolRoundTrip, TraceTurn } from '../trace/link.js';
import { TraceLinker } from '../trace/linker.js';
import { setBounded } from '../session/recent-map.js';
import { joinTrip, joinTurn, llmSpanId, SpanBuilder, type SpanData, type SpanJoin } from './otlp-spans.js';

/** Spans a batch holds at least (but the last): one OTLP/JSON `resourceSpans` group each, one POST. */
export const SPAN_BATCH = 512;
/** Trace ids of LLM calls handed on, and changes waiting for their span, kept for round trips still to come. */
const RECENT = 20_000;

/** A span and its place in the order buildSpans gives (built order; turn spans after every span built). */
interface Placed {
  span: SpanData;
  ord: number;
}

/** A round trip, and the LLM calls it names (their span ids). */
interface WaitingTrip {
  trip: ToolRoundTrip;
  names: string[];
}

/** Spans of records in time order, handed on in batches as they become final; see the file's comment. */
export class SpanStream {
  private readonly builder = new SpanBuilder({ maxOpen: Number.MAX_SAFE_INTEGER });
  private readonly linker: TraceLinker;
  /** Built spans waiting for their turn or round trip, by id. */
  private readonly held = new Map<string, Placed>();
  /** What a turn or round trip said about spans not built yet, by id (an empty list: nothing to change). */
  private readonly early = new Map<string, ((span: SpanData) => void)[]>();
  /** Round trips waiting for the turns of the LLM calls they name. */
  private waiting: WaitingTrip[] = [];
  /** The trace ids of the LLM calls handed on lately. */
  private readonly traces = new Map<string, string>();
  private ready: Placed[] = [];
  private ord = 0;
  private turns = 0;
  private last = 0;
  private readonly join: SpanJoin = {
    at: (spanId, change) => this.settle(spanId, change),
    traceOf: (spanId) => this.held.get(spanId)?.span.traceId ?? this.traces.get(spanId),
  };

  constructor(private readonly options: LinkOptions = {}) {
    this.linker = new TraceLinker(options, { roundTrip: (trip) => this.trip(trip), turn: (turn) => this.turn(turn) });
  }

  /** Take the next record; returns a batch of final spans when one is full (most often none). */
  push(r: LogRecord): SpanData[] {
    this.last = r.time;
    for (const s of this.builder.push(r)) this.take(s);
    this.linker.push(r);
    return this.ready.length >= SPAN_BATCH ? this.hand() : [];
  }

  /** The records ended: every span left, in one last batch (the linker's notes go to `onNote`). */
  end(): SpanData[] {
    for (const s of this.builder.end(this.last)) this.take(s);
    for (const note of this.linker.end().notes) this.options.onNote?.(note);
    for (const w of this.waiting) joinTrip(w.trip, this.join);
    this.waiting = [];
    for (const p of this.held.values()) this.ready.push(p);
    this.held.clear();
    return this.hand();
  }

  private take(span: SpanData): void {
    const placed = { span, ord: this.ord++ };
    const changes = this.early.get(span.spanId);
    if (changes) {
      this.early.delete(span.spanId);
      for (const change of changes) change(span);
      this.final(placed);
    } else if (awaitsTrace(span)) {
      // Two spans of one id: only the last is joined, as in buildSpans.
      const before = this.held.get(span.spanId);
      if (before) this.final(before);
      this.held.set(span.spanId, placed);
    } else {
      this.final(placed);
    }
  }

  /** A turn or round trip is done with this span: change it (now, or once it is built) and hand it on. */
  private settle(spanId: string, change?: (span: SpanData) => void): void {
    const placed = this.held.get(spanId);
    if (placed) {
      this.held.delete(spanId);
      change?.(placed.span);
      this.final(placed);
      return;
    }
    const changes = this.early.get(spanId) ?? [];
    if (change) changes.push(change);
    setBounded(this.early, spanId, changes, RECENT);
  }

  private final(placed: Placed): void {
    this.ready.push(placed);
    if (placed.span.attributes['mcptap.exchange'] === undefined) return;
    setBounded(this.traces, placed.span.spanId, placed.span.traceId, RECENT);
  }

  private turn(turn: TraceTurn): void {
    const root = joinTurn(turn, this.join);
    if (root) this.final({ span: root, ord: Number.MAX_SAFE_INTEGER - 1e9 + this.turns++ });
    if (this.waiting.length === 0) return;
    const still = this.waiting;
    this.waiting = [];
    for (const w of still) this.joinOrWait(w);
  }

  private trip(trip: ToolRoundTrip): void {
    const names = [trip.llm && llmSpanId(trip.llm.session, trip.llm.exchange), trip.fedBackIn && llmSpanId(trip.fedBackIn.session, trip.fedBackIn.exchange)];
    this.joinOrWait({ trip, names: names.filter((id): id is string => typeof id === 'string') });
  }

  /** A round trip is joined once the LLM calls it names have had their turns, as buildSpans joins every turn first. */
  private joinOrWait(w: WaitingTrip): void {
    if (w.names.some((id) => this.held.has(id))) this.waiting.push(w);
    else joinTrip(w.trip, this.join);
  }

  /** The ready spans, by start time as buildSpans orders them. */
  private hand(): SpanData[] {
    const out = this.ready.sort((a, b) => a.span.startTime - b.span.startTime || a.ord - b.ord).map((p) => p.span);
    this.ready = [];
    return out;
  }
}

/**
 * Whether the trace may still change this span: an LLM call whose request was seen (`gen_ai.request.stream` is
 * set from it), or a `tools/call` the client sent (a call or one of its rounds).
 */
function awaitsTrace(span: SpanData): boolean {
  const a = span.attributes;
  if (a['mcptap.exchange'] !== undefined) return a['gen_ai.request.stream'] !== undefined;
  return a['mcp.method.name'] === 'tools/call' && a['mcptap.direction'] === 'c2s';
}

/**
 * Every span of a stream of records, at most SPAN_BATCH at a time to `take` (each awaited before more is read or
 * taken: what the window held at the end is written a batch at a time, not all at once).
 */
export async function streamSpans(records: AsyncIterable<LogRecord>, take: (batch: SpanData[]) => Promise<void>, options: LinkOptions = {}): Promise<{ records: number; spans: number }> {
  const stream = new SpanStream(options);
  let n = 0;
  let spans = 0;
  const hand = async (ready: SpanData[]): Promise<void> => {
    spans += ready.length;
    for (let i = 0; i < ready.length; i += SPAN_BATCH) await take(ready.slice(i, i + SPAN_BATCH));
  };
  for await (const r of records) {
    n++;
    await hand(stream.push(r));
  }
  await hand(stream.end());
  return { records: n, spans };
}
