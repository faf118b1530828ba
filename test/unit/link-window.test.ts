/**
 * The linker streams over a window of time: a log far longer than the window is linked round trip by round
 * trip while it holds only the window, across the logs of separate taps merged by time; a link the window
 * cannot make (a result fed back, or an answer that came, long after the call) is said, not silently missed.
 */
import { readFileSync, writeFileSync } from 'node:fs';
import { join } from 'node:path';
import { describe, expect, it } from 'vitest';
import { readLogs } from '../../src/log/reader.js';
import type { LogRecord } from '../../src/log/schema.js';
import { linkTrace, type ToolRoundTrip, type TraceTurn } from '../../src/trace/link.js';
import { TraceLinker } from '../../src/trace/linker.js';
import { writeJsonView } from '../../src/trace/write-view.js';
import { tempDir } from '../support/temp-dir.js';

const ROUNDTRIP = join(import.meta.dirname, '../../fixtures/captures/roundtrip');
/** The captured round trip: the Ollama proxy's log (two chat calls, the tool call and its feed-back) and the weather server's. */
const [ollama, weather] = ['ollama', 'weather'].map((name) =>
  readFileSync(join(ROUNDTRIP, `${name}.ndjson`), 'utf8')
    .split('\n')
    .filter(Boolean)
    .map((line) => JSON.parse(line) as LogRecord),
) as [LogRecord[], LogRecord[]];
const start = Math.min(...[...ollama, ...weather].map((r) => r.time));

/** Copy `n` of a log, `gapMs` after the one before, with sessions and exchanges of its own. */
function copy(records: LogRecord[], n: number, gapMs: number): LogRecord[] {
  return records.map((r) => {
    const o = { ...r, time: r.time - start + 1_800_000_000_000 + n * gapMs, session: `${r.session}-${n}` } as LogRecord & { exchange?: string };
    if (o.exchange !== undefined) o.exchange = `${o.exchange}-${n}`;
    return o;
  });
}

/** The records of a log file, as the reader streams them. */
function ndjson(records: LogRecord[]): string {
  return `${records.map((r) => JSON.stringify(r)).join('\n')}\n`;
}

describe('the streaming linker', () => {
  it('links every round trip of a log 60 times its window, across two logs, holding only the window', async () => {
    const copies = 300;
    const dir = tempDir('mcptap-link-window-');
    // One round trip every 10 s, in two logs (the LLM proxy's and the server's) as two taps write them.
    writeFileSync(join(dir, 'ollama.ndjson'), Array.from({ length: copies }, (_, n) => ndjson(copy(ollama, n, 10_000))).join(''));
    writeFileSync(join(dir, 'weather.ndjson'), Array.from({ length: copies }, (_, n) => ndjson(copy(weather, n, 10_000))).join(''));
    const trips: ToolRoundTrip[] = [];
    const turns: TraceTurn[] = [];
    // A window of 5 s, a horizon of 5 s: the linker holds 10 s of the 50 minutes.
    const linker = new TraceLinker({ windowMs: 5000, horizonMs: 5000, haveLlm: true }, { roundTrip: (t) => trips.push(t), turn: (t) => turns.push(t) });
    let most = 0;
    let outBeforeEnd = 0;
    for await (const { record } of readLogs([dir])) {
      linker.push(record);
      most = Math.max(most, linker.held.exchanges + linker.held.mcpCalls);
      outBeforeEnd = trips.length;
    }
    const end = linker.end();
    expect(trips).toHaveLength(copies);
    expect(turns).toHaveLength(copies);
    // Round trips came out as the stream moved, not only at its end.
    expect(outBeforeEnd).toBeGreaterThan(copies - 5);
    // Each round trip is one copy's: the model's call in the proxy's log, run by the server of the same copy.
    trips.forEach((t, n) => {
      expect(t.llm?.session).toBe(`${ollama[0]!.session}-${n}`);
      expect(t.mcp?.session).toBe(`${weather[0]!.session}-${n}`);
      expect(t.fedBack).toBe(true);
      expect(t.turn).toBe(n + 1);
      expect(t.diagnostics).toEqual([]);
    });
    expect(end.diagnostics).toEqual([]);
    expect(end.notes).toEqual([]);
    // A round trip has two LLM exchanges and one MCP call: a few round trips' worth held, not 300.
    expect(most).toBeLessThan(20);
  });

  it('links the oldest early when more calls come within the window than it may hold, and says so', () => {
    const records = Array.from({ length: 100 }, (_, n) => [...copy(ollama, n, 3000), ...copy(weather, n, 3000)].sort((a, b) => a.time - b.time)).flat();
    const notes: string[] = [];
    const linker = new TraceLinker({ maxHeld: 12 });
    let most = 0;
    for (const r of records) {
      linker.push(r);
      most = Math.max(most, linker.held.exchanges + linker.held.mcpCalls);
    }
    notes.push(...linker.end().notes);
    // Three items a round trip, the bound 12: held stays near it, and each round trip is linked as before.
    expect(most).toBeLessThan(20);
    expect(JSON.stringify(linkTrace(records, { maxHeld: 12 }))).toBe(JSON.stringify(linkTrace(records)));
    expect(notes).toHaveLength(1);
    expect(notes[0]).toMatch(/^\d+ round trips were linked before their window was over: more than 12 LLM and tool calls came within 20 min/);
  });

  it('on a flood to a server that never answers: no call the tap gave up on is watched, and no early link is said without a model', () => {
    const call = weather.find((r) => r.kind === 'request' && r.method === 'tools/call')!;
    const records: LogRecord[] = [];
    // As `mcptap -- cat` logs 5,000 calls: the tap gives up on each 100 requests later, with a pending record.
    for (let i = 0; i < 5000; i++) {
      records.push({ ...call, seq: 2 * i, id: i, time: 1_800_000_000_000 + i / 100 } as LogRecord);
      if (i >= 100) records.push({ ...call, kind: 'pending', seq: 2 * i + 1, id: i - 100, requestSeq: 2 * (i - 100), ageMs: 1, time: 1_800_000_000_000 + i / 100 } as unknown as LogRecord);
    }
    const linker = new TraceLinker({ maxHeld: 200 });
    let watched = 0;
    for (const r of records) {
      linker.push(r);
      watched = Math.max(watched, linker.held.watched);
    }
    const end = linker.end();
    // Each call was given up before it was let go: none is left to watch (without the pending records, the bound).
    expect(watched).toBe(0);
    expect(end.notes).toEqual([]);
  });

  it('in logs with no model, links each answered call at once, a multi-round call once its last round is answered', () => {
    const session = 'busy-1';
    let seq = 0;
    const at = (n: number) => 1_800_000_000_000 + n;
    const base = (n: number) => ({ v: 2, session, channel: 'stdio', label: 'busy', time: at(n), msg: 'm', seq: seq++ });
    const call = (n: number, id: string, extra: object = {}) =>
      ({ ...base(n), kind: 'request', dir: 'c2s', id, method: 'tools/call', tool: 'book', bytes: 1, raw: `{"jsonrpc":"2.0","id":"${id}","method":"tools/call","params":{"name":"book","arguments":{"n":${n}}}}`, ...extra }) as unknown as LogRecord;
    const answer = (n: number, id: string, requestSeq: number, extra: object = {}) =>
      ({ ...base(n), kind: 'response', dir: 's2c', id, method: 'tools/call', tool: 'book', requestSeq, latencyMs: 1, bytes: 1, raw: `{"jsonrpc":"2.0","id":"${id}","result":{"content":[{"type":"text","text":"ok ${n}"}]}}`, ...extra }) as unknown as LogRecord;
    const records: LogRecord[] = [];
    const flood = (from: number, count: number) => {
      for (let n = from; n < from + count; n++) {
        records.push(call(n, `c${n}`));
        records.push(answer(n, `c${n}`, seq - 1));
      }
    };
    flood(0, 1500);
    // A call the server asks for input on, its second round after 1,500 more calls, then its answer.
    const first = seq;
    records.push(call(1500, 'm1'), answer(1500, 'm1', first, { resultType: 'input_required', round: 1, firstSeq: first }));
    flood(1501, 1500);
    records.push(call(3001, 'm1', { round: 2, firstSeq: first }));
    records.push(answer(3001, 'm1', seq - 1, { resultType: 'complete', round: 2, firstSeq: first, callLatencyMs: 1501 }));
    flood(3002, 1500);
    const link = (haveLlm: boolean | undefined) => {
      const trips: ToolRoundTrip[] = [];
      const linker = new TraceLinker(haveLlm === undefined ? {} : { haveLlm }, { roundTrip: (t) => trips.push(t) });
      let most = 0;
      for (const r of records) {
        linker.push(r);
        most = Math.max(most, linker.held.mcpCalls);
      }
      linker.end();
      return { trips, most };
    };
    const alone = link(false);
    const held = link(undefined);
    // Held: what is answered since the last look, and the call waiting for its second round.
    expect(alone.most).toBeLessThan(520);
    expect(held.most).toBe(4501);
    expect(alone.trips).toEqual(held.trips);
    expect(alone.trips).toHaveLength(4501);
    const multi = alone.trips.find((t) => t.mcp?.id === 'm1')!;
    expect(multi.mcp!.rounds!.map((r) => r.seq)).toEqual([first, first + 3002]);
  });

  it('lets go of sessions that ended long before, past its bound of sessions, with the same trace', () => {
    // The server lists a tool no request offers the model: each of its sessions has a finding to keep.
    const listed = { ...weather.find((r) => r.kind === 'response' && r.method === 'tools/call')!, seq: 50, method: 'tools/list', raw: '{"result":{"tools":[{"name":"get_weather"},{"name":"unlisted"}]},"jsonrpc":"2.0","id":9}', time: weather[1]!.time + 1 } as LogRecord;
    const server = [...weather, listed].sort((a, b) => a.time - b.time);
    const records = Array.from({ length: 200 }, (_, n) => [...copy(ollama, n, 10_000), ...copy(server, n, 10_000)].sort((a, b) => a.time - b.time)).flat();
    const options = { windowMs: 5000, horizonMs: 5000 };
    const letGo: string[] = [];
    const linker = new TraceLinker({ ...options, maxSessions: 20, haveLlm: true }, { session: (s) => letGo.push(s.session) });
    let most = 0;
    for (const r of records) {
      linker.push(r);
      most = Math.max(most, linker.held.sessions);
    }
    const end = linker.end();
    // Held: the bound, and the sessions that ended within four lags (40 s: four copies of two sessions).
    expect(most).toBeLessThan(40);
    expect(letGo.length + end.sessions.length).toBe(400);
    const bounded = linkTrace(records, { ...options, maxSessions: 20 });
    const whole = linkTrace(records, options);
    expect(JSON.stringify(bounded.roundTrips)).toBe(JSON.stringify(whole.roundTrips));
    expect(JSON.stringify(bounded.turns)).toBe(JSON.stringify(whole.turns));
    expect(bounded.diagnostics.filter((d) => d.code === 'tool-not-offered-to-model')).toHaveLength(200);
    expect(JSON.stringify(bounded.diagnostics)).toBe(JSON.stringify(whole.diagnostics));
    // Every session's line, with its totals; those let go first, in the order they were let go.
    const bySession = (a: { session: string }, b: { session: string }): number => a.session.localeCompare(b.session);
    expect(JSON.stringify([...bounded.sessions].sort(bySession))).toBe(JSON.stringify([...whole.sessions].sort(bySession)));
    expect(bounded.sessions.find((s) => s.role === 'mcp')!.toolCalls).toBe(1);
  });

  it('writes the json view of such a log with every session line, those let go first', async () => {
    const records = Array.from({ length: 200 }, (_, n) => [...copy(ollama, n, 10_000), ...copy(weather, n, 10_000)].sort((a, b) => a.time - b.time)).flat();
    const view = async (maxSessions?: number): Promise<string[]> => {
      const lines: string[] = [];
      await writeJsonView(
        (async function* () {
          yield* records;
        })(),
        { line: async (t) => void lines.push(t) },
        { link: { windowMs: 5000, horizonMs: 5000, ...(maxSessions !== undefined ? { maxSessions } : {}) } },
      );
      return lines;
    };
    const [bounded, whole] = [await view(20), await view()];
    const sessions = (lines: string[]): string[] => lines.filter((l) => l.startsWith('{"type":"session"'));
    expect(sessions(bounded)).toHaveLength(400);
    expect(sessions(bounded)).not.toEqual(sessions(whole));
    expect([...sessions(bounded)].sort()).toEqual([...sessions(whole)].sort());
    expect(bounded.slice(400)).toEqual(whole.slice(400));
  });

  it('gives the whole-log answer on a log shorter than its window, and the same across many cuts', () => {
    const records = Array.from({ length: 40 }, (_, n) => [...copy(ollama, n, 3000), ...copy(weather, n, 3000)].sort((a, b) => a.time - b.time)).flat();
    // Cut every few seconds (a 3 s window and horizon), or once at the end (the default's 10 minutes).
    expect(JSON.stringify(linkTrace(records, { windowMs: 3000, horizonMs: 3000 }))).toBe(JSON.stringify(linkTrace(records, { windowMs: 3000 })));
  });

  it('says so when a result is fed back, or a tool answers, later than the horizon after the call', () => {
    const records = [...copy(ollama, 0, 0), ...copy(weather, 0, 0)];
    const second = records.filter((r) => (r as { exchange?: string }).exchange?.startsWith('x2'));
    expect(second.length).toBeGreaterThan(3);
    // The feed-back (the second chat call) 40 s later, past a 10 s horizon.
    for (const r of second) r.time += 40_000;
    const answer = records.find((r) => r.kind === 'response' && r.method === 'tools/call')!;
    const notes: string[] = [];
    const trace = linkTrace([...records].sort((a, b) => a.time - b.time), { windowMs: 5000, horizonMs: 10_000, onNote: (n) => notes.push(n) });
    expect(trace.roundTrips[0]!.fedBack).toBe(false);
    expect(trace.roundTrips[0]!.diagnostics).toEqual(['result-not-fed-back']);
    expect(notes).toEqual(["1 tool result was fed back to the model more than 10 s after the call, beyond the linker's window: its round trip says not fed back."]);
    // And a tool's answer 50 s late (after the call was linked, at the feed-back's records): the call is
    // linked, without its result.
    answer.time += 50_000;
    const late: string[] = [];
    const again = linkTrace([...records].sort((a, b) => a.time - b.time), { windowMs: 5000, horizonMs: 10_000, onNote: (n) => late.push(n) });
    expect(again.roundTrips[0]!.mcp).not.toBeNull();
    expect(again.roundTrips[0]!.result).toBeNull();
    expect(late).toContain("1 tools/call answer came more than 10 s after the model's tool call, beyond the linker's window: its round trip shows no result.");
  });
});
