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
  /** True once a live request has used it. */
  used: boolean;
}

/** Why no candidate fits: the method never appears, or it does but not with these params (or not next). */
export type Miss = 'unknown-method' | 'no-match';

/**
 * Pick the recorded request that answers a live one, by mode:
 * - `params`: the first unused recording with the same method and canonical params, else the first unused one
 *   with the same method (recorded order);
 * - `sequential`: the first unused recording with the same method, params ignored;
 * - `strict`: the first unused recording with the same method must also have the same params.
 * Returns the index in `candidates`, or why there is none.
 */
export function pickCandidate(candidates: readonly Candidate[], method: string, key: string, mode: MatchMode): number | Miss {
  let firstSameMethod = -1;
  let seenMethod = false;
  for (let i = 0; i < candidates.length; i++) {
    const c = candidates[i]!;
    if (c.method !== method) continue;
    seenMethod = true;
    if (c.used) continue;
    if (firstSameMethod === -1) firstSameMethod = i;
    if (mode === 'sequential') return i;
    if (mode === 'strict') return c.key === undefined || c.key === key ? i : 'no-match';
    if (c.key === key) return i;
  }
  if (mode === 'params' && firstSameMethod !== -1) return firstSameMethod;
  return seenMethod ? 'no-match' : 'unknown-method';
}
