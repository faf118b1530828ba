/**
 * The recorded MCP server as a pure state machine: live client messages in, server frames out.
 *
 * A recorded session is a list of frames in the order they crossed the wire. Each server frame (s2c) is tied to
 * what made the server send it: the nearest client frame before it (the request that started a tool, the
 * `notifications/initialized` that woke the server, the client's answer to a sampling request), and, for a
 * response, its own request. A server frame goes out as soon as the live client has sent the frames it is tied
 * to, so progress, logging and server requests (sampling, elicitation, roots) arrive at their recorded points in
 * the conversation — not at recorded clock times, which would only make tests slow and flaky.
 *
 * Live ids differ from recorded ones: responses are rewritten to the live request's id, progress notifications
 * to the live progress token. The server's own requests keep their recorded ids (the server chooses them), so
 * the client's answers find their recorded twins by id.
 *
 * No I/O here: stdio-server.ts feeds lines in and writes what comes out.
 */
import type { JsonRpcId, Message } from '../types.js';
import { decodeJsonRpc } from '../protocols/jsonrpc.js';
import type { LogRecord } from '../log/schema.js';
import { McptapError } from '../types.js';
import { canonicalJson, canonicalParams, RequestMatcher, type MatchMode } from './match.js';
import { parseRawObject } from '../log/reader.js';

/** One recorded frame of the session, ready to be matched or sent. */
export interface ScriptStep {
  dir: 'c2s' | 's2c';
  kind: 'request' | 'response' | 'notification' | 'invalid';
  /** The exact recorded bytes of the frame (terminator excluded). */
  bytes: Buffer;
  crlf: boolean;
  /** True for a last line the recorded server never finished (no newline): replayed without one. */
  partial: boolean;
  /** True when the log kept only the head of the frame. */
  truncated: boolean;
  /** Parsed JSON of the frame, when whole and JSON. */
  json?: Record<string, unknown>;
  id?: JsonRpcId | null;
  method?: string;
  /** Canonical params of a request (undefined when unknown). */
  key?: string;
  /** For a response: index of the request step it answers. */
  requestStep?: number;
  /** For a progress notification: index of the request step whose token it carries. */
  progressStep?: number;
  /** For a server frame: indexes of the client steps that must have happened first. */
  deps: number[];
  /** Wall clock (epoch ms) of the recorded frame, for recorded spacing. */
  time: number;
}

/** A recorded MCP session turned into steps. */
export interface ReplayScript {
  session: string;
  label: string;
  steps: ScriptStep[];
  /**
   * MCP 2026-07-28: the `server/discover` result to give a live client whose discover the session itself does not
   * hold (the SDK v2 client asks it of a short-lived probe process, whose log is another one).
   */
  discover?: Record<string, unknown>;
}

/**
 * Which recorded sessions a set of records holds (only those with JSON-RPC frames). A version probe (a session
 * whose client asked only server/discover) is not one to replay when there are others: its answer is.
 */
export function mcpSessions(records: readonly LogRecord[]): { session: string; label: string; frames: number }[] {
  const found = new Map<string, { session: string; label: string; frames: number; probe: boolean }>();
  for (const r of records) {
    if (!isFrameRecord(r)) continue;
    const entry = found.get(r.session) ?? { session: r.session, label: r.label, frames: 0, probe: true };
    entry.frames++;
    if (r.kind === 'request' && r.dir === 'c2s' && r.method !== 'server/discover') entry.probe = false;
    found.set(r.session, entry);
  }
  const all = [...found.values()];
  const real = all.filter((s) => !s.probe);
  return (real.length > 0 ? real : all).map(({ session, label, frames }) => ({ session, label, frames }));
}

/**
 * The server/discover result a replay gives: the one recorded in these logs (the probe's), else one made of
 * what a 2026-07-28 session shows (its revisions, the server's identity, the kinds of methods it answered).
 * A 2025 session gets none: a 2025 server does not know server/discover, and its -32601 makes a client fall back.
 */
function discoverResult(records: readonly LogRecord[], steps: readonly ScriptStep[]): Record<string, unknown> | undefined {
  for (const r of records) {
    if (r.kind === 'response' && r.method === 'server/discover' && !r.error) {
      const result = parseRawObject(r.raw)?.result;
      if (result && typeof result === 'object') return result as Record<string, unknown>;
    }
  }
  const versions = new Set<string>();
  const capabilities: Record<string, unknown> = {};
  let serverInfo: unknown;
  for (const step of steps) {
    const meta = (step.json?.params as Record<string, unknown> | undefined)?._meta as Record<string, unknown> | undefined;
    const version = meta?.['io.modelcontextprotocol/protocolVersion'];
    if (step.dir === 'c2s' && typeof version === 'string') versions.add(version);
    const prefix = step.method?.split('/')[0];
    if (step.dir === 'c2s' && (prefix === 'tools' || prefix === 'resources' || prefix === 'prompts')) capabilities[prefix] = {};
    const result = step.json?.result as Record<string, unknown> | undefined;
    serverInfo ??= (result?._meta as Record<string, unknown> | undefined)?.['io.modelcontextprotocol/serverInfo'];
  }
  if (versions.size === 0) return undefined;
  return { supportedVersions: [...versions], capabilities, resultType: 'complete', ...(serverInfo ? { _meta: { 'io.modelcontextprotocol/serverInfo': serverInfo } } : {}) };
}

type FrameRecord = Extract<LogRecord, { kind: 'request' | 'response' | 'notification' | 'invalid' }>;

function isFrameRecord(r: LogRecord): r is FrameRecord {
  return (r.kind === 'request' || r.kind === 'response' || r.kind === 'notification' || r.kind === 'invalid') && typeof (r as FrameRecord).raw === 'string';
}

/**
 * Build the script of one session. `session` may be omitted when the records hold exactly one MCP session;
 * otherwise a McptapError names the sessions to choose from.
 */
export function buildScript(records: readonly LogRecord[], session?: string): ReplayScript {
  const sessions = mcpSessions(records);
  if (sessions.length === 0) {
    throw new McptapError('NO_MCP_SESSION', 'the log holds no MCP frames to replay. Give a log written by mcptap around an MCP server (stdio or Streamable HTTP).');
  }
  let chosen = sessions[0]!;
  if (session !== undefined) {
    const found = sessions.find((s) => s.session === session);
    if (!found) throw new McptapError('NO_SUCH_SESSION', `the logs hold no MCP session ${session}. They hold: ${sessions.map((s) => s.session).join(', ')}.`);
    chosen = found;
  } else if (sessions.length > 1) {
    throw new McptapError(
      'MANY_SESSIONS',
      `the logs hold ${sessions.length} MCP sessions; a replay stands in for one. Choose one with --session: ${sessions.map((s) => `${s.session} (${s.label}, ${s.frames} frames)`).join(', ')}.`,
    );
  }
  const frames = records.filter((r): r is FrameRecord => isFrameRecord(r) && r.session === chosen.session);
  const steps: ScriptStep[] = [];
  const stepBySeq = new Map<number, number>();
  let lastClient = -1;
  for (const r of frames) {
    const bytes = r.rawEncoding === 'base64' ? Buffer.from(r.raw, 'base64') : Buffer.from(r.raw, 'utf8');
    const step: ScriptStep = { dir: r.dir, kind: r.kind, bytes, crlf: r.crlf === true, partial: r.kind === 'invalid' && r.partial === true, truncated: r.truncated === true, deps: [], time: r.time };
    if (!step.truncated && r.rawEncoding !== 'base64') {
      // Not JSON (an invalid frame) leaves step.json unset: it is replayed as bytes.
      const json = parseRawObject(r.raw);
      if (json) step.json = json;
    }
    if (r.kind === 'request') {
      step.id = r.id;
      step.method = r.method;
      if (step.json) step.key = canonicalParams(step.json.params);
    } else if (r.kind === 'response') {
      step.id = r.id;
      if (r.method !== undefined) step.method = r.method;
      const req = r.requestSeq !== undefined ? stepBySeq.get(r.requestSeq) : findRequest(steps, r.dir === 'c2s' ? 's2c' : 'c2s', r.id);
      if (req !== undefined) step.requestStep = req;
    } else if (r.kind === 'notification') {
      step.method = r.method;
      if (r.method === 'notifications/progress' && r.requestSeq !== undefined) {
        const req = stepBySeq.get(r.requestSeq);
        if (req !== undefined) step.progressStep = req;
      }
    }
    const index = steps.length;
    if (step.dir === 's2c') {
      if (lastClient >= 0) step.deps.push(lastClient);
      if (step.requestStep !== undefined && !step.deps.includes(step.requestStep)) step.deps.push(step.requestStep);
      if (step.progressStep !== undefined && !step.deps.includes(step.progressStep)) step.deps.push(step.progressStep);
    } else if (step.kind !== 'invalid') {
      // A garbled client line is nothing a live client will repeat; it cannot be what a server frame waits for.
      lastClient = index;
    }
    stepBySeq.set(r.seq, index);
    steps.push(step);
  }
  const script: ReplayScript = { session: chosen.session, label: chosen.label, steps };
  if (!steps.some((s) => s.kind === 'request' && s.method === 'server/discover')) {
    const discover = discoverResult(records, steps);
    if (discover) script.discover = discover;
  }
  return script;
}

function findRequest(steps: readonly ScriptStep[], dir: 'c2s' | 's2c', id: JsonRpcId | null): number | undefined {
  if (id === null) return undefined;
  for (let i = steps.length - 1; i >= 0; i--) {
    const s = steps[i]!;
    if (s.dir === dir && s.kind === 'request' && s.id === id) return i;
  }
  return undefined;
}

/** What the engine wants written: frames for the client, and sentences for stderr. */
export interface EngineOutput {
  /**
   * Whole frames, each to be followed by its line ending, with the recorded wait before it: after the frame
   * before it in this output, or (for the first) after the client frame that caused it.
   */
  frames: OutFrame[];
  /** Plain sentences about misses and differences, one per line. */
  notes: string[];
}

/** One frame to write, and how long the recorded server took before writing it. */
export interface OutFrame {
  bytes: Buffer;
  crlf: boolean;
  /** No line ending at all (a partial last line, as recorded). */
  partial?: boolean;
  delayMs: number;
}

/** Counts for the end-of-session summary. */
export interface ReplayStats {
  recordedRequests: number;
  answered: number;
  misses: number;
  sentServerFrames: number;
  recordedServerFrames: number;
}

/** JSON-RPC error codes the replay answers with. */
export const REPLAY_ERROR = { unknownMethod: -32601, noMatch: -32602, truncated: -32603 } as const;

/** How the engine matches, and how it names the capture in messages. */
export interface EngineOptions {
  match?: MatchMode;
  /** Names the capture in error messages (a file name). */
  source?: string;
}

/** The replaying server for one live client: `start()` once, then `receive(line)` for each client line. */
export class McpReplayEngine {
  private readonly steps: ScriptStep[];
  private readonly discover: Record<string, unknown> | undefined;
  private readonly mode: MatchMode;
  private readonly source: string;
  private readonly consumed: boolean[];
  private readonly sent: boolean[];
  private readonly liveIds = new Map<number, JsonRpcId>();
  private readonly liveTokens = new Map<number, unknown>();
  /** Step index of each recorded client request, in the matcher's order. */
  private readonly requestSteps: number[] = [];
  private readonly matcher: RequestMatcher;
  /** Recorded client notifications by method, in order, with a cursor to the first not yet seen live. */
  private readonly notifications = new Map<string, { steps: number[]; next: number }>();
  /** Recorded client answers to server requests, by id. */
  private readonly answers = new Map<string, number[]>();
  /** For each server frame: how many of its causes have not happened yet. */
  private readonly missing: number[];
  /** For each client frame: the server frames waiting for it. */
  private readonly dependents = new Map<number, number[]>();
  /** Server frames whose causes have all happened, not yet sent. */
  private ready: number[] = [];
  private sentCount = 0;
  private misses = 0;
  private answered = 0;

  constructor(script: ReplayScript, options: EngineOptions = {}) {
    this.steps = script.steps;
    this.discover = script.discover;
    this.mode = options.match ?? 'params';
    this.source = options.source ?? 'the capture';
    this.consumed = this.steps.map(() => false);
    this.sent = this.steps.map(() => false);
    this.missing = this.steps.map(() => 0);
    const candidates: { method: string; key: string | undefined }[] = [];
    this.steps.forEach((s, step) => {
      if (s.dir === 's2c') {
        this.missing[step] = s.deps.length;
        for (const d of s.deps) {
          const list = this.dependents.get(d) ?? [];
          list.push(step);
          this.dependents.set(d, list);
        }
        if (s.deps.length === 0) this.ready.push(step);
      } else if (s.kind === 'request' && s.method !== undefined) {
        candidates.push({ method: s.method, key: s.key });
        this.requestSteps.push(step);
      } else if (s.kind === 'notification' && s.method !== undefined) {
        const entry = this.notifications.get(s.method) ?? { steps: [], next: 0 };
        entry.steps.push(step);
        this.notifications.set(s.method, entry);
      } else if (s.kind === 'response' && s.id !== undefined && s.id !== null) {
        const list = this.answers.get(idKey(s.id)) ?? [];
        list.push(step);
        this.answers.set(idKey(s.id), list);
      }
    });
    this.matcher = new RequestMatcher(candidates);
  }

  /** A client frame happened: the server frames waiting for it may now be due. */
  private consume(step: number): void {
    if (this.consumed[step]) return;
    this.consumed[step] = true;
    for (const waiting of this.dependents.get(step) ?? []) if (--this.missing[waiting]! === 0) this.ready.push(waiting);
  }

  /** Server frames due before the client says anything (a banner, stdout pollution at start-up). */
  start(): EngineOutput {
    const out: EngineOutput = { frames: [], notes: [] };
    this.flush(out);
    return out;
  }

  /** One line from the live client. */
  receive(line: string): EngineOutput {
    const out: EngineOutput = { frames: [], notes: [] };
    const decoded = decodeJsonRpc(line);
    for (const message of decoded.messages) this.receiveMessage(message, out);
    this.flush(out);
    return out;
  }

  /** Counts so far. */
  get stats(): ReplayStats {
    return {
      recordedRequests: this.requestSteps.length,
      answered: this.answered,
      misses: this.misses,
      sentServerFrames: this.sentCount,
      recordedServerFrames: this.steps.filter((s) => s.dir === 's2c').length,
    };
  }

  private receiveMessage(message: Message, out: EngineOutput): void {
    switch (message.type) {
      case 'request':
        return this.receiveRequest(message, out);
      case 'notification': {
        const entry = this.notifications.get(message.method);
        if (!entry || entry.next >= entry.steps.length) {
          out.notes.push(`replay: the client sent ${message.method}, which the capture does not hold; ignored.`);
          return;
        }
        this.consume(entry.steps[entry.next++]!);
        return;
      }
      case 'response':
      case 'error':
        return this.receiveAnswer(message, out);
      case 'invalid':
        out.notes.push(`replay: the client sent a line that is not JSON-RPC (${message.reason}); ignored.`);
        return;
    }
  }

  /** A live request: the recorded one it matches goes on, or the client is told plainly why none does. */
  private receiveRequest(message: Extract<Message, { type: 'request' }>, out: EngineOutput): void {
    const picked = this.matcher.pick(message.method, canonicalParams(message.params), this.mode);
    if (typeof picked === 'number') {
      const step = this.requestSteps[picked]!;
      this.liveIds.set(step, message.id);
      const token = (message.params?._meta as Record<string, unknown> | undefined)?.progressToken;
      if (token !== undefined) this.liveTokens.set(step, token);
      this.consume(step);
      this.answered++;
      return;
    }
    if (message.method === 'server/discover' && this.discover) {
      // The SDK v2 client probes before its session; the answer comes from the probe's log or the session.
      out.frames.push(line({ jsonrpc: '2.0', id: message.id, result: this.discover }));
      return;
    }
    if (message.method === 'ping') {
      // A liveness check is not part of any conversation; answering it keeps the client's keep-alive happy.
      out.frames.push(line({ jsonrpc: '2.0', id: message.id, result: {} }));
      return;
    }
    this.misses++;
    const what = describeCall(message.method, message.params);
    const why =
      picked === 'unknown-method'
        ? `${what} is not in the capture ${this.source}: the recorded server never received ${message.method}.`
        : this.mode === 'strict'
          ? `${what} is not in the capture ${this.source}: the next recorded ${message.method} has other params (--match strict).`
          : `${what} is not in the capture ${this.source}: every recorded ${message.method} with these params has been answered already.`;
    const code = picked === 'unknown-method' ? REPLAY_ERROR.unknownMethod : REPLAY_ERROR.noMatch;
    out.frames.push(line({ jsonrpc: '2.0', id: message.id, error: { code, message: `mcptap replay: ${why}` } }));
    out.notes.push(`replay miss: ${why}`);
  }

  /** The client answers a server request we sent with its recorded id: find the recorded answer. */
  private receiveAnswer(message: Extract<Message, { type: 'response' | 'error' }>, out: EngineOutput): void {
    const step =
      message.id === null
        ? undefined
        : this.answers.get(idKey(message.id))?.find((i) => !this.consumed[i] && this.steps[i]!.requestStep !== undefined && this.sent[this.steps[i]!.requestStep!]);
    if (step === undefined) {
      out.notes.push(`replay: the client sent a response to id ${String(message.id)}, which matches no server request the replay sent; ignored.`);
      return;
    }
    this.consume(step);
    const recorded = this.steps[step]!;
    const method = recorded.requestStep !== undefined ? this.steps[recorded.requestStep]!.method : undefined;
    const liveAnswer = message.type === 'error' ? { error: message.error } : { result: message.result };
    const recordedAnswer = recorded.json ? ('error' in recorded.json ? { error: recorded.json.error } : { result: recorded.json.result }) : undefined;
    if (recordedAnswer && canonicalJson(liveAnswer) !== canonicalJson(recordedAnswer)) {
      out.notes.push(`replay: the client answered ${method ?? 'a server request'} (id ${String(message.id)}) differently than in the capture; the replay goes on with what was recorded next.`);
    }
  }

  /** Send every server frame whose causes have all happened, in recorded order. */
  private flush(out: EngineOutput): void {
    let previous: number | undefined;
    const due = this.ready.sort((a, b) => a - b);
    this.ready = [];
    for (const i of due) {
      const s = this.steps[i]!;
      this.sent[i] = true;
      this.sentCount++;
      const frame = this.render(i, out);
      if (!frame) continue;
      // Recorded spacing: how long after its cause (or the frame before it in this burst) the server wrote it.
      const since = Math.max(previous ?? -Infinity, ...s.deps.map((d) => this.steps[d]!.time));
      frame.delayMs = Number.isFinite(since) ? Math.max(0, s.time - since) : 0;
      previous = s.time;
      out.frames.push(frame);
    }
  }

  private render(index: number, out: EngineOutput): OutFrame | undefined {
    const s = this.steps[index]!;
    if (s.truncated) {
      if (s.kind === 'response' && s.requestStep !== undefined && this.liveIds.has(s.requestStep)) {
        const why = `the capture ${this.source} kept only the first ${s.bytes.length} bytes of the response to ${s.method ?? 'this request'}; record with a larger --max-body to replay it.`;
        out.notes.push(`replay: ${why}`);
        return line({ jsonrpc: '2.0', id: this.liveIds.get(s.requestStep)!, error: { code: REPLAY_ERROR.truncated, message: `mcptap replay: ${why}` } });
      }
      out.notes.push(`replay: skipped a server frame the capture kept only the head of (${s.bytes.length} bytes).`);
      return undefined;
    }
    if (!s.json) return { bytes: s.bytes, crlf: s.crlf, ...(s.partial ? { partial: true } : {}), delayMs: 0 };
    let json = s.json;
    if (s.kind === 'response' && s.requestStep !== undefined) {
      const live = this.liveIds.get(s.requestStep);
      if (live !== undefined && live !== s.id) json = { ...json, id: live };
    } else if (s.kind === 'notification' && s.progressStep !== undefined && this.liveTokens.has(s.progressStep)) {
      const params = json.params as Record<string, unknown> | undefined;
      const live = this.liveTokens.get(s.progressStep);
      if (params && params.progressToken !== live) json = { ...json, params: { ...params, progressToken: live } };
    }
    // Unchanged frames go out byte for byte as recorded; rewritten ones are serialized again.
    return { bytes: json === s.json ? s.bytes : Buffer.from(JSON.stringify(json)), crlf: s.crlf, delayMs: 0 };
  }
}

/** Typed map key: the string id "1" and the number id 1 are different. */
function idKey(id: JsonRpcId): string {
  return `${typeof id}:${id}`;
}

function line(json: unknown): OutFrame {
  return { bytes: Buffer.from(JSON.stringify(json)), crlf: false, delayMs: 0 };
}

/** "tools/call get_forecast {"city":"Paris"}" — enough for a reader to spot the call. */
function describeCall(method: string, params: Record<string, unknown> | undefined): string {
  if (method === 'tools/call' && typeof params?.name === 'string') {
    const args = canonicalJson(params.arguments ?? {});
    return `tools/call ${params.name} ${args.length > 120 ? `${args.slice(0, 119)}…` : args}`;
  }
  if ((method === 'resources/read' || method === 'prompts/get') && params) {
    const name = params.uri ?? params.name;
    if (typeof name === 'string') return `${method} ${name}`;
  }
  return method;
}
