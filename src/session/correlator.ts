/**
 * Request ↔ response correlation for one JSON-RPC session. Pure state, no I/O.
 *
 * Both peers send requests and both count ids from 0, so a request is keyed by (direction, id): a response
 * travelling s2c answers the c2s request with the same id, and the other way round. Progress notifications find
 * their request by `progressToken`; `notifications/cancelled` by the canceller's own request id.
 *
 * The map is bounded: past `maxPending` the oldest request is evicted and handed back, so the caller can log it
 * as pending rather than lose it silently. The oldest is found in an arrival queue, not by iterating the map
 * from its head: V8 walks every entry deleted at a Map's head since its last rehash on each such iteration.
 */
import type { Direction, JsonRpcId } from '../types.js';

/** A request seen but not yet answered. */
export interface OpenRequest {
  dir: Direction;
  id: JsonRpcId;
  method: string;
  /** `seq` of the request's record. */
  seq: number;
  /** Monotonic ms when it was seen. */
  mono: number;
  /** For `tools/call`: the tool name. */
  tool?: string;
  progressToken?: string | number;
  /** Set once the sender cancelled it (`notifications/cancelled`): MCP says no response is due after that. */
  cancelled?: boolean;
  /** For a retry of a multi-round-trip call (2026-07-28 `inputResponses`): the logical call it continues. */
  call?: CallRound;
  /** For a request that may be answered `input_required` (tools/call, prompts/get, resources/read): its params. */
  params?: Record<string, unknown>;
}

/** Where a round of a multi-round-trip call stands within its logical call. */
export interface CallRound {
  /** `seq` of the call's first request. */
  firstSeq: number;
  /** Monotonic ms of the call's first request. */
  firstMono: number;
  /** This request's round, from 1. */
  round: number;
}

/** What a response resolves to. */
export interface Answered {
  request: OpenRequest;
  latencyMs: number;
}

export const DEFAULT_MAX_PENDING = 10_000;
/**
 * A request unanswered for this long is handed back as pending (checked when the next request arrives, so it
 * costs nothing in between). Long enough for slow tools; short enough that a long session's log says which
 * requests were dropped while it ran, not only at the end.
 */
export const DEFAULT_MAX_PENDING_AGE_MS = 30 * 60_000;

export class Correlator {
  private readonly open = new Map<string, OpenRequest>();
  private readonly byProgressToken = new Map<string, OpenRequest>();
  /** Keys and requests in arrival order, from `head`; an entry no longer in `open` is skipped (lazy deletion). */
  private queueKeys: string[] = [];
  private queueRequests: OpenRequest[] = [];
  private head = 0;

  constructor(
    private readonly maxPending = DEFAULT_MAX_PENDING,
    private readonly maxAgeMs = DEFAULT_MAX_PENDING_AGE_MS,
  ) {}

  /** Remember a request. Returns requests pushed out to make room (or replaced by one with the same key). */
  request(request: OpenRequest): OpenRequest[] {
    const key = requestKey(request.dir, request.id);
    const pushedOut: OpenRequest[] = [];
    const previous = this.open.get(key);
    if (previous) {
      this.forget(key, previous);
      pushedOut.push(previous);
    }
    this.open.set(key, request);
    this.queueKeys.push(key);
    this.queueRequests.push(request);
    if (request.progressToken !== undefined) this.byProgressToken.set(tokenKey(request.dir, request.progressToken), request);
    while (this.open.size > this.maxPending) {
      const oldest = this.oldest()!;
      this.forget(this.queueKeys[this.head]!, oldest);
      pushedOut.push(oldest);
    }
    // The queue is in arrival order, so the aged-out requests are at its head: stop at the first young one.
    for (let oldest = this.oldest(); oldest !== undefined && request.mono - oldest.mono > this.maxAgeMs; oldest = this.oldest()) {
      this.forget(this.queueKeys[this.head]!, oldest);
      pushedOut.push(oldest);
    }
    return pushedOut;
  }

  /** The oldest request still open (the queue's head, once entries closed meanwhile are passed). */
  private oldest(): OpenRequest | undefined {
    const keys = this.queueKeys;
    const requests = this.queueRequests;
    while (this.head < keys.length && this.open.get(keys[this.head]!) !== requests[this.head]) this.head++;
    if (this.head > 1024 && this.head * 2 > keys.length) {
      // Most of the queue is passed: drop that part, so the queue stays about as long as the open requests.
      this.queueKeys = keys.slice(this.head);
      this.queueRequests = requests.slice(this.head);
      this.head = 0;
    }
    return this.queueRequests[this.head];
  }

  /** A response travelling in `dir` with this id: finds and closes the request it answers. */
  respond(dir: Direction, id: JsonRpcId | null, mono: number): Answered | undefined {
    if (id === null) return undefined;
    const key = requestKey(opposite(dir), id);
    const request = this.open.get(key);
    if (!request) return undefined;
    this.forget(key, request);
    return { request, latencyMs: roundMs(mono - request.mono) };
  }

  /**
   * An answer with `id: null` (a server that could not read the id, or an HTTP 400 before it looked) answers
   * the one request of an HTTP exchange, if the exchange holds exactly one: the exchange itself pairs them.
   */
  respondSole(dir: Direction, mono: number): Answered | undefined {
    if (this.open.size !== 1) return undefined;
    const [key, request] = this.open.entries().next().value as [string, OpenRequest];
    if (request.dir === dir) return undefined;
    this.forget(key, request);
    return { request, latencyMs: roundMs(mono - request.mono) };
  }

  /** The open request sent in `dir` with this id, left open (a subscription's acknowledgement names its listen). */
  find(dir: Direction, id: JsonRpcId): OpenRequest | undefined {
    return this.open.get(requestKey(dir, id));
  }

  /**
   * The open request a progress notification travelling in `dir` refers to. Progress travels against its request
   * (the server reports on the client's call), and both peers may pick the same token (the SDK uses its request
   * id), so the token is looked up among the other side's requests.
   */
  progress(token: string | number, dir: Direction): OpenRequest | undefined {
    return this.byProgressToken.get(tokenKey(opposite(dir), token));
  }


  /**
   * The open request a `notifications/cancelled` sent in `dir` refers to (the sender's own request), marked as
   * cancelled. It stays open: a response may still cross the cancellation on the wire, and is then correlated.
   */
  cancelled(dir: Direction, requestId: JsonRpcId): OpenRequest | undefined {
    const request = this.open.get(requestKey(dir, requestId));
    if (request) request.cancelled = true;
    return request;
  }

  /** Number of requests waiting for an answer. */
  get size(): number {
    return this.open.size;
  }

  /**
   * Number of open requests sent in `dir` that are owed an answer (one pass over the open requests; for
   * occasional checks). An open `subscriptions/listen` (2026-07-28) is a stream, not an answer owed.
   */
  openFrom(dir: Direction): number {
    let n = 0;
    for (const request of this.open.values()) if (request.dir === dir && request.method !== 'subscriptions/listen') n++;
    return n;
  }

  /** Hand back every open request (oldest first) and forget them all: the session ended. */
  drain(): OpenRequest[] {
    const all = [...this.open.values()];
    this.open.clear();
    this.queueKeys = [];
    this.queueRequests = [];
    this.head = 0;
    this.byProgressToken.clear();
    return all;
  }

  private forget(key: string, request: OpenRequest): void {
    this.open.delete(key);
    if (request.progressToken !== undefined) {
      const tk = tokenKey(request.dir, request.progressToken);
      if (this.byProgressToken.get(tk) === request) this.byProgressToken.delete(tk);
    }
  }
}

export function opposite(dir: Direction): Direction {
  return dir === 'c2s' ? 's2c' : 'c2s';
}

/** Milliseconds rounded to 0.01, enough for latencies and stable in logs. */
export function roundMs(ms: number): number {
  return Math.round(ms * 100) / 100;
}

// Typed keys: the string id "1" and the number id 1 are different requests.
function requestKey(dir: Direction, id: JsonRpcId): string {
  return `${dir}:${typeof id}:${id}`;
}

function tokenKey(dir: Direction, token: string | number): string {
  return `${dir}:${typeof token}:${token}`;
}
