/**
 * The Gemini API (`…/models/{model}:generateContent`, `:streamGenerateContent`): request summaries and replies
 * reassembled from streamed chunks or read from one body. Pure; never throws.
 *
 * A streamed reply is a series of whole GenerateContentResponse objects, as SSE `data:` events (`?alt=sse`, what
 * `@google/genai` asks for) or as the elements of one JSON array (without `alt=sse`). Text comes in pieces; a
 * `functionCall` part arrives whole, with object `args`. The model is named in the path, not the body; the
 * chunk that carries a candidate's `finishReason` is the stream's last.
 */
import type { LlmToolCall, LlmToolResult, LlmUsage } from '../log/schema.js';
import {
  ReplyParts,
  contentText,
  errorText,
  errorTypeOf,
  MAX_REPLY_TOOL_CALLS,
  parseJson,
  previewPrompt,
  type LlmChunkInfo,
  type LlmReply,
  type LlmReplyAssembler,
  type LlmRequestSummary,
} from './llm.js';
import { asObject } from './mcp.js';
import { shorten } from '../log/redact.js';

/** `…/models/{model}:{method}` (Gemini API and Vertex AI alike), the model and the method. */
const MODEL_METHOD = /\/models\/([^/:]+):([A-Za-z]+)$/;

/** The Gemini methods whose replies are model turns. */
const TURN_METHODS = new Set(['generateContent', 'streamGenerateContent']);

/** True for a path of the Gemini API: `/v1beta/models/gemini-2.5-flash:generateContent` and its siblings. */
export function isGeminiPath(path: string): boolean {
  return MODEL_METHOD.test(path);
}

/** True when the path asks for a model turn (generateContent or streamGenerateContent). */
export function isGeminiTurnPath(path: string): boolean {
  const m = MODEL_METHOD.exec(path);
  return m !== null && TURN_METHODS.has(m[2]!);
}

/** Summarize a request body; the model and whether it streams come from the path. */
export function summarizeGeminiRequest(body: unknown, path = ''): LlmRequestSummary | undefined {
  const o = asObject(body);
  if (!o) return undefined;
  const m = MODEL_METHOD.exec(path.split('?')[0]!);
  const contents = Array.isArray(o.contents) ? o.contents : [];
  const summary: LlmRequestSummary = { stream: m?.[2] === 'streamGenerateContent', messageCount: contents.length, tools: geminiToolNames(o.tools), toolResults: [] };
  if (m) summary.model = decodeURIComponent(m[1]!);
  const config = asObject(o.generationConfig) ?? asObject(o.generation_config);
  const max = config?.maxOutputTokens ?? config?.max_output_tokens;
  if (typeof max === 'number') summary.maxTokens = max;
  const thinking = asObject(config?.thinkingConfig) ?? asObject(config?.thinking_config);
  if (thinking) summary.thinkingConfig = thinking;
  const system = partsText(asObject(o.systemInstruction ?? o.system_instruction)?.parts);
  if (system) summary.system = previewPrompt(system);
  const history: LlmToolCall[] = [];
  let prompt: string | undefined;
  for (const c of contents) {
    const content = asObject(c);
    if (!content) continue;
    // Only the function responses of the last user turn are carried back by *this* request.
    summary.toolResults = [];
    const parts = Array.isArray(content.parts) ? content.parts : [];
    if (content.role === 'model') {
      for (const p of parts) {
        const call = asObject(asObject(p)?.functionCall ?? asObject(p)?.function_call);
        if (call) history.push(functionCallOf(call));
      }
      continue;
    }
    for (const p of parts) {
      const response = asObject(asObject(p)?.functionResponse ?? asObject(p)?.function_response);
      if (response) summary.toolResults.push(functionResponseOf(response));
    }
    const text = partsText(parts);
    if (text) prompt = text;
  }
  if (history.length) summary.historyToolCalls = history;
  if (prompt !== undefined) summary.prompt = previewPrompt(prompt);
  return summary;
}

function geminiToolNames(tools: unknown): string[] {
  const names: string[] = [];
  for (const t of Array.isArray(tools) ? tools : []) {
    const tool = asObject(t);
    const declarations = tool?.functionDeclarations ?? tool?.function_declarations;
    for (const d of Array.isArray(declarations) ? declarations : []) {
      const name = asObject(d)?.name;
      if (typeof name === 'string') names.push(name);
    }
  }
  return names;
}

/** The text parts of a content's parts, joined; thoughts left out. */
function partsText(parts: unknown): string {
  if (!Array.isArray(parts)) return '';
  return parts.map((p) => (typeof asObject(p)?.text === 'string' && asObject(p)!.thought !== true ? (asObject(p)!.text as string) : '')).join('');
}

function functionCallOf(call: Record<string, unknown>): LlmToolCall {
  const out: LlmToolCall = { name: typeof call.name === 'string' ? call.name : '', arguments: call.args ?? {} };
  if (typeof call.id === 'string') out.id = call.id;
  return out;
}

function functionResponseOf(response: Record<string, unknown>): LlmToolResult {
  const body = asObject(response.response);
  // The API's convention: `{output: …}` for a result, `{error: …}` for a failure.
  const failed = body !== undefined && 'error' in body && !('output' in body);
  const result: LlmToolResult = { content: responseText(failed ? body.error : response.response) };
  if (typeof response.name === 'string') result.name = response.name;
  if (typeof response.id === 'string') result.toolCallId = response.id;
  if (failed) result.isError = true;
  return result;
}

/**
 * The text a functionResponse carries: its `response` is any object, by convention `{output: …}` or
 * `{result: …}`, or the MCP result itself (`{content: [{type: "text", …}]}`, as `mcpToTool` sends it, under
 * `error` when the tool failed). The text is what the trace compares with the MCP server's result, so a lone
 * string field is taken as it is.
 */
function responseText(value: unknown): string {
  const o = asObject(value);
  if (!o) return contentText(value);
  if (Array.isArray(o.content)) return contentText(o.content);
  const keys = Object.keys(o);
  if (keys.length === 1 && typeof o[keys[0]!] === 'string') return o[keys[0]!] as string;
  return JSON.stringify(o);
}

/** Gemini usageMetadata → LlmUsage. */
export function geminiUsage(value: unknown): LlmUsage | undefined {
  const u = asObject(value);
  if (!u) return undefined;
  const usage: LlmUsage = {};
  if (typeof u.promptTokenCount === 'number') usage.promptTokens = u.promptTokenCount;
  if (typeof u.candidatesTokenCount === 'number') usage.completionTokens = u.candidatesTokenCount;
  if (typeof u.totalTokenCount === 'number') usage.totalTokens = u.totalTokenCount;
  if (typeof u.cachedContentTokenCount === 'number') usage.cacheReadTokens = u.cachedContentTokenCount;
  if (typeof u.thoughtsTokenCount === 'number') usage.thinkingTokens = u.thoughtsTokenCount;
  return Object.keys(usage).length ? usage : undefined;
}

/** Reassembles a Gemini reply from its chunks (SSE events' data or JSON array elements), or from one body. */
export class GeminiReplyAssembler implements LlmReplyAssembler {
  private readonly parts = new ReplyParts();
  private readonly toolCalls: LlmToolCall[] = [];

  push(text: string): LlmChunkInfo {
    if (text.trim() === '') return { content: false, chunk: false };
    this.parts.chunkCount++;
    const o = asObject(parseJson(text));
    if (!o) {
      const error = `a chunk that is not a JSON object: ${shorten(text, 80)}`;
      this.parts.error ??= error;
      return { content: false, chunk: true, error };
    }
    const error = errorText(o);
    if (error !== undefined) {
      const type = errorTypeOf(o);
      this.parts.error = error;
      const info: LlmChunkInfo = { content: false, chunk: true, error };
      if (type !== undefined) {
        this.parts.errorType = type;
        info.errorType = type;
      }
      return info;
    }
    const info: LlmChunkInfo = { content: false, chunk: true, json: o };
    if (typeof o.modelVersion === 'string') this.parts.model = o.modelVersion;
    const usage = geminiUsage(o.usageMetadata);
    if (usage) this.parts.usage = usage;
    const blocked = asObject(o.promptFeedback)?.blockReason;
    if (typeof blocked === 'string') {
      // The prompt itself was refused: no candidates come, and the stream ends here.
      this.parts.finishReason = blocked;
      info.done = true;
    }
    const candidates = Array.isArray(o.candidates) ? o.candidates : [];
    // Only the first candidate is reassembled: agents ask for one (candidateCount 1).
    const candidate = asObject(candidates.find((c) => (asObject(c)?.index ?? 0) === 0) ?? candidates[0]);
    if (!candidate) return info;
    const parts = asObject(candidate.content)?.parts;
    const calls = this.toolCalls.length;
    for (const p of Array.isArray(parts) ? parts : []) this.addPart(asObject(p), info);
    // A functionCall part arrives whole: its chunk completes it.
    if (this.toolCalls.length > calls) info.completedCalls = this.toolCalls.length;
    if (typeof candidate.finishReason === 'string') {
      this.parts.finishReason = candidate.finishReason;
      info.done = true;
    }
    return info;
  }

  result(): LlmReply {
    return this.parts.build(this.toolCalls, this.toolCalls.length >= MAX_REPLY_TOOL_CALLS);
  }

  private addPart(part: Record<string, unknown> | undefined, info: LlmChunkInfo): void {
    if (!part) return;
    if (typeof part.text === 'string' && part.text) {
      if (part.thought === true) {
        this.parts.addThinking(part.text);
        info.thinking = (info.thinking ?? '') + part.text;
      } else {
        this.parts.addContent(part.text);
        info.delta = (info.delta ?? '') + part.text;
      }
      info.content = true;
    }
    const call = asObject(part.functionCall);
    if (call) {
      if (this.toolCalls.length < MAX_REPLY_TOOL_CALLS) this.toolCalls.push(functionCallOf(call));
      info.content = true;
    }
  }
}

/** Read a non-streamed body as a reply: one GenerateContentResponse, or the JSON array a stream without alt=sse is. */
export function geminiReplyFromBody(text: string): LlmReply {
  const assembler = new GeminiReplyAssembler();
  const value = parseJson(text);
  if (Array.isArray(value)) for (const item of value) assembler.push(JSON.stringify(item));
  else assembler.push(text);
  return { ...assembler.result(), chunkCount: Array.isArray(value) ? value.length : 0 };
}
