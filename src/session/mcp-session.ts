/**
 * One MCP session seen from the middle: frames in, annotated and correlated records out (through a sink).
 *
 * Used by every tap that carries MCP — the stdio wrapper, Streamable HTTP, legacy SSE, WebSocket — so a
 * `tools/call` reads the same in every log. Pure apart from the sink it writes to, which tests replace with an
 * array.
 */
import { isUtf8 } from 'node:buffer';
import type { Direction, Frame, JsonRpcId, Message } from '../types.js';
import { decodeJsonRpc, peekIdAndMethod } from '../protocols/jsonrpc.js';
import { withoutCutCharacter } from '../framing/lines.js';
import { asObject, asString, describePeer, peerInfo } from '../protocols/mcp.js';
import { LEVEL, RAW_PARSED, type FrameFields, type RecordDraft, type RecordSink } from '../log/schema.js';
import { Correlator, DEFAULT_MAX_PENDING, DEFAULT_MAX_PENDING_AGE_MS, roundMs, type OpenRequest } from './correlator.js';
import {
  describeError,
  describeInvalid,
  describeNotification,
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

export class McpSession {
  private readonly sink: RecordSink;
  private readonly stdio: boolean;
  private readonly correlator: Correlator;
  readonly handshake: HandshakeState = {};

  constructor(options: McpSessionOptions) {
    this.sink = options.sink;
    this.stdio = options.stdio;
    this.correlator = new Correlator(options.maxPending ?? DEFAULT_MAX_PENDING, options.maxPendingAgeMs ?? DEFAULT_MAX_PENDING_AGE_MS);
  }

  /** Decode one frame and write its record(s). Never throws on any bytes. */
  observe(frame: Frame, context?: FrameContext): void {
    // A head cut by the cap may end inside a character: leave that character out rather than call it binary.
    const kept = frame.truncated ? withoutCutCharacter(frame.bytes) : frame.bytes;
    const utf8 = isUtf8(kept);
    const text = kept.toString('utf8');
    const base: FrameFields & { time: number; [RAW_PARSED]?: unknown } = {
      time: frame.time,
      bytes: frame.size,
      raw: utf8 ? text : kept.toString('base64'),
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
    if (frame.truncated) {
      this.observeTruncated(frame, base, text);
      return;
    }
    const decoded = decodeJsonRpc(text);
    if (!decoded.batch) {
      const message = decoded.messages[0]!;
      // The log quotes a long raw faster when it knows the raw is JSON text (record-json.ts).
      if (utf8 && 'json' in message && message.json !== undefined) base[RAW_PARSED] = message.json;
      this.observeMessage(frame, base, message, text);
      return;
    }
    const count = decoded.messages.length;
    decoded.messages.forEach((message, index) => {
      const raw = 'json' in message && message.json !== undefined ? JSON.stringify(message.json) : text;
      this.observeMessage(frame, withFrame(base, { raw, batch: { index, count } }), message, raw);
    });
  }

  /** The session ended: every request still open becomes a `pending` record. */
  end(time: number, mono: number): void {
    for (const request of this.correlator.drain()) this.writePending(request, time, mono, 'session-ended');
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
    const dir = frame.dir;
    switch (message.type) {
      case 'request': {
        const tool = message.method === 'tools/call' ? asString(message.params?.name) : undefined;
        const progressToken = progressTokenOf(message.params);
        if (message.method === 'initialize') this.rememberOffer(message.params);
        const draft: RecordDraft = withFrame(base, {
          kind: 'request',
          dir,
          id: message.id,
          method: message.method,
          msg: describeRequest(dir, message.method, message.params),
        });
        if (tool !== undefined) draft.tool = tool;
        if (progressToken !== undefined) draft.progressToken = progressToken;
        this.openRequest({ dir, id: message.id, method: message.method, mono: frame.mono, tool, progressToken }, draft, frame);
        return;
      }
      case 'response': {
        const answered = this.correlator.respond(dir, message.id, frame.mono);
        const request = answered?.request;
        if (request?.method === 'initialize') this.rememberAnswer(message.result);
        const draft: RecordDraft = withFrame(base, {
          kind: 'response',
          dir,
          id: message.id,
          msg: describeResult(request, message.result, answered?.latencyMs, this.handshake),
        });
        if (request) {
          draft.method = request.method;
          draft.requestSeq = request.seq;
          draft.latencyMs = answered.latencyMs;
          if (request.tool !== undefined) draft.tool = request.tool;
          if (request.method === 'tools/call') {
            const isError = asObject(message.result)?.isError === true;
            draft.isError = isError;
            if (isError) draft.level = LEVEL.warn;
          }
        }
        this.sink.write(draft);
        return;
      }
      case 'error': {
        const answered = this.correlator.respond(dir, message.id, frame.mono);
        const request = answered?.request;
        const draft: RecordDraft = withFrame(base, {
          kind: 'response',
          dir,
          id: message.id,
          error: message.error,
          level: LEVEL.warn,
          msg: describeError(request, message.error, answered?.latencyMs),
        });
        if (request) {
          draft.method = request.method;
          draft.requestSeq = request.seq;
          draft.latencyMs = answered.latencyMs;
          if (request.tool !== undefined) draft.tool = request.tool;
        }
        this.sink.write(draft);
        return;
      }
      case 'notification': {
        const related = this.relatedRequest(dir, message.method, message.params);
        const draft: RecordDraft = withFrame(base, {
          kind: 'notification',
          dir,
          method: message.method,
          msg: describeNotification(dir, message.method, message.params, related),
        });
        const token = message.method === 'notifications/progress' ? tokenOf(message.params?.progressToken) : undefined;
        if (token !== undefined) draft.progressToken = token;
        if (related) {
          draft.relatedId = related.id;
          draft.relatedMethod = related.method;
          draft.requestSeq = related.seq;
        }
        this.sink.write(draft);
        return;
      }
      case 'invalid':
        this.writeInvalid(frame, base, message.reason, text, false, message);
        return;
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
      const answered = id === undefined ? undefined : this.correlator.respond(dir, id, frame.mono);
      const request = answered?.request;
      const about = request ? `${request.method}${request.tool !== undefined ? ` ${request.tool}` : ''}` : 'a request mcptap did not see';
      const draft: RecordDraft = withFrame(base, {
        kind: 'response',
        dir,
        id: id ?? null,
        msg: `${error ? 'Error response' : 'Response'} to ${about}${answered ? ` (${formatMs(answered.latencyMs)})` : ''}${note}.`,
      });
      if (error) draft.level = LEVEL.warn;
      if (answered) {
        draft.method = answered.request.method;
        draft.requestSeq = answered.request.seq;
        draft.latencyMs = answered.latencyMs;
        if (answered.request.tool !== undefined) draft.tool = answered.request.tool;
      }
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

  private openRequest(
    request: Omit<OpenRequest, 'seq' | 'tool' | 'progressToken'> & { tool?: string | undefined; progressToken?: string | number | undefined },
    draft: RecordDraft,
    frame: Frame,
  ): void {
    const seq = this.sink.write(draft);
    const open: OpenRequest = { dir: request.dir, id: request.id, method: request.method, mono: request.mono, seq };
    if (request.tool !== undefined) open.tool = request.tool;
    if (request.progressToken !== undefined) open.progressToken = request.progressToken;
    for (const pushedOut of this.correlator.request(open)) {
      // Same direction and id (typed): the sender reused an id still in flight, a protocol bug worth naming.
      const reused = pushedOut.dir === open.dir && pushedOut.id === open.id;
      this.writePending(pushedOut, frame.time, frame.mono, reused ? 'reused' : 'evicted');
    }
  }

  private relatedRequest(dir: Direction, method: string, params: Record<string, unknown> | undefined): OpenRequest | undefined {
    if (method === 'notifications/progress') {
      const token = tokenOf(params?.progressToken);
      return token === undefined ? undefined : this.correlator.progress(token, dir);
    }
    if (method === 'notifications/cancelled') {
      const id = params?.requestId;
      return typeof id === 'string' || typeof id === 'number' ? this.correlator.cancelled(dir, id) : undefined;
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
    const draft: RecordDraft = {
      time,
      kind: 'pending',
      dir: request.dir,
      id: request.id,
      method: request.method,
      requestSeq: request.seq,
      ageMs,
      // A cancelled request is not owed an answer: worth recording, not worth a warning.
      level: request.cancelled ? LEVEL.info : LEVEL.warn,
      msg: describePending(request, ageMs, why),
    };
    if (request.tool !== undefined) draft.tool = request.tool;
    if (request.cancelled) draft.cancelled = true;
    this.sink.write(draft);
  }

  private rememberOffer(params: Record<string, unknown> | undefined): void {
    const version = asString(params?.protocolVersion);
    if (version !== undefined) this.handshake.offeredVersion = version;
    this.handshake.client = describePeer(peerInfo(params?.clientInfo), 'an unnamed client');
  }

  private rememberAnswer(result: unknown): void {
    const r = asObject(result);
    const version = asString(r?.protocolVersion);
    if (version !== undefined) this.handshake.agreedVersion = version;
    this.handshake.server = describePeer(peerInfo(r?.serverInfo), 'an unnamed server');
  }
}

const who = (dir: Direction): string => (dir === 'c2s' ? 'Client' : 'Server');

/**
 * A record draft made of the frame's fields and the record's own. Not object spread: on Node 20's V8,
 * `{...base, kind}` cost ~8 µs per record in profiles, Object.assign a fiftieth of that, and every frame pays it.
 */
function withFrame<T extends object>(base: FrameFields & { time: number }, fields: T): FrameFields & { time: number } & T {
  return Object.assign({}, base, fields);
}

function tokenOf(v: unknown): string | number | undefined {
  return typeof v === 'string' || typeof v === 'number' ? v : undefined;
}

/** `params._meta.progressToken` of a request. */
function progressTokenOf(params: Record<string, unknown> | undefined): string | number | undefined {
  return tokenOf(asObject(params?._meta)?.progressToken);
}
