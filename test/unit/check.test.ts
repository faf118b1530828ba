import { describe, expect, test } from 'vitest';
import { checkRecords, formatCheckSummary, formatJunit, MAX_KEPT_FINDINGS, parseSignals } from '../../src/check/check.js';
import type { LogRecord } from '../../src/log/schema.js';

let seq = 0;
const base = (kind: string, extra: Record<string, unknown>): LogRecord =>
  ({ v: 1, time: 1000 + seq, seq: seq++, session: 'weather-1', channel: 'stdio', label: 'weather', kind, msg: `${kind} #${seq - 1}`, ...extra }) as LogRecord;
const request = (id: number, method: string, extra: Record<string, unknown> = {}): LogRecord =>
  base('request', { dir: 'c2s', id, method, raw: JSON.stringify({ jsonrpc: '2.0', id, method }), bytes: 10, ...extra });
const response = (id: number, requestSeq: number, extra: Record<string, unknown> = {}): LogRecord =>
  base('response', { dir: 's2c', id, requestSeq, raw: JSON.stringify({ jsonrpc: '2.0', id, result: {} }), bytes: 10, ...extra });

function clean(): LogRecord[] {
  seq = 0;
  return [request(0, 'initialize'), response(0, 0), request(1, 'tools/list'), response(1, 2)];
}

describe('checkRecords', () => {
  test('a clean capture passes, with nothing found', () => {
    const report = checkRecords(clean());
    expect(report.failed).toBe(false);
    expect(report.findings).toEqual([]);
    expect(report.sessions).toEqual([
      { session: 'weather-1', label: 'weather', channel: 'stdio', records: 4, requests: 2, llmCalls: 0, dropped: 0, uninspectedBytes: 0, unknown: 0, counts: { start: 0, errors: 0, invalid: 0, unanswered: 0, broken: 0, 'tool-errors': 0 } },
    ]);
  });

  test('stdout pollution fails as invalid', () => {
    const records = clean();
    records.push(base('invalid', { dir: 's2c', reason: 'plain text, not JSON', raw: 'Server starting', bytes: 15, msg: 'The server wrote a line that is not JSON-RPC.' }));
    const report = checkRecords(records);
    expect(report.failed).toBe(true);
    expect(report.findings).toEqual([{ signal: 'invalid', session: 'weather-1', label: 'weather', seq: 4, time: 1004, message: 'The server wrote a line that is not JSON-RPC.' }]);
  });

  test('a request with no response fails as unanswered, whether or not a pending record says so', () => {
    const cut = clean();
    cut.push(request(2, 'tools/call', { tool: 'get_forecast' }));
    const report = checkRecords(cut);
    expect(report.findings.map((f) => [f.signal, f.seq])).toEqual([['unanswered', 4]]);
    expect(report.findings[0]!.message).toBe("The client's request tools/call get_forecast #2 has no response in the log (the log ends before it was answered).");

    const pending = clean();
    pending.push(request(2, 'tools/call'), base('pending', { dir: 'c2s', id: 2, method: 'tools/call', requestSeq: 4, ageMs: 5, msg: 'never answered' }));
    expect(checkRecords(pending).findings.map((f) => [f.signal, f.message])).toEqual([['unanswered', 'never answered']]);
  });

  test('a cancelled request is not unanswered, nor is its pending record at the end', () => {
    const records = clean();
    records.push(request(2, 'tools/call'), base('notification', { dir: 'c2s', method: 'notifications/cancelled', requestSeq: 4, raw: '{}', bytes: 2 }));
    expect(checkRecords(records).failed).toBe(false);
    records.push(base('pending', { dir: 'c2s', id: 2, method: 'tools/call', requestSeq: 4, ageMs: 5, level: 30, cancelled: true, msg: 'cancelled, no answer owed' }));
    expect(checkRecords(records).findings).toEqual([]);
  });

  test("an evicted request's pending record is a finding only if no answer comes later in the log", () => {
    const evicted = (id: number, requestSeq: number): LogRecord => base('pending', { dir: 'c2s', id, method: 'tools/call', requestSeq, ageMs: 1, level: 40, evicted: true, msg: `#${id} evicted` });
    const records = clean();
    records.push(request(2, 'tools/call'), request(3, 'tools/call'), evicted(2, 4), evicted(3, 5), response(2, 4, { afterPending: true }));
    const report = checkRecords(records);
    expect(report.findings.map((f) => [f.signal, f.message])).toEqual([['unanswered', '#3 evicted']]);
    expect(report.sessions[0]!.counts.unanswered).toBe(1);
  });

  test('an evicted record (v6) settles each of its requests as a pending record of it would', () => {
    const records = clean();
    records.push(request(2, 'tools/call', { tool: 'slow' }), request(3, 'ping'), request(4, 'ping'));
    records.push(base('evicted', { level: 40, requests: [
      { dir: 'c2s', id: 2, method: 'tools/call', tool: 'slow', requestSeq: 4, ageMs: 7 },
      { dir: 'c2s', id: 3, method: 'ping', requestSeq: 5, ageMs: 6, cancelled: true },
      { dir: 'c2s', id: 4, method: 'ping', requestSeq: 6, ageMs: 5 },
    ], msg: 'mcptap stops tracking 3 requests' }));
    // #4 is answered late; the cancelled #3 is owed nothing; #2 never is.
    records.push(response(4, 6, { afterPending: true }));
    const report = checkRecords(records);
    expect(report.findings.map((f) => [f.signal, f.seq, f.message])).toEqual([
      ['unanswered', 7, "The client's request tools/call slow #2 has waited 7 ms without an answer; mcptap stops tracking it to bound memory."],
    ]);
    expect(report.sessions[0]!.requests).toBe(5);
  });

  test("a late answer to an evicted request check did not wait for (a cancelled one) settles no other", () => {
    const records = clean();
    records.push(request(2, 'tools/call'), request(3, 'tools/call'));
    records.push(base('pending', { dir: 'c2s', id: 2, method: 'tools/call', requestSeq: 4, ageMs: 1, level: 30, evicted: true, cancelled: true, msg: '#2 cancelled' }));
    records.push(base('pending', { dir: 'c2s', id: 3, method: 'tools/call', requestSeq: 5, ageMs: 1, level: 40, evicted: true, msg: '#3 evicted' }));
    // The cancelled call is answered all the same; #3 never is.
    records.push(response(2, 4, { afterPending: true }));
    const report = checkRecords(records);
    expect(report.findings.map((f) => [f.signal, f.message])).toEqual([['unanswered', '#3 evicted']]);
    expect(report.failed).toBe(true);
  });

  const gap = (stream: string | undefined, bytes = 65536): LogRecord =>
    base('lifecycle', { event: 'warning', level: 40, uninspectedBytes: bytes, ...(stream ? { stream } : {}), msg: `mcptap fell behind and did not inspect ${bytes} bytes` });
  const endPending = (id: number, requestSeq: number, extra: Record<string, unknown> = {}): LogRecord =>
    base('pending', { dir: 'c2s', id, method: 'tools/call', requestSeq, ageMs: 9, level: 40, msg: `#${id} never answered`, ...extra });

  test('a request with no answer is unknown where bytes mcptap did not inspect after it could hold the answer', () => {
    const records = clean();
    records.push(request(2, 'tools/call'), gap('stdout'), endPending(2, 4));
    const report = checkRecords(records);
    expect(report.failed).toBe(false);
    expect(report.sessions[0]).toMatchObject({ uninspectedBytes: 65536, unknown: 1, counts: { unanswered: 0 } });
    expect(formatCheckSummary(report)).toContain('? weather (stdio, weather-1): 3 requests, 1 unknown (65536 bytes not inspected)');
    expect(formatCheckSummary(report)).toContain('1 request is unknown: an answer may be in traffic the log lost after the request');
  });

  test('a gap before the request, on the other way, or on stderr cannot hold its answer: it is unanswered', () => {
    const records = clean();
    // #2's answer would come on the server's stdout: a skip of the client's input or of stderr cannot hold it.
    records.push(gap('stdout'), request(2, 'tools/call'), gap('stdin'), gap('stderr'), endPending(2, 5));
    const report = checkRecords(records);
    expect(report.failed).toBe(true);
    expect(report.sessions[0]).toMatchObject({ uninspectedBytes: 3 * 65536, unknown: 0, counts: { unanswered: 1 } });
    expect(report.findings.map((f) => f.message)).toEqual(['#2 never answered']);
  });

  test('a request the log ends without a pending record for: unknown only with a loss after it', () => {
    const records = clean();
    // #3 open at the end with a gap of no named stream after it (an older log): either way, so unknown; #4 came after.
    records.push(request(3, 'tools/call'), gap(undefined), request(4, 'tools/call'));
    const report = checkRecords(records);
    expect(report.sessions[0]).toMatchObject({ unknown: 1, counts: { unanswered: 1 } });
    expect(report.findings.map((f) => f.message)).toEqual(['The client\'s request tools/call #4 has no response in the log (the log ends before it was answered).']);
  });

  test('reads the stream from the sentence of logs written before the field', () => {
    const records = clean();
    const old = (stream: string) => base('lifecycle', { event: 'warning', level: 40, uninspectedBytes: 10, msg: `mcptap fell behind and did not inspect 10 bytes of ${stream}, up to the end of a line; they were relayed in full, and logging resumes with the next line.` });
    records.push(request(2, 'tools/call'), old('the client\u2019s input'), old('the server\u2019s stderr'), endPending(2, 4));
    records.push(request(3, 'tools/call'), old('the server\u2019s stdout'), endPending(3, 8));
    const report = checkRecords(records);
    expect(report.sessions[0]).toMatchObject({ unknown: 1, counts: { unanswered: 1 } });
    expect(report.findings.map((f) => f.message)).toEqual(['#2 never answered']);
  });

  test('an evicted request is unknown when a loss after it may hold its late answer, unanswered when none can', () => {
    const records = clean();
    const evicted = (id: number, requestSeq: number) => endPending(id, requestSeq, { evicted: true, ageMs: 1, msg: `#${id} evicted` });
    // #2 evicted before a skip of the server's stdout; #3 sent after it, evicted, then records dropped; #4 after all.
    records.push(request(2, 'tools/call'), evicted(2, 4), gap('stdout'));
    records.push(request(3, 'tools/call'), evicted(3, 7), base('lifecycle', { event: 'warning', level: 40, dropped: 5, msg: '5 records were dropped before this point' }));
    records.push(request(4, 'tools/call'), evicted(4, 10));
    const report = checkRecords(records);
    expect(report.sessions[0]).toMatchObject({ unknown: 2, counts: { unanswered: 1 } });
    expect(report.findings.map((f) => f.message)).toEqual(['#4 evicted']);
  });

  test('records dropped after a request do not make its pending record unknown: the tap itself saw no answer', () => {
    const records = clean();
    records.push(request(2, 'tools/call'), base('lifecycle', { event: 'warning', level: 40, dropped: 5, msg: '5 records were dropped before this point' }), endPending(2, 4));
    expect(checkRecords(records).sessions[0]).toMatchObject({ unknown: 0, counts: { unanswered: 1 } });
  });

  test('evicted requests past the findings kept are counted, and fail all the same', () => {
    const records = clean();
    const n = MAX_KEPT_FINDINGS + 5;
    for (let i = 0; i < n; i++) records.push(request(10 + i, 'ping'));
    for (let i = 0; i < n; i++) records.push(base('pending', { dir: 'c2s', id: 10 + i, method: 'ping', requestSeq: 4 + i, ageMs: 1, level: 40, evicted: true, msg: 'evicted' }));
    // The first ones (kept for their sentences) are answered late; the last five, never.
    for (let i = 0; i < MAX_KEPT_FINDINGS; i++) records.push(response(10 + i, 4 + i, { afterPending: true }));
    const report = checkRecords(records);
    expect(report.findings).toEqual([]);
    expect(report.sessions[0]!.counts.unanswered).toBe(5);
    expect(report.more).toEqual({ unanswered: 5 });
    expect(report.failed).toBe(true);
  });

  test('an evicted request is unknown, not unanswered, where the session has answers the tap could not pair', () => {
    const records = clean();
    records.push(request(2, 'tools/call'), base('pending', { dir: 'c2s', id: 2, method: 'tools/call', requestSeq: 4, ageMs: 1, level: 40, evicted: true, msg: 'evicted' }));
    records.push(base('response', { dir: 's2c', id: 2, raw: '{}', bytes: 2, msg: 'Response to a request mcptap did not see.' }));
    const report = checkRecords(records);
    expect(report.failed).toBe(false);
    expect(report.sessions[0]).toMatchObject({ unknown: 1, counts: { unanswered: 0 } });
    expect(formatCheckSummary(report)).toContain('1 unknown (too many requests were waiting for mcptap to pair every answer)');
  });

  test('error responses, LLM errors and HTTP 5xx fail as errors; isError only when asked', () => {
    const records = clean();
    records.push(request(2, 'tools/call'), response(2, 4, { error: { code: -32602, message: 'bad' }, msg: 'error' }));
    records.push(request(3, 'tools/call'), response(3, 6, { isError: true, msg: 'tool failed' }));
    records.push(base('llm-error', { dir: 's2c', exchange: 'x1', endpoint: '/api/chat', status: 500, phase: 'before-stream', error: 'boom', msg: 'llm failed' }));
    records.push(base('http-response', { dir: 's2c', exchange: 'x2', status: 503, headers: {}, ttfbMs: 1, msg: '503' }));
    const report = checkRecords(records);
    expect(report.findings.map((f) => f.signal)).toEqual(['errors', 'tool-errors', 'errors', 'errors']);
    expect(report.failed).toBe(true);
    expect(checkRecords(records, { failOn: ['invalid'] }).failed).toBe(false);
    expect(checkRecords(records, { failOn: ['tool-errors'] }).failed).toBe(true);
  });
});

describe('checkRecords: a server that never started', () => {
  const start = (extra: Record<string, unknown>) => base('lifecycle', { event: 'start', command: 'python', args: ['server.py'], ...extra });
  const exit = (extra: Record<string, unknown>) => base('lifecycle', { event: 'exit', signal: null, durationMs: 5, ...extra });

  test('a spawn error fails by default, with mcptap\u2019s sentence', () => {
    seq = 0;
    const records = [start({}), base('lifecycle', { event: 'warning', msg: 'mcptap could not start python: ENOENT.' }), exit({ code: null, msg: 'The server could not be started; mcptap exits with 127.' })];
    const report = checkRecords(records);
    expect(report.failed).toBe(true);
    expect(report.findings.map((f) => [f.signal, f.message])).toEqual([['start', 'The server weather never started: mcptap could not start python: ENOENT.']]);
    expect(formatCheckSummary(report)).toContain('0 requests, 1 failed start');
  });

  test('exit 126 or 127 fails; so does an error exit before the server said anything', () => {
    seq = 0;
    expect(checkRecords([start({ childPid: 7 }), exit({ code: 127, msg: 'exit' })]).findings.map((f) => f.message)).toEqual(['The server weather exited with 127 (command not found): it never ran.']);
    seq = 0;
    expect(checkRecords([start({ childPid: 7 }), exit({ code: 1, msg: 'exit' })]).findings.map((f) => f.signal)).toEqual(['start']);
  });

  test('a server that answered and then exited, or was stopped, started', () => {
    seq = 0;
    const records = [start({ childPid: 7 }), request(0, 'initialize'), response(0, 1), exit({ code: 1, msg: 'exit' })];
    expect(checkRecords(records).failed).toBe(false);
    seq = 0;
    expect(checkRecords([start({ childPid: 7 }), exit({ code: null, signal: 'SIGTERM', msg: 'stopped' })]).failed).toBe(false);
    seq = 0;
    expect(checkRecords([start({ childPid: 7 }), exit({ code: 0, msg: 'exit' })]).failed).toBe(false);
  });
});

describe('checkRecords: counts that add up', () => {
  test('a log that dropped records: answers it lost are unknown, and no count exceeds the requests', () => {
    seq = 0;
    const records = [
      request(0, 'initialize'),
      response(0, 0),
      request(1, 'tools/call'), // its response was dropped
      base('pending', { dir: 'c2s', id: 9, method: 'tools/call', requestSeq: 77, ageMs: 5, msg: 'never answered' }), // its request was dropped
      base('lifecycle', { event: 'warning', dropped: 120, msg: '120 records were dropped before this point: …' }),
    ];
    const report = checkRecords(records);
    const s = report.sessions[0]!;
    expect([s.requests, s.counts.unanswered, s.unknown, s.dropped]).toEqual([3, 1, 1, 120]);
    expect(s.counts.unanswered + s.unknown).toBeLessThanOrEqual(s.requests);
    expect(formatCheckSummary(report)).toContain('3 requests, 1 unanswered, 1 unknown (120 records dropped from the log)');
  });

  test('reads the dropped count from the sentence of logs written before the field', () => {
    seq = 0;
    const records = [request(1, 'tools/call'), base('lifecycle', { event: 'warning', msg: '84 records were dropped before this point: the log fell behind the traffic (the traffic itself was not affected).' })];
    expect(checkRecords(records).sessions[0]!).toMatchObject({ dropped: 84, unknown: 1, counts: { unanswered: 0 } });
  });

  test('an LLM proxy counts its calls', () => {
    seq = 0;
    const llm = (i: number) => ({ ...base('llm-request', { dir: 'c2s', exchange: `x${i}`, endpoint: '/v1/chat/completions', stream: true, messageCount: 1, tools: [], toolResults: [] }), session: 'llm-1', label: 'llm', channel: 'openai' }) as LogRecord;
    const report = checkRecords([llm(1), llm(2), llm(3)]);
    expect(report.sessions[0]!.llmCalls).toBe(3);
    expect(formatCheckSummary(report)).toContain('✓ llm (openai, llm-1): 3 LLM calls, nothing found');
  });
});

describe('checkRecords: a log of thousands of sessions', () => {
  /** Session `n` of a wrapped server, 10 s after the one before: it starts, answers initialize, exits. */
  function session(n: number, extra: { exitCode?: number; error?: boolean } = {}): LogRecord[] {
    seq = 0;
    const at = (r: LogRecord): LogRecord => ({ ...r, session: `weather-${n}`, time: 10_000 * n + r.seq });
    const start = base('lifecycle', { event: 'start', command: 'node', args: ['server.js'], childPid: 7 });
    const asked = request(0, 'initialize');
    const answer = extra.error ? response(0, 1, { error: { code: -32603, message: 'boom' }, msg: 'error' }) : response(0, 1);
    const exit = base('lifecycle', { event: 'exit', code: extra.exitCode ?? 0, signal: null, durationMs: 5, msg: 'exit' });
    return [start, asked, answer, exit].map(at);
  }

  test('folds the clean sessions that ended long before into one count per server, with the same summary', () => {
    const records = Array.from({ length: 1500 }, (_, n) => session(n, n === 700 ? { error: true } : {})).flat();
    const bounded = checkRecords(records, { maxSessions: 50 });
    const whole = checkRecords(records, { maxSessions: Infinity });
    expect(whole.folded).toBeUndefined();
    expect(bounded.sessions.length).toBeLessThan(500);
    // The session with an error is kept, as every session not yet past the linker's window (20 minutes).
    expect(bounded.sessions.map((s) => s.session)).toContain('weather-700');
    expect(bounded.folded).toEqual([{ label: 'weather', channel: 'stdio', sessions: 1500 - bounded.sessions.length, records: 4 * (1500 - bounded.sessions.length), requests: 1500 - bounded.sessions.length, llmCalls: 0 }]);
    expect(bounded.findings).toEqual(whole.findings);
    expect(formatCheckSummary(bounded)).toBe(formatCheckSummary(whole));
    expect(formatCheckSummary(bounded)).toContain('— 1500 sessions,');
    const junit = formatJunit(bounded);
    expect(junit).toContain(`<testsuite name="weather (stdio): ${bounded.folded![0]!.sessions} more sessions, each passed" tests="6" failures="0" errors="0" skipped="1">`);
    expect(junit).toContain(`<testsuites name="mcptap check" tests="${6 * (bounded.sessions.length + 1)}" failures="1">`);
  });

  test('keeps a session whose server never started', () => {
    const records = Array.from({ length: 1500 }, (_, n) => (n === 300 ? session(n, { exitCode: 127 }) : session(n))).flat();
    const bounded = checkRecords(records, { maxSessions: 50 });
    expect(bounded.folded).toBeDefined();
    expect(bounded.sessions.map((s) => s.session)).toContain('weather-300');
    expect(formatCheckSummary(bounded)).toBe(formatCheckSummary(checkRecords(records, { maxSessions: Infinity })));
  });
});

describe('parseSignals', () => {
  test('commas, repeats and all', () => {
    expect(parseSignals(['errors,invalid', 'errors'])).toEqual(['errors', 'invalid']);
    expect(parseSignals(['all'])).toEqual(['start', 'errors', 'invalid', 'unanswered', 'broken', 'tool-errors']);
    expect(() => parseSignals(['oops'])).toThrow('--fail-on takes start, errors, invalid, unanswered, broken, tool-errors or all, not "oops".');
  });
});

describe('reports', () => {
  test('the summary says PASS or FAIL first and lists failing findings', () => {
    const records = clean();
    records.push(base('invalid', { dir: 's2c', reason: 'x', raw: 'hello', bytes: 5, msg: 'Not JSON-RPC on stdout.' }));
    const text = formatCheckSummary(checkRecords(records));
    expect(text.split('\n')[0]).toBe('mcptap check: FAIL — 1 session, failing on start, errors, invalid, unanswered, broken');
    expect(text).toContain('  ✗ weather (stdio, weather-1): 2 requests, 1 invalid');
    expect(text).toContain('  invalid    weather #4: Not JSON-RPC on stdout.');
    expect(formatCheckSummary(checkRecords(clean())).split('\n')[0]).toMatch(/^mcptap check: PASS/);
  });

  test('with many sessions the summary lists only the failing ones', () => {
    seq = 0;
    const records: LogRecord[] = [];
    for (let i = 0; i < 12; i++) records.push({ ...request(0, 'ping'), session: `s${i}`, label: `server${i}` } as LogRecord, { ...response(0, seq - 1), session: `s${i}`, label: `server${i}` } as LogRecord);
    records.push({ ...base('invalid', { dir: 's2c', reason: 'x', raw: 'hi', bytes: 2, msg: 'bad line' }), session: 's3', label: 'server3' } as LogRecord);
    const lines = formatCheckSummary(checkRecords(records)).split('\n');
    expect(lines[0]).toBe('mcptap check: FAIL — 12 sessions, failing on start, errors, invalid, unanswered, broken');
    expect(lines[1]).toBe('  ✗ server3 (stdio, s3): 1 requests, 1 invalid');
    expect(lines[2]).toBe('  … 11 more sessions passed.');
  });

  test('JUnit: one testcase per signal, failures escaped, unchosen signals skipped', () => {
    const records = clean();
    records.push(base('invalid', { dir: 's2c', reason: 'x', raw: '<b>', bytes: 3, msg: 'Line "<b>" & more' }));
    const xml = formatJunit(checkRecords(records, { failOn: ['invalid', 'errors'] }));
    expect(xml).toContain('<testsuites name="mcptap check" tests="6" failures="1">');
    expect(xml).toContain('<failure type="invalid" message="1 found">#4 Line &quot;&lt;b&gt;&quot; &amp; more</failure>');
    expect(xml).toContain('<testcase classname="mcptap.check.weather" name="every request answered"><skipped message="not in --fail-on"/></testcase>');
    expect(xml).toContain('<testcase classname="mcptap.check.weather" name="no error responses"/>');
  });

  test('a flood of findings keeps the first of each signal and counts the rest, in the summary and in JUnit', () => {
    seq = 0;
    const records: LogRecord[] = [];
    const n = MAX_KEPT_FINDINGS + 250;
    for (let i = 0; i < n; i++) {
      records.push(request(i, 'tools/call', { tool: 'get_weather' }));
      records.push(base('pending', { dir: 'c2s', id: i, method: 'tools/call', requestSeq: seq - 1, ageMs: 5, msg: `#${i} was never answered.` }));
    }
    records.push(base('invalid', { dir: 's2c', reason: 'x', raw: 'hi', bytes: 2, msg: 'bad line' }));
    const report = checkRecords(records);
    expect(report.findings.filter((f) => f.signal === 'unanswered')).toHaveLength(MAX_KEPT_FINDINGS);
    expect(report.findings.filter((f) => f.signal === 'invalid')).toHaveLength(1);
    expect(report.more).toEqual({ unanswered: 250 });
    expect(report.sessions[0]!.counts.unanswered).toBe(n);
    const text = formatCheckSummary(report);
    expect(text).toContain(`  ✗ weather (stdio, weather-1): ${n} requests, 1 invalid, ${n} unanswered`);
    expect(text).toContain(`  … and ${n + 1 - 12} more (mcptap view shows every record).`);
    const xml = formatJunit(report);
    expect(xml).toContain(`<failure type="unanswered" message="${n} found">#1 #0 was never answered.`);
    expect(xml).toContain(`#${2 * MAX_KEPT_FINDINGS - 1} #${MAX_KEPT_FINDINGS - 1} was never answered.\n… and 250 more (mcptap view shows every record).</failure>`);
  });
});
