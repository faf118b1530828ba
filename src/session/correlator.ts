/**
 * Request ↔ response correlation for one JSON-RPC session. Pure state, no I/O.
 *
 * Both peers send requests and both count ids from 0, so a request is keyed by (direction, id): a response
 * travelling s2c answers the c2s request with the same id, and the other way round. Progress notifications find
 * their request by `progressToken`; `notifications/cancelled` by the canceller's own request id.
 *
 * The map is bounded: past `maxPending` the oldest tenth is evicted at once and handed back, so the caller can
 * log them, in one record, rather than lose them silently (a flood of unanswered requests then costs its log a
 * record per thousand evictions, not one each). The oldest is found in an arrival queue, not by iterating the map
 * from its head: V8 walks every entry deleted at a Map's head since its last rehash on each such iteration. A
 * request leaves the queue lazily, marked `closed`: a look at the mark, not a lookup in a Map of thousands.
 *
 * An evicted request (pushed out by the bound or by its age) is still found by an answer that comes later, among
 * the last `maxPending` evicted each way (`afterPending`): a busy server's late answer is its request's, not an
 * answer to "a request mcptap did not see".
 */
import { RecentMap } from './recent-map.js';
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
  /** The correlator's own mark: it holds the request no longer (answered, pushed out, replaced). */
  closed?: true;
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
  /** The request had been evicted: its `evicted` record came before this answer. */
  afterPending?: true;
}

export const DEFAULT_MAX_PENDING = 10_000;
/**
 * A request unanswered for this long is handed back as pending (checked when the next request arrives, so it
 * costs nothing in between). Long enough for slow tools; short enough that a long session's log says which
 * requests were dropped while it ran, not only at the end.
 */
export const DEFAULT_MAX_PENDING_AGE_MS = 30 * 60_000;

export class Correlator {
  /** Open requests by the direction they travelled, then by id (a Map tells the id 1 from the id "1"). */
  private readonly open = { c2s: new Map<JsonRpcId, OpenRequest>(), s2c: new Map<JsonRpcId, OpenRequest>() };
  private readonly byProgressToken = { c2s: new Map<string | number, OpenRequest>(), s2c: new Map<string | number, OpenRequest>() };
  /** Requests in arrival order, from `head`; one no longer open is passed over (lazy deletion). */
  private queue: OpenRequest[] = [];
  private head = 0;
  /** The last `maxPending` evicted requests of each direction, by id. */
  private readonly evicted: { c2s: RecentMap<JsonRpcId, OpenRequest>; s2c: RecentMap<JsonRpcId, OpenRequest> };
  /** True once an evicted request was forgotten altogether: an answer to it can no longer be told apart. */
  forgotEvicted = false;

  constructor(
    private readonly maxPending = DEFAULT_MAX_PENDING,
    private readonly maxAgeMs = DEFAULT_MAX_PENDING_AGE_MS,
  ) {
    this.evicted = { c2s: new RecentMap(maxPending), s2c: new RecentMap(maxPending) };
  }

  /** Remember a request. Returns requests pushed out to make room (or replaced by one with the same key). */
  request(request: OpenRequest): OpenRequest[] {
    const open = this.open[request.dir];
    const pushedOut: OpenRequest[] = [];
    const previous = open.get(request.id);
    if (previous) {
      this.forget(previous);
      pushedOut.push(previous);
    }
    // A sender that reuses the id of an evicted request has let that one go.
    this.evicted[request.dir].take(request.id);
    open.set(request.id, request);
    this.queue.push(request);
    if (request.progressToken !== undefined) this.byProgressToken[request.dir].set(request.progressToken, request);
    if (this.size > this.maxPending) {
      const keep = this.maxPending - Math.floor(this.maxPending / 10);
      while (this.size > keep) this.evict(this.oldest()!, pushedOut);
    }
    // The queue is in arrival order, so the aged-out requests are at its head: stop at the first young one.
    for (let oldest = this.oldest(); oldest !== undefined && request.mono - oldest.mono > this.maxAgeMs; oldest = this.oldest()) {
      this.evict(oldest, pushedOut);
    }
    return pushedOut;
  }

  /** A response travelling in `dir` with this id: finds and closes the request it answers. */
  respond(dir: Direction, id: JsonRpcId | null, mono: number): Answered | undefined {
    if (id === null) return undefined;
    const request = this.open[opposite(dir)].get(id);
    if (!request) {
      const evicted = this.evicted[opposite(dir)].take(id);
      return evicted && { request: evicted, latencyMs: roundMs(mono - evicted.mono), afterPending: true };
    }
    this.forget(request);
    return { request, latencyMs: roundMs(mono - request.mono) };
  }

  /**
   * An answer with `id: null` (a server that could not read the id, or an HTTP 400 before it looked) answers
   * the one request of an HTTP exchange, if the exchange holds exactly one: the exchange itself pairs them.
   */
  respondSole(dir: Direction, mono: number): Answered | undefined {
    const answered = this.open[opposite(dir)];
    if (this.size !== 1 || answered.size !== 1) return undefined;
    const request = answered.values().next().value as OpenRequest;
    this.forget(request);
    return { request, latencyMs: roundMs(mono - request.mono) };
  }

  /** The open request sent in `dir` with this id, left open (a subscription's acknowledgement names its listen). */
  find(dir: Direction, id: JsonRpcId): OpenRequest | undefined {
    return this.open[dir].get(id);
  }

  /**
   * The open request a progress notification travelling in `dir` refers to. Progress travels against its request
   * (the server reports on the client's call), and both peers may pick the same token (the SDK uses its request
   * id), so the token is looked up among the other side's requests.
   */
  progress(token: string | number, dir: Direction): OpenRequest | undefined {
    return this.byProgressToken[opposite(dir)].get(token);
  }

  /**
   * The open request a `notifications/cancelled` sent in `dir` refers to (the sender's own request), marked as
   * cancelled. It stays open: a response may still cross the cancellation on the wire, and is then correlated.
   */
  cancelled(dir: Direction, requestId: JsonRpcId): OpenRequest | undefined {
    const request = this.open[dir].get(requestId);
    if (request) request.cancelled = true;
    return request;
  }

  /** Number of requests waiting for an answer. */
  get size(): number {
    return this.open.c2s.size + this.open.s2c.size;
  }

  /**
   * Number of open requests sent in `dir` that are owed an answer (one pass over them; for occasional checks).
   * An open `subscriptions/listen` (2026-07-28) is a stream, not an answer owed.
   */
  openFrom(dir: Direction): number {
    let n = 0;
    for (const request of this.open[dir].values()) if (request.method !== 'subscriptions/listen') n++;
    return n;
  }

  /** Hand back every open request (oldest first) and forget them all: the session ended. */
  drain(): OpenRequest[] {
    const all: OpenRequest[] = [];
    for (let i = this.head; i < this.queue.length; i++) if (this.isOpen(this.queue[i]!)) all.push(this.queue[i]!);
    for (const request of all) request.closed = true;
    for (const dir of ['c2s', 's2c'] as const) {
      this.open[dir].clear();
      this.byProgressToken[dir].clear();
    }
    this.queue = [];
    this.head = 0;
    return all;
  }

  private isOpen(request: OpenRequest): boolean {
    return request.closed !== true;
  }

  /** The oldest request still open: the queue's head, once the requests closed meanwhile are passed. */
  private oldest(): OpenRequest | undefined {
    const queue = this.queue;
    while (this.head < queue.length && !this.isOpen(queue[this.head]!)) this.head++;
    if (this.head > 1024 && this.head * 2 > queue.length) {
      // Most of the queue is passed: drop that part, so it stays about as long as the open requests.
      this.queue = queue.slice(this.head);
      this.head = 0;
    }
    return this.queue[this.head];
  }

  private evict(request: OpenRequest, pushedOut: OpenRequest[]): void {
    this.forget(request);
    // A late answer needs what its record says, not the params kept for a retry (they may be large).
    if (request.params !== undefined) request.params = undefined;
    if (this.evicted[request.dir].set(request.id, request) !== undefined) this.forgotEvicted = true;
    pushedOut.push(request);
  }

  private forget(request: OpenRequest): void {
    request.closed = true;
    this.open[request.dir].delete(request.id);
    if (request.progressToken !== undefined) {
      const tokens = this.byProgressToken[request.dir];
      if (tokens.get(request.progressToken) === request) tokens.delete(request.progressToken);
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
