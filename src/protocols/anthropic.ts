/**
 * The Anthropic Messages API (`POST /v1/messages`): request summaries and replies reassembled from SSE events or
 * read from one Message body. Pure; never throws.
 *
 * A streamed reply is a sequence of typed events: `message_start` (the model, the input usage), then per content
 * block `content_block_start` / `content_block_delta`… / `content_block_stop`, then `message_delta` (the stop
 * reason and the output usage) and `message_stop`, the stream's own end; `ping` may come anywhere and `error`
 * (`overloaded_error`) may arrive mid-stream. A tool call's input arrives as `input_json_delta` pieces of JSON
 * text, joined per block and parsed once the reply ends.
 *
 * Blocks the API runs itself (`server_tool_use`, `mcp_tool_use` of the MCP connector) are not tool calls of the
 * agent: no MCP server behind the agent will run them, so they are left out of `toolCalls`.
 */
import type { LlmToolCall, LlmToolResult, LlmUsage } from '../log/schema.js';
import {
  appendBounded,
  ReplyParts,
  contentText,
  errorText,
  errorTypeOf,
  isAtCap,
  MAX_REPLY_TOOL_CALLS,
  parseJson,
  previewPrompt,
  toolArguments,
  toolNamesOf,
  type LlmChunkInfo,
  type LlmReply,
  type LlmReplyAssembler,
  type LlmRequestSummary,
} from './llm.js';
import { asObject } from './mcp.js';
import { shorten } from '../log/redact.js';

/**
 * True for the path whose replies are model turns: `/v1/messages`, also under a gateway's prefix
 * (`/api/v1/messages` for a base URL `https://gateway.example/api`).
 */
export function isAnthropicTurnPath(path: string): boolean {
  return /(^|\/)v1\/messages$/.test(path);
}

/** Paths of the Anthropic API's messages (`/v1/messages`, `/v1/messages/count_tokens`, `/v1/messages/batches…`). */
export function isAnthropicPath(path: string): boolean {
  return /(^|\/)v1\/messages(\/[\w-]+)*$/.test(path);
}

/** Summarize a request body to `/v1/messages`. The API does not stream unless asked. */
export function summarizeAnthropicRequest(body: unknown): LlmRequestSummary | undefined {
  const o = asObject(body);
  if (!o) return undefined;
  const messages = Array.isArray(o.messages) ? o.messages : [];
  const summary: LlmRequestSummary = { stream: o.stream === true, messageCount: messages.length, tools: toolNamesOf(o.tools), toolResults: [] };
  if (typeof o.model === 'string') summary.model = o.model;
  if (typeof o.max_tokens === 'number') summary.maxTokens = o.max_tokens;
  const thinking = asObject(o.thinking);
  if (thinking) summary.thinkingConfig = thinking;
  if (o.system !== undefined) {
    const system = contentText(o.system);
    if (system) summary.system = previewPrompt(system);
  }
  const history: LlmToolCall[] = [];
  let prompt: string | undefined;
  for (const m of messages) {
    const msg = asObject(m);
    if (!msg) continue;
    // Only the tool results of the last user message are carried back by *this* request; older ones are history.
    summary.toolResults = [];
    const blocks = Array.isArray(msg.content) ? msg.content : [];
    if (msg.role === 'assistant') {
      for (const b of blocks) {
        const block = asObject(b);
        if (block?.type === 'tool_use') history.push(toolUseCall(block));
      }
      continue;
    }
    if (msg.role !== 'user') continue;
    if (typeof msg.content === 'string') prompt = msg.content;
    for (const b of blocks) {
      const block = asObject(b);
      if (block?.type === 'tool_result') summary.toolResults.push(toolResultOf(block));
    }
    const text = blocks.map((b) => (asObject(b)?.type === 'text' ? String(asObject(b)!.text ?? '') : '')).join('');
    if (text) prompt = text;
  }
  if (history.length) summary.historyToolCalls = history;
  if (prompt !== undefined) summary.prompt = previewPrompt(prompt);
  return summary;
}

function toolUseCall(block: Record<string, unknown>): LlmToolCall {
  const call: LlmToolCall = { name: typeof block.name === 'string' ? block.name : '', arguments: block.input ?? {} };
  if (typeof block.id === 'string') call.id = block.id;
  return call;
}

function toolResultOf(block: Record<string, unknown>): LlmToolResult {
  const result: LlmToolResult = { content: contentText(block.content) };
  if (typeof block.tool_use_id === 'string') result.toolCallId = block.tool_use_id;
  if (block.is_error === true) result.isError = true;
  return result;
}

/** Anthropic usage: input tokens as the API counts them (cache reads and writes apart), and the output tokens. */
export function anthropicUsage(value: unknown, into: LlmUsage = {}): LlmUsage | undefined {
  const u = asObject(value);
  if (!u) return Object.keys(into).length ? into : undefined;
  const usage: LlmUsage = { ...into };
  if (typeof u.input_tokens === 'number') usage.promptTokens = u.input_tokens;
  if (typeof u.output_tokens === 'number') usage.completionTokens = u.output_tokens;
  if (typeof u.cache_creation_input_tokens === 'number') usage.cacheCreationTokens = u.cache_creation_input_tokens;
  if (typeof u.cache_read_input_tokens === 'number') usage.cacheReadTokens = u.cache_read_input_tokens;
  // Everything the call consumed: the cached input is billed and counted too, only at other rates.
  const input = (usage.promptTokens ?? 0) + (usage.cacheCreationTokens ?? 0) + (usage.cacheReadTokens ?? 0);
  if (usage.promptTokens !== undefined || usage.completionTokens !== undefined) usage.totalTokens = input + (usage.completionTokens ?? 0);
  return Object.keys(usage).length ? usage : undefined;
}

/** One content block as it streams in. */
interface Block {
  type: string;
  id?: string;
  name?: string;
  /** A tool_use block's input: the pieces of its JSON text, or the input object the start event gave. */
  json: string;
  input?: unknown;
}

/** Block types that are the agent's tool calls (its MCP servers or its own code run them). */
const AGENT_TOOL_BLOCKS = new Set(['tool_use']);

/** Reassembles an Anthropic reply from its SSE events' data, or from one non-streamed Message body. */
export class AnthropicReplyAssembler implements LlmReplyAssembler {
  private readonly parts = new ReplyParts();
  private readonly blocks = new Map<number, Block>();

  push(text: string, event?: string): LlmChunkInfo {
    if (text.trim() === '') return { content: false, chunk: false };
    this.parts.chunkCount++;
    const o = asObject(parseJson(text));
    if (!o) {
      const error = `an event whose data is not a JSON object: ${shorten(text, 80)}`;
      if (event === 'error') this.parts.error = text;
      return { content: false, chunk: true, error: event === 'error' ? text : error };
    }
    const info: LlmChunkInfo = { content: false, chunk: true, json: o };
    switch (o.type ?? event) {
      case 'message_start': {
        const message = asObject(o.message);
        if (typeof message?.model === 'string') this.parts.model = message.model;
        this.parts.usage = anthropicUsage(message?.usage, this.parts.usage);
        break;
      }
      case 'content_block_start':
        this.startBlock(o, info);
        break;
      case 'content_block_delta':
        this.addDelta(o, info);
        break;
      case 'content_block_stop':
        this.stopBlock(o, info);
        break;
      case 'message_delta': {
        const delta = asObject(o.delta);
        if (typeof delta?.stop_reason === 'string') this.parts.finishReason = delta.stop_reason;
        // Cumulative counts: the last message_delta has the final ones.
        this.parts.usage = anthropicUsage(o.usage, this.parts.usage);
        break;
      }
      case 'message_stop':
        info.done = true;
        break;
      case 'error':
        this.fail(o, info, text);
        break;
      case 'message':
        // A whole Message (a non-streamed body).
        this.readMessage(o);
        break;
      default:
        // ping, and event types newer than this reader.
        break;
    }
    return info;
  }

  result(): LlmReply {
    const toolCalls: LlmToolCall[] = [];
    for (const [, block] of [...this.blocks.entries()].sort((a, b) => a[0] - b[0])) {
      if (!AGENT_TOOL_BLOCKS.has(block.type) || toolCalls.length >= MAX_REPLY_TOOL_CALLS) continue;
      const call: LlmToolCall = { name: block.name ?? '', ...(block.json !== '' ? toolArguments(block.json) : { arguments: block.input ?? {} }) };
      if (block.id !== undefined) call.id = block.id;
      toolCalls.push(call);
    }
    const capped = toolCalls.some((c) => isAtCap(c.argumentsRaw)) || this.blocks.size >= MAX_REPLY_TOOL_CALLS;
    return this.parts.build(toolCalls, capped);
  }

  private startBlock(o: Record<string, unknown>, info: LlmChunkInfo): void {
    const index = typeof o.index === 'number' ? o.index : this.blocks.size;
    const cb = asObject(o.content_block);
    if (!cb || (!this.blocks.has(index) && this.blocks.size >= MAX_REPLY_TOOL_CALLS)) return;
    const block: Block = { type: typeof cb.type === 'string' ? cb.type : 'unknown', json: '' };
    if (typeof cb.id === 'string') block.id = cb.id;
    if (typeof cb.name === 'string') block.name = cb.name;
    if (cb.input !== undefined) block.input = cb.input;
    this.blocks.set(index, block);
    // A block may start with text already in it; a tool call's start is the model's first decision.
    if (typeof cb.text === 'string' && cb.text) this.addText(cb.text, info);
    if (typeof cb.thinking === 'string' && cb.thinking) this.addThinking(cb.thinking, info);
    if (AGENT_TOOL_BLOCKS.has(block.type)) info.content = true;
  }

  /** A tool_use block's stop completes its call: the calls up to it, in result() order, are complete. */
  private stopBlock(o: Record<string, unknown>, info: LlmChunkInfo): void {
    const index = typeof o.index === 'number' ? o.index : -1;
    if (!AGENT_TOOL_BLOCKS.has(this.blocks.get(index)?.type ?? '')) return;
    let count = 0;
    for (const [i, block] of this.blocks) if (i <= index && AGENT_TOOL_BLOCKS.has(block.type)) count++;
    info.completedCalls = Math.min(count, MAX_REPLY_TOOL_CALLS);
  }

  private addDelta(o: Record<string, unknown>, info: LlmChunkInfo): void {
    const delta = asObject(o.delta);
    if (!delta) return;
    switch (delta.type) {
      case 'text_delta':
        if (typeof delta.text === 'string') this.addText(delta.text, info);
        break;
      case 'thinking_delta':
        if (typeof delta.thinking === 'string') this.addThinking(delta.thinking, info);
        break;
      case 'input_json_delta': {
        const block = this.blocks.get(typeof o.index === 'number' ? o.index : -1);
        if (block && typeof delta.partial_json === 'string') block.json = appendBounded(block.json, delta.partial_json);
        info.content = true;
        break;
      }
      default:
        // signature_delta (the thinking block's signature: opaque, not the model's words), citations_delta.
        break;
    }
  }

  private addText(text: string, info: LlmChunkInfo): void {
    this.parts.addContent(text);
    info.delta = (info.delta ?? '') + text;
    info.content = true;
  }

  private addThinking(text: string, info: LlmChunkInfo): void {
    this.parts.addThinking(text);
    info.thinking = (info.thinking ?? '') + text;
    info.content = true;
  }

  private fail(o: Record<string, unknown>, info: LlmChunkInfo, text: string): void {
    const type = errorTypeOf(o);
    this.parts.error = errorText(o) ?? text;
    info.error = this.parts.error;
    if (type !== undefined) {
      this.parts.errorType = type;
      info.errorType = type;
    }
  }

  /** A whole Message object: its blocks, stop reason and usage. */
  private readMessage(o: Record<string, unknown>): void {
    if (typeof o.model === 'string') this.parts.model = o.model;
    if (typeof o.stop_reason === 'string') this.parts.finishReason = o.stop_reason;
    this.parts.usage = anthropicUsage(o.usage, this.parts.usage);
    const blocks = Array.isArray(o.content) ? o.content : [];
    const info: LlmChunkInfo = { content: false, chunk: true };
    blocks.forEach((b, index) => this.startBlock({ index, content_block: b }, info));
  }
}

/** Read a non-streamed body as a reply: a Message, or an error body. */
export function anthropicReplyFromBody(text: string): LlmReply {
  const assembler = new AnthropicReplyAssembler();
  assembler.push(text);
  return { ...assembler.result(), chunkCount: 0 };
}
