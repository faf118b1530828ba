/**
 * JSON-RPC 2.0 classification: text in, messages out. Pure; never throws.
 *
 * A frame is parsed once here and the parsed value travels with the message (`json`), so later stages never
 * parse it again. Batches (JSON arrays, MCP 2025-03-26 only) come back element by element.
 */
import type { JsonRpcErrorObject, JsonRpcId, Message } from '../types.js';

/** The result of decoding one frame. */
export interface Decoded {
  messages: Message[];
  /** True when the frame was a JSON array (a batch); each element is one message. */
  batch: boolean;
}

/** Decode one frame's text into JSON-RPC messages. */
export function decodeJsonRpc(text: string): Decoded {
  let value: unknown;
  try {
    value = JSON.parse(text);
  } catch {
    return { messages: [{ type: 'invalid', reason: describeNonJson(text) }], batch: false };
  }
  if (Array.isArray(value)) {
    if (value.length === 0) return { messages: [{ type: 'invalid', reason: 'an empty JSON-RPC batch', json: value }], batch: true };
    return { messages: value.map(classifyJsonRpc), batch: true };
  }
  return { messages: [classifyJsonRpc(value)], batch: false };
}

/** Classify one parsed JSON value as a JSON-RPC message. */
export function classifyJsonRpc(json: unknown): Message {
  if (json === null || typeof json !== 'object' || Array.isArray(json)) {
    return { type: 'invalid', reason: `JSON ${json === null ? 'null' : Array.isArray(json) ? 'array' : typeof json}, not a JSON-RPC object`, json };
  }
  const o = json as Record<string, unknown>;
  const method = o.method;
  const hasId = 'id' in o && o.id !== undefined;
  const id = o.id;
  const idOk = typeof id === 'string' || (typeof id === 'number' && Number.isFinite(id));
  if (o.jsonrpc !== '2.0') {
    return { type: 'invalid', reason: 'a JSON object without "jsonrpc": "2.0"', json, ...idAndMethod(o) };
  }
  if (typeof method === 'string') {
    const params = isPlainObject(o.params) ? o.params : undefined;
    if (!hasId) return params ? { type: 'notification', method, params, json } : { type: 'notification', method, json };
    if (!idOk) return { type: 'invalid', reason: 'a request whose id is neither a string nor a number', json, method };
    return params
      ? { type: 'request', id: id as JsonRpcId, method, params, json }
      : { type: 'request', id: id as JsonRpcId, method, json };
  }
  if ('error' in o && isErrorObject(o.error)) {
    // An error to an unreadable request has no usable id (null, or missing in 2025-11-25).
    return { type: 'error', id: idOk ? (id as JsonRpcId) : null, error: o.error, json };
  }
  if ('result' in o) {
    if (!idOk) return { type: 'invalid', reason: 'a response whose id is neither a string nor a number', json };
    return { type: 'response', id: id as JsonRpcId, result: o.result, json };
  }
  return { type: 'invalid', reason: 'a JSON-RPC object with neither method, result nor error', json, ...idAndMethod(o) };
}

/**
 * Find `"id"` and `"method"` near the start of a frame that was too long to keep whole, so a huge
 * `tools/call` can still be correlated. Best effort; only looks at the kept head.
 */
export function peekIdAndMethod(head: string): { id?: JsonRpcId; method?: string } {
  const found: { id?: JsonRpcId; method?: string } = {};
  const method = /"method"\s*:\s*"((?:[^"\\]|\\.)*)"/.exec(head);
  if (method?.[1] !== undefined) found.method = method[1];
  const id = /"id"\s*:\s*(-?\d+|"(?:[^"\\]|\\.)*")/.exec(head);
  if (id?.[1] !== undefined) found.id = id[1].startsWith('"') ? (JSON.parse(id[1]) as string) : Number(id[1]);
  return found;
}

/** A short human reason for text that is not JSON at all. */
function describeNonJson(text: string): string {
  const trimmed = text.trim();
  if (trimmed === '') return 'an empty line';
  if (trimmed.startsWith('{') || trimmed.startsWith('[')) return 'JSON that does not parse (cut off or malformed)';
  return 'plain text, not JSON';
}

function idAndMethod(o: Record<string, unknown>): { id?: JsonRpcId; method?: string } {
  const out: { id?: JsonRpcId; method?: string } = {};
  if (typeof o.id === 'string' || typeof o.id === 'number') out.id = o.id;
  if (typeof o.method === 'string') out.method = o.method;
  return out;
}

function isPlainObject(v: unknown): v is Record<string, unknown> {
  return v !== null && typeof v === 'object' && !Array.isArray(v);
}

function isErrorObject(v: unknown): v is JsonRpcErrorObject {
  return isPlainObject(v) && typeof v.code === 'number' && typeof v.message === 'string';
}
