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
  inputRequestsOf,
  KNOWN_METHODS,
  META,
  requestMeta,
  requestSender,
  listedNames,
  peerInfo,
  preview,
  previewJson,
  toolNames,
} from '../protocols/mcp.js';
import type { CallRound, OpenRequest } from './correlator.js';
import type { HeaderMismatch } from '../protocols/mcp-headers.js';

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
  const sender = requestSender(method);
  if (sender !== undefined && sender !== (dir === 'c2s' ? 'client' : 'server')) return describeMisdirected(dir, method, p, sender);
  switch (method) {
    case 'initialize': {
      // A client that also speaks 2026-07-28 may send the new _meta beside (or instead of) the old fields.
      const envelope = requestMeta(asObject(p._meta));
      const client = describePeer(peerInfo(p.clientInfo) ?? envelope?.client, 'an unnamed client');
      const caps = describeCapabilities(p.capabilities ?? envelope?.capabilities);
      const version = asString(p.protocolVersion) ?? envelope?.protocolVersion ?? 'no version';
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
    case 'server/discover':
      return `${who(dir)} asks the ${other(dir)} which protocol revisions, capabilities and identity it has (server/discover, MCP 2026-07-28).`;
    case 'subscriptions/listen':
      return `Client opens a subscription (subscriptions/listen) for ${describeFilter(p.notifications)}; the server sends them on this stream until one side ends it.`;
    case 'tasks/get':
      return `${who(dir)} asks for the status of task ${asString(p.taskId) ?? '?'} (tasks/get).`;
    case 'tasks/result':
      return `${who(dir)} asks for the result of task ${asString(p.taskId) ?? '?'} (tasks/result).`;
    case 'tasks/cancel':
      return `${who(dir)} cancels task ${asString(p.taskId) ?? '?'} (tasks/cancel).`;
    case 'tasks/update':
      return `${who(dir)} updates task ${asString(p.taskId) ?? '?'} (tasks/update).`;
    case 'tasks/list':
      return `${who(dir)} asks which tasks the ${other(dir)} has (tasks/list).`;
    default:
      return KNOWN_METHODS.has(method)
        ? `${who(dir)} sends request ${method}.`
        : `${who(dir)} sends request ${method} (a method this version of mcptap does not know; relayed as is).`;
  }
}

/** A request from the side that may not send it: said as it is (a server that echoes its input sends the client's). */
function describeMisdirected(dir: Direction, method: string, p: Record<string, unknown>, sender: 'client' | 'server'): string {
  const tool = method === 'tools/call' ? ` ${asString(p.name) ?? '(no name)'}` : '';
  const hint = dir === 's2c' ? ' (does the server write what it reads back to stdout?)' : '';
  return `${who(dir)} sends ${method}${tool}, a request only a ${sender} sends${hint}.`;
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
    case 'server/discover': {
      const server = describePeer(peerInfo(asObject(r._meta)?.[META.serverInfo]) ?? peerInfo(r.serverInfo), 'an unnamed server');
      const versions = Array.isArray(r.supportedVersions) ? r.supportedVersions.filter((v): v is string => typeof v === 'string') : [];
      const caps = describeCapabilities(r.capabilities);
      const instructions = asString(r.instructions);
      return `Server ${server} speaks protocol ${versions.length ? versions.join(', ') : 'no version it names'}; capabilities ${caps.length ? caps.join(', ') : 'none'}${instructions ? `; instructions "${preview(instructions, 80)}"` : ''}${ms(latencyMs)}.`;
    }
    case 'subscriptions/listen':
      return `Server ends the subscription subscriptions/listen${ms(latencyMs)}.`;
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
  if (request?.method === 'server/discover') {
    return `The server does not answer server/discover (error ${error.code}: "${preview(error.message, 120)}")${ms(latencyMs)}: it speaks a revision before 2026-07-28, so a client that probed with it falls back to initialize. Version negotiation, not a failure.`;
  }
  const data = asObject(error.data);
  const base = `Error ${error.code} (${errorMeaning(error.code)})${to}: "${preview(error.message, 120)}"${ms(latencyMs)}.`;
  if (error.code === -32022 && data) {
    const supported = Array.isArray(data.supported) ? data.supported.filter((v): v is string => typeof v === 'string') : [];
    const requested = asString(data.requested);
    return `${base} The request named protocol ${requested ?? 'a revision'} the server does not speak; it offers ${supported.length ? supported.join(', ') : 'none it names'}.`;
  }
  if (error.code === -32602 && data && typeof data.uri === 'string' && Object.keys(data).length === 1) {
    return `${base} The resource ${data.uri} does not exist (2026-07-28 says so with -32602).`;
  }
  if (error.code === -32021 && data) {
    const missing = describeCapabilities(data.requiredCapabilities);
    if (missing.length) return `${base} It needs the client to declare ${missing.join(', ')}.`;
  }
  return base;
}

/** What a 2026-07-28 subscription filter asks for. */
function describeFilter(v: unknown): string {
  const f = asObject(v);
  if (!f) return 'no notifications it names';
  const wants: string[] = [];
  if (f.toolsListChanged === true) wants.push('tool list changes');
  if (f.promptsListChanged === true) wants.push('prompt list changes');
  if (f.resourcesListChanged === true) wants.push('resource list changes');
  const uris = Array.isArray(f.resourceSubscriptions) ? f.resourceSubscriptions.filter((u): u is string => typeof u === 'string') : [];
  if (uris.length) wants.push(`updates of ${listOf(uris, 3)}`);
  return wants.length ? wants.join(', ') : 'no notifications it names';
}

/** An `input_required` result: what the server asks before it can finish, and the keys it asks under. */
export function describeInputRequired(
  request: Pick<OpenRequest, 'method' | 'tool'>,
  result: Record<string, unknown>,
  round: number,
  latencyMs: number,
): { msg: string; keys: string[] } {
  const asks = inputRequestsOf(result);
  const what = request.method === 'tools/call' ? `tool ${request.tool ?? '(unnamed)'}` : request.method;
  const list = asks.map((a) => `${INPUT_KINDS[a.method] ?? a.method} ${a.key}${a.asks !== undefined ? ` \u2014 "${preview(a.asks, 80)}"` : ''}`);
  const msg = `The server needs input before it can finish ${what} (round ${round}, ${formatMs(latencyMs)}): ${list.length ? list.join('; ') : 'nothing it names'}. The client is to get the answers and call again.`;
  return { msg, keys: asks.map((a) => a.key) };
}

/** The kinds of input a server may ask for inside a result, in words. */
const INPUT_KINDS: Record<string, string> = {
  'elicitation/create': 'elicitation',
  'sampling/createMessage': 'sampling (an LLM completion)',
  'roots/list': 'roots',
};

/** A retry carrying `inputResponses`: the next round of a call. */
export function describeRetry(method: string, tool: string | undefined, params: Record<string, unknown>, call: CallRound | undefined): string {
  const what = method === 'tools/call' ? `tool ${tool ?? '(no name)'}` : method;
  const responses = asObject(params.inputResponses);
  const answers = responses
    ? Object.keys(responses).map((key) => {
        const action = asString(asObject(responses[key])?.action);
        return action ? `${key} (${action})` : key;
      })
    : [];
  const round = call ? `round ${call.round}` : 'a later round of a call whose first round mcptap did not see';
  return `Client calls ${what} again (${round}) with the answers to what the server asked${answers.length ? `: ${answers.join(', ')}` : ''}.`;
}

/** The last round of a multi-round-trip call. */
export function describeRoundsDone(msg: string, round: number, callLatencyMs: number): string {
  return `${msg.replace(/\.$/, '')}; round ${round} of one call that took ${formatMs(callLatencyMs)} from its first request.`;
}

/** Mirrored headers that disagree with the body. */
export function describeHeaderMismatch(mismatches: HeaderMismatch[]): string {
  const parts = mismatches.map((m) => `the ${m.header} header says ${JSON.stringify(m.value)} but the body ${m.body !== undefined ? `says ${JSON.stringify(m.body)}` : 'names none'}`);
  return `Header mismatch: ${parts.join('; ')}. A 2026-07-28 server rejects this (-32020).`;
}

/** A `subscriptions/listen` whose stream ended without the server ending the subscription. */
export function describeSubscriptionEnd(request: Pick<OpenRequest, 'id'>, ageMs: number, why: PendingWhy): string {
  if (why === 'evicted') {
    return `The client's subscription (subscriptions/listen #${request.id}) has been open for ${formatMs(ageMs)}; mcptap stops tracking it to bound memory. A subscription gets a response only when the server ends it.`;
  }
  const end =
    why === 'cancelled'
      ? 'when the client cancelled it (notifications/cancelled)'
      : why === 'exchange-ended'
        ? 'when its stream closed'
        : 'when the session ended';
  return `The client's subscription (subscriptions/listen #${request.id}) was open for ${formatMs(ageMs)} and ended ${end}; a subscription gets a response only when the server ends it.`;
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
    case 'notifications/subscriptions/acknowledged':
      return `Server acknowledges the subscription${about}: it will send ${describeFilter(p.notifications)} on this stream.`;
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
export type PendingWhy = 'session-ended' | 'exchange-ended' | 'evicted' | 'reused' | 'cancelled';

/** What a description of a request nobody answered reads of it. */
type UnansweredRequest = Pick<OpenRequest, 'dir' | 'id' | 'method' | 'tool' | 'cancelled'>;

/** A request nobody answered. */
export function describePending(request: UnansweredRequest, ageMs: number, why: PendingWhy): string {
  const what = `${request.method}${request.tool ? ` ${request.tool}` : ''} #${request.id}`;
  const from = request.dir === 'c2s' ? 'client' : 'server';
  if (why === 'reused') {
    return `The ${from} sent another request with id #${request.id} while its request ${what} was still unanswered; JSON-RPC ids must be unique among requests in flight, so answers cannot be told apart.`;
  }
  if (request.cancelled) {
    return `The ${from} cancelled its request ${what} and, as MCP says, got no answer (${formatMs(ageMs)} after it was sent${why === 'evicted' ? '; mcptap stops tracking it' : ''}).`;
  }
  if (why === 'exchange-ended') return `The ${from}'s request ${what} was never answered in its HTTP exchange (waited ${formatMs(ageMs)} before the exchange ended).`;
  return why === 'session-ended'
    ? `The ${from}'s request ${what} was never answered (waited ${formatMs(ageMs)} before the session ended).`
    : `The ${from}'s request ${what} has waited ${formatMs(ageMs)} without an answer; mcptap stops tracking it to bound memory.`;
}

/**
 * Requests let go at once to bound memory (an `evicted` record). One alone reads as its `pending` record did;
 * several are counted, by sender, with how long they had waited.
 */
export function describeEvicted(requests: readonly (UnansweredRequest & { ageMs: number })[]): string {
  const one = requests.length === 1 ? requests[0] : undefined;
  if (one) return one.method === 'subscriptions/listen' ? describeSubscriptionEnd(one, one.ageMs, 'evicted') : describePending(one, one.ageMs, 'evicted');
  let fromClient = 0;
  let youngest = Infinity;
  let oldest = 0;
  for (const r of requests) {
    if (r.dir === 'c2s') fromClient++;
    youngest = Math.min(youngest, r.ageMs);
    oldest = Math.max(oldest, r.ageMs);
  }
  const fromServer = requests.length - fromClient;
  const senders = [fromClient ? `${fromClient} of the client's` : '', fromServer ? `${fromServer} of the server's` : ''].filter(Boolean).join(' and ');
  const waited = formatMs(youngest) === formatMs(oldest) ? formatMs(oldest) : `${formatMs(youngest)} to ${formatMs(oldest)}`;
  return `mcptap stops tracking ${senders} requests, the oldest it held, to bound memory: they had waited ${waited} without an answer.`;
}
