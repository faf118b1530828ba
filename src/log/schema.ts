/**
 * The log record schema: the contract between the taps that write logs and everything that reads them (view,
 * trace, replay, check, diff, export). Documented for humans in docs/log-format.md; read back only through
 * `log/reader.ts`, which migrates older versions to this one.
 *
 * Bump LOG_FORMAT_VERSION when a field changes meaning or disappears (adding an optional field does not need a
 * bump), and teach the reader to migrate the old shape.
 */
import type { Channel, Direction, JsonRpcErrorObject, JsonRpcId } from '../types.js';
import type { PeerInfo } from '../protocols/mcp.js';
import type { HeaderMismatch } from '../protocols/mcp-headers.js';

/** Version written as `v` on every record. */
export const LOG_FORMAT_VERSION = 6;

/** Every kind of record a log may hold. */
export type RecordKind =
  | 'lifecycle'
  | 'request'
  | 'response'
  | 'notification'
  | 'invalid'
  | 'stderr'
  | 'pending'
  | 'evicted'
  | 'http-request'
  | 'http-response'
  | 'http-end'
  | 'sse'
  | 'llm-request'
  | 'llm-chunk'
  | 'llm-response'
  | 'llm-error';

/** Fields every record has. */
export interface RecordBase {
  /** Schema version (LOG_FORMAT_VERSION when written). */
  v: number;
  /** Wall clock, epoch milliseconds, of the event (for frames: when the frame's last byte arrived). */
  time: number;
  /** Order of the record within its log file, from 0; breaks ties between records of the same `time`. */
  seq: number;
  /** The session this record belongs to; unique across logs. */
  session: string;
  /** Protocol spoken. */
  channel: Channel;
  /** Human label of the tap (`--name`, else the wrapped command's base name or the target's host). */
  label: string;
  /** Who sent it, where that applies. */
  dir?: Direction;
  kind: RecordKind;
  /** One plain sentence a newcomer understands. */
  msg: string;
  /** pino's numeric level: 30 ordinary, 40 something worth a look (errors, invalid frames, pending requests). */
  level?: number;
  /**
   * True when secrets were replaced by "[redacted]" in this record before it was written (the traffic itself is
   * never changed). `bytes` and `sha256` still describe the original frame.
   */
  redacted?: boolean;
}

/** Fields of a record made from one frame of bytes. */
export interface FrameFields {
  /** Byte length of the whole frame, terminator excluded. */
  bytes: number;
  /**
   * The exact frame text (UTF-8), or base64 when `rawEncoding` says so; only the head when truncated. (From v2
   * a log line writes a frame of one-line JSON here as JSON, not as a string; the reader gives back its text.)
   */
  raw: string;
  /** Present when the frame was not valid UTF-8 and `raw` therefore holds base64 of the bytes. */
  rawEncoding?: 'base64';
  /** True when `raw` holds only the head of the frame (over `--max-body`). */
  truncated?: boolean;
  /** sha256 (hex) of the whole frame, present when truncated. */
  sha256?: string;
  /** True when the frame ended with `\r\n` rather than `\n`. */
  crlf?: boolean;
  /** For an element of a JSON-RPC batch: its place in the batch. `raw` then holds that element alone. */
  batch?: { index: number; count: number };
  /** For frames carried over HTTP: the exchange (HTTP request/response pair) that carried it. */
  exchange?: string;
  /** For frames carried in an SSE event: the event's `id:` field (what a client resumes from with Last-Event-ID). */
  sseId?: string;
}

/** JSON-RPC request (`id` + `method`). */
export interface RequestRecord extends RecordBase, FrameFields {
  kind: 'request';
  dir: Direction;
  id: JsonRpcId;
  method: string;
  /** For `tools/call`: the tool's name. */
  tool?: string;
  /** `params._meta.progressToken`, when the request asks for progress. */
  progressToken?: string | number;
  /** 2026-07-28: the revision the request names in `_meta` (`io.modelcontextprotocol/protocolVersion`). */
  protocolVersion?: string;
  /** 2026-07-28: `_meta` clientInfo, on the first request of the session that carries this identity. */
  client?: PeerInfo;
  /** A retry of a multi-round-trip call: its round (2, 3, …); the first round's request has none. */
  round?: number;
  /** A retry of a multi-round-trip call: `seq` of the call's first request. */
  firstSeq?: number;
  /** HTTP, 2026-07-28: the mirrored headers that disagree with the body. */
  headerMismatch?: HeaderMismatch[];
  /** A `tasks/*` request: the task it is about (`params.taskId`). */
  taskId?: string;
  /** A `tasks/*` request: `seq` of the request that created the task, when seen. */
  taskRequestSeq?: number;
}

/** JSON-RPC response or error response. */
export interface ResponseRecord extends RecordBase, FrameFields {
  kind: 'response';
  dir: Direction;
  id: JsonRpcId | null;
  /** The method of the request this answers, when that request was seen. */
  method?: string;
  /** For `tools/call`: the tool's name. */
  tool?: string;
  /** Milliseconds between the request's last byte and this response's last byte. */
  latencyMs?: number;
  /** `seq` of the request this answers. */
  requestSeq?: number;
  /** The request had been evicted (its `evicted` record, or in logs before v6 its `pending` one, is earlier in the log): this answer settles it. */
  afterPending?: true;
  /** The JSON-RPC error, for an error response. */
  error?: JsonRpcErrorObject;
  /** For `tools/call`: `result.isError` (a tool that failed without a JSON-RPC error). */
  isError?: boolean;
  /** 2026-07-28: `result.resultType` (`complete`, `input_required`, or what the server sent). */
  resultType?: string;
  /** 2026-07-28: the server's identity (result `_meta` serverInfo), on the first response that carries it. */
  server?: PeerInfo;
  /** `server/discover`: the revisions the server speaks. */
  supportedVersions?: string[];
  /** A round of a multi-round-trip call: its round, from 1. */
  round?: number;
  /** A round of a multi-round-trip call: `seq` of the call's first request. */
  firstSeq?: number;
  /** A round of a multi-round-trip call: ms from the call's first request to this answer. */
  callLatencyMs?: number;
  /** `input_required`: the keys of the requests the server embedded (`inputRequests`). */
  inputRequests?: string[];
  /** An error answer to `server/discover`: the server speaks an earlier revision and the client falls back. */
  versionFallback?: boolean;
}

/** JSON-RPC notification (`method`, no `id`). */
export interface NotificationRecord extends RecordBase, FrameFields {
  kind: 'notification';
  dir: Direction;
  method: string;
  /** For progress and cancellation: the id of the request it refers to, when known. */
  relatedId?: JsonRpcId;
  /** For progress and cancellation: the method of the request it refers to, when known. */
  relatedMethod?: string;
  /** `seq` of the request it refers to. */
  requestSeq?: number;
  progressToken?: string | number;
  /** 2026-07-28: the id of the `subscriptions/listen` whose stream delivered it. */
  subscriptionId?: JsonRpcId;
}

/** A frame that is not JSON-RPC (stdout pollution, a broken line, a partial last line). */
export interface InvalidRecord extends RecordBase, FrameFields {
  kind: 'invalid';
  dir: Direction;
  /** Why it is not JSON-RPC, in a few words. */
  reason: string;
  /** True when the stream ended before the line's newline. */
  partial?: boolean;
  /** Best-effort id and method found in the head of a truncated frame. */
  id?: JsonRpcId;
  method?: string;
}

/** A line the wrapped server wrote to its stderr (free-form logging, not an error by itself). */
export interface StderrRecord extends RecordBase {
  kind: 'stderr';
  dir: 's2c';
  text: string;
  bytes: number;
  truncated?: boolean;
}

/**
 * A request mcptap stopped waiting for: unanswered when the session ended, its id reused, or (in logs before
 * v6) evicted. A reader meets an eviction of v6 as an `evicted` record; pendingOfEvicted() turns it into these.
 */
export interface PendingRecord extends RecordBase {
  kind: 'pending';
  dir: Direction;
  id: JsonRpcId;
  method: string;
  tool?: string;
  requestSeq: number;
  /** How long it had been waiting. */
  ageMs: number;
  /** True when its sender cancelled it (`notifications/cancelled`); MCP says no response is due then. */
  cancelled?: boolean;
  /**
   * Pushed out of mcptap's table of open requests to bound memory, not yet answered: an answer may still come,
   * and is then a response with the same requestSeq and `afterPending: true`.
   */
  evicted?: true;
  /** A `subscriptions/listen` whose stream ended: a subscription, answered only if the server ends it. */
  subscription?: boolean;
}

/** One request of an `evicted` record: the fields a `pending` record of it would have. */
export type EvictedRequest = Pick<PendingRecord, 'dir' | 'id' | 'method' | 'tool' | 'requestSeq' | 'ageMs' | 'cancelled'>;

/**
 * Requests mcptap stopped tracking at once, to bound memory, none of them answered yet (log format v6; v5 wrote
 * a `pending` record with `evicted: true` for each). Past its bound of open requests the tap lets the oldest
 * tenth go together, so a flood of unanswered requests costs a record per thousand, not one each. An answer
 * may still come: a response with the request's requestSeq and `afterPending: true`.
 */
export interface EvictedRecord extends RecordBase {
  kind: 'evicted';
  requests: EvictedRequest[];
}

/** A stdio stream, as a warning about its uninspected bytes names it. */
export type UninspectedStream = 'stdin' | 'stdout' | 'stderr';

/** Start, exit and other moments in the life of a tap. */
export interface LifecycleRecord extends RecordBase {
  kind: 'lifecycle';
  event: 'start' | 'exit' | 'stdin-end' | 'listen' | 'close' | 'warning';
  mcptapVersion?: string;
  /** Wrapped command (stdio). */
  command?: string;
  args?: string[];
  /** Process id of mcptap itself. */
  pid?: number;
  /** Process id of the wrapped child (stdio). */
  childPid?: number;
  cwd?: string;
  /** Upstream URL (http). */
  target?: string;
  /** Address the proxy listens on (http). */
  listen?: string;
  code?: number | null;
  signal?: string | null;
  durationMs?: number;
  /** The last lines of the child's stderr, kept for the exit record. */
  stderrTail?: string[];
  /** On a `warning` that the log fell behind: how many records were dropped before this point. */
  dropped?: number;
  /** On a warning that inspection fell behind: bytes relayed in full but not inspected (no record holds them). */
  uninspectedBytes?: number;
  /** With uninspectedBytes on stdio: the stream those bytes were on. */
  stream?: UninspectedStream;
  /** On an exit: this copy of the server only answered a client's server/discover version probe (2026-07-28). */
  probe?: boolean;
}

/** Headers as logged: lower-case names, secret values replaced by "[redacted]". */
export type LoggedHeaders = Record<string, string | string[]>;

/** An HTTP request as it reached the proxy (logged when its body has been read). */
export interface HttpRequestRecord extends RecordBase {
  kind: 'http-request';
  dir: 'c2s';
  /** Id of the HTTP exchange (request + response), unique within the log. */
  exchange: string;
  method: string;
  /** Path and query, as sent. */
  path: string;
  headers: LoggedHeaders;
  /** Request body text (decoded copy), only up to --max-body; absent when empty. */
  body?: string;
  bodyEncoding?: 'base64';
  bodyBytes: number;
  bodyTruncated?: boolean;
  /** The request's trailers (after a chunked body), when it had any: lower-case names, secrets redacted. */
  trailers?: LoggedHeaders;
}

/** Response status and headers, logged when they arrive (before the body streams). */
export interface HttpResponseRecord extends RecordBase {
  kind: 'http-response';
  dir: 's2c';
  exchange: string;
  status: number;
  headers: LoggedHeaders;
  /** Milliseconds from the end of the request to the response headers. */
  ttfbMs: number;
}

/** How an HTTP exchange ended: complete, or which side broke it. */
export type HttpOutcome = 'complete' | 'client-aborted' | 'upstream-reset' | 'upstream-unreachable' | 'upgraded';

/** The end of an HTTP exchange, with what is needed to replay it. */
export interface HttpEndRecord extends RecordBase {
  kind: 'http-end';
  exchange: string;
  method: string;
  path: string;
  status?: number;
  outcome: HttpOutcome;
  /** Request and response body sizes in bytes, as forwarded (compressed bytes when compressed). */
  reqBytes: number;
  resBytes: number;
  durationMs: number;
  /** Response body (decoded copy), only up to --max-body. */
  body?: string;
  bodyEncoding?: 'base64';
  bodyTruncated?: boolean;
  /**
   * In the log (v3): no `body`, because this many of the exchange's llm-chunk records carry it, each `raw` a line
   * of it. The reader puts `body` back (chunk-bodies.ts); a reader that lacks some of those records gives none.
   */
  bodyInChunks?: number;
  /**
   * In the log (v4): no `body`, because this many of the exchange's llm-chunk records carry it, each the data
   * (and `event`) of an SSE event of it, written as sseEventText writes it. Put back as `bodyInChunks` is.
   */
  bodyInEvents?: number;
  /** With bodyInEvents: how the body's lines end, when not `\n` (Gemini's `\r\n`). */
  eventLineEnd?: '\r\n';
  /**
   * In the log (v5): no `body`, because the answer to an MCP POST is this many of the exchange's frame records
   * (their `raw`s) with the text around them in `bodyAround`. Put back as `bodyInChunks` is.
   */
  bodyInFrames?: number;
  /** With bodyInFrames: the body's text before, between and after the frames' raws (one more than the frames). */
  bodyAround?: string[];
  /** Response chunk boundaries as `[msSinceResponseHeaders, byteLength]`, for replay with recorded spacing (bounded). */
  chunks?: [number, number][];
  /** What went wrong, for outcomes other than complete. */
  error?: { name: string; code?: string; message: string };
  /** Bytes relayed but not inspected because mcptap's inspection had fallen behind (counted in reqBytes/resBytes). */
  uninspectedBytes?: number;
  /** The response's trailers (after a chunked body), when it had any: lower-case names, secrets redacted. */
  trailers?: LoggedHeaders;
  /**
   * For an LLM stream: its own terminator (`data: [DONE]`, `done: true`, `response.completed`, …) arrived before
   * the connection ended, so the reply is complete whatever `outcome` says about who closed the connection.
   */
  replyComplete?: boolean;
}

/** A tool call the model made, reassembled. */
export interface LlmToolCall {
  /** Tool-call id when the API gives one (OpenAI always; newer Ollama `call_…`; older Ollama none). */
  id?: string;
  name: string;
  /** Arguments parsed to an object; when the model wrote invalid JSON, the raw string. */
  arguments: unknown;
  /** The raw argument string, kept only when it is not valid JSON. */
  argumentsRaw?: string;
  index?: number;
  /** In a streamed llm-response: ms from the request to the chunk that completed this call (when the model decided). */
  completedMs?: number;
}

/** A tool result the agent sends back to the model inside a request. */
export interface LlmToolResult {
  toolCallId?: string;
  name?: string;
  content: string;
  /** True when the agent marked the result as a failure (Anthropic `is_error`, a Gemini `{error: …}` response). */
  isError?: boolean;
}

/** One call to an LLM API (Ollama, OpenAI-compatible, Anthropic Messages or Gemini). */
export interface LlmRequestRecord extends RecordBase {
  kind: 'llm-request';
  dir: 'c2s';
  exchange: string;
  /** API path, e.g. /api/chat or /v1/chat/completions. */
  endpoint: string;
  model?: string;
  stream: boolean;
  messageCount: number;
  /** Names of the tools offered to the model. */
  tools: string[];
  /** Tool results this request carries back to the model. */
  toolResults: LlmToolResult[];
  /** Tool calls the assistant messages in the history contain (what the agent says the model asked for). */
  historyToolCalls?: LlmToolCall[];
  /** Preview of the last user message. */
  prompt?: string;
  /** Preview of the system prompt (Anthropic `system`, Gemini `systemInstruction`). */
  system?: string;
  /** The most tokens the reply may have (Anthropic `max_tokens`, Gemini `maxOutputTokens`). */
  maxTokens?: number;
  /** Thinking settings as sent (Anthropic `thinking`, Gemini `thinkingConfig`). */
  thinkingConfig?: Record<string, unknown>;
}

/** One streamed chunk of an LLM reply (off with --no-chunks). */
export interface LlmChunkRecord extends RecordBase {
  kind: 'llm-chunk';
  dir: 's2c';
  exchange: string;
  /** Milliseconds since the request was sent. */
  sinceMs: number;
  /** The chunk's text as sent (one NDJSON line, or one SSE event's data). */
  raw: string;
  /** An SSE event's `event:` field (Anthropic names each event), when it had one. */
  event?: string;
  /** Text this chunk adds to the answer, if any. */
  delta?: string;
}

/** Token counts and timings of an LLM reply. */
export interface LlmUsage {
  promptTokens?: number;
  completionTokens?: number;
  totalTokens?: number;
  /** Ollama only: its nanosecond durations converted to milliseconds. */
  totalMs?: number;
  loadMs?: number;
  promptEvalMs?: number;
  evalMs?: number;
  /** completionTokens / eval time (Ollama), when known. */
  tokensPerSecond?: number;
  /** Prompt tokens written to the prompt cache (Anthropic `cache_creation_input_tokens`). */
  cacheCreationTokens?: number;
  /** Prompt tokens read from the prompt cache (Anthropic `cache_read_input_tokens`, Gemini `cachedContentTokenCount`). */
  cacheReadTokens?: number;
  /** Tokens the model spent thinking (Gemini `thoughtsTokenCount`). */
  thinkingTokens?: number;
}

/** The model's whole reply, reassembled from the stream (or read from one JSON body). */
export interface LlmResponseRecord extends RecordBase {
  kind: 'llm-response';
  dir: 's2c';
  exchange: string;
  endpoint: string;
  model?: string;
  status: number;
  content: string;
  thinking?: string;
  toolCalls: LlmToolCall[];
  finishReason?: string;
  usage?: LlmUsage;
  /** True when the text, thinking or a tool call's arguments reached 1 MiB of characters and the rest was not kept. */
  truncated?: boolean;
  /** Milliseconds from the request to the first byte of content (streams only). */
  ttftMs?: number;
  durationMs: number;
  chunkCount?: number;
}

/** An LLM API error: before the stream (an HTTP error status) or inside it (an error line or event). */
export interface LlmErrorRecord extends RecordBase {
  kind: 'llm-error';
  dir: 's2c';
  exchange: string;
  endpoint: string;
  status: number;
  phase: 'before-stream' | 'in-stream';
  error: string;
  /** The API's own name for the error, when it gives one (Anthropic `overloaded_error`, Gemini `RESOURCE_EXHAUSTED`). */
  errorType?: string;
}

/** An SSE event or comment that carries no JSON-RPC (priming events, keep-alives, `endpoint`, `retry`). */
export interface SseRecord extends RecordBase {
  kind: 'sse';
  dir: 's2c';
  exchange: string;
  event?: string;
  id?: string;
  retry?: number;
  data?: string;
  /** True when `data` holds only the head of the event's data (over `--max-body`). */
  truncated?: boolean;
  comment?: string;
}

/**
 * Every record kind is one of these shapes.
 */
export type LogRecord =
  | RequestRecord
  | ResponseRecord
  | NotificationRecord
  | InvalidRecord
  | StderrRecord
  | PendingRecord
  | EvictedRecord
  | LifecycleRecord
  | HttpRequestRecord
  | HttpResponseRecord
  | HttpEndRecord
  | SseRecord
  | LlmRequestRecord
  | LlmChunkRecord
  | LlmResponseRecord
  | LlmErrorRecord;

/** A record as handed to the writer: the writer adds `v`, `seq`, `session`, `channel` and `label`. */
export type RecordDraft = DistributiveOmit<LogRecord, 'v' | 'seq' | 'session' | 'channel' | 'label'> & {
  /** Overrides the writer's channel for this record (an HTTP tap carries several channels in one log). */
  channel?: Channel;
  /** Overrides the writer's session for this record. */
  session?: string;
};

type DistributiveOmit<T, K extends PropertyKey> = T extends unknown ? Omit<T, K> : never;

/**
 * On a draft whose `raw` its tap has already parsed as JSON: the parsed value. The log's redaction then need not
 * parse an LLM chunk a second time, and the line writes the raw as JSON (record-json.ts). Only for a raw that is
 * JSON text (JSON.parse took it) decoded from the traffic's bytes, or written by JSON.stringify. A symbol key, so JSON.stringify leaves it out of the record; it must
 * never be modified (redaction copies what it changes).
 */
export const RAW_PARSED = Symbol('mcptap.rawParsed');

/** Levels, as pino numbers them. */
export const LEVEL = { info: 30, warn: 40, error: 50 } as const;

/** Where records go. `write` stamps the draft (version, seq, session, channel, label) and returns its `seq`. */
export interface RecordSink {
  write(draft: RecordDraft): number;
}
