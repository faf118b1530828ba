/**
 * `check`: does a capture show something a CI run should fail on? Pure: records in, findings and reports out.
 *
 * Signals (each can be chosen with --fail-on):
 * - `errors`      JSON-RPC error responses, LLM API errors, HTTP 5xx answers;
 * - `invalid`     frames that are not JSON-RPC (stdout pollution, broken or partial lines);
 * - `unanswered`  requests never answered (a `pending` record, or a request with no response in the log; the
 *                 `pending` of a request mcptap evicted only if no answer comes later) — requests the sender
 *                 itself cancelled are not counted, the protocol says not to answer those;
 * - `broken`      broken round trips from the cross-channel trace (trace/link.ts): a tool call the model asked
 *                 for that none of the MCP servers in the logs ran, or a tool result never fed back to the model
 *                 (give the LLM proxy's log and the servers' logs together; an LLM log alone proves nothing);
 * - `tool-errors` tools/call results with `isError: true` (off by default: a tool may fail by design);
 * - `start`       a server that never started: mcptap could not spawn it, it exited with 126 or 127 (not
 *                 executable, not found: what shells say), or it exited with an error before it said anything.
 *
 * Counts stay true when the log lost records (the writer drops them when the disk falls behind, and says how
 * many) or bytes went uninspected (the inspection fell behind, and says which stream and how many): a request
 * with no response is `unknown`, not unanswered, when such a loss came after it and could have held its answer
 * (see Losses). So is an evicted request in a session with answers mcptap could not pair any more.
 */
import { requestHead, type RequestHead } from '../log/request-head.js';
import type { LogRecord, PendingRecord, UninspectedStream } from '../log/schema.js';
import { pendingOfEvicted } from '../log/evicted.js';
import { DEFAULT_MAX_PENDING, opposite } from '../session/correlator.js';
import { RecentMap } from '../session/recent-map.js';
import type { Direction } from '../types.js';
import { isLlmCall, type TraceDiagnostic } from '../trace/link.js';
import { TraceLinker } from '../trace/linker.js';

/** What check can fail on. */
export type CheckSignal = 'start' | 'errors' | 'invalid' | 'unanswered' | 'broken' | 'tool-errors';

/** Every signal, in report order. */
export const CHECK_SIGNALS: readonly CheckSignal[] = ['start', 'errors', 'invalid', 'unanswered', 'broken', 'tool-errors'];

/** Signals that fail a check unless --fail-on says otherwise. */
export const DEFAULT_FAIL_ON: readonly CheckSignal[] = ['start', 'errors', 'invalid', 'unanswered', 'broken'];

/** What each signal checks, as a test name in JUnit reports. */
export const SIGNAL_TITLES: Record<CheckSignal, string> = {
  start: 'every server started',
  errors: 'no error responses',
  invalid: 'no invalid frames (stdout pollution, broken lines)',
  unanswered: 'every request answered',
  broken: 'no broken round trips (model tool call → MCP server → result back to the model)',
  'tool-errors': 'no tool results with isError',
};

/** One thing found. */
export interface Finding {
  signal: CheckSignal;
  session: string;
  label: string;
  /** `seq` of the record it points at, within its log. */
  seq?: number;
  time: number;
  /** A plain sentence. */
  message: string;
}

/** Counts for one session of the capture. */
export interface SessionSummary {
  session: string;
  label: string;
  channel: string;
  records: number;
  /** Requests known to have been sent: logged, or named by a `pending` record whose request the log lost. */
  requests: number;
  /** Calls to an LLM API (`llm-request` records): what an LLM proxy's session is made of. */
  llmCalls: number;
  /** Records the log says it dropped (the disk fell behind the traffic). */
  dropped: number;
  /** Bytes the log says mcptap relayed but did not inspect (its inspection fell behind a flood). */
  uninspectedBytes: number;
  /**
   * Requests with no response where the log lost records or bytes after them that could have held it, or
   * evicted requests in a session with answers mcptap could not pair (it had forgotten requests it evicted):
   * answered or not, unknown.
   */
  unknown: number;
  counts: Record<CheckSignal, number>;
}

/**
 * Sessions that passed, counted per server rather than listed: past MAX_SESSIONS held, a session that ended
 * clean (nothing found, nothing open, no broken round trip) long before the linker's window is folded in here.
 */
export interface FoldedSessions {
  label: string;
  channel: string;
  sessions: number;
  records: number;
  requests: number;
  llmCalls: number;
}

/** Everything `check` found, and whether it fails. */
export interface CheckReport {
  sessions: SessionSummary[];
  /** Sessions that passed, per server, folded to bound the memory of a log of thousands (absent when none were). */
  folded?: FoldedSessions[];
  /** What was found, in time order: the first MAX_KEPT_FINDINGS of each signal. */
  findings: Finding[];
  /** Findings past those, counted by signal (absent when none were): a flood of them stays a count. */
  more?: Partial<Record<CheckSignal, number>>;
  failOn: CheckSignal[];
  /** True when a finding's signal is one of `failOn`. */
  failed: boolean;
}

/** Check records (of one or more logs, as readAllRecords gives them). */
export function checkRecords(records: readonly LogRecord[], options: { failOn?: readonly CheckSignal[]; maxSessions?: number } = {}): CheckReport {
  const checker = new Checker(options);
  const linker = new TraceLinker({ haveLlm: records.some(isLlmCall) });
  const push = checking(checker, linker);
  for (const r of records) push(r);
  return checker.finish(linker.end().diagnostics);
}

/**
 * Check a stream of records (readLogs' order) with bounded memory: the checks and the linker take each record as
 * it comes. `haveLlm`: whether the logs hold LLM calls (read-logs knows before the stream starts).
 */
export async function checkStream(records: AsyncIterable<LogRecord>, options: { failOn?: readonly CheckSignal[]; haveLlm?: boolean } = {}): Promise<{ report: CheckReport; notes: string[] }> {
  const checker = new Checker(options);
  const linker = new TraceLinker(options.haveLlm !== undefined ? { haveLlm: options.haveLlm } : {});
  const push = checking(checker, linker);
  for await (const r of records) push(r);
  const end = linker.end();
  return { report: checker.finish(end.diagnostics), notes: end.notes };
}

/** Records between two looks for sessions to fold. */
const FOLD_EVERY = 1024;

/** Each record to the checks and the linker; now and then, the sessions the linker is done with folded. */
function checking(checker: Checker, linker: TraceLinker): (r: LogRecord) => void {
  let since = 0;
  return (r) => {
    checker.push(r);
    linker.push(r);
    if (++since < FOLD_EVERY) return;
    since = 0;
    checker.fold(linker.settled, (session) => linker.brokenInSession(session));
  };
}

/** Key of a request within its session's log. */
function key(session: string, seq: number): string {
  return `${session}#${seq}`;
}

/**
 * The checks over a stream of records: counters per session, the requests still unanswered, and the findings
 * (what CI reads). Memory grows with the sessions, the open requests and what is found, not with the records.
 */
export class Checker {
  private readonly failOn: CheckSignal[];
  private readonly findings: Finding[] = [];
  private readonly kept: Record<CheckSignal, number> = { start: 0, errors: 0, invalid: 0, unanswered: 0, broken: 0, 'tool-errors': 0 };
  private readonly more: Partial<Record<CheckSignal, number>> = {};
  private readonly sessions = new Map<string, SessionSummary>();
  /**
   * Requests not yet answered, by (session, seq), in the order sent; `settled` once cancelled (no answer is
   * due, but the `pending` record that may follow is about a request the log holds).
   */
  private readonly open = new Map<string, { request: RequestHead; settled: boolean; mark: LossMark }>();
  private readonly losses = new Losses();
  /** Per session, the evicted requests still owed an answer (see OwedEvicted). */
  private readonly evicted = new Map<string, OwedEvicted>();
  /** Sessions with an answer to no request the log pairs it with. */
  private readonly unpaired = new Set<string>();
  private readonly starts = new StartFailures();
  private readonly maxSessions: number;
  /** Sessions whose `exit` or `close` was read, by its time, until they are folded or kept for good. */
  private readonly ends = new Map<string, number>();
  private readonly folded = new Map<string, FoldedSessions>();

  constructor(options: { failOn?: readonly CheckSignal[]; maxSessions?: number } = {}) {
    this.failOn = [...(options.failOn ?? DEFAULT_FAIL_ON)];
    this.maxSessions = options.maxSessions ?? MAX_HELD_SESSIONS;
  }

  push(r: LogRecord): void {
    const s = this.summary(r);
    s.records++;
    this.starts.push(r);
    if (r.kind === 'lifecycle' && (r.event === 'exit' || r.event === 'close')) this.ends.set(r.session, r.time);
    switch (r.kind) {
      case 'request':
        s.requests++;
        this.open.set(key(r.session, r.seq), { request: requestHead(r), settled: false, mark: this.losses.mark(r.session, opposite(r.dir)) });
        // Headers that disagree with the body: the server rejects the request (2026-07-28, -32020).
        if (r.headerMismatch) this.find('invalid', r, r.msg);
        break;
      case 'response':
        if (r.requestSeq !== undefined) this.open.delete(key(r.session, r.requestSeq));
        if (r.afterPending && r.requestSeq !== undefined) this.settleEvicted(r.session, opposite(r.dir), r.requestSeq);
        else if (r.requestSeq === undefined && r.id !== null) this.unpaired.add(r.session);
        // An error to server/discover is a 2025 server telling a probing client to fall back: not a failure.
        if (r.error && !r.versionFallback) this.find('errors', r, r.msg);
        else if (r.isError === true) this.find('tool-errors', r, r.msg);
        break;
      case 'notification':
        // A cancelled request is not to be answered: it is settled by the cancellation.
        if (r.method === 'notifications/cancelled' && r.requestSeq !== undefined) {
          const open = this.open.get(key(r.session, r.requestSeq));
          if (open) open.settled = true;
        }
        break;
      case 'invalid':
        this.find('invalid', r, r.msg);
        break;
      case 'pending':
        this.pending(r, s);
        break;
      case 'evicted':
        for (const p of pendingOfEvicted(r)) this.pending(p, s);
        break;
      case 'llm-error':
        this.find('errors', r, r.msg);
        break;
      case 'llm-request':
        s.llmCalls++;
        break;
      case 'lifecycle': {
        const dropped = droppedCount(r);
        const uninspected = uninspectedCount(r);
        s.dropped += dropped;
        s.uninspectedBytes += uninspected;
        // A dropped record may be an answer either way; skipped bytes hold answers only of their stream's way.
        if (dropped > 0) this.losses.addDrop(r.session);
        else if (uninspected > 0) this.losses.addGap(r.session, uninspectedWays(r));
        break;
      }
      case 'http-end':
        s.uninspectedBytes += r.uninspectedBytes ?? 0;
        // An exchange's bodies may carry messages either way (a client's answer in a POST, a server's in its reply).
        if ((r.uninspectedBytes ?? 0) > 0) this.losses.addGap(r.session, BOTH_WAYS);
        break;
      case 'http-response':
        if (r.status >= 500) this.find('errors', r, r.msg);
        break;
      default:
        break;
    }
  }

  /**
   * Past `maxSessions` held, fold the sessions that ended clean before `settled` (the linker's findings about
   * them are all made: `broken` says which it named) into one count per server.
   */
  fold(settled: number, broken: (session: string) => boolean): void {
    if (this.sessions.size <= this.maxSessions) return;
    const open = new Set<string>();
    for (const { request } of this.open.values()) open.add(request.session);
    for (const [session, e] of this.evicted) if (owedCount(e) > 0) open.add(session);
    for (const [session, end] of this.ends) {
      if (end >= settled) continue;
      this.ends.delete(session);
      const s = this.sessions.get(session);
      if (!s || open.has(session) || broken(session) || this.starts.failed(session) || !clean(s)) continue;
      this.sessions.delete(session);
      const key = `${s.label}\u0000${s.channel}`;
      const f = this.folded.get(key) ?? { label: s.label, channel: s.channel, sessions: 0, records: 0, requests: 0, llmCalls: 0 };
      f.sessions++;
      f.records += s.records;
      f.requests += s.requests;
      f.llmCalls += s.llmCalls;
      this.folded.set(key, f);
    }
  }

  /** A finding of a signal failed on, kept with its sentence or only counted. */
  private fails(): boolean {
    return this.findings.some((f) => this.failOn.includes(f.signal)) || this.failOn.some((sig) => (this.more[sig] ?? 0) > 0);
  }

  /** A request the tap stopped waiting for. */
  private pending(r: PendingRecord, s: SessionSummary): void {
    const k = key(r.session, r.requestSeq);
    // A `pending` record whose request the log lost is a request all the same; when it was sent is not
    // known, so any loss may hold its answer.
    const mark = this.open.get(k)?.mark ?? NO_LOSS;
    if (!this.open.delete(k)) s.requests++;
    // A subscription (subscriptions/listen) is a stream that ends, not a call left unanswered; a cancelled
    // request is owed no answer.
    if (r.subscription || r.cancelled) return;
    // An evicted request may still be answered later in the log (`afterPending`): its finding waits for that.
    if (r.evicted) this.noteEvicted(r, mark);
    // The tap saw no answer to it; that is so unless the tap itself skipped bytes that may hold one.
    else if (this.losses.gapSince(r.session, opposite(r.dir), mark)) s.unknown++;
    else this.find('unanswered', r, r.msg);
  }

  /**
   * An evicted request's `pending` record, with the loss mark of its request: unanswered unless an answer comes
   * later (see finishEvicted).
   */
  private noteEvicted(r: PendingRecord, mark: LossMark): void {
    let e = this.evicted.get(r.session);
    if (!e) this.evicted.set(r.session, (e = { waiting: { c2s: new RecentMap(DEFAULT_MAX_PENDING), s2c: new RecentMap(DEFAULT_MAX_PENDING) }, given: { c2s: new Map(), s2c: new Map() }, first: new Map() }));
    const gone = e.waiting[r.dir].set(r.requestSeq, mark);
    if (gone !== undefined) e.given[r.dir].set(gone, (e.given[r.dir].get(gone) ?? 0) + 1);
    if (e.first.size < MAX_KEPT_FINDINGS) e.first.set(r.requestSeq, r);
  }

  /** A late answer settles its request only if that one is owed: not a cancelled one, say, which was never. */
  private settleEvicted(session: string, requestDir: Direction, requestSeq: number): void {
    const e = this.evicted.get(session);
    if (e?.waiting[requestDir].take(requestSeq)) e.first.delete(requestSeq);
  }

  /**
   * The evicted requests no answer settled. In a session with answers mcptap could not pair (it forgot requests
   * it evicted, past its bound), any of them may have been answered: they are unknown. So is one with a loss
   * after it that could hold its answer. Else each is unanswered.
   */
  private finishEvicted(): void {
    for (const [session, e] of this.evicted) {
      const s = this.sessions.get(session);
      if (!s || owedCount(e) === 0) continue;
      if (this.unpaired.has(session)) {
        s.unknown += owedCount(e);
        continue;
      }
      let unanswered = 0;
      for (const dir of BOTH_WAYS) {
        const answered = opposite(dir);
        for (const [seq, mark] of e.waiting[dir].entries()) {
          if (this.losses.since(session, answered, mark)) s.unknown++;
          else if (e.first.has(seq)) this.find('unanswered', e.first.get(seq)!, e.first.get(seq)!.msg);
          else unanswered++;
        }
        for (const [mark, count] of e.given[dir]) {
          if (this.losses.since(session, answered, mark)) s.unknown += count;
          else unanswered += count;
        }
      }
      // Those not kept for a sentence are counted all the same.
      s.counts.unanswered += unanswered;
      if (unanswered > 0) this.more.unanswered = (this.more.unanswered ?? 0) + unanswered;
    }
  }

  /** The report, with the trace's broken round trips (`diagnostics`, from the linker over the same records). */
  finish(diagnostics: readonly TraceDiagnostic[]): CheckReport {
    this.finishEvicted();
    for (const { request, settled, mark } of this.open.values()) {
      if (settled) continue;
      const s = this.sessions.get(request.session)!;
      // Its response may be among the records the log dropped after it, or the bytes mcptap did not inspect.
      if (this.losses.since(request.session, opposite(request.dir), mark)) {
        s.unknown++;
        continue;
      }
      this.find('unanswered', request, `${request.dir === 'c2s' ? 'The client' : 'The server'}'s request ${request.method}${request.tool ? ` ${request.tool}` : ''} #${String(request.id)} has no response in the log (the log ends before it was answered).`);
    }
    for (const failed of this.starts.failures) this.find('start', failed.record, failed.message);
    for (const d of diagnostics) {
      // Only what the linker is sure of: with no MCP log at all it cannot tell where a tool ran (level info).
      if ((d.code !== 'tool-not-run' && d.code !== 'result-not-fed-back') || d.level !== 'warn') continue;
      this.find('broken', { session: d.session ?? '', time: d.time, ...(d.seq !== undefined ? { seq: d.seq } : {}) }, d.msg);
    }
    this.findings.sort((a, b) => a.time - b.time);
    const folded = this.folded.size > 0 ? { folded: [...this.folded.values()] } : {};
    const more = Object.keys(this.more).length > 0 ? { more: this.more } : {};
    return { sessions: [...this.sessions.values()], ...folded, findings: this.findings, ...more, failOn: this.failOn, failed: this.fails() };
  }

  private summary(r: LogRecord): SessionSummary {
    let s = this.sessions.get(r.session);
    if (!s) {
      s = { session: r.session, label: r.label, channel: r.channel, records: 0, requests: 0, llmCalls: 0, dropped: 0, uninspectedBytes: 0, unknown: 0, counts: { start: 0, errors: 0, invalid: 0, unanswered: 0, broken: 0, 'tool-errors': 0 } };
      this.sessions.set(r.session, s);
    }
    return s;
  }

  private find(signal: CheckSignal, r: { session: string; label?: string; seq?: number; time: number }, message: string): void {
    const s = this.sessions.get(r.session);
    if (s) s.counts[signal]++;
    if (this.kept[signal] === MAX_KEPT_FINDINGS) {
      this.more[signal] = (this.more[signal] ?? 0) + 1;
      return;
    }
    this.kept[signal]++;
    this.findings.push({ signal, session: r.session, label: r.label ?? s?.label ?? r.session, ...(r.seq !== undefined ? { seq: r.seq } : {}), time: r.time, message });
  }
}

/**
 * A session's evicted requests still owed an answer, each way, with their loss marks. A tap pairs late only the
 * last DEFAULT_MAX_PENDING it evicted each way, so as many are waited for; older ones are only counted, by mark.
 * `first` keeps the first of them (till answered) for the findings' sentences.
 */
interface OwedEvicted {
  waiting: Record<Direction, RecentMap<number, LossMark>>;
  given: Record<Direction, Map<LossMark, number>>;
  first: Map<number, PendingRecord>;
}

function owedCount(e: OwedEvicted): number {
  let count = e.waiting.c2s.size + e.waiting.s2c.size;
  for (const dir of BOTH_WAYS) for (const n of e.given[dir].values()) count += n;
  return count;
}

const BOTH_WAYS: readonly Direction[] = ['c2s', 's2c'];

/**
 * The losses a session's log has said so far, per way a message goes: gaps (bytes not inspected) and records
 * dropped. A request takes its answer's way's mark; the log says a loss after what it lost, so only one said
 * after the request can hold its answer.
 */
interface LossMark {
  readonly gaps: number;
  readonly drops: number;
}

const NO_LOSS: LossMark = { gaps: 0, drops: 0 };

class Losses {
  private readonly marks = new Map<string, Record<Direction, LossMark>>();

  mark(session: string, way: Direction): LossMark {
    return this.marks.get(session)?.[way] ?? NO_LOSS;
  }

  /** True when bytes not inspected since `mark` may hold a message going `way`. */
  gapSince(session: string, way: Direction, mark: LossMark): boolean {
    return this.mark(session, way).gaps > mark.gaps;
  }

  /** True when a gap, or a dropped record, since `mark` may hold a message going `way`. */
  since(session: string, way: Direction, mark: LossMark): boolean {
    const now = this.mark(session, way);
    return now.gaps > mark.gaps || now.drops > mark.drops;
  }

  addGap(session: string, ways: readonly Direction[]): void {
    const marks = this.of(session);
    for (const way of ways) marks[way] = { gaps: marks[way].gaps + 1, drops: marks[way].drops };
  }

  addDrop(session: string): void {
    const marks = this.of(session);
    for (const way of BOTH_WAYS) marks[way] = { gaps: marks[way].gaps, drops: marks[way].drops + 1 };
  }

  private of(session: string): Record<Direction, LossMark> {
    let marks = this.marks.get(session);
    if (!marks) this.marks.set(session, (marks = { c2s: NO_LOSS, s2c: NO_LOSS }));
    return marks;
  }
}

/** Most findings of one signal kept with their sentences; the rest are counted (CheckReport.more). */
export const MAX_KEPT_FINDINGS = 1000;

/** Most session summaries held before clean ones that ended long ago are folded (a log of thousands of sessions). */
export const MAX_HELD_SESSIONS = 1000;

/** Nothing found in a session, and nothing it lost. */
function clean(s: SessionSummary): boolean {
  return !incomplete(s) && s.unknown === 0 && CHECK_SIGNALS.every((sig) => s.counts[sig] === 0);
}

/** How many bytes a lifecycle warning says went uninspected (`uninspectedBytes`; older logs say it only in `msg`). */
function uninspectedCount(r: Extract<LogRecord, { kind: 'lifecycle' }>): number {
  if (r.event !== 'warning') return 0;
  if (typeof r.uninspectedBytes === 'number') return r.uninspectedBytes;
  const m = /^mcptap fell behind and did not inspect (\d+) bytes/.exec(r.msg);
  return m ? Number(m[1]) : 0;
}

/** How older logs name a stream in an uninspected-bytes warning's `msg` (they have no `stream` field). */
const STREAMS_IN_MSG: Record<string, UninspectedStream> = { 'the client\u2019s input': 'stdin', 'the server\u2019s stdout': 'stdout', 'the server\u2019s stderr': 'stderr' };

/**
 * The ways an uninspected-bytes warning's stream carried messages: the client's stdin c2s, the server's stdout
 * s2c, its stderr none. A warning that names no stream may have held either.
 */
function uninspectedWays(r: Extract<LogRecord, { kind: 'lifecycle' }>): readonly Direction[] {
  const named = / bytes of (the [^,]+), up to the end of a line/.exec(r.msg)?.[1];
  const stream = r.stream ?? (named !== undefined ? STREAMS_IN_MSG[named] : undefined);
  if (stream === 'stdin') return ['c2s'];
  if (stream === 'stdout') return ['s2c'];
  return stream === 'stderr' ? [] : BOTH_WAYS;
}

/** A log that lacks part of the session (records dropped, bytes not inspected): a missing answer may be there. */
function incomplete(s: SessionSummary): boolean {
  return s.dropped > 0 || s.uninspectedBytes > 0;
}

/** How many records a lifecycle warning says the log dropped (`dropped`; older logs say it only in `msg`). */
function droppedCount(r: Extract<LogRecord, { kind: 'lifecycle' }>): number {
  if (r.event !== 'warning') return 0;
  if (typeof r.dropped === 'number') return r.dropped;
  const m = /^(\d+) records were dropped before this point/.exec(r.msg);
  return m ? Number(m[1]) : 0;
}

/**
 * Servers that never started, one finding each: the spawn failed (a stdio start with no child), the server
 * exited with 126 or 127 (not executable, not found: what shells say when they could not run it), or it exited
 * with any other error before it sent a single frame.
 */
class StartFailures {
  /** Wrapped servers by session, until they exit: whether a child was spawned, mcptap's last warning, whether it spoke. */
  private readonly wrapped = new Map<string, { spawned: boolean; warning?: string; spoke?: boolean }>();
  readonly failures: { record: LogRecord; message: string }[] = [];
  private readonly failedSessions = new Set<string>();

  push(r: LogRecord): void {
    if ((r.kind === 'request' || r.kind === 'response' || r.kind === 'notification' || r.kind === 'invalid') && r.dir === 's2c') {
      const server = this.wrapped.get(r.session);
      if (server) server.spoke = true;
    }
    if (r.kind !== 'lifecycle') return;
    if (r.event === 'start' && r.command !== undefined) this.wrapped.set(r.session, { spawned: r.childPid !== undefined });
    const server = this.wrapped.get(r.session);
    if (!server) return;
    if (r.event === 'warning') server.warning = r.msg;
    if (r.event !== 'exit') return;
    this.wrapped.delete(r.session);
    const failed = this.failures.length;
    const code = typeof r.code === 'number' ? r.code : undefined;
    if (!server.spawned) this.failures.push({ record: r, message: `The server ${r.label} never started: ${server.warning ?? r.msg}` });
    else if (code === 126 || code === 127) this.failures.push({ record: r, message: `The server ${r.label} exited with ${code} (${code === 126 ? 'not executable' : 'command not found'}): it never ran.` });
    else if (code !== undefined && code !== 0 && !server.spoke) this.failures.push({ record: r, message: `The server ${r.label} exited with code ${code} before it sent anything: it never started (its stderr in the log says why).` });
    if (this.failures.length > failed) this.failedSessions.add(r.session);
  }

  failed(session: string): boolean {
    return this.failedSessions.has(session);
  }
}

/** Parse a --fail-on list (`errors,invalid` or repeated flags); throws a sentence on an unknown signal. */
export function parseSignals(values: readonly string[]): CheckSignal[] {
  const out: CheckSignal[] = [];
  for (const value of values.flatMap((v) => v.split(',')).map((v) => v.trim()).filter(Boolean)) {
    if (value === 'all') {
      out.push(...CHECK_SIGNALS);
      continue;
    }
    if (!(CHECK_SIGNALS as readonly string[]).includes(value)) throw new Error(`--fail-on takes ${CHECK_SIGNALS.join(', ')} or all, not "${value}".`);
    out.push(value as CheckSignal);
  }
  return [...new Set(out)];
}

/** Most findings and sessions listed in the human summary (the rest are counted): the report fits on one screen. */
const MAX_LISTED = 12;
const MAX_SESSIONS = 8;

/** The one-screen human summary. */
export function formatCheckSummary(report: CheckReport, options: { color?: boolean } = {}): string {
  const paint = (code: number, text: string): string => (options.color ? `\u001b[${code}m${text}\u001b[0m` : text);
  const failing = report.findings.filter((f) => report.failOn.includes(f.signal));
  const notKept = (failOn: boolean): number => CHECK_SIGNALS.filter((sig) => report.failOn.includes(sig) === failOn).reduce((n, sig) => n + (report.more?.[sig] ?? 0), 0);
  const lines: string[] = [];
  const folded = (report.folded ?? []).reduce((n, f) => n + f.sessions, 0);
  const total = report.sessions.length + folded;
  lines.push(`mcptap check: ${report.failed ? paint(31, 'FAIL') : paint(32, 'PASS')} — ${total} session${total === 1 ? '' : 's'}, failing on ${report.failOn.join(', ') || 'nothing'}`);
  const isBad = (s: SessionSummary): boolean => CHECK_SIGNALS.some((sig) => s.counts[sig] > 0 && report.failOn.includes(sig));
  // Many logs: list the failing sessions only, so the summary still fits on one screen.
  const listed = total > MAX_SESSIONS ? report.sessions.filter(isBad).slice(0, MAX_SESSIONS) : report.sessions;
  for (const s of listed) {
    const counts = CHECK_SIGNALS.filter((sig) => s.counts[sig] > 0).map((sig) => `${s.counts[sig]} ${sig === 'start' ? 'failed start' : sig}`);
    const gaps = [s.dropped > 0 ? `${s.dropped} records dropped from the log` : '', s.uninspectedBytes > 0 ? `${s.uninspectedBytes} bytes not inspected` : ''].filter(Boolean).join(', ');
    if (s.unknown > 0) counts.push(`${s.unknown} unknown (${gaps || 'too many requests were waiting for mcptap to pair every answer'})`);
    else if (gaps) counts.push(gaps);
    const calls = s.llmCalls > 0 && s.requests === 0 ? `${s.llmCalls} LLM call${s.llmCalls === 1 ? '' : 's'}` : `${s.requests} requests${s.llmCalls > 0 ? `, ${s.llmCalls} LLM calls` : ''}`;
    // A session that passed with requests nobody can judge is not shown as checked.
    const mark = isBad(s) ? paint(31, '✗') : s.unknown > 0 ? paint(33, '?') : paint(32, '✓');
    lines.push(`  ${mark} ${s.label} (${s.channel}, ${s.session}): ${calls}${counts.length ? `, ${counts.join(', ')}` : ', nothing found'}`);
  }
  if (listed.length < total) {
    const passed = report.sessions.filter((s) => !isBad(s)).length + folded;
    const moreBad = report.sessions.filter(isBad).length - listed.length;
    lines.push(`  … ${passed} more session${passed === 1 ? '' : 's'} passed${moreBad > 0 ? `, ${moreBad} more failed` : ''}.`);
  }
  const unknown = report.sessions.reduce((n, s) => n + s.unknown, 0);
  if (unknown > 0) lines.push('', `${unknown} request${unknown === 1 ? ' is' : 's are'} unknown: an answer may be in traffic the log lost after the request, or among answers mcptap could no longer pair, so check cannot say whether ${unknown === 1 ? 'it was' : 'they were'} answered.`);
  if (failing.length) {
    lines.push('', 'Findings:');
    for (const f of failing.slice(0, MAX_LISTED)) {
      const msg = f.message.length > 160 ? `${f.message.slice(0, 159)}…` : f.message;
      lines.push(`  ${paint(31, f.signal.padEnd(10))} ${f.label}${f.seq !== undefined ? ` #${f.seq}` : ''}: ${msg}`);
    }
    const more = failing.length + notKept(true) - MAX_LISTED;
    if (more > 0) lines.push(`  … and ${more} more (mcptap view shows every record).`);
  }
  const other = report.findings.length - failing.length + notKept(false);
  if (other) lines.push('', `${other} finding${other === 1 ? '' : 's'} of signals not in --fail-on (${[...new Set(report.findings.filter((f) => !report.failOn.includes(f.signal)).map((f) => f.signal))].join(', ')}).`);
  return `${lines.join('\n')}\n`;
}

/** A JUnit XML report: one testsuite per session, one testcase per signal. */
export function formatJunit(report: CheckReport): string {
  const suites: string[] = [];
  let tests = 0;
  let failures = 0;
  for (const s of report.sessions) {
    const cases: string[] = [];
    let suiteFailures = 0;
    let skipped = 0;
    for (const signal of CHECK_SIGNALS) {
      const found = report.findings.filter((f) => f.session === s.session && f.signal === signal);
      const name = xml(SIGNAL_TITLES[signal]);
      const classname = xml(`mcptap.check.${s.label}`);
      if (!report.failOn.includes(signal)) {
        skipped++;
        cases.push(`    <testcase classname="${classname}" name="${name}"><skipped message="not in --fail-on"/></testcase>`);
      } else if (found.length) {
        suiteFailures++;
        const total = Math.max(found.length, s.counts[signal]);
        const lines = found.map((f) => `${f.seq !== undefined ? `#${f.seq} ` : ''}${f.message}`);
        if (total > found.length) lines.push(`… and ${total - found.length} more (mcptap view shows every record).`);
        cases.push(`    <testcase classname="${classname}" name="${name}"><failure type="${signal}" message="${xml(`${total} found`)}">${xml(lines.join('\n'))}</failure></testcase>`);
      } else {
        cases.push(`    <testcase classname="${classname}" name="${name}"/>`);
      }
    }
    tests += CHECK_SIGNALS.length;
    failures += suiteFailures;
    suites.push(
      `  <testsuite name="${xml(`${s.label} (${s.session})`)}" tests="${CHECK_SIGNALS.length}" failures="${suiteFailures}" errors="0" skipped="${skipped}">\n${cases.join('\n')}\n  </testsuite>`,
    );
  }
  // Sessions folded per server passed every check: one suite per server says how many.
  for (const f of report.folded ?? []) {
    const classname = xml(`mcptap.check.${f.label}`);
    const cases = CHECK_SIGNALS.map((signal) =>
      report.failOn.includes(signal) ? `    <testcase classname="${classname}" name="${xml(SIGNAL_TITLES[signal])}"/>` : `    <testcase classname="${classname}" name="${xml(SIGNAL_TITLES[signal])}"><skipped message="not in --fail-on"/></testcase>`,
    );
    const skipped = CHECK_SIGNALS.filter((signal) => !report.failOn.includes(signal)).length;
    tests += CHECK_SIGNALS.length;
    suites.push(
      `  <testsuite name="${xml(`${f.label} (${f.channel}): ${f.sessions} more sessions, each passed`)}" tests="${CHECK_SIGNALS.length}" failures="0" errors="0" skipped="${skipped}">\n${cases.join('\n')}\n  </testsuite>`,
    );
  }
  return `<?xml version="1.0" encoding="UTF-8"?>\n<testsuites name="mcptap check" tests="${tests}" failures="${failures}">\n${suites.join('\n')}\n</testsuites>\n`;
}

function xml(text: string): string {
  // Characters XML 1.0 cannot carry at all are dropped; the rest escaped.
  // eslint-disable-next-line no-control-regex
  return text.replace(/[\u0000-\u0008\u000b\u000c\u000e-\u001f]/g, '').replace(/[<>&"']/g, (c) => ({ '<': '&lt;', '>': '&gt;', '&': '&amp;', '"': '&quot;', "'": '&apos;' })[c]!);
}
