/**
 * HTTP exchanges seen from the middle: the copy of each request and response goes in, piece by piece, in the
 * order it was forwarded; records come out through the sink. No sockets here — the capture layer
 * (capture/http.ts) feeds these objects, and tests can feed them literal bytes.
 *
 * Each exchange gets `http-request`, `http-response` and `http-end` records. On top of that, what it speaks
 * decides what else is written: MCP messages (Streamable HTTP or legacy SSE) go through one McpSession per MCP
 * session — found by Mcp-Session-Id, or for legacy SSE by the endpoint URI its stream announced — so a server
 * request on one stream is matched with the client's answer in a later POST; model calls (Ollama, OpenAI,
 * Anthropic, Gemini) go through an LlmTurn.
 */
import type { Channel, Frame } from '../types.js';
import { LEVEL, type HttpEndRecord, type HttpOutcome, type LoggedHeaders, type RecordDraft, type RecordSink } from '../log/schema.js';
import { redactHeaders, redactPathQuery, type Redactor } from '../log/redact.js';
import { BodyCapture, contentCoding, createBodyDecoder, decodeBodyHead, type BodyDecoder, type CapturedBody } from '../framing/body.js';
import { SseFramer, type SseItem } from '../framing/sse.js';
import { LineFramer } from '../framing/lines.js';
import { JsonArrayFramer } from '../framing/json-array.js';
import {
  acceptsEventStream,
  channelFromHead,
  isJsonRpcBody,
  isLlmApi,
  isLlmTurnPath,
  mediaType,
  pathOnly,
  resolveEndpoint,
  type RequestHead,
} from '../protocols/detect.js';
import { McpSession } from './mcp-session.js';
import { LlmTurn } from './llm-turn.js';
import { ChunkedBody, ChunkedEvents, FramedBody } from './chunked-body.js';
import { Correlator, roundMs } from './correlator.js';
import { formatMs } from './annotate.js';
import { peerInfo, preview } from '../protocols/mcp.js';
import { mcpHeadersOf, type McpHeaders } from '../protocols/mcp-headers.js';

/** Most response chunk boundaries kept per exchange for replay; later chunks are merged into the last. */
export const MAX_CHUNK_MARKS = 10_000;
/**
 * Most MCP sessions followed at once. Streamable HTTP clients often leave without a DELETE, so a long-running
 * proxy would otherwise keep every session it ever saw; past the cap the least recently used one is ended
 * (its open requests become `pending` records) — a later message for it opens a fresh one.
 */
export const MAX_MCP_SESSIONS = 1_000;
/**
 * How much of a model call's request body is read to summarize it, whatever --max-body says: a chat with an
 * image is several MB of JSON, and a JSON body cut short cannot be read at all. Only `body` in the log is capped.
 */
export const LLM_REQUEST_PARSE_MAX = 64 * 1024 * 1024;

type McpChannel = 'mcp-http' | 'mcp-sse' | 'mcp-ws';

/** One MCP session as the HTTP tap tracks it. */
export interface McpSessionEntry {
  /** The `session` field of its records. */
  readonly session: string;
  readonly channel: McpChannel;
  readonly mcp: McpSession;
  /** The names it is known by (`sid:<Mcp-Session-Id>`, `ep:<endpoint path>`). */
  readonly keys: Set<string>;
  ended: boolean;
}

export interface HttpObserverOptions {
  sink: RecordSink;
  /** Session of records that belong to no MCP session (LLM calls, plain HTTP). */
  session: string;
  /** Keep at most this many bytes of any body or frame in the log. */
  maxBody: number;
  /** Write one `llm-chunk` record per streamed chunk. */
  chunks: boolean;
  /** The upstream URL's path prefix, e.g. `/v1` for a base URL; joined with request paths to detect the API. */
  targetPath?: string;
  /** The log's redaction rules for headers, or `false` when redaction is off (--no-redact). */
  redactor?: Redactor | false;
  /** Makes MCP session ids (the `session` field); defaults to a counter. */
  newSessionId?: () => string;
}

/** Every exchange and MCP session of one proxy. */
export class HttpObserver {
  readonly sink: RecordSink;
  readonly session: string;
  readonly maxBody: number;
  readonly chunks: boolean;
  readonly targetPath: string;
  readonly redactor: Redactor | false | undefined;
  private readonly newSessionId: () => string;
  private readonly sessions = new Map<string, McpSessionEntry>();
  private readonly all = new Set<McpSessionEntry>();
  /** Exchanges whose last records wait for a decoder (zlib hands its output back asynchronously). */
  private readonly decoding = new Set<Promise<void>>();
  /** Answers to MCP POSTs that may be left to their frame records, by exchange (see FramedBody). */
  readonly framedBodies = new Map<string, FramedBody>();
  private count = 0;

  constructor(options: HttpObserverOptions) {
    this.sink = options.sink;
    this.session = options.session;
    this.maxBody = options.maxBody;
    this.chunks = options.chunks;
    this.targetPath = (options.targetPath ?? '').replace(/\/+$/, '');
    this.redactor = options.redactor;
    let n = 0;
    this.newSessionId = options.newSessionId ?? (() => `${this.session}-mcp${++n}`);
  }

  /** A request arrived (its head): start observing the exchange. */
  begin(head: RequestHead, time: number, mono: number): HttpExchange {
    return new HttpExchange(this, `x${++this.count}`, head, time, mono);
  }

  /** The MCP session known by `key`, if any. */
  find(key: string): McpSessionEntry | undefined {
    const entry = this.sessions.get(key);
    if (entry) {
      // Most recently used last, so the cap ends the session idle longest.
      this.all.delete(entry);
      this.all.add(entry);
    }
    return entry;
  }

  /** A frame record of an answer that may be left to its frames is counted there, as the reader will count it. */
  private noteFrame(draft: RecordDraft, session: string): void {
    if (this.framedBodies.size === 0 || draft.dir !== 's2c' || !('raw' in draft)) return;
    const exchange = (draft as { exchange?: unknown }).exchange;
    if (typeof exchange === 'string') this.framedBodies.get(exchange)?.frame(draft.raw, session);
  }

  /** A new MCP session, registered under `key` when given. */
  open(channel: McpChannel, key?: string): McpSessionEntry {
    const session = this.newSessionId();
    const keys = new Set<string>();
    const sink = this.sink;
    const entry: McpSessionEntry = {
      session,
      channel,
      keys,
      ended: false,
      mcp: new McpSession({ sink: { write: (draft: RecordDraft) => (this.noteFrame(draft, session), sink.write({ ...draft, session, channel: draft.channel ?? channel })) }, stdio: false }),
    };
    if (this.all.size >= MAX_MCP_SESSIONS) {
      const idlest = this.all.values().next().value;
      if (idlest) this.endSession(idlest, Date.now(), performance.now());
    }
    this.all.add(entry);
    if (key !== undefined) this.alias(key, entry);
    return entry;
  }

  /** The MCP session known by `key`, opened when new (mcptap may have started in the middle of a session). */
  findOrOpen(channel: McpChannel, key: string): McpSessionEntry {
    return this.find(key) ?? this.open(channel, key);
  }

  /** Register another name for a session (the Mcp-Session-Id its initialize response assigned). */
  alias(key: string, entry: McpSessionEntry): void {
    this.sessions.set(key, entry);
    entry.keys.add(key);
  }

  /** The session ended (DELETE, legacy stream closed): its unanswered requests become `pending` records. */
  endSession(entry: McpSessionEntry, time: number, mono: number): void {
    if (entry.ended) return;
    entry.ended = true;
    entry.mcp.end(time, mono);
    for (const key of entry.keys) if (this.sessions.get(key) === entry) this.sessions.delete(key);
    this.all.delete(entry);
  }

  /** Keep track of work that finishes later (an exchange's final records, after its decoder). */
  track(work: Promise<void>): void {
    this.decoding.add(work);
    void work.finally(() => this.decoding.delete(work));
  }

  /** Resolves when every exchange has written its final records, or after `timeoutMs`. */
  async idle(timeoutMs: number): Promise<void> {
    if (this.decoding.size === 0) return;
    let timer: NodeJS.Timeout | undefined;
    await Promise.race([Promise.all([...this.decoding]), new Promise<void>((resolve) => (timer = setTimeout(resolve, timeoutMs)))]);
    clearTimeout(timer);
  }

  /** The proxy is closing: end every session still open. */
  close(time: number, mono: number): void {
    for (const entry of [...this.all]) this.endSession(entry, time, mono);
  }
}

type Framing = 'sse' | 'ndjson' | 'json-array' | 'body';

/** One HTTP request/response pair. Call in order; every method is safe to call after the exchange ended. */
export class HttpExchange {
  readonly id: string;
  private readonly observer: HttpObserver;
  private readonly head: RequestHead;
  /** The head as records show it: the path with credentials in its query (Gemini's `?key=`) redacted. */
  private readonly shown: RequestHead;
  private readonly startMono: number;
  /** The path as the upstream sees it (target prefix + request path), for detection. */
  private readonly apiPath: string;
  private channel: Channel;
  private mcp: McpSessionEntry | undefined;
  /** For an initialize without a session id: the session to register under the id the response assigns. */
  private provisional = false;
  /**
   * Stateless traffic (no Mcp-Session-Id: MCP 2026-07-28, or a 2025 server without sessions): the client's
   * request is paired with the answer this exchange carries, never by id across exchanges.
   */
  private pairing: Correlator | undefined;
  /** The 2026-07-28 headers that mirror the request body, checked against it. */
  private mirrored: McpHeaders | undefined;
  private llm: LlmTurn | undefined;

  private readonly reqBody: BodyCapture;
  /** For a model call: the body up to LLM_REQUEST_PARSE_MAX, to summarize it (the log keeps only reqBody). */
  private readonly llmBody: BodyCapture | undefined;
  private reqBytes = 0;
  private reqEndMono: number | undefined;
  /** Response work that arrived before the request body ended waits here, so records keep their order. */
  private waiting: (() => void)[] | undefined = [];

  private status: number | undefined;
  private resHeadMono = 0;
  private resBytes = 0;
  /** Each chunk's time since the head and its length, in turn: pairs made per chunk lived through every young collection. */
  private readonly chunkMarks: number[] = [];
  private resBody: BodyCapture;
  private framing: Framing = 'body';
  private sse: SseFramer | undefined;
  private lines: LineFramer | undefined;
  /** For an NDJSON body: whether its llm-chunk records carry it whole (chunked-body.ts). */
  private chunked: ChunkedBody | undefined;
  /** For an LLM's SSE body: whether its llm-chunk records carry it whole. */
  private chunkedEvents: ChunkedEvents | undefined;
  /** For the answer to an MCP POST: whether its frame records carry it (bodyInFrames). */
  private framedBody: FramedBody | undefined;
  private array: JsonArrayFramer | undefined;
  private decoder: BodyDecoder | undefined;
  private afterDecode: (() => void) | undefined;
  private done = false;
  /** Bytes that passed while the inspection thread was behind: counted, not inspected. */
  private uninspectedBytes = 0;

  constructor(observer: HttpObserver, id: string, head: RequestHead, time: number, mono: number) {
    this.observer = observer;
    this.id = id;
    this.head = head;
    const shownPath = redactPathQuery(head.path, observer.redactor);
    this.shown = shownPath === head.path ? head : { ...head, path: shownPath };
    this.startMono = mono;
    this.apiPath = observer.targetPath + head.path;
    this.reqBody = new BodyCapture(observer.maxBody);
    this.resBody = new BodyCapture(observer.maxBody);
    const channel = channelFromHead({ ...head, path: this.apiPath });
    // A GET that asks for an event stream without a session id is how a legacy SSE client connects.
    const legacyGuess = head.method === 'GET' && acceptsEventStream(head.headers) && channel === undefined;
    this.channel = channel ?? (legacyGuess ? 'mcp-sse' : 'http');
    const llmCall = head.method === 'POST' && isLlmApi(this.channel) && isLlmTurnPath(this.channel, pathOnly(this.apiPath));
    if (llmCall && observer.maxBody < LLM_REQUEST_PARSE_MAX) this.llmBody = new BodyCapture(LLM_REQUEST_PARSE_MAX);
  }

  /** The protocol this exchange speaks, as far as known. */
  get speaks(): Channel {
    return this.channel;
  }

  /** The MCP session this exchange belongs to, once known. */
  get mcpSession(): string | undefined {
    return this.mcp?.session;
  }

  /** A piece of the request body, as forwarded. */
  requestData(chunk: Buffer): void {
    if (this.reqEndMono !== undefined || this.uninspectedBytes > 0) return;
    this.reqBytes += chunk.length;
    this.reqBody.push(chunk);
    this.llmBody?.push(chunk);
  }

  /** The request body ended (or never will: `fail` calls this when the client gave up first). */
  requestEnd(time: number, mono: number, trailers?: Record<string, string>): void {
    if (this.reqEndMono !== undefined) return;
    this.reqEndMono = mono;
    let body = this.reqBody.result();
    let head = this.reqBody.head();
    // The frame's full size: the forwarded body, or for a decoded body as much as was decoded.
    let frameSize = body.bytes;
    const coding = contentCoding(this.head.headers['content-encoding']);
    if (coding !== undefined && coding !== 'identity' && body.bytes > 0) {
      // A compressed request body (rare, but some SDKs gzip large ones): log the decoded copy.
      const decoded = decodeBodyHead(coding, head, this.observer.maxBody);
      if (decoded) {
        const copy = new BodyCapture(this.observer.maxBody);
        copy.push(decoded);
        body = { ...copy.result(), bytes: body.bytes, ...(body.truncated || copy.result().truncated ? { truncated: true } : {}) };
        head = copy.head();
        frameSize = decoded.length;
      }
    }
    const text = body.bodyEncoding === 'base64' ? '' : body.body ?? '';
    this.classify(text);
    if (this.mcp && this.channel === 'mcp-http' && this.head.method === 'POST') {
      this.framedBody = new FramedBody(this.mcp.session, this.observer.maxBody);
      this.observer.framedBodies.set(this.id, this.framedBody);
    }
    this.write({
      time,
      kind: 'http-request',
      dir: 'c2s',
      exchange: this.id,
      method: this.head.method,
      path: this.shown.path,
      headers: redactHeaders(this.head.headers, this.observer.redactor),
      bodyBytes: body.bytes,
      msg: `${this.head.method} ${this.shown.path}${body.bytes ? ` with a ${body.bytes}-byte body` : ''}${this.describeChannel()}.`,
      ...bodyFields(body),
      ...(trailers ? { trailers: redactHeaders(trailers, this.observer.redactor) } : {}),
    });
    if (this.llm) {
      const whole = this.llmBody && body.truncated && coding === 'identity' ? this.llmBody.result() : undefined;
      this.llm.request(whole?.bodyEncoding === undefined && whole?.body !== undefined ? whole.body : text, time, mono);
    }
    if (this.mcp && text) this.observeMcp('c2s', head, frameSize, body.truncated === true, time, mono, undefined, frameSize === body.bytes ? this.reqBody.tail() : undefined);
    const waiting = this.waiting ?? [];
    this.waiting = undefined;
    for (const work of waiting) work();
  }

  /** Response status and headers arrived from upstream. */
  responseHead(status: number, headers: Record<string, string | string[] | undefined>, time: number, mono: number): void {
    this.later(() => {
      if (this.done || this.status !== undefined) return;
      this.status = status;
      this.resHeadMono = mono;
      const sid = firstValue(headers['mcp-session-id']);
      if (this.mcp && this.provisional) {
        // The session id the server assigned names the session from now on. A server without sessions
        // (stateless) assigns none: its later traffic is then this client's, until the next initialize.
        this.observer.alias(sid !== undefined ? `sid:${sid}` : 'stateless', this.mcp);
        this.provisional = false;
      }
      const type = mediaType(headers['content-type']);
      if (type === 'text/event-stream') {
        this.framing = 'sse';
        this.sse = new SseFramer({ maxEventBytes: this.observer.maxBody });
        if (this.llm) this.chunkedEvents = new ChunkedEvents(this.observer.maxBody);
      } else if (type === 'application/x-ndjson' || (this.llm && this.channel === 'ollama' && type !== 'application/json' && status < 400)) {
        this.framing = 'ndjson';
        this.lines = new LineFramer({ dir: 's2c', maxFrameBytes: this.observer.maxBody });
        this.chunked = new ChunkedBody();
      } else if (this.llm && this.channel === 'gemini' && type === 'application/json' && status < 400 && /:streamGenerateContent$/.test(pathOnly(this.apiPath))) {
        // Gemini streams without alt=sse as one JSON array, each element a chunk of the reply.
        this.framing = 'json-array';
        this.array = new JsonArrayFramer({ maxElementBytes: this.observer.maxBody });
      }
      const coding = contentCoding(headers['content-encoding']);
      if (coding !== undefined && coding !== 'identity') {
        this.decoder = createBodyDecoder(
          coding,
          (chunk) => this.consume(chunk, Date.now(), performance.now()),
          () => {
            const then = this.afterDecode;
            this.afterDecode = undefined;
            then?.();
          },
          (error) => this.warn(`mcptap could not decode the ${coding} response body of ${this.head.method} ${this.shown.path} for the log (${error.message}); the client got it unchanged.`, Date.now()),
        );
      }
      this.llm?.responseHead(status);
      const ttfbMs = roundMs(Math.max(0, mono - (this.reqEndMono ?? this.startMono)));
      this.write({
        time,
        kind: 'http-response',
        dir: 's2c',
        exchange: this.id,
        status,
        headers: redactHeaders(headers, this.observer.redactor),
        ttfbMs,
        ...(status >= 400 ? { level: LEVEL.warn } : {}),
        msg: `${this.head.method} ${this.shown.path} → ${status}${type ? ` (${type})` : ''} after ${formatMs(ttfbMs)}${describeStatus(status, headers)}.`,
      });
    });
  }

  /** A piece of the response body, as forwarded (still compressed, if it was). */
  responseData(chunk: Buffer, time: number, mono: number): void {
    // Not wrapped in a closure for later() unless the request body is still being read: this runs for every chunk.
    if (this.waiting) this.waiting.push(() => this.takeResponseData(chunk, time, mono));
    else this.takeResponseData(chunk, time, mono);
  }

  private takeResponseData(chunk: Buffer, time: number, mono: number): void {
    if (this.done || this.uninspectedBytes > 0) return;
    this.resBytes += chunk.length;
    const marks = this.chunkMarks;
    if (marks.length < 2 * MAX_CHUNK_MARKS) marks.push(roundMs(mono - this.resHeadMono), chunk.length);
    else marks[marks.length - 1]! += chunk.length;
    if (this.decoder) this.decoder.push(chunk);
    else this.consume(chunk, time, mono);
  }

  /**
   * Bytes of this exchange that were relayed while inspection had fallen behind, and so never reached the copy:
   * counted in the byte totals, said once in a warning and in the end record, but not inspected. The tap sends
   * no more copies of an exchange once it has skipped one, so what was inspected stays a clean prefix.
   */
  skipped(dir: 'c2s' | 's2c', bytes: number, time: number): void {
    if (this.uninspectedBytes === 0) {
      this.warn(`mcptap fell behind the traffic: the rest of ${this.head.method} ${this.shown.path} (exchange ${this.id}) is relayed in full but not inspected, and its records end with what was seen.`, time);
    }
    this.uninspectedBytes += bytes;
    if (dir === 'c2s') this.reqBytes += bytes;
    else this.later(() => (this.resBytes += bytes));
  }

  /** The response ended normally. */
  responseEnd(time: number, mono: number, trailers?: Record<string, string>): void {
    this.later(() => {
      this.trailers = trailers;
      this.finish('complete', undefined, time, mono);
    });
  }

  /** The response's trailers, when it had any (logged with the http-end record). */
  private trailers: Record<string, string> | undefined;

  /**
   * The exchange broke: the client went away, the upstream reset the connection or could not be reached, or
   * the connection was upgraded to a WebSocket.
   */
  fail(outcome: Exclude<HttpOutcome, 'complete'>, error: { name: string; code?: string; message: string } | undefined, time: number, mono: number): void {
    // A request body cut short still gets its record.
    if (this.reqEndMono === undefined) this.requestEnd(time, mono);
    this.later(() => this.finish(outcome, error, time, mono));
  }

  private later(work: () => void): void {
    if (this.waiting) this.waiting.push(work);
    else work();
  }

  /** Decide what the exchange speaks now that its request body is known; open its MCP session or LLM turn. */
  private classify(text: string): void {
    const path = pathOnly(this.apiPath);
    if (isLlmApi(this.channel) && isLlmTurnPath(this.channel, path) && this.head.method === 'POST') {
      this.llm = new LlmTurn({ sink: this.observer.sink, channel: this.channel, exchange: this.id, endpoint: path, path: this.apiPath, chunks: this.observer.chunks });
      return;
    }
    if (isLlmApi(this.channel)) return;
    const sid = firstValue(this.head.headers['mcp-session-id']);
    const legacy = this.observer.find(`ep:${this.head.path}`);
    if (legacy && !legacy.ended) {
      this.mcp = legacy;
      this.channel = legacy.channel;
      return;
    }
    if (sid !== undefined) {
      this.mcp = this.observer.findOrOpen('mcp-http', `sid:${sid}`);
      this.channel = 'mcp-http';
      return;
    }
    if (text && isJsonRpcBody(text)) {
      this.channel = 'mcp-http';
      if (/"method"\s*:\s*"initialize"/.test(text)) {
        // The session id comes with the response; until then the session is known only to this exchange.
        this.mcp = this.observer.open('mcp-http');
        this.provisional = true;
      } else {
        // No session id ties these POSTs together: the session is the client's identity (2026-07-28 `_meta`
        // clientInfo), and the exchange pairs each request with its answer (docs/log-format.md, "Sessions").
        this.mcp = this.observer.findOrOpen('mcp-http', statelessKey(text));
        this.pairing = new Correlator();
        this.mirrored = mcpHeadersOf(this.head.headers);
      }
    }
  }

  /** Decoded response bytes: frame them as the content type says. */
  private consume(chunk: Buffer, time: number, mono: number): void {
    this.resBody.push(chunk);
    if (this.framing === 'sse') for (const item of this.sse!.push(chunk)) this.onSse(item, time, mono);
    else if (this.framing === 'ndjson') for (const line of this.lines!.push(chunk, time, mono)) this.onNdjsonLine(line.bytes.toString('utf8'), time, mono);
    else if (this.framing === 'json-array') for (const element of this.array!.push(chunk)) this.onLine(element.text, time, mono);
  }

  private onLine(text: string, time: number, mono: number): boolean {
    return this.llm ? this.llm.frame(text, undefined, time, mono) : false;
  }

  private onNdjsonLine(text: string, time: number, mono: number): void {
    this.chunked!.line(text, this.onLine(text, time, mono));
  }

  private onSse(item: SseItem, time: number, mono: number): void {
    if (this.llm) {
      if (item.type === 'event') {
        const data = item.data ?? '';
        this.chunkedEvents?.event(data, item.event, this.llm.frame(data, item.event, time, mono));
      } else this.chunkedEvents?.broken();
      return;
    }
    if (item.type === 'event' && item.event === 'endpoint' && item.data !== undefined && !this.mcp) {
      // Legacy SSE: the stream names the URI the client must POST to; that URI is the session from now on.
      const endpoint = resolveEndpoint(item.data, this.head.path);
      this.mcp = this.observer.open('mcp-sse', `ep:${endpoint}`);
      this.channel = 'mcp-sse';
    }
    const isMessage = item.type === 'event' && item.data !== undefined && item.data !== '' && (item.event === undefined || item.event === 'message');
    if (isMessage && (this.mcp || isJsonRpcBody(item.data!))) {
      if (!this.mcp) {
        this.mcp = this.observer.findOrOpen('mcp-http', 'stateless');
        this.channel = 'mcp-http';
      }
      const bytes = Buffer.from(item.data!, 'utf8');
      this.observeMcp('s2c', bytes, item.truncated ? item.dataSize ?? item.size : bytes.length, item.truncated === true, time, mono, item.id, item.tail);
      return;
    }
    const sse: RecordDraft = {
      time,
      kind: 'sse',
      dir: 's2c',
      exchange: this.id,
      msg: describeSse(item),
    };
    if (item.type === 'comment') sse.comment = item.text;
    else {
      if (item.event !== undefined) sse.event = item.event;
      if (item.id !== undefined) sse.id = item.id;
      if (item.retry !== undefined) sse.retry = item.retry;
      if (item.data !== undefined) sse.data = item.data;
      if (item.truncated) sse.truncated = true;
    }
    this.write(sse);
  }

  private observeMcp(dir: 'c2s' | 's2c', bytes: Buffer, size: number, truncated: boolean, time: number, mono: number, sseId?: string, tail?: Buffer): void {
    const frame: Frame = { dir, bytes, size, truncated, time, mono };
    // A frame cut at --max-body is still correlated from its end, where the SDK writes "id".
    if (truncated && tail) frame.tail = tail;
    const context: Record<string, unknown> = { exchange: this.id };
    if (sseId !== undefined) context.sseId = sseId;
    if (this.pairing) this.mcp!.mcp.observe(frame, context, { exchange: this.pairing, ...(dir === 'c2s' && this.mirrored ? { headers: this.mirrored } : {}) });
    else this.mcp!.mcp.observe(frame, context);
  }

  private finish(outcome: HttpOutcome, error: { name: string; code?: string; message: string } | undefined, time: number, mono: number): void {
    if (this.done) return;
    this.done = true;
    const complete = (): void => {
      const now = Date.now();
      const nowMono = performance.now();
      if (this.sse) for (const item of this.sse.end()) this.onSse(item, now, nowMono);
      const tail = this.lines?.end(now, nowMono);
      if (tail) {
        this.chunked!.broken();
        this.onLine(tail.bytes.toString('utf8'), now, nowMono);
      }
      const cutElement = this.array?.end();
      if (cutElement) this.onLine(cutElement.text, now, nowMono);
      const body = this.resBody.result();
      const text = body.bodyEncoding === 'base64' ? '' : body.body ?? '';
      if (this.framing === 'body' && this.mcp && text && (isJsonRpcBody(text) || body.truncated)) {
        this.observeMcp('s2c', this.resBody.head(), body.bytes, body.truncated === true, time, mono, undefined, this.resBody.tail());
      }
      this.observer.framedBodies.delete(this.id);
      // What the exchange's client asked and this exchange did not answer will never be answered.
      if (this.pairing && this.mcp) this.mcp.mcp.endExchange(this.pairing, time, mono);
      if (this.llm) {
        if (this.status === undefined && outcome === 'upstream-unreachable') {
          // The model was never asked: the client got mcptap's 502.
          this.llm.responseHead(502);
          this.llm.end(JSON.stringify({ error: `mcptap could not reach the upstream (${error?.code ?? error?.message ?? 'unknown error'})` }), time, mono);
        } else if (this.status !== undefined) {
          const cut = outcome === 'upstream-reset' ? 'the upstream broke off the reply' : outcome === 'client-aborted' ? 'the client stopped reading the reply' : undefined;
          this.llm.end(this.framing === 'body' ? text : undefined, time, mono, cut, this.uninspectedBytes > 0);
        }
      }
      const durationMs = roundMs(mono - this.startMono);
      // The model's stream delivered its terminator: whoever closed the connection afterwards cut nothing.
      const replyComplete = this.llm?.complete === true;
      const draft: Extract<RecordDraft, { kind: 'http-end' }> = {
        time,
        kind: 'http-end',
        exchange: this.id,
        method: this.head.method,
        path: this.shown.path,
        outcome,
        reqBytes: this.reqBytes,
        resBytes: this.resBytes,
        durationMs,
        msg: replyComplete && outcome !== 'complete'
          ? describeCompleteReply(this.shown, this.status, outcome, durationMs, this.resBytes)
          : describeEnd(this.shown, this.status, outcome, durationMs, this.resBytes, error, this.framing === 'sse'),
        ...this.responseBodyFields(body),
        ...(this.trailers ? { trailers: redactHeaders(this.trailers, this.observer.redactor) } : {}),
      };
      if (replyComplete) draft.replyComplete = true;
      if (this.status !== undefined) draft.status = this.status;
      if (this.chunkMarks.length) draft.chunks = pairsOf(this.chunkMarks);
      if (this.uninspectedBytes > 0) draft.uninspectedBytes = this.uninspectedBytes;
      if (error) draft.error = error;
      // A client closing an event stream is how SSE streams usually end (EventSource.close, client.close()).
      const ordinary = outcome === 'complete' || outcome === 'upgraded' || replyComplete || (outcome === 'client-aborted' && this.framing === 'sse');
      if (!ordinary) draft.level = LEVEL.warn;
      this.write(draft);
      // Sessions that end with this exchange: a DELETE that succeeded, a legacy SSE stream that closed.
      if (this.mcp && this.head.method === 'DELETE' && this.status !== undefined && this.status < 300) this.observer.endSession(this.mcp, time, mono);
      if (this.mcp && this.mcp.channel === 'mcp-sse' && this.head.method === 'GET' && this.framing === 'sse') this.observer.endSession(this.mcp, time, mono);
    };
    if (this.decoder) {
      let finished!: () => void;
      this.observer.track(new Promise<void>((resolve) => (finished = resolve)));
      this.afterDecode = () => {
        try {
          complete();
        } finally {
          finished();
        }
      };
      this.decoder.end();
      this.decoder = undefined;
    } else complete();
  }

  /**
   * The http-end's body fields, or `bodyInChunks` / `bodyInEvents` when its llm-chunk records carry it whole,
   * `bodyInFrames` when its MCP frame records do.
   */
  private responseBodyFields(body: CapturedBody): Pick<HttpEndRecord, 'body' | 'bodyEncoding' | 'bodyTruncated' | 'bodyInChunks' | 'bodyInEvents' | 'eventLineEnd' | 'bodyInFrames' | 'bodyAround'> {
    const whole = body.body !== undefined && !body.truncated && !body.bodyEncoding;
    if (!whole) return bodyFields(body);
    const framed = this.framedBody?.around(body.body!, this.mcp?.session);
    if (framed) return { bodyInFrames: framed.frames, bodyAround: framed.around };
    const lines = this.chunked?.carriers(body.body!) ?? 0;
    if (lines > 0) return { bodyInChunks: lines };
    const events = this.chunkedEvents?.carriers(body.body!);
    if (events === undefined) return bodyFields(body);
    return events.lineEnd === '\n' ? { bodyInEvents: events.events } : { bodyInEvents: events.events, eventLineEnd: events.lineEnd };
  }

  private write(draft: RecordDraft): void {
    const withSession: RecordDraft = { ...draft, channel: draft.channel ?? this.channel };
    if (this.mcp) withSession.session = this.mcp.session;
    this.observer.sink.write(withSession);
  }

  private warn(msg: string, time: number): void {
    this.write({ time, kind: 'lifecycle', event: 'warning', level: LEVEL.warn, msg });
  }

  private describeChannel(): string {
    switch (this.channel) {
      case 'mcp-http':
        return ' (MCP Streamable HTTP)';
      case 'mcp-sse':
        return ' (MCP over SSE)';
      case 'ollama':
        return ' (Ollama API)';
      case 'openai':
        return ' (OpenAI-compatible API)';
      case 'anthropic':
        return ' (Anthropic Messages API)';
      case 'gemini':
        return ' (Gemini API)';
      default:
        return '';
    }
  }
}

/**
 * The stateless session a POST belongs to: its client's identity from the 2026-07-28 `_meta` clientInfo, found
 * without parsing the whole body (a tools/call may carry megabytes of arguments); `stateless` without one.
 */
export function statelessKey(text: string): string {
  const at = text.indexOf('"io.modelcontextprotocol/clientInfo"');
  const start = at < 0 ? -1 : text.indexOf('{', at);
  const end = start < 0 ? -1 : objectEnd(text, start, 4096);
  if (end < 0) return 'stateless';
  try {
    const info = peerInfo(JSON.parse(text.slice(start, end)));
    if (info?.name !== undefined) return `client:${info.name}\u0000${info.version ?? ''}`;
  } catch {
    // not JSON after all: no identity
  }
  return 'stateless';
}

/** Index just past the JSON object that opens at `start`, within `max` characters; -1 when it does not close. */
function objectEnd(text: string, start: number, max: number): number {
  let depth = 0;
  let inString = false;
  const stop = Math.min(text.length, start + max);
  for (let i = start; i < stop; i++) {
    const c = text.charCodeAt(i);
    if (inString) {
      if (c === 0x5c) i++;
      else if (c === 0x22) inString = false;
    } else if (c === 0x22) inString = true;
    else if (c === 0x7b) depth++;
    else if (c === 0x7d && --depth === 0) return i + 1;
  }
  return -1;
}

function firstValue(value: string | string[] | undefined): string | undefined {
  return Array.isArray(value) ? value[0] : value;
}

function bodyFields(body: { body?: string; bodyEncoding?: 'base64'; truncated?: boolean }): { body?: string; bodyEncoding?: 'base64'; bodyTruncated?: boolean } {
  const out: { body?: string; bodyEncoding?: 'base64'; bodyTruncated?: boolean } = {};
  if (body.body !== undefined) out.body = body.body;
  if (body.bodyEncoding) out.bodyEncoding = body.bodyEncoding;
  if (body.truncated) out.bodyTruncated = true;
  return out;
}

/** Statuses that mean something in MCP and LLM APIs, in words. */
function describeStatus(status: number, headers: Record<string, string | string[] | undefined>): string {
  switch (status) {
    case 202:
      return ': accepted, no body (a notification or response was delivered)';
    case 401: {
      const auth = firstValue(headers['www-authenticate']);
      return `: the server wants authentication${auth ? ` (WWW-Authenticate: ${preview(auth, 120)})` : ''}`;
    }
    case 403:
      return ': forbidden (MCP servers answer 403 to a bad Origin)';
    case 404:
      return headers['mcp-session-id'] !== undefined ? ': the MCP session expired or is unknown; the client must initialize again' : ': not found';
    case 405:
      return ': method not allowed (an MCP server answers 405 to a GET when it offers no standalone stream)';
    case 406:
      return ': not acceptable (check the Accept header)';
    default:
      return '';
  }
}

function describeSse(item: SseItem): string {
  if (item.type === 'comment') return `Server sends an SSE comment${item.text ? ` ": ${preview(item.text, 60)}"` : ''} (a keep-alive; clients ignore it).`;
  if (item.event === 'endpoint') return `Server names the endpoint for this legacy SSE session: ${item.data ?? ''}.`;
  const parts: string[] = [];
  if (item.id !== undefined) parts.push(`id ${JSON.stringify(item.id)}`);
  if (item.retry !== undefined) parts.push(`retry ${item.retry} ms`);
  if (item.data) parts.push(`data ${JSON.stringify(preview(item.data, 80))}`);
  const what = item.data ? 'an SSE event' : 'an SSE event with no data (a priming event that gives the client an id to resume from)';
  return `Server sends ${item.event ? `"${item.event}" ` : ''}${what}${parts.length ? `: ${parts.join(', ')}` : ''}${item.partial ? ' (cut off by the end of the stream)' : ''}.`;
}

/** An LLM stream that delivered its terminator before the connection ended, whichever side ended it. */
function describeCompleteReply(head: RequestHead, status: number | undefined, outcome: HttpOutcome, durationMs: number, resBytes: number): string {
  const who = outcome === 'client-aborted' ? 'the client' : 'the upstream';
  return `${head.method} ${head.path} done: ${status ?? '?'}, ${resBytes} bytes in ${formatMs(durationMs)}; the stream delivered its end marker, then ${who} closed the connection.`;
}

function describeEnd(
  head: RequestHead,
  status: number | undefined,
  outcome: HttpOutcome,
  durationMs: number,
  resBytes: number,
  error: { code?: string; message: string } | undefined,
  stream = false,
): string {
  const what = `${head.method} ${head.path}`;
  const cause = error ? ` (${error.code ?? error.message})` : '';
  switch (outcome) {
    case 'complete':
      return `${what} done: ${status ?? '?'}, ${resBytes} bytes in ${formatMs(durationMs)}.`;
    case 'client-aborted':
      if (stream) return `The client closed the event stream ${what} after ${formatMs(durationMs)} (${resBytes} bytes); mcptap closed the upstream stream too.`;
      return `The client gave up on ${what} after ${formatMs(durationMs)}; mcptap aborted the upstream request too.`;
    case 'upstream-reset':
      if (status === undefined) return `The upstream closed the connection before answering ${what}${cause}; the client got a 502.`;
      return `The upstream broke off ${what} after ${resBytes} bytes${cause}; mcptap ended the client's connection too.`;
    case 'upstream-unreachable':
      return `mcptap could not reach the upstream for ${what}${cause}; the client got a 502.`;
    case 'upgraded':
      return `${what} switched to WebSocket after ${formatMs(durationMs)}.`;
  }
}

/** [a, b, c, d, …] as [[a, b], [c, d], …]. */
function pairsOf(flat: readonly number[]): [number, number][] {
  const pairs: [number, number][] = [];
  for (let i = 0; i < flat.length; i += 2) pairs.push([flat[i]!, flat[i + 1]!]);
  return pairs;
}
