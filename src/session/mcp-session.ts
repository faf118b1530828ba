/**
 * One MCP session seen from the middle: frames in, annotated and correlated records out (through a sink).
 *
 * Used by every tap that carries MCP — the stdio wrapper, Streamable HTTP, legacy SSE, WebSocket — so a
 * `tools/call` reads the same in every log. Pure apart from the sink it writes to, which tests replace with an
 * array.
 */
import { isAscii, isUtf8 } from 'node:buffer';
import type { Direction, Frame, JsonRpcErrorObject, JsonRpcId, Message } from '../types.js';
import { decodeJsonRpc, peekIdAndMethod } from '../protocols/jsonrpc.js';
import { withoutCutCharacter } from '../framing/lines.js';
import { asObject, asString, describePeer, KNOWN_RESULT_TYPES, KNOWN_REVISIONS, META, peerInfo, requestMeta, resultServerInfo, type PeerInfo, type RequestMeta } from '../protocols/mcp.js';
import { LEVEL, RAW_PARSED, type EvictedRequest, type FrameFields, type RecordDraft, type RecordSink } from '../log/schema.js';
import { Correlator, DEFAULT_MAX_PENDING, DEFAULT_MAX_PENDING_AGE_MS, opposite, roundMs, type Answered, type OpenRequest } from './correlator.js';
import { CallRounds, isRetry, roundKey, ROUND_METHODS } from './rounds.js';
import { TaskOrigins } from './tasks.js';
import { headerMismatches, type McpHeaders } from '../protocols/mcp-headers.js';
import {
  describeError,
  describeHeaderMismatch,
  describeInputRequired,
  describeInvalid,
  describeRetry,
  describeRoundsDone,
  describeSubscriptionEnd,
  describeNotification,
  describeEvicted,
  describePending,
  describeRequest,
  describeResult,
  formatMs,
  type HandshakeState,
  type PendingWhy,
} from './annotate.js';

export interface McpSessionOptions {
  sink: RecordSink;
  /** True for MCP over stdio, where a non-JSON-RPC line on stdout breaks clients (and is said so). */
  stdio: boolean;
  maxPending?: number;
  /** Requests unanswered this long are logged as pending and no longer tracked (default 30 minutes). */
  maxPendingAgeMs?: number;
}

/** Extra fields a transport adds to every frame record (an HTTP exchange id, SSE event fields, …). */
export type FrameContext = Partial<Pick<FrameFields, 'exchange'>> & Record<string, unknown>;

/** How a transport carried a frame, where it matters for reading it. */
export interface ObserveVia {
  /**
   * The pairing of one stateless HTTP exchange: a client's request is answered in the exchange that carried it,
   * so its ids are matched there alone (ids may repeat across exchanges, and concurrently).
   */
  exchange?: Correlator;
  /** The HTTP headers of a 2026-07-28 POST that mirror its body (Mcp-Method, Mcp-Name, MCP-Protocol-Version). */
  headers?: McpHeaders;
}

/** The message of one type. */
type MessageOf<T extends Message['type']> = Extract<Message, { type: T }>;

/** An answer's record names what it answers: the request's method, record, latency and tool. */
function answeredFields(draft: ResponseDraft, answered: Answered): void {
  draft.method = answered.request.method;
  draft.requestSeq = answered.request.seq;
  draft.latencyMs = answered.latencyMs;
  if (answered.request.tool !== undefined) draft.tool = answered.request.tool;
  if (answered.afterPending) draft.afterPending = true;
}

/** An answer to a request whose `evicted` record came first (it was let go to bound memory). */
const AFTER_PENDING_NOTE = 'It answers a request mcptap had stopped tracking to bound memory (its evicted record is earlier in the log).';
/** An answer to no request mcptap holds, in a session that has forgotten requests it evicted. */
const MAYBE_FORGOTTEN_NOTE = 'It may answer one of the requests mcptap stopped tracking to bound memory: too many were waiting to remember them all.';

export class McpSession {
  private readonly sink: RecordSink;
  private readonly stdio: boolean;
  private readonly correlator: Correlator;
  /** The exchange's pairing while a frame of a stateless HTTP exchange is observed. */
  private exchange: Correlator | undefined;
  /** The mirrored headers of the POST whose body is being observed. */
  private headers: McpHeaders | undefined;
  private readonly rounds = new CallRounds();
  private readonly tasks = new TaskOrigins();
  /** Identities already written on a record of this session, so each is said once. */
  private clientSaid: string | undefined;
  /** The client's identity as last said, and how many of its requests were server/discover (probe detection). */
  private client: PeerInfo | undefined;
  private clientRequests = 0;
  private discoverRequests = 0;
  private serverSaid: string | undefined;
  readonly handshake: HandshakeState = {};

  constructor(options: McpSessionOptions) {
    this.sink = options.sink;
    this.stdio = options.stdio;
    this.correlator = new Correlator(options.maxPending ?? DEFAULT_MAX_PENDING, options.maxPendingAgeMs ?? DEFAULT_MAX_PENDING_AGE_MS);
  }

  /** Decode one frame and write its record(s). Never throws on any bytes. */
  observe(frame: Frame, context?: FrameContext, via?: ObserveVia): void {
    this.exchange = via?.exchange;
    this.headers = via?.headers;
    try {
      this.observeFrame(frame, context);
    } finally {
      this.exchange = undefined;
      this.headers = undefined;
    }
  }

  /**
   * A stateless HTTP exchange ended: what its client asked and never got answered in it is pending (an open
   * `subscriptions/listen` is a subscription that ended with its stream).
   */
  endExchange(exchange: Correlator, time: number, mono: number): void {
    for (const request of exchange.drain()) this.writePending(request, time, mono, 'exchange-ended');
  }

  private observeFrame(frame: Frame, context?: FrameContext): void {
    // A head cut by the cap may end inside a character: leave that character out rather than call it binary.
    const kept = frame.truncated ? withoutCutCharacter(frame.bytes) : frame.bytes;
    // A long frame of ASCII (the usual big one) decodes as latin1, a copy, where UTF-8 decoding checks each byte.
    const ascii = kept.length >= LONG_FRAME_BYTES && isAscii(kept);
    const text = kept.toString(ascii ? 'latin1' : 'utf8');
    // Bytes that are not UTF-8 decode with U+FFFD in their place: a text without one was UTF-8 (most frames).
    const utf8 = ascii || !text.includes('\uFFFD') || isUtf8(kept);
    // Decoded first, so that the parsed JSON goes into the base's literal: stored afterwards, under its symbol,
    // it went through a keyed store that V8 soon marked megamorphic.
    const decoded = frame.partial || frame.truncated ? undefined : decodeJsonRpc(text);
    const single = decoded?.batch === false ? decoded.messages[0]! : undefined;
    // The log quotes a long raw faster when it knows the raw is JSON text (record-json.ts).
    const parsed = utf8 && single !== undefined && 'json' in single ? single.json : undefined;
    const base: FrameFields & { time: number; [RAW_PARSED]?: unknown } = {
      time: frame.time,
      bytes: frame.size,
      raw: utf8 ? text : kept.toString('base64'),
      [RAW_PARSED]: parsed,
    };
    if (context) Object.assign(base, context);
    if (!utf8) base.rawEncoding = 'base64';
    if (frame.truncated) {
      base.truncated = true;
      if (frame.sha256) base.sha256 = frame.sha256;
    }
    if (frame.crlf) base.crlf = true;

    if (frame.partial) {
      this.writeInvalid(frame, base, 'a partial line at the end of the stream', text, true);
      return;
    }
    if (decoded === undefined) {
      this.observeTruncated(frame, base, text);
      return;
    }
    if (single !== undefined) {
      this.observeMessage(frame, base, single, text);
      return;
    }
    const count = decoded.messages.length;
    decoded.messages.forEach((message, index) => {
      const json = 'json' in message ? message.json : undefined;
      const raw = json !== undefined ? JSON.stringify(json) : text;
      const element = Object.assign({}, base, { raw, batch: { index, count } });
      if (utf8 && json !== undefined) (element as typeof base)[RAW_PARSED] = json;
      this.observeMessage(frame, element, message, raw);
    });
  }

  /** The session ended: every request still open becomes a `pending` record. */
  end(time: number, mono: number): void {
    for (const request of this.correlator.drain()) this.writePending(request, time, mono, 'session-ended');
  }

  /** The pairing a request sent in `dir` is kept in: a client's request in its exchange, when there is one. */
  private pairing(requestDir: Direction): Correlator {
    return requestDir === 'c2s' && this.exchange ? this.exchange : this.correlator;
  }

  /** The request a response travelling in `dir` answers; an `id: null` answers an exchange's only request. */
  private answer(dir: Direction, id: JsonRpcId | null, mono: number): Answered | undefined {
    const pairing = this.pairing(opposite(dir));
    if (id === null) return pairing === this.exchange ? pairing.respondSole(dir, mono) : undefined;
    return pairing.respond(dir, id, mono);
  }

  /**
   * When every request the client sent was server/discover, this connection was a version probe (the SDK v2
   * client probes a stdio server on a short-lived copy of it): who probed. Undefined otherwise.
   */
  versionProbe(): string | undefined {
    if (this.clientRequests === 0 || this.discoverRequests !== this.clientRequests) return undefined;
    return describePeer(this.client, 'a 2026-07-28 client');
  }

  /** Number of requests waiting for an answer. */
  get openRequests(): number {
    return this.correlator.size;
  }

  /** Number of requests sent in `dir` still waiting for an answer (c2s: what the server still owes the client). */
  openRequestsFrom(dir: Direction): number {
    return this.correlator.openFrom(dir);
  }

  private observeMessage(frame: Frame, base: FrameFields & { time: number }, message: Message, text: string): void {
    switch (message.type) {
      case 'request':
        return this.observeRequest(frame, base, message);
      case 'response':
        return this.observeResult(frame, base, message);
      case 'error':
        return this.observeError(frame, base, message);
      case 'notification':
        return this.observeNotification(frame, base, message);
      case 'invalid':
        return this.writeInvalid(frame, base, message.reason, text, false, message);
    }
  }

  private observeRequest(frame: Frame, base: FrameFields & { time: number }, message: MessageOf<'request'>): void {
    const dir = frame.dir;
    const params = message.params;
    const tool = message.method === 'tools/call' ? asString(params?.name) : undefined;
    const meta = asObject(params?._meta);
    const progressToken = tokenOf(meta?.progressToken);
    if (message.method === 'initialize') this.rememberOffer(params);
    const draft: RecordDraft = requestDraft(base, dir, message.id, message.method, describeRequest(dir, message.method, params));
    if (tool !== undefined) draft.tool = tool;
    if (progressToken !== undefined) draft.progressToken = progressToken;
    const open: NewRequest = { dir, id: message.id, method: message.method, mono: frame.mono, tool, progressToken };
    if (dir === 'c2s') {
      this.clientRequests++;
      if (message.method === 'server/discover') this.discoverRequests++;
    }
    const envelope = meta ? requestMeta(meta) : undefined;
    if (envelope) this.readEnvelope(draft, envelope);
    // Multi-round-trip calls exist from 2026-07-28 on; only those requests keep their params for the retry.
    if (envelope?.protocolVersion !== undefined && ROUND_METHODS.has(message.method) && params) {
      open.params = params;
      if (isRetry(params)) this.continueCall(draft, open, params);
    }
    if (this.headers) this.checkHeaders(draft, message.method, params, meta);
    if (message.method.startsWith('tasks/')) this.linkTask(draft, params);
    this.openRequest(open, draft, frame);
  }

  private observeResult(frame: Frame, base: FrameFields & { time: number }, message: MessageOf<'response'>): void {
    const answered = this.answer(frame.dir, message.id, frame.mono);
    const request = answered?.request;
    if (request?.method === 'initialize') this.rememberAnswer(message.result);
    const result = asObject(message.result);
    const draft = responseDraft(base, frame.dir, message.id, describeResult(request, message.result, answered?.latencyMs, this.handshake));
    const resultType = asString(result?.resultType);
    if (resultType !== undefined) {
      draft.resultType = resultType;
      if (!KNOWN_RESULT_TYPES.has(resultType)) draft.msg = `${draft.msg} Its resultType is ${JSON.stringify(resultType)}, one this version of mcptap does not know; relayed as is.`;
    }
    if (answered) this.resultAnswers(draft, answered, result, resultType, frame.mono);
    // Every 2026-07-28 result may name the server; it is read until one has.
    if (this.serverSaid === undefined && result?._meta !== undefined) this.readServer(draft, resultServerInfo(result));
    this.notePairing(draft, answered, frame.dir);
    this.sink.write(draft);
  }

  /** An answer's msg says when its request had been evicted, or may have been. */
  private notePairing(draft: { msg: string }, answered: Answered | undefined, dir: Direction): void {
    if (answered?.afterPending) draft.msg = `${draft.msg} ${AFTER_PENDING_NOTE}`;
    else if (!answered && this.pairing(opposite(dir)).forgotEvicted) draft.msg = `${draft.msg} ${MAYBE_FORGOTTEN_NOTE}`;
  }

  /** What a result says of the request it answers: a tool's error, another round, a task, the revisions. */
  private resultAnswers(draft: ResponseDraft, answered: Answered, result: Record<string, unknown> | undefined, resultType: string | undefined, mono: number): void {
    const request = answered.request;
    answeredFields(draft, answered);
    if (request.method === 'tools/call') {
      const isError = result?.isError === true;
      draft.isError = isError;
      if (isError) draft.level = LEVEL.warn;
    }
    if (resultType === 'input_required') this.awaitInput(draft, request, result!, answered.latencyMs, mono);
    else if (request.call) this.finishCall(draft, request, answered.latencyMs, mono);
    const task = asString(asObject(result?.task)?.taskId);
    if (task !== undefined && !request.method.startsWith('tasks/')) this.tasks.created(task, request);
    if (request.method === 'server/discover' && Array.isArray(result?.supportedVersions)) {
      draft.supportedVersions = result.supportedVersions.filter((v): v is string => typeof v === 'string');
    }
  }

  private observeError(frame: Frame, base: FrameFields & { time: number }, message: MessageOf<'error'>): void {
    const dir = frame.dir;
    const answered = this.answer(dir, message.id, frame.mono);
    const request = answered?.request;
    const draft = errorDraft(base, dir, message.id, message.error, describeError(request, message.error, answered?.latencyMs));
    if (answered) {
      answeredFields(draft, answered);
      // A server that cannot answer server/discover speaks an earlier revision: the client falls back to
      // initialize. That is version negotiation working, not a failure.
      if (answered.request.method === 'server/discover' && dir === 's2c') {
        draft.versionFallback = true;
        draft.level = LEVEL.info;
      }
      if (answered.request.call) this.finishCall(draft, answered.request, answered.latencyMs, frame.mono);
    }
    this.notePairing(draft, answered, dir);
    this.sink.write(draft);
  }

  private observeNotification(frame: Frame, base: FrameFields & { time: number }, message: MessageOf<'notification'>): void {
    const dir = frame.dir;
    const related = this.relatedRequest(dir, message.method, message.params);
    const draft: RecordDraft = notificationDraft(base, dir, message.method, describeNotification(dir, message.method, message.params, related));
    const token = message.method === 'notifications/progress' ? tokenOf(message.params?.progressToken) : undefined;
    if (related?.method === 'subscriptions/listen' && message.method !== 'notifications/cancelled') draft.subscriptionId = related.id;
    if (token !== undefined) draft.progressToken = token;
    if (related) {
      draft.relatedId = related.id;
      draft.relatedMethod = related.method;
      draft.requestSeq = related.seq;
    }
    this.sink.write(draft);
    // A client that cancels its subscription ends it there: no answer is coming.
    if (related?.method === 'subscriptions/listen' && message.method === 'notifications/cancelled' && dir === 'c2s') {
      this.pairing('c2s').respond('s2c', related.id, frame.mono);
      this.writePending(related, frame.time, frame.mono, 'cancelled');
    }
  }

  /** A frame too long to keep whole: correlate it from the head if it says who it is. */
  private observeTruncated(frame: Frame, base: FrameFields & { time: number }, head: string): void {
    const { id, method, tool, response, error } = peekIdAndMethod(head, frame.tail?.toString('utf8'));
    const dir = frame.dir;
    const note = `; the frame (${frame.size} bytes) is too long to keep whole, its head is in raw`;
    if (method !== undefined && id !== undefined) {
      const what = method === 'tools/call' && tool !== undefined ? `calls tool ${tool}` : `sends request ${method}`;
      const draft: RecordDraft = withFrame(base, { kind: 'request', dir, id, method, msg: `${who(dir)} ${what}${note}.` });
      if (tool !== undefined && method === 'tools/call') draft.tool = tool;
      this.openRequest({ dir, id, method, mono: frame.mono, tool: method === 'tools/call' ? tool : undefined }, draft, frame);
    } else if (method !== undefined) {
      this.sink.write(withFrame(base, { kind: 'notification', dir, method, msg: `${who(dir)} notifies ${method}${note}.` }));
    } else if (id !== undefined || response) {
      const answered = id === undefined ? undefined : this.answer(dir, id, frame.mono);
      const request = answered?.request;
      const about = request ? `${request.method}${request.tool !== undefined ? ` ${request.tool}` : ''}` : 'a request mcptap did not see';
      const draft: RecordDraft = withFrame(base, {
        kind: 'response',
        dir,
        id: id ?? null,
        msg: `${error ? 'Error response' : 'Response'} to ${about}${answered ? ` (${formatMs(answered.latencyMs)})` : ''}${note}.`,
      });
      if (error) draft.level = LEVEL.warn;
      if (answered) answeredFields(draft as ResponseDraft, answered);
      this.notePairing(draft as ResponseDraft, answered, dir);
      this.sink.write(draft);
    } else if (!/^\s*[[{]/.test(head)) {
      // Long plain text on stdout is pollution all the same.
      this.writeInvalid(frame, base, 'plain text, not JSON', head, false);
    } else {
      // JSON, maybe fine, only too long to read whole: say so rather than blame the peer.
      this.sink.write(withFrame(base, {
        kind: 'invalid',
        dir,
        reason: 'a frame too long to inspect, with no JSON-RPC id or method at either end',
        level: LEVEL.warn,
        msg: `${who(dir)} sent a frame of ${frame.size} bytes, too long to keep whole, and mcptap found no JSON-RPC id or method at either end of it; its head is in raw.`,
      }));
    }
  }

  private openRequest(request: NewRequest, draft: RecordDraft, frame: Frame): void {
    const seq = this.sink.write(draft);
    const open: OpenRequest = { dir: request.dir, id: request.id, method: request.method, mono: request.mono, seq };
    if (request.tool !== undefined) open.tool = request.tool;
    if (request.progressToken !== undefined) open.progressToken = request.progressToken;
    if (request.params !== undefined) open.params = request.params;
    if (request.call !== undefined) open.call = request.call;
    const pushedOut = this.pairing(open.dir).request(open);
    // Most requests push none out: no list is made for them.
    if (pushedOut.length === 0) return;
    const evicted: OpenRequest[] = [];
    for (const gone of pushedOut) {
      // Same direction and id (typed): the sender reused an id still in flight, a protocol bug worth naming.
      if (gone.dir === open.dir && gone.id === open.id) this.writePending(gone, frame.time, frame.mono, 'reused');
      else evicted.push(gone);
    }
    if (evicted.length > 0) this.writeEvicted(evicted, frame.time, frame.mono);
  }

  /** Requests let go together to bound memory: one record for them all (pendingOfEvicted reads each back). */
  private writeEvicted(requests: OpenRequest[], time: number, mono: number): void {
    const entries = requests.map((request) => {
      const entry: EvictedRequest = { dir: request.dir, id: request.id, method: request.method, requestSeq: request.seq, ageMs: roundMs(mono - request.mono) };
      if (request.tool !== undefined) entry.tool = request.tool;
      if (request.cancelled) entry.cancelled = true;
      return entry;
    });
    // A cancelled request is owed no answer, nor is a subscription (2026-07-28) a call: no warning for those alone.
    const owed = requests.some((request) => !request.cancelled && request.method !== 'subscriptions/listen');
    // The list last, as a frame's raw is: the line reads its sentence first.
    this.sink.write({ time, kind: 'evicted', level: owed ? LEVEL.warn : LEVEL.info, msg: describeEvicted(entries), requests: entries });
  }

  private relatedRequest(dir: Direction, method: string, params: Record<string, unknown> | undefined): OpenRequest | undefined {
    if (method === 'notifications/progress') {
      const token = tokenOf(params?.progressToken);
      return token === undefined ? undefined : this.pairing(opposite(dir)).progress(token, dir);
    }
    if (method === 'notifications/cancelled') {
      const id = params?.requestId;
      return typeof id === 'string' || typeof id === 'number' ? this.pairing(dir).cancelled(dir, id) : undefined;
    }
    // A notification delivered on a subscriptions/listen stream names the listen request (2026-07-28).
    const subscription = asObject(params?._meta)?.[META.subscriptionId];
    if (dir === 's2c' && (typeof subscription === 'string' || typeof subscription === 'number')) {
      const listen = this.pairing('c2s').find('c2s', subscription);
      return listen?.method === 'subscriptions/listen' ? listen : undefined;
    }
    return undefined;
  }

  private writeInvalid(
    frame: Frame,
    base: FrameFields & { time: number },
    reason: string,
    text: string,
    partial: boolean,
    message?: { id?: JsonRpcId; method?: string },
  ): void {
    const draft: RecordDraft = withFrame(base, {
      kind: 'invalid',
      dir: frame.dir,
      reason,
      level: LEVEL.warn,
      msg: describeInvalid(frame.dir, reason, text, partial, this.stdio),
    });
    if (partial) draft.partial = true;
    if (message?.id !== undefined) draft.id = message.id;
    if (message?.method !== undefined) draft.method = message.method;
    this.sink.write(draft);
  }

  private writePending(request: OpenRequest, time: number, mono: number, why: PendingWhy): void {
    const ageMs = roundMs(mono - request.mono);
    // A subscription (2026-07-28) is a stream, not a call: it is answered only if the server ends it.
    const subscription = request.method === 'subscriptions/listen' && why !== 'reused';
    const draft: RecordDraft = {
      time,
      kind: 'pending',
      dir: request.dir,
      id: request.id,
      method: request.method,
      requestSeq: request.seq,
      ageMs,
      // A cancelled request is not owed an answer: worth recording, not worth a warning.
      level: request.cancelled || subscription ? LEVEL.info : LEVEL.warn,
      msg: subscription ? describeSubscriptionEnd(request, ageMs, why) : describePending(request, ageMs, why),
    };
    if (subscription) draft.subscription = true;
    if (request.tool !== undefined) draft.tool = request.tool;
    if (request.cancelled) draft.cancelled = true;
    this.sink.write(draft);
  }

  private rememberOffer(params: Record<string, unknown> | undefined): void {
    const envelope = requestMeta(asObject(params?._meta));
    const version = asString(params?.protocolVersion) ?? envelope?.protocolVersion;
    if (version !== undefined) this.handshake.offeredVersion = version;
    this.handshake.client = describePeer(peerInfo(params?.clientInfo) ?? envelope?.client, 'an unnamed client');
  }

  /** A 2026-07-28 request's `_meta`: its revision on the record, and the client's identity once per session. */
  private readEnvelope(draft: RequestDraft, envelope: RequestMeta): void {
    if (envelope.protocolVersion !== undefined) {
      draft.protocolVersion = envelope.protocolVersion;
      if (!KNOWN_REVISIONS.has(envelope.protocolVersion)) draft.msg = `${draft.msg} It names protocol ${envelope.protocolVersion}, a revision this version of mcptap does not know; relayed as is.`;
    }
    const client = envelope.client;
    if (client === undefined) return;
    this.client = client;
    const key = `${client.name ?? ''}\u0000${client.version ?? ''}`;
    if (key === this.clientSaid) return;
    this.clientSaid = key;
    draft.client = client;
  }

  /** The server's identity, once per session (every 2026-07-28 result may carry it). */
  private readServer(draft: ResponseDraft, server: PeerInfo | undefined): void {
    if (server === undefined) return;
    const key = `${server.name ?? ''}\u0000${server.version ?? ''}`;
    if (key === this.serverSaid) return;
    this.serverSaid = key;
    draft.server = server;
  }

  /** A retry carrying `inputResponses`: the next round of the call it continues, when mcptap saw that call. */
  private continueCall(draft: RequestDraft, open: NewRequest, params: Record<string, unknown>): void {
    const call = this.rounds.resume(roundKey(open.method, params, params.requestState));
    if (call) {
      open.call = call;
      draft.round = call.round;
      draft.firstSeq = call.firstSeq;
    }
    draft.msg = describeRetry(open.method, open.tool, params, call);
  }

  /** A round answered `input_required`: remember the call for its retry, and say what the server asks. */
  private awaitInput(draft: ResponseDraft, request: OpenRequest, result: Record<string, unknown>, latencyMs: number, mono: number): void {
    const call = request.call ?? { firstSeq: request.seq, firstMono: request.mono, round: 1 };
    this.rounds.awaitInput(roundKey(request.method, request.params, result.requestState), call);
    draft.round = call.round;
    draft.firstSeq = call.firstSeq;
    draft.callLatencyMs = roundMs(mono - call.firstMono);
    const asked = describeInputRequired(request, result, call.round, latencyMs);
    draft.inputRequests = asked.keys;
    draft.msg = asked.msg;
  }

  /** The last round of a multi-round-trip call: the call's own latency runs from its first request. */
  private finishCall(draft: ResponseDraft, request: OpenRequest, latencyMs: number, mono: number): void {
    const call = request.call!;
    draft.round = call.round;
    draft.firstSeq = call.firstSeq;
    draft.callLatencyMs = roundMs(mono - call.firstMono);
    draft.msg = describeRoundsDone(draft.msg, call.round, draft.callLatencyMs);
  }

  /** A tasks/* request names its task: link it to the request that created the task, when seen. */
  private linkTask(draft: RequestDraft, params: Record<string, unknown> | undefined): void {
    const taskId = asString(params?.taskId);
    if (taskId === undefined) return;
    draft.taskId = taskId;
    const origin = this.tasks.origin(taskId);
    if (!origin) return;
    draft.taskRequestSeq = origin.seq;
    draft.msg = `${draft.msg.replace(/\.$/, '')}, created by ${origin.method}${origin.tool ? ` ${origin.tool}` : ''} #${origin.id}.`;
  }

  /** The Mcp-Method / Mcp-Name / MCP-Protocol-Version headers must say what the body says (2026-07-28). */
  private checkHeaders(draft: RequestDraft, method: string, params: Record<string, unknown> | undefined, meta: Record<string, unknown> | undefined): void {
    const mismatches = headerMismatches(this.headers!, method, params, meta);
    if (mismatches.length === 0) return;
    draft.headerMismatch = mismatches;
    draft.level = LEVEL.warn;
    draft.msg = `${draft.msg} ${describeHeaderMismatch(mismatches)}`;
  }

  private rememberAnswer(result: unknown): void {
    const r = asObject(result);
    const version = asString(r?.protocolVersion);
    if (version !== undefined) this.handshake.agreedVersion = version;
    this.handshake.server = describePeer(peerInfo(r?.serverInfo), 'an unnamed server');
  }
}

const who = (dir: Direction): string => (dir === 'c2s' ? 'Client' : 'Server');

/** From this size on a frame is first checked for ASCII (the check costs more than it saves on a short one). */
const LONG_FRAME_BYTES = 4096;

/**
 * A record draft made of the frame's fields and the record's own, written into `base`: each frame's base goes
 * into one record (a batch gives each element a copy). Not object spread: on Node 20's V8, `{...base, kind}`
 * showed in profiles at many times what Object.assign costs, and every frame pays it (docs/benchmarks.md).
 */
function withFrame<T extends object>(base: FrameFields & { time: number }, fields: T): FrameFields & { time: number } & T {
  return Object.assign(base, fields);
}

/**
 * The drafts of the usual records, their fields stored into `base` one by one, in the order withFrame's literal
 * gave them: every frame makes one, and Object.assign looks each key's transition up at run time, where these
 * stores find theirs cached.
 */
function requestDraft(base: FrameBase, dir: Direction, id: JsonRpcId, method: string, msg: string): RequestDraft {
  const draft = base as RequestDraft;
  draft.kind = 'request';
  draft.dir = dir;
  draft.id = id;
  draft.method = method;
  draft.msg = msg;
  return draft;
}

function responseDraft(base: FrameBase, dir: Direction, id: JsonRpcId | null, msg: string): ResponseDraft {
  const draft = base as ResponseDraft;
  draft.kind = 'response';
  draft.dir = dir;
  draft.id = id;
  draft.msg = msg;
  return draft;
}

function errorDraft(base: FrameBase, dir: Direction, id: JsonRpcId | null, error: JsonRpcErrorObject, msg: string): ResponseDraft {
  const draft = base as ResponseDraft;
  draft.kind = 'response';
  draft.dir = dir;
  draft.id = id;
  draft.error = error;
  draft.level = LEVEL.warn;
  draft.msg = msg;
  return draft;
}

function notificationDraft(base: FrameBase, dir: Direction, method: string, msg: string): NotificationDraft {
  const draft = base as NotificationDraft;
  draft.kind = 'notification';
  draft.dir = dir;
  draft.method = method;
  draft.msg = msg;
  return draft;
}

function tokenOf(v: unknown): string | number | undefined {
  return typeof v === 'string' || typeof v === 'number' ? v : undefined;
}

type RequestDraft = Extract<RecordDraft, { kind: 'request' }>;
type ResponseDraft = Extract<RecordDraft, { kind: 'response' }>;
type NotificationDraft = Extract<RecordDraft, { kind: 'notification' }>;
type FrameBase = FrameFields & { time: number };

/** A request about to be opened: an OpenRequest before its record has a `seq`. */
type NewRequest = Omit<OpenRequest, 'seq' | 'tool' | 'progressToken'> & { tool?: string | undefined; progressToken?: string | number | undefined };
