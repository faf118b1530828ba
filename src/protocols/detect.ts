/**
 * Which protocol an HTTP exchange speaks, from what the proxy sees of it. Pure.
 *
 * Decided in two steps because the evidence arrives in two steps: the request line and headers (paths of the
 * LLM APIs, an Mcp-Session-Id, a POST to a legacy SSE session's endpoint), then the request body (a JSON-RPC
 * message). A GET event stream that turns out to open with an `endpoint` event is a legacy MCP SSE session;
 * that is found later, from the stream.
 */
import type { Channel, LlmChannel } from '../types.js';
import { OLLAMA_TURN_ENDPOINTS } from './ollama.js';
import { OPENAI_TURN_ENDPOINTS } from './openai.js';
import { isAnthropicPath, isAnthropicTurnPath } from './anthropic.js';
import { isGeminiPath, isGeminiTurnPath } from './gemini.js';
import { asObject } from './mcp.js';

/** What the request line and headers say. */
export interface RequestHead {
  method: string;
  /** Path and query as sent. */
  path: string;
  headers: Record<string, string | string[] | undefined>;
}

/** The path without its query. */
export function pathOnly(path: string): string {
  const q = path.indexOf('?');
  return q === -1 ? path : path.slice(0, q);
}

/** Ollama's native API lives under /api/. */
export function isOllamaPath(path: string): boolean {
  return /^\/api\/[a-z]+$/.test(pathOnly(path));
}

/** OpenAI-compatible APIs live under /v1/ (or at the root of a base URL that already ends in /v1). */
export function isOpenAiPath(path: string): boolean {
  const p = pathOnly(path);
  return /^\/v1\/(chat\/completions|completions|responses|models|embeddings)(\/|$)/.test(p) || OPENAI_TURN_ENDPOINTS.has(p);
}

/** True when the reply to this path is a model turn worth reassembling (chat, generate, completions, messages). */
export function isLlmTurnPath(channel: Channel, path: string): boolean {
  const p = pathOnly(path);
  if (channel === 'ollama') return OLLAMA_TURN_ENDPOINTS.has(p);
  if (channel === 'openai') return OPENAI_TURN_ENDPOINTS.has(p) || /^\/v1\/(chat\/completions|completions|responses)$/.test(p);
  if (channel === 'anthropic') return isAnthropicTurnPath(p);
  if (channel === 'gemini') return isGeminiTurnPath(p);
  return false;
}

/**
 * The channel as far as the head tells: an LLM API by its path (`ollama`, `openai`, `anthropic`, `gemini`; an
 * `anthropic-version` header makes the Anthropic API's other paths, such as /v1/models, Anthropic's too),
 * `mcp-http` (an Mcp-Session-Id, or a GET/DELETE that speaks the Streamable HTTP session protocol), or
 * undefined when the body must decide.
 */
export function channelFromHead(head: RequestHead): Channel | undefined {
  const h = head.headers;
  const p = pathOnly(head.path);
  if (isOllamaPath(head.path)) return 'ollama';
  // Before OpenAI's: /v1/models/gemini-2.5-flash:generateContent is under OpenAI's /v1/models.
  if (isGeminiPath(p)) return 'gemini';
  if (isAnthropicPath(p) || (h['anthropic-version'] !== undefined && p.startsWith('/v1/'))) return 'anthropic';
  if (isOpenAiPath(head.path)) return 'openai';
  if (h['mcp-session-id'] !== undefined || h['mcp-protocol-version'] !== undefined) return 'mcp-http';
  return undefined;
}

/** True for the channels whose turns an LlmTurn reads. */
export function isLlmApi(channel: Channel): channel is LlmChannel {
  return channel === 'ollama' || channel === 'openai' || channel === 'anthropic' || channel === 'gemini';
}

/** True when a request body is JSON-RPC (one message or a batch): then the exchange is MCP. */
export function isJsonRpcBody(text: string): boolean {
  const trimmed = text.trimStart();
  if (!trimmed.startsWith('{') && !trimmed.startsWith('[')) return false;
  let value: unknown;
  try {
    value = JSON.parse(text);
  } catch {
    // A body cut at --max-body is not parseable; its head still says whether it is JSON-RPC.
    return /^\s*[[{]\s*"jsonrpc"\s*:\s*"2\.0"/.test(text) || /"jsonrpc"\s*:\s*"2\.0"/.test(text.slice(0, 200));
  }
  const first = Array.isArray(value) ? value[0] : value;
  return asObject(first)?.jsonrpc === '2.0';
}

/** True when a request asks for an event stream (a GET that opens an MCP stream, legacy or Streamable). */
export function acceptsEventStream(headers: Record<string, string | string[] | undefined>): boolean {
  const accept = headers.accept;
  const value = Array.isArray(accept) ? accept.join(',') : accept ?? '';
  return value.includes('text/event-stream');
}

/** The media type of a Content-Type header, lower-case, without parameters. */
export function mediaType(header: string | string[] | undefined): string {
  const value = Array.isArray(header) ? header[0] ?? '' : header ?? '';
  return value.split(';')[0]!.trim().toLowerCase();
}

/** The endpoint URI of a legacy SSE session, resolved against the stream's URL to a path and query. */
export function resolveEndpoint(data: string, streamPath: string): string {
  try {
    const url = new URL(data.trim(), new URL(streamPath, 'http://mcptap.invalid'));
    return `${url.pathname}${url.search}`;
  } catch {
    return data.trim();
  }
}
