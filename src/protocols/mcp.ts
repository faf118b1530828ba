/**
 * What MCP messages mean: handshake fields, capabilities, tool lists and results, error codes. Pure helpers that
 * read already-parsed JSON; they never throw on odd shapes (a field of the wrong type is simply not reported).
 */
import { quote as jsonString } from '../log/record-json.js';
import { cutClean, redactDefaults } from '../log/redact.js';

/** Peer identity from `clientInfo` / `serverInfo`. */
export interface PeerInfo {
  name?: string;
  version?: string;
  title?: string;
}

/** What the JSON-RPC error codes used by MCP mean, in words. */
const ERROR_MEANINGS: Record<number, string> = {
  [-32700]: 'parse error: the receiver could not parse the JSON',
  [-32600]: 'invalid request: not a valid JSON-RPC request',
  [-32601]: 'method not found: the receiver does not implement this method',
  [-32602]: 'invalid params: the arguments do not match what the method expects',
  [-32603]: 'internal error inside the receiver',
  [-32000]: 'connection closed (raised locally by the MCP SDK)',
  [-32001]: 'request timed out (raised locally by the MCP SDK)',
  [-32002]: 'resource not found (revisions before 2026-07-28; from then on -32602 with the uri in data)',
  // 2026-07-28, as @modelcontextprotocol/core 2.4.0 defines them.
  [-32020]: 'header mismatch: an Mcp-Method, Mcp-Name or MCP-Protocol-Version header is missing or disagrees with the body',
  [-32021]: 'missing required client capability: the request needs a capability the client did not declare in its _meta',
  [-32022]: 'unsupported protocol version: the server does not speak the revision this request names',
  [-32042]: 'URL elicitation required: the user must open a URL first',
};

/** A plain explanation of a JSON-RPC error code. */
export function errorMeaning(code: number): string {
  const known = ERROR_MEANINGS[code];
  if (known) return known;
  if (code <= -32000 && code >= -32099) return 'a server-defined error';
  return 'an application-defined error';
}

export function asObject(v: unknown): Record<string, unknown> | undefined {
  return v !== null && typeof v === 'object' && !Array.isArray(v) ? (v as Record<string, unknown>) : undefined;
}

export function asString(v: unknown): string | undefined {
  return typeof v === 'string' ? v : undefined;
}

/** `clientInfo` or `serverInfo` from handshake params or result. */
export function peerInfo(v: unknown): PeerInfo | undefined {
  const o = asObject(v);
  if (!o) return undefined;
  const info: PeerInfo = {};
  const name = asString(o.name);
  const version = asString(o.version);
  const title = asString(o.title);
  if (name !== undefined) info.name = name;
  if (version !== undefined) info.version = version;
  if (title !== undefined) info.title = title;
  return info;
}

/** "name version", or a stand-in when the peer did not say. */
export function describePeer(info: PeerInfo | undefined, fallback: string): string {
  if (!info?.name) return fallback;
  return info.version ? `${info.name} ${info.version}` : info.name;
}

/**
 * Capability names, with the interesting sub-flags: `resources(subscribe, listChanged)`.
 * An empty capability object still counts: `{tools: {}}` means the server has tools.
 */
export function describeCapabilities(v: unknown): string[] {
  const caps = asObject(v);
  if (!caps) return [];
  return Object.keys(caps).map((name) => {
    const flags = asObject(caps[name]);
    const on = flags ? Object.keys(flags).filter((k) => flags[k] === true) : [];
    return on.length > 0 ? `${name}(${on.join(', ')})` : name;
  });
}

/** Tool names from a `tools/list` result. */
export function toolNames(result: unknown): string[] {
  const tools = asObject(result)?.tools;
  if (!Array.isArray(tools)) return [];
  return tools.map((t) => asString(asObject(t)?.name)).filter((n): n is string => n !== undefined);
}

/** Names or URIs from a list result (`resources`, `prompts`, `resourceTemplates`). */
export function listedNames(result: unknown, field: string): string[] {
  const items = asObject(result)?.[field];
  if (!Array.isArray(items)) return [];
  return items
    .map((t) => {
      const o = asObject(t);
      return asString(o?.name) ?? asString(o?.uri) ?? asString(o?.uriTemplate);
    })
    .filter((n): n is string => n !== undefined);
}

/** Content block types of a tool result, counted: "2 text, 1 image". */
export function describeContent(result: unknown): string {
  const o = asObject(result);
  const content = o?.content;
  let text = Array.isArray(content) ? countBlockTypes(content) : '';
  if (o && 'structuredContent' in o) text += text === '' ? 'structured content' : ', structured content';
  return text === '' ? 'no content' : text;
}

/**
 * "2 text, 1 image", in the order each type first appears ('' for none). Every tool result is counted here, and
 * most hold blocks of one type: those are counted with no Map, which only a second type brings in.
 */
function countBlockTypes(content: unknown[]): string {
  if (content.length === 0) return '';
  const first = typeOf(content[0]);
  let i = 1;
  while (i < content.length && typeOf(content[i]) === first) i++;
  if (i === content.length) return `${i} ${first}`;
  const counts = new Map<string, number>([[first, i]]);
  for (; i < content.length; i++) {
    const type = typeOf(content[i]);
    counts.set(type, (counts.get(type) ?? 0) + 1);
  }
  let text = '';
  for (const [type, n] of counts) text += text === '' ? `${n} ${type}` : `, ${n} ${type}`;
  return text;
}

function typeOf(block: unknown): string {
  return asString(asObject(block)?.type) ?? 'unknown';
}

/** The text of the first text block of a tool result, for previews. */
export function firstText(result: unknown): string | undefined {
  const content = asObject(result)?.content;
  if (!Array.isArray(content)) return undefined;
  for (const block of content) {
    const b = asObject(block);
    if (b?.type === 'text' && typeof b.text === 'string') return b.text;
  }
  return undefined;
}

/** The `_meta` keys of MCP 2026-07-28 (`@modelcontextprotocol/core` 2.4.0 constants). */
export const META = {
  protocolVersion: 'io.modelcontextprotocol/protocolVersion',
  clientInfo: 'io.modelcontextprotocol/clientInfo',
  clientCapabilities: 'io.modelcontextprotocol/clientCapabilities',
  serverInfo: 'io.modelcontextprotocol/serverInfo',
  subscriptionId: 'io.modelcontextprotocol/subscriptionId',
} as const;

/** What a 2026-07-28 request says about its sender in `params._meta`. */
export interface RequestMeta {
  protocolVersion?: string;
  client?: PeerInfo;
  capabilities?: Record<string, unknown>;
}

/** `params._meta` of a request read for the revision's envelope; undefined when it carries none of it. */
export function requestMeta(meta: Record<string, unknown> | undefined): RequestMeta | undefined {
  if (!meta) return undefined;
  const version = asString(meta[META.protocolVersion]);
  const client = peerInfo(meta[META.clientInfo]);
  const capabilities = asObject(meta[META.clientCapabilities]);
  if (version === undefined && client === undefined && capabilities === undefined) return undefined;
  const out: RequestMeta = {};
  if (version !== undefined) out.protocolVersion = version;
  if (client !== undefined) out.client = client;
  if (capabilities !== undefined) out.capabilities = capabilities;
  return out;
}

/** The server's identity a 2026-07-28 result carries in its `_meta`. */
export function resultServerInfo(result: Record<string, unknown> | undefined): PeerInfo | undefined {
  return peerInfo(asObject(result?._meta)?.[META.serverInfo]);
}

/** One request a server embeds in an `input_required` result: its key, the method it stands for, what it asks. */
export interface InputRequestSummary {
  key: string;
  method: string;
  /** The elicitation's message, a sampling request's last text, … */
  asks?: string;
}

/** The embedded requests of an `input_required` result (`inputRequests: {key: {method, params}}`). */
export function inputRequestsOf(result: Record<string, unknown>): InputRequestSummary[] {
  const requests = asObject(result.inputRequests);
  if (!requests) return [];
  return Object.keys(requests).map((key) => {
    const request = asObject(requests[key]);
    const params = asObject(request?.params);
    const summary: InputRequestSummary = { key, method: asString(request?.method) ?? 'an unnamed request' };
    const asks = asString(params?.message) ?? asString(params?.url);
    if (asks !== undefined) summary.asks = asks;
    return summary;
  });
}

/** Protocol revisions this version of mcptap knows; any other is logged and named as unknown, never rejected. */
export const KNOWN_REVISIONS = new Set(['2024-11-05', '2025-03-26', '2025-06-18', '2025-11-25', '2026-07-28']);

/** Result types of 2026-07-28 this version of mcptap knows. */
export const KNOWN_RESULT_TYPES = new Set(['complete', 'input_required']);

/** Methods this version of mcptap knows, by who sends them; anything else is logged as unknown, never rejected. */
export const KNOWN_METHODS = new Set([
  'initialize',
  'ping',
  'tools/list',
  'tools/call',
  'resources/list',
  'resources/templates/list',
  'resources/read',
  'resources/subscribe',
  'resources/unsubscribe',
  'prompts/list',
  'prompts/get',
  'completion/complete',
  'logging/setLevel',
  'sampling/createMessage',
  'roots/list',
  'elicitation/create',
  'tasks/get',
  'tasks/result',
  'tasks/list',
  'tasks/cancel',
  'tasks/update',
  'server/discover',
  'subscriptions/listen',
  'notifications/subscriptions/acknowledged',
  'notifications/initialized',
  'notifications/roots/list_changed',
  'notifications/message',
  'notifications/resources/updated',
  'notifications/resources/list_changed',
  'notifications/tools/list_changed',
  'notifications/prompts/list_changed',
  'notifications/elicitation/complete',
  'notifications/progress',
  'notifications/cancelled',
  'notifications/tasks/status',
]);

/** Requests only a server sends; every other request the spec names but ping, server/discover and tasks/* only a client does. */
const SERVER_REQUESTS = new Set(['sampling/createMessage', 'roots/list', 'elicitation/create']);
const EITHER_REQUESTS = new Set(['ping', 'server/discover', 'tasks/get', 'tasks/result', 'tasks/list', 'tasks/cancel', 'tasks/update']);

/**
 * The side that alone may send each request the spec names, read once: every request asks, and one lookup costs
 * less than the three sets' (a method not here: neither side known).
 */
const ONE_SENDER = new Map<string, 'client' | 'server'>();
for (const method of KNOWN_METHODS) if (!EITHER_REQUESTS.has(method) && !method.startsWith('notifications/')) ONE_SENDER.set(method, 'client');
for (const method of SERVER_REQUESTS) ONE_SENDER.set(method, 'server');

/** Which side may send this request, when the spec says only one does (a method it does not name: neither known). */
export function requestSender(method: string): 'client' | 'server' | undefined {
  return ONE_SENDER.get(method);
}

/**
 * White space that folding to one line changes: any but a space, two spaces running, one at either end. Most
 * previews have none, and the search costs less than the fold's copy.
 */
const NEEDS_FOLD = /[^\S ]| {2}|^ | $/;

/**
 * Shorten text to `max` characters for a one-line preview. Redacted before the last cut, and no cut keeps the
 * head of a key (cutClean): the log's own redaction could not recognise half of one.
 */
export function preview(text: string, max = 80): string {
  // Nothing is cut from a short text, and the log redacts the whole record.
  if (text.length <= max) return NEEDS_FOLD.test(text) ? text.replace(/\s+/g, ' ').trim() : text;
  // Cut before folding white space: frames can be megabytes and only the head is shown.
  const oneLine = redactDefaults(cutClean(text, max * 4)).replace(/\s+/g, ' ').trim();
  return oneLine.length > max ? `${cutClean(oneLine, max - 1)}…` : oneLine;
}

/**
 * A compact one-line JSON preview of a value. It stops serializing once `max` characters are out, so a 1 MB
 * tool argument costs no more than a small one (JSON.stringify would build the whole megabyte first).
 */
export function previewJson(value: unknown, max = 80): string {
  const out: JsonPreview = { text: '', max };
  walkJson(out, value, 0);
  return preview(out.text, max);
}

/**
 * previewJson's text so far and its room. Module functions over this, not closures: every request's summary
 * previews its arguments, and two closures a call showed in profiles.
 */
interface JsonPreview {
  text: string;
  max: number;
}

/** Adds `text`; false once the preview is past its room (the walk stops). */
function emitJson(out: JsonPreview, text: string): boolean {
  out.text += text;
  return out.text.length <= out.max;
}

function walkJson(out: JsonPreview, v: unknown, depth: number): boolean {
  if (v === null || typeof v !== 'object') {
    // A long string is cut to the room left (and cleanly: cutClean), so the preview's own cut falls after it.
    const room = Math.max(0, out.max - out.text.length - 2);
    const text = typeof v === 'string' ? jsonString(v.length > room ? `${cutClean(v, room)}…` : v) : v === undefined ? 'null' : JSON.stringify(v) ?? String(v);
    return emitJson(out, text);
  }
  if (depth > 20) return emitJson(out, '…');
  if (Array.isArray(v)) {
    if (!emitJson(out, '[')) return false;
    for (let i = 0; i < v.length; i++) if ((i > 0 && !emitJson(out, ',')) || !walkJson(out, v[i], depth + 1)) return false;
    return emitJson(out, ']');
  }
  if (!emitJson(out, '{')) return false;
  let first = true;
  for (const key of Object.keys(v)) {
    if ((!first && !emitJson(out, ',')) || !emitJson(out, `${jsonString(key)}:`) || !walkJson(out, (v as Record<string, unknown>)[key], depth + 1)) return false;
    first = false;
  }
  return emitJson(out, '}');
}
