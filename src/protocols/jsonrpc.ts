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

/** How a JSON text can start: JSON's own white space, then a value's first character. */
const MAY_BE_JSON = /^[ \t\r\n]*[{["\-0-9tfn]/;

/** Decode one frame's text into JSON-RPC messages. */
export function decodeJsonRpc(text: string): Decoded {
  // Text that cannot start a JSON value is said so without JSON.parse: its SyntaxError costs far more than the
  // check (a server that floods stdout with plain text makes a frame of every line).
  if (!MAY_BE_JSON.test(text)) return { messages: [{ type: 'invalid', reason: describeNonJson(text) }], batch: false };
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

/** What the ends of a frame too long to keep whole say about it. */
export interface Peeked {
  /** The message's own (top-level) id. */
  id?: JsonRpcId;
  /** The message's own (top-level) method. */
  method?: string;
  /** For `tools/call`: `params.name`, when it comes before the bulk of the params. */
  tool?: string;
  /** A top-level `result` or `error` key was seen: the frame is a response. */
  response?: boolean;
  /** A top-level `error` key was seen. */
  error?: boolean;
}

/**
 * Find the top-level `id` and `method` of a frame that was too long to keep whole, so a huge `tools/call` and
 * its huge result can still be correlated. `head` is the kept start of the frame; `tail` its last bytes.
 *
 * Only the message's own keys count: the head is walked with a small scanner that knows strings and nesting (an
 * `"id"` inside `params.arguments` or inside a string value is not the id). Serializers differ on where the id
 * goes: Python's puts `jsonrpc` and `id` first, the TypeScript SDK's puts them last, after the huge payload, so
 * the tail is read too: a run of simple `"key": value` pairs just before the final `}` is top-level.
 */
export function peekIdAndMethod(head: string, tail?: string): Peeked {
  const found: Peeked = {};
  // Top-level keys past the first 64 KiB come after a huge value; the tail finds those.
  scanHead(head.length > HEAD_SCAN_CHARS ? head.slice(0, HEAD_SCAN_CHARS) : head, found);
  if (tail !== undefined) scanTail(tail, found);
  return found;
}

const HEAD_SCAN_CHARS = 64 * 1024;
const SIMPLE_VALUE = /\s*:\s*(-?\d+(?:\.\d+)?(?:[eE][+-]?\d+)?|"(?:[^"\\]|\\.)*"|null|true|false)/y;

/** Walk the head as JSON as far as it goes, noting the top-level keys (and `params.name`). */
function scanHead(head: string, found: Peeked): void {
  let i = 0;
  while (i < head.length && /\s/.test(head[i]!)) i++;
  if (head[i] !== '{') return;
  // Open containers, innermost last; the key each was opened under (for `params.name`).
  const stack: { type: '{' | '['; key: string | undefined }[] = [];
  let expectKey = false;
  let lastKey: string | undefined;
  for (; i < head.length; i++) {
    const c = head[i]!;
    if (c === '"') {
      const end = stringEnd(head, i);
      if (end === -1) return; // the head stops inside a string
      if (expectKey) {
        const key = parseOr(head.slice(i, end + 1), '') as string;
        lastKey = key;
        const depth = stack.length;
        if (depth === 1 || (depth === 2 && stack[1]!.key === 'params' && key === 'name')) {
          SIMPLE_VALUE.lastIndex = end + 1;
          const value = SIMPLE_VALUE.exec(head);
          const parsed = value ? parseOr(value[1]!, undefined) : undefined;
          if (depth === 1) noteTopLevel(key, parsed, value !== null, found);
          else if (typeof parsed === 'string') found.tool = parsed;
        }
      }
      expectKey = false;
      i = end;
    } else if (c === '{' || c === '[') {
      stack.push({ type: c, key: stack.length === 1 ? lastKey : undefined });
      expectKey = c === '{';
    } else if (c === '}' || c === ']') {
      stack.pop();
      if (stack.length === 0) return;
    } else if (c === ',') {
      expectKey = stack[stack.length - 1]?.type === '{';
    }
  }
}

function noteTopLevel(key: string, value: unknown, simple: boolean, found: Peeked): void {
  if (key === 'id' && simple && (typeof value === 'string' || (typeof value === 'number' && Number.isFinite(value)))) found.id ??= value;
  else if (key === 'method' && typeof value === 'string') found.method ??= value;
  else if (key === 'result') found.response = true;
  else if (key === 'error') {
    found.response = true;
    found.error = true;
  }
}

/** JSON.parse that gives `fallback` instead of throwing (a bad escape in a cut-off frame is data, not a crash). */
function parseOr(text: string, fallback: unknown): unknown {
  try {
    return JSON.parse(text) as unknown;
  } catch {
    return fallback;
  }
}

/** Index of the quote that closes the string opening at `start`, or -1 when the text ends first. */
function stringEnd(text: string, start: number): number {
  for (let j = start + 1; j < text.length; j++) {
    const c = text[j];
    if (c === '\\') j++;
    else if (c === '"') return j;
  }
  return -1;
}

/**
 * The simple `"key": value` pairs just before the frame's final `}`. A `,"` or `{"` can only open a key (inside a
 * JSON string every quote is escaped), so a chain of such pairs ending the frame sits at the top level.
 */
const TAIL_PAIRS = /((?:[,{]\s*"(?:[^"\\]|\\.)*"\s*:\s*(?:-?\d+(?:\.\d+)?(?:[eE][+-]?\d+)?|"(?:[^"\\]|\\.)*"|null|true|false)\s*)+)\}\s*$/;
const TAIL_PAIR = /[,{]\s*("(?:[^"\\]|\\.)*")\s*:\s*(-?\d+(?:\.\d+)?(?:[eE][+-]?\d+)?|"(?:[^"\\]|\\.)*"|null|true|false)/g;

function scanTail(tail: string, found: Peeked): void {
  const run = TAIL_PAIRS.exec(tail);
  if (!run) return;
  for (const pair of run[1]!.matchAll(TAIL_PAIR)) {
    let key: string;
    let value: unknown;
    try {
      key = JSON.parse(pair[1]!) as string;
      value = JSON.parse(pair[2]!) as unknown;
    } catch {
      continue;
    }
    noteTopLevel(key, value, true, found);
  }
}

/** A short human reason for text that is not JSON at all. */
function describeNonJson(text: string): string {
  // A UTF-8 byte-order mark (Windows tools write one) makes the line unreadable to JSON parsers.
  if (text.startsWith('\ufeff')) return 'a line that starts with a UTF-8 byte-order mark (BOM), which JSON parsers reject';
  const trimmed = text.trim();
  if (trimmed === '') return 'an empty line';
  // A message printed with indentation arrives as many lines: `{`, `"jsonrpc": "2.0",`, …, `}`. Say so, since
  // "malformed" would send the reader looking for a bad character instead of the pretty-printer.
  if (trimmed === '{' || trimmed === '[') return 'the start of a JSON message spread over several lines (stdio needs one message per line)';
  if (/^[}\]],?$/.test(trimmed) || /^"(?:[^"\\]|\\.)*"\s*:/.test(trimmed)) return 'a piece of a JSON message spread over several lines (stdio needs one message per line)';
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
