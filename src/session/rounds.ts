/**
 * Multi-round-trip calls (MCP 2026-07-28): a server that needs input answers `resultType: "input_required"` with
 * `inputRequests`, and the client calls the same method again with `inputResponses` and the opaque
 * `requestState` the server handed out. Each request is its own JSON-RPC exchange (a fresh id, on HTTP a fresh
 * POST); this keeps what ties them into one logical call. Pure state, bounded.
 */
import { asString, previewJson } from '../protocols/mcp.js';
import type { CallRound } from './correlator.js';
import { setBounded } from './recent-map.js';

/** Calls waiting for their next round; past this the oldest is forgotten (its retry then reads as unlinked). */
export const MAX_WAITING_CALLS = 1_000;

/** Methods whose result may be `input_required`. */
export const ROUND_METHODS = new Set(['tools/call', 'prompts/get', 'resources/read']);

export class CallRounds {
  private readonly waiting = new Map<string, CallRound>();

  /** A round was answered `input_required`: the retry that carries `key` continues the call. */
  awaitInput(key: string, round: CallRound): void {
    this.waiting.delete(key);
    setBounded(this.waiting, key, round, MAX_WAITING_CALLS);
  }

  /** A retry arrived: the round it is, within the call it continues (undefined when mcptap did not see the call). */
  resume(key: string): CallRound | undefined {
    const before = this.waiting.get(key);
    if (!before) return undefined;
    this.waiting.delete(key);
    return { firstSeq: before.firstSeq, firstMono: before.firstMono, round: before.round + 1 };
  }
}

/** True when a request's params carry what a retry carries. */
export function isRetry(params: Record<string, unknown> | undefined): boolean {
  return params !== undefined && (params.inputResponses !== undefined || params.requestState !== undefined);
}

/**
 * What ties a retry to the round before it: the `requestState` the server handed out (the client echoes it
 * byte for byte), else the method with the same name and arguments.
 */
export function roundKey(method: string, params: Record<string, unknown> | undefined, requestState: unknown): string {
  const state = asString(requestState);
  if (state !== undefined) return `state\u0000${state}`;
  const name = asString(params?.name) ?? asString(params?.uri) ?? '';
  return `call\u0000${method}\u0000${name}\u0000${previewJson(params?.arguments ?? null, 4000)}`;
}
