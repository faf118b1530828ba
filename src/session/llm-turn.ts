/**
 * One LLM turn seen from the middle: the request body in, the reply's frames (NDJSON lines or SSE events) in,
 * `llm-request`, `llm-chunk`, `llm-response` and `llm-error` records out. Pure apart from the sink.
 */
import type { LlmChannel } from '../types.js';
import { LEVEL, RAW_PARSED, type LlmToolCall, type RecordDraft, type RecordSink } from '../log/schema.js';
import { roundMs } from './correlator.js';
import { preview, previewJson } from '../protocols/mcp.js';
import { errorText, errorTypeOf, parseJson, toolResultNames, type LlmChunkInfo, type LlmReply, type LlmReplyAssembler, type LlmRequestSummary } from '../protocols/llm.js';
import { DIALECTS, type LlmDialect } from '../protocols/dialects.js';
import { formatMs } from './annotate.js';
import { quote } from '../log/record-json.js';

export interface LlmTurnOptions {
  sink: RecordSink;
  channel: LlmChannel;
  exchange: string;
  /** API path, e.g. /api/chat. */
  endpoint: string;
  /** The path with its query as the upstream sees it (Gemini names the model there), when it differs from endpoint. */
  path?: string;
  /** Write one record per streamed chunk. */
  chunks: boolean;
}

/** An llm-chunk record as this turn hands it to the sink, with the line it parsed (RAW_PARSED). */
type LlmChunkDraft = Extract<RecordDraft, { kind: 'llm-chunk' }> & { [RAW_PARSED]?: unknown };

/** Observes one model call. Call in order: request → (response head → frames… | body) → end. */
export class LlmTurn {
  private readonly sink: RecordSink;
  private readonly channel: LlmChannel;
  private readonly dialect: LlmDialect;
  private readonly exchange: string;
  private readonly endpoint: string;
  private readonly path: string;
  private readonly chunks: boolean;
  private readonly assembler: LlmReplyAssembler;
  private summary: LlmRequestSummary | undefined;
  private requestMono = 0;
  private status = 0;
  private firstContentMono: number | undefined;
  private streamed = false;
  /** When each tool call was complete, in ms since the request (LlmChunkInfo.completedCalls), in result() order. */
  private readonly completedAt: number[] = [];
  /** The stream's terminator arrived (LlmChunkInfo.done): the reply is complete, whatever the socket does next. */
  private terminated = false;
  private errorLogged = false;

  constructor(options: LlmTurnOptions) {
    this.sink = options.sink;
    this.channel = options.channel;
    this.dialect = DIALECTS[options.channel];
    this.exchange = options.exchange;
    this.endpoint = options.endpoint;
    this.path = options.path ?? options.endpoint;
    this.chunks = options.chunks;
    this.assembler = this.dialect.assembler();
  }

  /** The request body has been read (the copy; `text` may be cut at --max-body). */
  request(text: string, time: number, mono: number): void {
    this.requestMono = mono;
    const json = parseJson(text);
    const summary = this.dialect.summarize(json, this.path);
    this.summary = summary;
    const s = summary ?? { stream: this.dialect.streamsByDefault, messageCount: 0, tools: [], toolResults: [] };
    const draft = {
      time,
      channel: this.channel,
      kind: 'llm-request' as const,
      dir: 'c2s' as const,
      exchange: this.exchange,
      endpoint: this.endpoint,
      stream: s.stream,
      messageCount: s.messageCount,
      tools: s.tools,
      toolResults: s.toolResults,
      msg: describeRequest(this.dialect, this.endpoint, s, summary === undefined),
      ...(s.model !== undefined ? { model: s.model } : {}),
      ...(s.historyToolCalls ? { historyToolCalls: s.historyToolCalls } : {}),
      ...(s.prompt !== undefined ? { prompt: s.prompt } : {}),
      ...(s.system !== undefined ? { system: s.system } : {}),
      ...(s.maxTokens !== undefined ? { maxTokens: s.maxTokens } : {}),
      ...(s.thinkingConfig !== undefined ? { thinkingConfig: s.thinkingConfig } : {}),
    };
    this.sink.write(draft);
  }

  /** True once the stream delivered its own terminator: a connection that ends after it did not cut the reply. */
  get complete(): boolean {
    return this.terminated;
  }

  /** The response status arrived. */
  responseHead(status: number): void {
    this.status = status;
  }

  /** One streamed frame: an NDJSON line or an SSE event's data. True when an llm-chunk record carries it as `raw`. */
  frame(text: string, event: string | undefined, time: number, mono: number): boolean {
    this.streamed = true;
    const info = this.assembler.push(text, event);
    if (!info.chunk) return false;
    if (info.done) this.terminated = true;
    const completed = info.completedCalls ?? (info.done ? this.assembler.result().toolCalls.length : undefined);
    if (completed !== undefined) while (this.completedAt.length < completed) this.completedAt.push(roundMs(mono - this.requestMono));
    if (info.content && this.firstContentMono === undefined) this.firstContentMono = mono;
    if (this.chunks) {
      const draft: LlmChunkDraft = {
        time,
        channel: this.channel,
        kind: 'llm-chunk',
        dir: 's2c',
        exchange: this.exchange,
        sinceMs: roundMs(mono - this.requestMono),
        raw: text,
        msg: chunkSentence(info, info.completedCalls !== undefined ? this.assembler.result().toolCalls[info.completedCalls - 1]?.name : undefined),
      };
      // Assigned, not spread in: this runs for every chunk of every stream, and spreading costs twice the time.
      if (event !== undefined) draft.event = event;
      if (info.delta) draft.delta = info.delta;
      if (info.json) draft[RAW_PARSED] = info.json;
      this.sink.write(draft);
    }
    if (info.error !== undefined && this.status < 400) this.writeError(info.error, 'in-stream', time, info.errorType);
    return this.chunks;
  }

  /**
   * The reply ended. `body` is the whole (kept) body when it was not streamed. `cutBy` says why the connection ended early
   * (the upstream broke off, the client left): the reply is then logged as far as it got, after an error.
   * `seenInPart`: mcptap's inspection fell behind and saw only the start of the reply (no error of the model's:
   * the reply is logged as far as it was seen, marked truncated).
   */
  end(body: string | undefined, time: number, mono: number, cutBy?: string, seenInPart = false): void {
    // Only a stream that never delivered its terminator was cut off.
    const cut = this.terminated ? undefined : cutBy;
    const durationMs = roundMs(mono - this.requestMono);
    if (this.status >= 400) {
      const text = body ?? '';
      const json = parseJson(text);
      this.writeError(errorText(json) ?? (preview(text, 200) || `HTTP ${this.status}`), 'before-stream', time, errorTypeOf(json));
      return;
    }
    const reply: LlmReply = this.streamed ? this.assembler.result() : this.dialect.replyFromBody(body ?? '');
    if (this.streamed) {
      reply.toolCalls.forEach((call, i) => {
        if (this.completedAt[i] !== undefined) call.completedMs = this.completedAt[i];
      });
    }
    if (reply.error !== undefined && !this.errorLogged) this.writeError(reply.error, this.streamed ? 'in-stream' : 'before-stream', time, reply.errorType);
    if (cut !== undefined) {
      this.writeError(`${cut} after ${reply.chunkCount} chunk${reply.chunkCount === 1 ? '' : 's'}`, 'in-stream', time);
      if (reply.error === undefined) reply.error = cut;
    }
    const draft = {
      time,
      channel: this.channel,
      kind: 'llm-response' as const,
      dir: 's2c' as const,
      exchange: this.exchange,
      endpoint: this.endpoint,
      status: this.status,
      content: reply.content,
      toolCalls: reply.toolCalls,
      durationMs,
      msg:
        cut !== undefined
          ? `The reply was cut off (${cut}); as far as it got: ${describeReply(reply, durationMs)}`
          : seenInPart
            ? `mcptap fell behind and saw only the start of this reply (it was relayed in full); as far as it saw: ${describeReply(reply, durationMs)}`
            : describeReply(reply, durationMs),
      ...(reply.model ?? this.summary?.model ? { model: reply.model ?? this.summary?.model } : {}),
      ...(reply.thinking !== undefined ? { thinking: reply.thinking } : {}),
      ...(reply.finishReason !== undefined ? { finishReason: reply.finishReason } : {}),
      ...(reply.usage ? { usage: reply.usage } : {}),
      ...(this.firstContentMono !== undefined ? { ttftMs: roundMs(this.firstContentMono - this.requestMono) } : {}),
      ...(this.streamed ? { chunkCount: reply.chunkCount } : {}),
      ...(reply.truncated || seenInPart ? { truncated: true } : {}),
      ...(reply.error !== undefined ? { level: LEVEL.warn } : {}),
    };
    this.sink.write(draft);
  }

  private writeError(error: string, phase: 'before-stream' | 'in-stream', time: number, errorType?: string): void {
    this.errorLogged = true;
    const api = this.dialect.apiName;
    const what = errorType !== undefined ? `${errorType}: ${preview(error, 160)}` : preview(error, 160);
    this.sink.write({
      time,
      channel: this.channel,
      kind: 'llm-error',
      dir: 's2c',
      exchange: this.exchange,
      endpoint: this.endpoint,
      status: this.status,
      phase,
      error,
      ...(errorType !== undefined ? { errorType } : {}),
      level: LEVEL.warn,
      msg:
        phase === 'before-stream'
          ? `The ${api} API refused the call with HTTP ${this.status}: ${what}`
          : `The ${api} reply failed mid-stream: ${what}`,
    });
  }
}

/** What one streamed chunk carries: text, a reasoning step, a tool call (by name once complete), the end, or only metadata. */
function chunkSentence(info: LlmChunkInfo, completedTool: string | undefined): string {
  if (info.delta) return `Model streams ${quote(preview(info.delta, 60))}.`;
  if (info.thinking) return 'Model streams a reasoning step.';
  if (completedTool) return `Model streams the tool call ${completedTool}, now complete.`;
  if (info.content) return 'Model streams a tool call.';
  if (info.done) return 'The stream says it is done.';
  return 'Model streams a chunk with no text or tool call (its role, usage or finish reason).';
}

function describeRequest(dialect: LlmDialect, endpoint: string, s: LlmRequestSummary, unreadable: boolean): string {
  if (unreadable) return `Agent calls ${dialect.apiName} ${endpoint} with a body mcptap could not read as JSON.`;
  const parts = [`Agent asks ${s.model ?? 'the model'} (${endpoint}${s.stream ? ', streamed' : ''}) with ${s.messageCount} message${s.messageCount === 1 ? '' : 's'}`];
  if (s.tools.length) parts.push(`offering tools ${s.tools.slice(0, 8).join(', ')}${s.tools.length > 8 ? ` and ${s.tools.length - 8} more` : ''}`);
  if (s.toolResults.length) {
    const names = toolResultNames(s).slice(0, 4);
    parts.push(`carrying back ${s.toolResults.length} tool result${s.toolResults.length === 1 ? '' : 's'} (${names.join(', ')})`);
  }
  return `${parts.join(', ')}.`;
}

function describeReply(reply: LlmReply, durationMs: number): string {
  const calls = reply.toolCalls.map((c: LlmToolCall) => `${c.name}(${previewJson(c.arguments, 60)})`);
  const what = calls.length
    ? `Model asks to call ${calls.join(', ')}`
    : reply.content
      ? `Model answers ${JSON.stringify(preview(reply.content, 100))}`
      : 'Model replies with no text';
  const usage = reply.usage;
  const tokens = usage?.completionTokens !== undefined ? `, ${usage.completionTokens} tokens` : '';
  const speed = usage?.tokensPerSecond !== undefined ? ` at ${usage.tokensPerSecond} tokens/s` : '';
  return `${what} (${formatMs(durationMs)}${tokens}${speed}${reply.finishReason ? `, ${reply.finishReason}` : ''}).`;
}
