/**
 * How a live request finds its recorded twin. Pure: canonical keys and small pickers over candidate lists, shared
 * by the stdio replay (JSON-RPC requests) and the HTTP replay (method, path and body).
 *
 * Canonical JSON sorts object keys and drops fields that differ between runs by nature rather than by meaning:
 * `_meta` in MCP params (progress tokens, trace context) and whatever the user names with `--ignore`. Two requests
 * with the same canonical key ask the same question.
 */

/** How the stdio replay pairs live requests with recorded ones. */
export type MatchMode = 'params' | 'sequential' | 'strict';

/** Every match mode, for flag validation. */
export const MATCH_MODES: readonly MatchMode[] = ['params', 'sequential', 'strict'];

/**
 * JSON text of `value` with object keys sorted and every key named in `ignore` removed at any depth, so that two
 * values that mean the same serialize the same. Arrays keep their order (order means something in JSON arrays).
 */
export function canonicalJson(value: unknown, ignore: ReadonlySet<string> = new Set()): string {
  return JSON.stringify(canonicalize(value, ignore)) ?? 'undefined';
}

function canonicalize(value: unknown, ignore: ReadonlySet<string>): unknown {
  if (Array.isArray(value)) return value.map((v) => canonicalize(v, ignore));
  if (value === null || typeof value !== 'object') return value;
  const out: Record<string, unknown> = {};
  for (const key of Object.keys(value).sort()) {
    if (ignore.has(key)) continue;
    const v = (value as Record<string, unknown>)[key];
    if (v === undefined) continue;
    out[key] = canonicalize(v, ignore);
  }
  return out;
}

/** Fields of MCP params that never decide which recorded request answers: protocol metadata. */
const MCP_IGNORED = new Set(['_meta']);

/**
 * Canonical key of JSON-RPC params: `_meta` (progress tokens, trace context) dropped at the top level, plus the
 * `ignore` fields anywhere. Missing params and `{}` are the same question.
 */
export function canonicalParams(params: unknown, ignore: ReadonlySet<string> = new Set()): string {
  if (params === undefined || params === null) return '{}';
  if (typeof params !== 'object' || Array.isArray(params)) return canonicalJson(params, ignore);
  const top: Record<string, unknown> = {};
  for (const [k, v] of Object.entries(params)) if (!MCP_IGNORED.has(k)) top[k] = v;
  return canonicalJson(top, ignore);
}

/**
 * Canonical key of an HTTP body: JSON bodies canonicalized (a JSON-RPC body also loses its `id` and `_meta`,
 * which differ between runs without changing the question), anything else compared as it is.
 */
export function canonicalBody(body: string | undefined, ignore: ReadonlySet<string> = new Set()): string {
  if (body === undefined || body === '') return '';
  let value: unknown;
  try {
    value = JSON.parse(body);
  } catch {
    return `text:${body}`;
  }
  return `json:${canonicalJson(stripJsonRpcIdentity(value), ignore)}`;
}

/** A JSON-RPC message (or batch) without its id and params._meta; other JSON as it is. */
function stripJsonRpcIdentity(value: unknown): unknown {
  if (Array.isArray(value)) return value.map(stripJsonRpcIdentity);
  if (value === null || typeof value !== 'object') return value;
  const o = value as Record<string, unknown>;
  if (o.jsonrpc !== '2.0') return value;
  const { id: _id, ...rest } = o;
  // A response's id is what ties it to the server's request; keep it, since the replay answers with recorded ids.
  if (!('method' in o)) return value;
  if (rest.params !== null && typeof rest.params === 'object' && !Array.isArray(rest.params)) {
    const { _meta: _m, ...params } = rest.params as Record<string, unknown>;
    return { ...rest, params };
  }
  return rest;
}

/** A recorded request as the matcher sees it. */
export interface Candidate {
  method: string;
  /** Canonical params; undefined when they are unknown (a truncated frame), which matches any params by method. */
  key: string | undefined;
}

/** Why no candidate fits: the method never appears, or it does but not with these params (or not next). */
export type Miss = 'unknown-method' | 'no-match';

/** The recorded requests of one method, with cursors so that each pick costs about O(1). */
interface MethodQueue {
  /** Indexes (into the matcher's candidates) of this method's requests, in recorded order. */
  all: number[];
  /** Position in `all` of the first one that may still be unused. */
  first: number;
  /** Per canonical key: positions in `all`, in order, and a cursor to the first that may still be unused. */
  byKey: Map<string, { at: number[]; next: number }>;
}

/**
 * Picks the recorded request that answers each live one, each recording used once, by mode:
 * - `params`: the first unused recording with the same method and canonical params, else the first unused one
 *   with the same method (recorded order);
 * - `sequential`: the first unused recording with the same method, params ignored;
 * - `strict`: the first unused recording with the same method must also have the same params.
 * Indexed by method and key, so a capture of many thousand calls replays in linear time.
 */
export class RequestMatcher {
  private readonly candidates: readonly Candidate[];
  private readonly used: boolean[];
  private readonly methods = new Map<string, MethodQueue>();

  constructor(candidates: readonly Candidate[]) {
    this.candidates = candidates;
    this.used = candidates.map(() => false);
    candidates.forEach((c, index) => {
      let queue = this.methods.get(c.method);
      if (!queue) {
        queue = { all: [], first: 0, byKey: new Map() };
        this.methods.set(c.method, queue);
      }
      if (c.key !== undefined) {
        const slot = queue.byKey.get(c.key) ?? { at: [], next: 0 };
        slot.at.push(queue.all.length);
        queue.byKey.set(c.key, slot);
      }
      queue.all.push(index);
    });
  }

  /** Index of the candidate that answers a live request (now marked used), or why there is none. */
  pick(method: string, key: string, mode: MatchMode): number | Miss {
    const queue = this.methods.get(method);
    if (!queue) return 'unknown-method';
    while (queue.first < queue.all.length && this.used[queue.all[queue.first]!]) queue.first++;
    const first = queue.first < queue.all.length ? queue.all[queue.first]! : undefined;
    if (mode === 'params') {
      const slot = queue.byKey.get(key);
      if (slot) {
        while (slot.next < slot.at.length && this.used[queue.all[slot.at[slot.next]!]!]) slot.next++;
        if (slot.next < slot.at.length) return this.take(queue.all[slot.at[slot.next]!]!);
      }
      return first === undefined ? 'no-match' : this.take(first);
    }
    if (first === undefined) return 'no-match';
    if (mode === 'strict') {
      const k = this.candidates[first]!.key;
      if (k !== undefined && k !== key) return 'no-match';
    }
    return this.take(first);
  }

  private take(index: number): number {
    this.used[index] = true;
    return index;
  }
}
