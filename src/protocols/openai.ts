/**
 * OpenAI-compatible APIs (`/v1/chat/completions`, `/v1/completions`, `/v1/responses`): request summaries and
 * replies reassembled from SSE events or read from one JSON body. Pure; never throws.
 *
 * Streamed tool calls come as fragments: the first carries `index`, `id` and the name, later ones only `index`
 * and a slice of `arguments` text. They are joined per index and the arguments parsed once the reply ends.
 */
import type { LlmToolCall, LlmUsage } from '../log/schema.js';
import {
  appendBounded,
  ReplyParts,
  isAtCap,
  MAX_REPLY_TOOL_CALLS,
  contentText,
  errorText,
  parseJson,
  summarizeMessages,
  toolArguments,
  toolCallOf,
  type LlmChunkInfo,
  type LlmReply,
  type LlmReplyAssembler,
  type LlmRequestSummary,
} from './llm.js';
import { asObject } from './mcp.js';
import { shorten } from '../log/redact.js';

/** OpenAI-compatible endpoints whose replies are model turns. */
export const OPENAI_TURN_ENDPOINTS = new Set(['/v1/chat/completions', '/v1/completions', '/v1/responses', '/chat/completions', '/completions', '/responses']);

/** Summarize a request body to an OpenAI-compatible endpoint. These APIs do not stream unless asked. */
export function summarizeOpenAiRequest(body: unknown): LlmRequestSummary | undefined {
  const o = asObject(body);
  if (!o) return undefined;
  return summarizeMessages(o, false);
}

/** OpenAI usage (chat: prompt/completion tokens; Responses: input/output tokens). */
export function openAiUsage(value: unknown): LlmUsage | undefined {
  const u = asObject(value);
  if (!u) return undefined;
  const usage: LlmUsage = {};
  const prompt = typeof u.prompt_tokens === 'number' ? u.prompt_tokens : typeof u.input_tokens === 'number' ? u.input_tokens : undefined;
  const completion = typeof u.completion_tokens === 'number' ? u.completion_tokens : typeof u.output_tokens === 'number' ? u.output_tokens : undefined;
  if (prompt !== undefined) usage.promptTokens = prompt;
  if (completion !== undefined) usage.completionTokens = completion;
  if (typeof u.total_tokens === 'number') usage.totalTokens = u.total_tokens;
  else if (prompt !== undefined || completion !== undefined) usage.totalTokens = (prompt ?? 0) + (completion ?? 0);
  return Object.keys(usage).length ? usage : undefined;
}

interface PartialCall {
  id?: string;
  name: string;
  args: string;
  index: number;
}

/** Reassembles an OpenAI-compatible reply from its SSE events' data, or from one non-streamed JSON body. */
export class OpenAiReplyAssembler implements LlmReplyAssembler {
  private readonly parts = new ReplyParts();
  /** Streamed tool-call fragments, joined by index. */
  private partial = new Map<number, PartialCall>();
  /** Whole tool calls (non-streamed bodies, Responses API items). */
  private whole: LlmToolCall[] = [];
  /** Tool calls complete so far, in result() order (see LlmChunkInfo.completedCalls). */
  private completed = 0;

  push(text: string, event?: string): LlmChunkInfo {
    if (text.trim() === '') return { content: false, chunk: false };
    this.parts.chunkCount++;
    if (text.trim() === '[DONE]') return this.complete({ content: false, chunk: true, done: true }, this.callCount());
    const json = parseJson(text);
    const o = asObject(json);
    if (!o) {
      const error = `an event whose data is not a JSON object: ${shorten(text, 80)}`;
      if (event === 'error') this.parts.error = text;
      return { content: false, chunk: true, error: event === 'error' ? text : error };
    }
    const error = errorText(o) ?? (event === 'error' || o.type === 'error' ? (typeof o.message === 'string' ? o.message : text) : undefined);
    if (error !== undefined && (event === 'error' || o.type === 'error' || !('choices' in o))) {
      this.parts.error = error;
      return { content: false, chunk: true, error };
    }
    if (typeof o.model === 'string') this.parts.model = o.model;
    if (typeof o.type === 'string' && o.type.startsWith('response.')) return this.pushResponsesEvent(o);
    const info: LlmChunkInfo = { content: false, chunk: true, json: o };
    const usage = openAiUsage(o.usage);
    if (usage) this.parts.usage = usage;
    const choices = Array.isArray(o.choices) ? o.choices : [];
    // Only the first choice is reassembled: agents ask for one (n = 1).
    const choice = asObject(choices.find((c) => (asObject(c)?.index ?? 0) === 0) ?? choices[0]);
    if (!choice) return info;
    const delta = asObject(choice.delta);
    const message = asObject(choice.message);
    if (delta) {
      this.addText(delta, info);
      if (Array.isArray(delta.tool_calls)) {
        const before = this.partial.size;
        for (const fragment of delta.tool_calls) this.addFragment(fragment);
        if (delta.tool_calls.length) info.content = true;
        // A call is complete once the next one starts (or the choice finishes, below).
        if (this.partial.size > before) this.complete(info, this.whole.length + this.partial.size - 1);
      }
    } else if (message) {
      this.addText(message, info);
      if (Array.isArray(message.tool_calls)) for (const call of message.tool_calls) if (this.whole.length < MAX_REPLY_TOOL_CALLS) this.whole.push(toolCallOf(call));
    }
    if (typeof choice.finish_reason === 'string') {
      this.parts.finishReason = choice.finish_reason;
      this.complete(info, this.callCount());
    } else if (typeof choice.text === 'string' && choice.text) {
      // /v1/completions
      this.parts.addContent(choice.text);
      info.delta = choice.text;
      info.content = true;
    }
    return info;
  }

  result(): LlmReply {
    const toolCalls = [...this.whole];
    for (const call of [...this.partial.values()].sort((a, b) => a.index - b.index)) {
      const joined: LlmToolCall = { name: call.name, ...toolArguments(call.args), index: call.index };
      if (call.id !== undefined) joined.id = call.id;
      toolCalls.push(joined);
    }
    const capped = toolCalls.some((c) => isAtCap(c.argumentsRaw)) || this.partial.size >= MAX_REPLY_TOOL_CALLS;
    return this.parts.build(toolCalls, capped);
  }

  private callCount(): number {
    return this.whole.length + this.partial.size;
  }

  /** Note that the first `count` tool calls are complete as of this chunk. */
  private complete(info: LlmChunkInfo, count: number): LlmChunkInfo {
    if (count > this.completed) {
      this.completed = count;
      info.completedCalls = count;
    }
    return info;
  }

  private addText(part: Record<string, unknown>, info: LlmChunkInfo): void {
    if (typeof part.content === 'string' && part.content) {
      this.parts.addContent(part.content);
      info.delta = part.content;
      info.content = true;
    }
    // Reasoning models served through OpenAI-compatible APIs (vLLM, DeepSeek, Ollama) put thinking here.
    const reasoning = typeof part.reasoning_content === 'string' ? part.reasoning_content : typeof part.reasoning === 'string' ? part.reasoning : '';
    if (reasoning) {
      this.parts.addThinking(reasoning);
      info.thinking = reasoning;
      info.content = true;
    }
  }

  private addFragment(value: unknown): void {
    const f = asObject(value);
    if (!f) return;
    const index = typeof f.index === 'number' ? f.index : this.partial.size;
    const fn = asObject(f.function);
    let call = this.partial.get(index);
    if (!call) {
      if (this.partial.size >= MAX_REPLY_TOOL_CALLS) return;
      call = { name: '', args: '', index };
      this.partial.set(index, call);
    }
    if (typeof f.id === 'string' && f.id) call.id = f.id;
    if (typeof fn?.name === 'string') call.name += fn.name;
    if (typeof fn?.arguments === 'string') call.args = appendBounded(call.args, fn.arguments);
  }

  /** The Responses API's typed events. */
  private pushResponsesEvent(o: Record<string, unknown>): LlmChunkInfo {
    const info: LlmChunkInfo = { content: false, chunk: true, json: o };
    switch (o.type) {
      case 'response.output_text.delta':
        if (typeof o.delta === 'string') {
          this.parts.addContent(o.delta);
          info.delta = o.delta;
          info.content = true;
        }
        break;
      case 'response.reasoning_summary_text.delta':
      case 'response.reasoning_text.delta':
        if (typeof o.delta === 'string') {
          this.parts.addThinking(o.delta);
          info.thinking = o.delta;
          info.content = true;
        }
        break;
      case 'response.function_call_arguments.delta':
        info.content = true;
        break;
      case 'response.output_item.done':
        // The call's item is whole here; response.completed lists it (and the others) again at the end.
        if (asObject(o.item)?.type === 'function_call') this.complete(info, this.completed + 1);
        break;
      case 'response.completed':
      case 'response.incomplete':
      case 'response.failed': {
        info.done = true;
        const response = asObject(o.response);
        if (typeof response?.model === 'string') this.parts.model = response.model;
        const usage = openAiUsage(response?.usage);
        if (usage) this.parts.usage = usage;
        if (typeof response?.status === 'string') this.parts.finishReason = response.status;
        const output = Array.isArray(response?.output) ? response.output : [];
        for (const item of output) {
          const it = asObject(item);
          if (it?.type === 'function_call') {
            const call: LlmToolCall = { name: String(it.name ?? ''), ...toolArguments(it.arguments) };
            if (typeof it.call_id === 'string') call.id = it.call_id;
            if (this.whole.length < MAX_REPLY_TOOL_CALLS) this.whole.push(call);
          } else if (it?.type === 'message' && !this.parts.content) {
            this.parts.content = contentText(it.content);
          }
        }
        this.complete(info, this.callCount());
        const err = errorText(response);
        if (o.type === 'response.failed' && err !== undefined) {
          this.parts.error = err;
          info.error = err;
        }
        break;
      }
      default:
        break;
    }
    return info;
  }
}

/** Read a non-streamed JSON body as a reply (chat completion, completion, or Responses object). */
export function openAiReplyFromBody(text: string): LlmReply {
  const assembler = new OpenAiReplyAssembler();
  const o = asObject(parseJson(text));
  if (o && o.object === 'response') {
    // A Responses object: reuse the completed-event path.
    assembler.push(JSON.stringify({ type: 'response.completed', response: o }));
  } else {
    assembler.push(text);
  }
  const reply = assembler.result();
  reply.chunkCount = 0;
  return reply;
}
