/**
 * The Ollama API (`/api/chat`, `/api/generate`, …): request summaries and replies reassembled from NDJSON
 * chunks or read from one JSON body. Pure; never throws.
 *
 * Ollama's durations are nanoseconds; the log holds milliseconds, and tokens/s from eval_count / eval_duration.
 * Tool calls arrive whole in one chunk with object arguments; newer servers add an id, older ones do not.
 */
import type { LlmToolCall, LlmUsage } from '../log/schema.js';
import {
  ReplyParts,
  MAX_REPLY_TOOL_CALLS,
  errorText,
  parseJson,
  summarizeMessages,
  toolCallOf,
  type LlmChunkInfo,
  type LlmReply,
  type LlmReplyAssembler,
  type LlmRequestSummary,
} from './llm.js';
import { asObject } from './mcp.js';
import { shorten } from '../log/redact.js';

/** Ollama endpoints whose replies are model turns (streamed unless `stream: false`). */
export const OLLAMA_TURN_ENDPOINTS = new Set(['/api/chat', '/api/generate']);

/** Summarize a request body to an Ollama endpoint. Ollama streams unless told `stream: false`. */
export function summarizeOllamaRequest(body: unknown): LlmRequestSummary | undefined {
  const o = asObject(body);
  if (!o) return undefined;
  return summarizeMessages(o, true);
}

/** Ollama's nanosecond durations and counts → LlmUsage in milliseconds and tokens per second. */
export function ollamaUsage(chunk: Record<string, unknown>): LlmUsage | undefined {
  const usage: LlmUsage = {};
  const num = (k: string): number | undefined => (typeof chunk[k] === 'number' ? (chunk[k] as number) : undefined);
  const ms = (ns: number | undefined): number | undefined => (ns === undefined ? undefined : Math.round(ns / 1e4) / 100);
  const prompt = num('prompt_eval_count');
  const completion = num('eval_count');
  if (prompt !== undefined) usage.promptTokens = prompt;
  if (completion !== undefined) usage.completionTokens = completion;
  if (prompt !== undefined || completion !== undefined) usage.totalTokens = (prompt ?? 0) + (completion ?? 0);
  const total = ms(num('total_duration'));
  const load = ms(num('load_duration'));
  const promptEval = ms(num('prompt_eval_duration'));
  const evalMs = ms(num('eval_duration'));
  if (total !== undefined) usage.totalMs = total;
  if (load !== undefined) usage.loadMs = load;
  if (promptEval !== undefined) usage.promptEvalMs = promptEval;
  if (evalMs !== undefined) usage.evalMs = evalMs;
  const evalNs = num('eval_duration');
  if (completion !== undefined && evalNs !== undefined && evalNs > 0) {
    usage.tokensPerSecond = Math.round((completion / evalNs) * 1e9 * 100) / 100;
  }
  return Object.keys(usage).length ? usage : undefined;
}

/** Reassembles an Ollama reply from its NDJSON lines (a non-streamed body is one such object). */
export class OllamaReplyAssembler implements LlmReplyAssembler {
  private readonly parts = new ReplyParts();
  private toolCalls: LlmToolCall[] = [];

  push(text: string): LlmChunkInfo {
    if (text.trim() === '') return { content: false, chunk: false };
    this.parts.chunkCount++;
    const json = parseJson(text);
    const o = asObject(json);
    if (!o) {
      const error = `a line that is not a JSON object: ${shorten(text, 80)}`;
      this.parts.error ??= error;
      return { content: false, chunk: true, error };
    }
    const error = errorText(o);
    if (error !== undefined) {
      this.parts.error = error;
      return { content: false, chunk: true, error };
    }
    if (typeof o.model === 'string') this.parts.model = o.model;
    const info: LlmChunkInfo = { content: false, chunk: true, json: o };
    const message = asObject(o.message);
    // /api/chat puts text in message.content; /api/generate in response.
    const delta = typeof message?.content === 'string' ? message.content : typeof o.response === 'string' ? o.response : '';
    const thinking = typeof message?.thinking === 'string' ? message.thinking : typeof o.thinking === 'string' ? o.thinking : '';
    if (delta) {
      this.parts.addContent(delta);
      info.delta = delta;
      info.content = true;
    }
    if (thinking) {
      this.parts.addThinking(thinking);
      info.thinking = thinking;
      info.content = true;
    }
    if (Array.isArray(message?.tool_calls) && message.tool_calls.length > 0) {
      for (const call of message.tool_calls) if (this.toolCalls.length < MAX_REPLY_TOOL_CALLS) this.toolCalls.push(toolCallOf(call));
      info.content = true;
      // Ollama sends each tool call whole.
      info.completedCalls = this.toolCalls.length;
    }
    if (o.done === true) {
      info.done = true;
      if (typeof o.done_reason === 'string') this.parts.finishReason = o.done_reason;
      this.parts.usage = ollamaUsage(o);
    }
    return info;
  }

  result(): LlmReply {
    return this.parts.build(this.toolCalls, this.toolCalls.length >= MAX_REPLY_TOOL_CALLS);
  }
}
