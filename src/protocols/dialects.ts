/**
 * The LLM APIs mcptap reads, one dialect each: how a request is summarized, how a streamed reply is put back
 * together, how a whole body is read. The LLM turn observer (session/llm-turn.ts) asks the dialect of its
 * channel and knows nothing of the APIs themselves. Pure.
 */
import type { LlmChannel } from '../types.js';
import type { LlmReply, LlmReplyAssembler, LlmRequestSummary } from './llm.js';
import { OllamaReplyAssembler, summarizeOllamaRequest } from './ollama.js';
import { OpenAiReplyAssembler, openAiReplyFromBody, summarizeOpenAiRequest } from './openai.js';
import { AnthropicReplyAssembler, anthropicReplyFromBody, summarizeAnthropicRequest } from './anthropic.js';
import { GeminiReplyAssembler, geminiReplyFromBody, summarizeGeminiRequest } from './gemini.js';

export interface LlmDialect {
  /** The API's name in sentences: "the Anthropic API refused the call…". */
  readonly apiName: string;
  /** Whether a request that does not say streams (Ollama: yes; the others: no). */
  readonly streamsByDefault: boolean;
  /** The request summary, or undefined when the body is not a JSON object. `path`: the API path, with its query. */
  summarize(body: unknown, path: string): LlmRequestSummary | undefined;
  /** A fresh assembler for one streamed reply. */
  assembler(): LlmReplyAssembler;
  /** A whole (non-streamed) reply body, read. */
  replyFromBody(text: string): LlmReply;
}

/** Read a whole body with the stream assembler: for APIs whose body is one chunk's shape (Ollama). */
function bodyAsOneChunk(assembler: () => LlmReplyAssembler): (text: string) => LlmReply {
  return (text) => {
    const a = assembler();
    a.push(text);
    return { ...a.result(), chunkCount: 0 };
  };
}

const ollama = (): LlmReplyAssembler => new OllamaReplyAssembler();

export const DIALECTS: Readonly<Record<LlmChannel, LlmDialect>> = {
  ollama: { apiName: 'Ollama', streamsByDefault: true, summarize: summarizeOllamaRequest, assembler: ollama, replyFromBody: bodyAsOneChunk(ollama) },
  openai: { apiName: 'OpenAI-compatible', streamsByDefault: false, summarize: summarizeOpenAiRequest, assembler: () => new OpenAiReplyAssembler(), replyFromBody: openAiReplyFromBody },
  anthropic: { apiName: 'Anthropic', streamsByDefault: false, summarize: summarizeAnthropicRequest, assembler: () => new AnthropicReplyAssembler(), replyFromBody: anthropicReplyFromBody },
  gemini: { apiName: 'Gemini', streamsByDefault: false, summarize: summarizeGeminiRequest, assembler: () => new GeminiReplyAssembler(), replyFromBody: geminiReplyFromBody },
};
