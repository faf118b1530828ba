/**
 * What the LLM APIs have in common once decoded: a request summary (model, tools offered, tool results carried
 * back) and a reply reassembled from a stream or read from one JSON body. ollama.ts, openai.ts, anthropic.ts and
 * gemini.ts fill these in (dialects.ts names them per channel); the LLM turn observer turns them into log
 * records. Pure.
 */
import type { LlmRequestRecord, LlmToolCall, LlmToolResult, LlmUsage } from '../log/schema.js';
import { asObject } from './mcp.js';
import { shorten } from '../log/redact.js';

/** What one request to the model asks for: the summary fields of an llm-request record. */
export type LlmRequestSummary = Pick<
  LlmRequestRecord,
  'model' | 'stream' | 'messageCount' | 'tools' | 'toolResults' | 'historyToolCalls' | 'prompt' | 'system' | 'maxTokens' | 'thinkingConfig'
>;

/** What one decoded chunk of a stream says. */
export interface LlmChunkInfo {
  /** Answer text this chunk adds. */
  delta?: string;
  /** Thinking text this chunk adds. */
  thinking?: string;
  /** True when the chunk carries content (text, thinking or a tool call): the first one sets time-to-first-token. */
  content: boolean;
  /** An error the API reported inside the stream. */
  error?: string;
  /** The API's name for that error (`overloaded_error`), when it gives one. */
  errorType?: string;
  /**
   * The stream's own terminator (OpenAI `[DONE]`, Ollama `done: true`, Responses `response.completed`, Anthropic `message_stop`; each
   * dialect's assembler says which of its frames is one). A stream that delivered it is complete whatever the
   * connection does afterwards: clients stop reading there (openai 7.x), and an upstream may end a moment later.
   */
  done?: boolean;
  /**
   * How many of the reply's tool calls (in `result()` order) are complete once this chunk is read, when this
   * chunk completed one: agents dispatch a tool on the chunk that completes its call, not at the end of the
   * response. A dialect that does not say is taken to complete its calls at its terminator (`done`).
   */
  completedCalls?: number;
  /** False for frames that are not chunks of the reply (an SSE comment, a blank line). */
  chunk: boolean;
  /** The chunk's text as parsed, when it is a JSON object the reply is read from: the log reuses it (RAW_PARSED). */
  json?: Record<string, unknown>;
}

/** The reply, reassembled. */
export interface LlmReply {
  model?: string;
  content: string;
  thinking?: string;
  toolCalls: LlmToolCall[];
  finishReason?: string;
  usage?: LlmUsage;
  /** An error the API reported (inside the stream or as the body). */
  error?: string;
  /** The API's name for that error, when it gives one. */
  errorType?: string;
  chunkCount: number;
  /** True when the text, thinking or a tool call's arguments reached MAX_REPLY_CHARS and the rest was not kept. */
  truncated?: boolean;
}

/**
 * The most characters of answer text, thinking, or one tool call's arguments an assembler keeps. A reply that
 * streams on for a gigabyte must not cost a gigabyte (plus a rope node per chunk) of memory; the traffic itself
 * is never cut.
 */
export const MAX_REPLY_CHARS = 1024 * 1024;

/** The most tool calls one reply keeps. */
export const MAX_REPLY_TOOL_CALLS = 1000;

/** True when a reply part has reached its cap, so the reply is marked `truncated`. */
export function isAtCap(text: string | undefined): boolean {
  return text !== undefined && text.length >= MAX_REPLY_CHARS;
}

/** `text + piece`, kept to MAX_REPLY_CHARS. */
export function appendBounded(text: string, piece: string): string {
  if (text.length >= MAX_REPLY_CHARS) return text;
  const joined = text + piece;
  return joined.length > MAX_REPLY_CHARS ? joined.slice(0, MAX_REPLY_CHARS) : joined;
}

/** What an assembler has gathered beside its tool calls; `build` turns it into an LlmReply. */
export class ReplyParts {
  model: string | undefined;
  content = '';
  thinking = '';
  finishReason: string | undefined;
  usage: LlmUsage | undefined;
  error: string | undefined;
  errorType: string | undefined;
  chunkCount = 0;

  addContent(piece: string): void {
    this.content = appendBounded(this.content, piece);
  }

  addThinking(piece: string): void {
    this.thinking = appendBounded(this.thinking, piece);
  }

  /**
   * The reply, with the fields that are unknown (or, for thinking, empty) left out. `toolsCapped`: a tool
   * call's arguments reached their cap or the reply its most tool calls (the text's caps are judged here).
   */
  build(toolCalls: LlmToolCall[], toolsCapped: boolean): LlmReply {
    const reply: LlmReply = { content: this.content, toolCalls, chunkCount: this.chunkCount };
    if (this.model !== undefined) reply.model = this.model;
    if (this.thinking) reply.thinking = this.thinking;
    if (this.finishReason !== undefined) reply.finishReason = this.finishReason;
    if (this.usage) reply.usage = this.usage;
    if (this.error !== undefined) reply.error = this.error;
    if (this.errorType !== undefined) reply.errorType = this.errorType;
    if (isAtCap(this.content) || isAtCap(this.thinking) || toolsCapped) reply.truncated = true;
    return reply;
  }
}

/** Reassembles one reply from its stream, chunk by chunk. */
export interface LlmReplyAssembler {
  /** One NDJSON line or SSE event's data (with the SSE event type, if any). */
  push(text: string, event?: string): LlmChunkInfo;
  /** The reply as assembled so far. */
  result(): LlmReply;
}

/** The arguments of a tool call as logged: parsed when they are JSON text, kept raw when they are not. */
export function toolArguments(value: unknown): Pick<LlmToolCall, 'arguments' | 'argumentsRaw'> {
  if (typeof value !== 'string') return { arguments: value ?? {} };
  if (value.trim() === '') return { arguments: {} };
  try {
    return { arguments: JSON.parse(value) as unknown };
  } catch {
    return { arguments: value, argumentsRaw: value };
  }
}

/** Text of a message's content: a string, or the text parts of a content array. */
export function contentText(content: unknown): string {
  if (typeof content === 'string') return content;
  if (Array.isArray(content)) {
    return content
      .map((part) => {
        if (typeof part === 'string') return part;
        const p = asObject(part);
        return typeof p?.text === 'string' ? p.text : '';
      })
      .join('');
  }
  if (content === undefined || content === null) return '';
  return JSON.stringify(content);
}

/** Parse JSON text, undefined when it does not parse. */
export function parseJson(text: string): unknown {
  try {
    return JSON.parse(text) as unknown;
  } catch {
    return undefined;
  }
}

/** The error text of an API error body: `{"error": "…"}` (Ollama) or `{"error": {"message": …}}` (OpenAI). */
export function errorText(json: unknown): string | undefined {
  const o = asObject(json);
  if (!o || !('error' in o)) return undefined;
  const e = o.error;
  if (typeof e === 'string') return e;
  const r = asObject(e);
  if (typeof r?.message === 'string') return r.message;
  return JSON.stringify(e);
}

/**
 * The API's own name for an error body's error: Anthropic's `error.type` (`overloaded_error`), Gemini's
 * `error.status` (`RESOURCE_EXHAUSTED`), OpenAI's `error.type` (`server_error`).
 */
export function errorTypeOf(json: unknown): string | undefined {
  const e = asObject(asObject(json)?.error);
  if (typeof e?.type === 'string') return e.type;
  if (typeof e?.status === 'string') return e.status;
  return undefined;
}

/** A prompt or system text as the request summary keeps it: at most 200 characters, redacted before the cut. */
export function previewPrompt(text: string): string {
  return shorten(text, 200);
}

/** Shared request summary: messages, tools offered, tool results carried back, the last user prompt. */
export function summarizeMessages(body: Record<string, unknown>, defaultStream: boolean): LlmRequestSummary {
  const messages = Array.isArray(body.messages) ? body.messages : Array.isArray(body.input) ? body.input : [];
  const summary: LlmRequestSummary = {
    stream: typeof body.stream === 'boolean' ? body.stream : defaultStream,
    messageCount: messages.length,
    tools: toolNamesOf(body.tools),
    toolResults: [],
  };
  if (typeof body.model === 'string') summary.model = body.model;
  const history: LlmToolCall[] = [];
  let prompt: string | undefined;
  for (const m of messages) {
    const msg = asObject(m);
    if (!msg) continue;
    const role = msg.role;
    // Only the tool results after the last assistant or user message are carried back by *this* request; older
    // ones are history the agent resends every turn.
    if (role === 'user' || role === 'assistant' || role === 'system') summary.toolResults = [];
    if (role === 'tool') {
      const result: LlmToolResult = { content: contentText(msg.content) };
      if (typeof msg.tool_call_id === 'string') result.toolCallId = msg.tool_call_id;
      const name = typeof msg.tool_name === 'string' ? msg.tool_name : typeof msg.name === 'string' ? msg.name : undefined;
      if (name !== undefined) result.name = name;
      summary.toolResults.push(result);
    } else if (msg.type === 'function_call_output') {
      // Responses API: the tool result is an input item of its own.
      const result: LlmToolResult = { content: contentText(msg.output) };
      if (typeof msg.call_id === 'string') result.toolCallId = msg.call_id;
      summary.toolResults.push(result);
    } else if (msg.type === 'function_call') {
      const call: LlmToolCall = { name: String(msg.name ?? ''), ...toolArguments(msg.arguments) };
      if (typeof msg.call_id === 'string') call.id = msg.call_id;
      history.push(call);
    } else if (role === 'assistant' && Array.isArray(msg.tool_calls)) {
      for (const c of msg.tool_calls) history.push(toolCallOf(c));
    } else if (role === 'user') {
      prompt = contentText(msg.content);
    }
  }
  if (history.length) summary.historyToolCalls = history;
  if (typeof body.prompt === 'string') prompt = body.prompt;
  else if (typeof body.input === 'string') prompt = body.input;
  if (prompt !== undefined) summary.prompt = previewPrompt(prompt);
  return summary;
}

/**
 * The tool each carried-back result belongs to. A result that does not say (OpenAI sends only `tool_call_id`;
 * LangChain's Ollama messages have no `tool_name`) takes the name of the call it answers: the call in the
 * history with its id, else the call at its place among the last calls of the history.
 */
export function toolResultNames(s: Pick<LlmRequestSummary, 'toolResults' | 'historyToolCalls'>): string[] {
  const history = s.historyToolCalls ?? [];
  const last = history.slice(-s.toolResults.length);
  return s.toolResults.map((r, i) => {
    const call = r.toolCallId !== undefined ? history.find((c) => c.id === r.toolCallId) : last.length === s.toolResults.length ? last[i] : undefined;
    return r.name ?? (call?.name || undefined) ?? r.toolCallId ?? 'a tool';
  });
}

/** A tool call in either API's shape: `{id?, function: {name, arguments}, index?}` (chat) or flat (Responses). */
export function toolCallOf(value: unknown): LlmToolCall {
  const c = asObject(value) ?? {};
  const fn = asObject(c.function) ?? c;
  const call: LlmToolCall = { name: typeof fn.name === 'string' ? fn.name : '', ...toolArguments(fn.arguments) };
  if (typeof c.id === 'string') call.id = c.id;
  const index = typeof c.index === 'number' ? c.index : typeof fn.index === 'number' ? fn.index : undefined;
  if (index !== undefined) call.index = index;
  return call;
}

/** Names of the tools offered: `{function: {name}}` (OpenAI, Ollama) or `{name}` (Responses, Anthropic). */
export function toolNamesOf(tools: unknown): string[] {
  if (!Array.isArray(tools)) return [];
  const names: string[] = [];
  for (const t of tools) {
    const tool = asObject(t);
    const fn = asObject(tool?.function);
    const name = typeof fn?.name === 'string' ? fn.name : typeof tool?.name === 'string' ? tool.name : undefined;
    if (name !== undefined) names.push(name);
  }
  return names;
}
