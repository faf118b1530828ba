/**
 * The shared vocabulary of mcptap. Every stage speaks these words; they are fixed here once.
 *
 * - A **direction** is who sent the bytes: `c2s` client → server (for an LLM proxy: the agent → the model),
 *   `s2c` server → client.
 * - A **channel** is the protocol an exchange speaks: MCP over stdio, MCP over Streamable HTTP, legacy MCP over
 *   SSE, MCP over WebSocket, the Ollama API, an OpenAI-compatible API, the Anthropic Messages API, the Gemini
 *   API, or plain HTTP that is none of these.
 * - A **frame** is one delimited unit cut from a byte stream (a line on stdio, an SSE event, an HTTP body) —
 *   bytes only, no meaning yet.
 * - A **message** is what a frame says once decoded (a JSON-RPC request, response, notification, or invalid).
 * - A **session** is one conversation between two peers: one stdio child process, one MCP HTTP session id, one
 *   LLM proxy run. Its id is unique across logs so logs from many processes can be merged.
 */

/** Who sent the bytes: client → server, or server → client. */
export type Direction = 'c2s' | 's2c';

/** The protocol an exchange speaks. */
export type Channel = 'stdio' | 'mcp-http' | 'mcp-sse' | 'mcp-ws' | LlmChannel | 'http';

/** The LLM APIs whose calls are read as model turns: each is one dialect (protocols/dialects.ts). */
export type LlmChannel = 'ollama' | 'openai' | 'anthropic' | 'gemini';

/** One delimited unit of a byte stream, before any decoding. */
export interface Frame {
  dir: Direction;
  /**
   * The frame's bytes without its terminator, or only their head when `truncated` (the tap keeps at most the
   * configured cap; the forwarded bytes are never cut).
   */
  bytes: Buffer;
  /** Full length of the frame in bytes, terminator excluded. */
  size: number;
  /** True when `bytes` holds only the head of a larger frame. */
  truncated: boolean;
  /** Hex sha256 of the whole frame, present when truncated so the full frame can still be identified. */
  sha256?: string;
  /**
   * The frame's last bytes (at most 256), present when truncated: serializers such as the TypeScript SDK's write
   * `"id"` after the payload, so a huge message is correlated from its tail.
   */
  tail?: Buffer;
  /** True when the stream ended before the frame's terminator arrived (a partial last line). */
  partial?: boolean;
  /** True when the line ended with `\r\n` rather than `\n`. */
  crlf?: boolean;
  /** Wall clock (epoch ms) when the frame's last byte arrived. */
  time: number;
  /** Monotonic clock (ms, `performance.now()`) when the frame's last byte arrived; used for latencies. */
  mono: number;
}

/** A JSON-RPC error object as seen on the wire. */
export interface JsonRpcErrorObject {
  code: number;
  message: string;
  data?: unknown;
}

/** A JSON-RPC id: string or integer. `null` only appears on error responses to unreadable requests. */
export type JsonRpcId = string | number;

/** What a frame means once decoded as JSON-RPC. */
export type Message =
  | { type: 'request'; id: JsonRpcId; method: string; params?: Record<string, unknown>; json: unknown }
  | { type: 'notification'; method: string; params?: Record<string, unknown>; json: unknown }
  | { type: 'response'; id: JsonRpcId; result: unknown; json: unknown }
  | { type: 'error'; id: JsonRpcId | null; error: JsonRpcErrorObject; json: unknown }
  | { type: 'invalid'; reason: string; json?: unknown; id?: JsonRpcId; method?: string };

/** mcptap's own failures: typed, with a string code and a sentence a user can act on. Wire errors are data. */
export class McptapError extends Error {
  override readonly name = 'McptapError';
  constructor(
    readonly code: string,
    message: string,
    options?: { cause?: unknown },
  ) {
    super(message, options);
  }
}
