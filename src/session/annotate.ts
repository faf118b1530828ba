/**
 * The one plain sentence each record carries in `msg`: what happened, in words a newcomer to MCP understands.
 * Pure functions of already-decoded values; the session observer decides which one applies.
 */
import type { Direction, JsonRpcErrorObject } from '../types.js';
import {
  asObject,
  asString,
  describeCapabilities,
  describeContent,
  describePeer,
  errorMeaning,
  firstText,
  KNOWN_METHODS,
  listedNames,
  peerInfo,
  preview,
  previewJson,
  toolNames,
} from '../protocols/mcp.js';
import type { OpenRequest } from './correlator.js';

/** What the session has learnt from the handshake, for sentences that depend on it. */
export interface HandshakeState {
  client?: string;
  offeredVersion?: string;
  server?: string;
  agreedVersion?: string;
}

const who = (dir: Direction): string => (dir === 'c2s' ? 'Client' : 'Server');
const other = (dir: Direction): string => (dir === 'c2s' ? 'server' : 'client');
const ms = (latencyMs: number | undefined): string => (latencyMs === undefined ? '' : ` (${formatMs(latencyMs)})`);

/** "0.42 ms", "12 ms", "1.3 s". */
export function formatMs(value: number): string {
  if (value < 1) return `${value.toFixed(2)} ms`;
  if (value < 1000) return `${Math.round(value)} ms`;
  return `${(value / 1000).toFixed(1)} s`;
}

function listOf(names: string[], max = 8): string {
  if (names.length <= max) return names.join(', ');
  return `${names.slice(0, max).join(', ')} and ${names.length - max} more`;
}

function plural(n: number, word: string): string {
  return `${n} ${word}${n === 1 ? '' : 's'}`;
}

/** A request, as sent. */
export function describeRequest(dir: Direction, method: string, params: Record<string, unknown> | undefined): string {
  const p = params ?? {};
  switch (method) {
    case 'initialize': {
      const client = describePeer(peerInfo(p.clientInfo), 'an unnamed client');
      const caps = describeCapabilities(p.capabilities);
      const version = asString(p.protocolVersion) ?? 'no version';
      return `Handshake: client ${client} offers protocol ${version}${caps.length ? ` with capabilities ${caps.join(', ')}` : ' with no capabilities'}.`;
    }
    case 'ping':
      return `${who(dir)} pings the ${other(dir)} to check it is alive.`;
    case 'tools/list':
      return `Client asks which tools the server offers${p.cursor !== undefined ? ' (next page)' : ''}.`;
    case 'tools/call': {
      const name = asString(p.name) ?? '(no name)';
      const args = p.arguments === undefined ? 'no arguments' : previewJson(p.arguments, 100);
      return `Client calls tool ${name} with ${args}.`;
    }
    case 'resources/list':
      return 'Client asks which resources the server offers.';
    case 'resources/templates/list':
      return 'Client asks for the server\u2019s resource templates.';
    case 'resources/read':
      return `Client reads resource ${asString(p.uri) ?? '(no uri)'}.`;
    case 'resources/subscribe':
      return `Client subscribes to changes of ${asString(p.uri) ?? '(no uri)'}.`;
    case 'resources/unsubscribe':
      return `Client unsubscribes from ${asString(p.uri) ?? '(no uri)'}.`;
    case 'prompts/list':
      return 'Client asks which prompts the server offers.';
    case 'prompts/get':
      return `Client gets prompt ${asString(p.name) ?? '(no name)'}${p.arguments ? ` with ${previewJson(p.arguments, 60)}` : ''}.`;
    case 'completion/complete':
      return 'Client asks the server to complete an argument value.';
    case 'logging/setLevel':
      return `Client asks the server to send logs at level ${asString(p.level) ?? '?'} and above.`;
    case 'sampling/createMessage': {
      const messages = Array.isArray(p.messages) ? p.messages.length : 0;
      const max = typeof p.maxTokens === 'number' ? `, at most ${p.maxTokens} tokens` : '';
      return `Server asks the client\u2019s LLM for a completion (sampling): ${plural(messages, 'message')}${max}.`;
    }
    case 'elicitation/create':
      return `Server asks the user for input: "${preview(asString(p.message) ?? '', 80)}".`;
    case 'roots/list':
      return 'Server asks the client for its roots (the folders it may work in).';
    case 'tasks/get':
    case 'tasks/result':
    case 'tasks/cancel':
      return `${who(dir)} sends ${method} for task ${asString(p.taskId) ?? '?'}.`;
    default:
      return KNOWN_METHODS.has(method)
        ? `${who(dir)} sends request ${method}.`
        : `${who(dir)} sends request ${method} (a method this version of mcptap does not know; relayed as is).`;
  }
}

/** A successful response, read against the request it answers (when that request was seen). */
export function describeResult(
  request: Pick<OpenRequest, 'method' | 'tool' | 'dir'> | undefined,
  result: unknown,
  latencyMs: number | undefined,
  handshake: HandshakeState,
): string {
  if (!request) return `Response to a request mcptap did not see${ms(latencyMs)}.`;
  const r = asObject(result) ?? {};
  const method = request.method;
  switch (method) {
    case 'initialize': {
      const server = describePeer(peerInfo(r.serverInfo), 'an unnamed server');
      const version = asString(r.protocolVersion) ?? 'no version';
      const caps = describeCapabilities(r.capabilities);
      const mismatch =
        handshake.offeredVersion !== undefined && handshake.offeredVersion !== version
          ? ` The client offered ${handshake.offeredVersion} but the server answers ${version}: the client must speak ${version} or hang up.`
          : '';
      return `Handshake: server ${server} answers with protocol ${version}; capabilities ${caps.length ? caps.join(', ') : 'none'}${ms(latencyMs)}.${mismatch}`;
    }
    case 'tools/list': {
      const names = toolNames(result);
      const more = r.nextCursor !== undefined ? ' (more pages follow)' : '';
      return `Server offers ${plural(names.length, 'tool')}${names.length ? `: ${listOf(names)}` : ''}${more}${ms(latencyMs)}.`;
    }
    case 'tools/call': {
      const name = request.tool ?? '(unnamed)';
      if (r.isError === true) {
        const text = firstText(result);
        return `Tool ${name} failed (isError: true)${text ? `: "${preview(text, 100)}"` : ''}${ms(latencyMs)}.`;
      }
      if ('task' in r && !('content' in r)) return `Tool ${name} was accepted as a task; its result comes later via tasks/result${ms(latencyMs)}.`;
      return `Tool ${name} returned ${describeContent(result)}${ms(latencyMs)}.`;
    }
    case 'resources/list': {
      const names = listedNames(result, 'resources');
      return `Server lists ${plural(names.length, 'resource')}${names.length ? `: ${listOf(names, 5)}` : ''}${ms(latencyMs)}.`;
    }
    case 'resources/templates/list': {
      const names = listedNames(result, 'resourceTemplates');
      return `Server lists ${plural(names.length, 'resource template')}${names.length ? `: ${listOf(names, 5)}` : ''}${ms(latencyMs)}.`;
    }
    case 'resources/read': {
      const contents = Array.isArray(r.contents) ? r.contents.length : 0;
      return `Server returns ${plural(contents, 'content item')} for the resource${ms(latencyMs)}.`;
    }
    case 'prompts/list': {
      const names = listedNames(result, 'prompts');
      return `Server lists ${plural(names.length, 'prompt')}${names.length ? `: ${listOf(names, 5)}` : ''}${ms(latencyMs)}.`;
    }
    case 'prompts/get': {
      const messages = Array.isArray(r.messages) ? r.messages.length : 0;
      return `Server returns the prompt as ${plural(messages, 'message')}${ms(latencyMs)}.`;
    }
    case 'ping':
      return `${who(request.dir === 'c2s' ? 's2c' : 'c2s')} answers the ping${ms(latencyMs)}.`;
    case 'sampling/createMessage': {
      const content = asObject(r.content);
      const text = asString(content?.text);
      return `Client returns the LLM\u2019s completion${asString(r.model) ? ` from ${asString(r.model)}` : ''}${text ? `: "${preview(text, 80)}"` : ''}${ms(latencyMs)}.`;
    }
    case 'elicitation/create':
      return `The user answered the elicitation with action ${asString(r.action) ?? '?'}${ms(latencyMs)}.`;
    case 'roots/list': {
      const roots = Array.isArray(r.roots) ? r.roots.length : 0;
      return `Client returns ${plural(roots, 'root')}${ms(latencyMs)}.`;
    }
    default:
      return `${who(request.dir === 'c2s' ? 's2c' : 'c2s')} answers ${method}${ms(latencyMs)}.`;
  }
}

/** A JSON-RPC error response. */
export function describeError(
  request: Pick<OpenRequest, 'method' | 'tool'> | undefined,
  error: JsonRpcErrorObject,
  latencyMs: number | undefined,
): string {
  const to = request ? ` to ${request.method}${request.tool ? ` ${request.tool}` : ''}` : '';
  return `Error ${error.code} (${errorMeaning(error.code)})${to}: "${preview(error.message, 120)}"${ms(latencyMs)}.`;
}

/** A notification; `related` is the request a progress or cancellation refers to, when seen. */
export function describeNotification(
  dir: Direction,
  method: string,
  params: Record<string, unknown> | undefined,
  related: OpenRequest | undefined,
): string {
  const p = params ?? {};
  const about = related ? ` ${related.method}${related.tool ? ` ${related.tool}` : ''} #${related.id}` : '';
  switch (method) {
    case 'notifications/initialized':
      return 'Client confirms the handshake; the session is ready.';
    case 'notifications/progress': {
      const progress = typeof p.progress === 'number' ? p.progress : '?';
      const total = typeof p.total === 'number' ? ` of ${p.total}` : '';
      const message = asString(p.message);
      return `Progress for${about || ` token ${String(p.progressToken)}`}: ${progress}${total}${message ? ` \u2014 "${preview(message, 80)}"` : ''}.`;
    }
    case 'notifications/cancelled': {
      const reason = asString(p.reason);
      return `${who(dir)} cancels request${about || ` #${String(p.requestId)}`}${reason ? `: ${preview(reason, 80)}` : ''}.`;
    }
    case 'notifications/message': {
      const level = asString(p.level) ?? 'info';
      const data = typeof p.data === 'string' ? p.data : previewJson(p.data, 100);
      return `Server log (${level}${asString(p.logger) ? `, ${asString(p.logger)}` : ''}): ${preview(data, 100)}`;
    }
    case 'notifications/tools/list_changed':
      return 'Server says its tool list changed; the client should call tools/list again.';
    case 'notifications/resources/list_changed':
      return 'Server says its resource list changed.';
    case 'notifications/prompts/list_changed':
      return 'Server says its prompt list changed.';
    case 'notifications/resources/updated':
      return `Server says resource ${asString(p.uri) ?? '?'} changed.`;
    case 'notifications/roots/list_changed':
      return 'Client says its roots changed.';
    case 'notifications/elicitation/complete':
      return 'Server says an elicitation finished.';
    default:
      return KNOWN_METHODS.has(method)
        ? `${who(dir)} notifies ${method}.`
        : `${who(dir)} notifies ${method} (a method this version of mcptap does not know; relayed as is).`;
  }
}

/** A frame that is not JSON-RPC. `stdio` tells whether it was a line on a pipe (where it breaks clients). */
export function describeInvalid(dir: Direction, reason: string, head: string, partial: boolean, stdio: boolean): string {
  const shown = head.length ? `: "${preview(head, 100)}"` : '';
  if (partial) {
    return `The ${dir === 'c2s' ? 'client' : 'server'}\u2019s stream ended in the middle of a line: these bytes were relayed, but without a newline the ${dir === 'c2s' ? 'server' : 'client'} cannot read them as a message${shown}.`;
  }
  if (dir === 's2c' && stdio) {
    // The fix depends on the cause: a stray print goes to stderr, a pretty-printer loses its indent, a BOM goes.
    const fix = reason.includes('several lines')
      ? 'Write each message on one line (no indentation)'
      : reason.includes('byte-order mark')
        ? 'Write UTF-8 without a BOM'
        : 'Send logs to stderr instead';
    return `The server wrote a line that is not JSON-RPC to stdout (${reason}); MCP clients will fail on it. ${fix}${shown}.`;
  }
  return `The ${dir === 'c2s' ? 'client' : 'server'} sent something that is not JSON-RPC (${reason})${shown}.`;
}

/** Why a request stopped being tracked unanswered: the session ended, it aged out or was pushed out, or its id was reused. */
export type PendingWhy = 'session-ended' | 'evicted' | 'reused';

/** A request nobody answered. */
export function describePending(request: OpenRequest, ageMs: number, why: PendingWhy): string {
  const what = `${request.method}${request.tool ? ` ${request.tool}` : ''} #${request.id}`;
  const from = request.dir === 'c2s' ? 'client' : 'server';
  if (why === 'reused') {
    return `The ${from} sent another request with id #${request.id} while its request ${what} was still unanswered; JSON-RPC ids must be unique among requests in flight, so answers cannot be told apart.`;
  }
  if (request.cancelled) {
    return `The ${from} cancelled its request ${what} and, as MCP says, got no answer (${formatMs(ageMs)} after it was sent${why === 'evicted' ? '; mcptap stops tracking it' : ''}).`;
  }
  return why === 'session-ended'
    ? `The ${from}\u2019s request ${what} was never answered (waited ${formatMs(ageMs)} before the session ended).`
    : `The ${from}\u2019s request ${what} has waited ${formatMs(ageMs)} without an answer; mcptap stops tracking it to bound memory.`;
}
