/**
 * MCP 2026-07-28 read from literal frames (copied from runs of the official SDK v2 client and server,
 * fixtures/v2/trip-server.mjs): stateless HTTP paired by exchange, the `_meta` envelope, server/discover,
 * multi-round-trip calls, subscriptions, tasks, the new error codes and the mirrored headers.
 */
import { describe, expect, it } from 'vitest';
import { HttpObserver, statelessKey } from '../../src/session/http-exchange.js';
import { McpSession } from '../../src/session/mcp-session.js';
import type { RecordDraft } from '../../src/log/schema.js';
import type { Direction, Frame } from '../../src/types.js';
import { checkRecords } from '../../src/check/check.js';
import type { LogRecord } from '../../src/log/schema.js';
import { linkTrace } from '../../src/trace/link.js';
import { buildTimeline, formatTimeline } from '../../src/trace/timeline.js';
import { formatMermaid } from '../../src/trace/mermaid.js';
import { formatHtml } from '../../src/trace/html.js';
import { formatPretty } from '../../src/trace/pretty.js';
import { formatTraceJson } from '../../src/trace/json.js';
import { buildHar } from '../../src/export/har.js';
import { buildSpans } from '../../src/export/otlp-spans.js';

type Draft = RecordDraft & Record<string, unknown>;

const META = (name = 'trip-client') =>
  `"_meta":{"io.modelcontextprotocol/protocolVersion":"2026-07-28","io.modelcontextprotocol/clientInfo":{"name":"${name}","version":"2.4.0"},"io.modelcontextprotocol/clientCapabilities":{"elicitation":{}}}`;
const SERVER_META = '"_meta":{"io.modelcontextprotocol/serverInfo":{"name":"trip-server","version":"2.0.0"}}';
const call = (id: number, city: string, client?: string) =>
  `{"method":"tools/call","params":{"name":"get_weather","arguments":{"city":"${city}"},${META(client)}},"jsonrpc":"2.0","id":${id}}`;
const answer = (id: number, text: string) => `{"result":{"content":[{"type":"text","text":"${text}"}],"resultType":"complete",${SERVER_META}},"jsonrpc":"2.0","id":${id}}`;
const BOOK = `{"method":"tools/call","params":{"name":"book_trip","arguments":{"city":"Bergen"},${META()}},"jsonrpc":"2.0","id":2}`;
const ASKS = `{"result":{"resultType":"input_required","inputRequests":{"confirm":{"method":"elicitation/create","params":{"message":"Really book Bergen?","requestedSchema":{"type":"object","properties":{"confirm":{"type":"boolean"}},"required":["confirm"]},"mode":"form"}}},"requestState":"booking:Bergen",${SERVER_META}},"jsonrpc":"2.0","id":2}`;
const RETRY = `{"method":"tools/call","params":{"name":"book_trip","arguments":{"city":"Bergen"},"inputResponses":{"confirm":{"action":"accept","content":{"confirm":true}}},"requestState":"booking:Bergen",${META()}},"jsonrpc":"2.0","id":3}`;
const BOOKED = answer(3, 'Booked Bergen.');
const DISCOVER = `{"jsonrpc":"2.0","id":"server-discover-probe-1","method":"server/discover","params":{${META()}}}`;
const DISCOVERED = `{"result":{"supportedVersions":["2026-07-28"],"capabilities":{"tools":{"listChanged":true},"resources":{"listChanged":true}},"resultType":"complete","ttlMs":0,"cacheScope":"private",${SERVER_META}},"jsonrpc":"2.0","id":"server-discover-probe-1"}`;

function httpSetup() {
  const records: Draft[] = [];
  let seq = 0;
  const observer = new HttpObserver({ sink: { write: (d) => (records.push({ ...d, seq } as Draft), seq++) }, session: 'proxy', maxBody: 1 << 20, chunks: true });
  let clock = 1000;
  const t = (ms = 1): [number, number] => [1_800_000_000_000 + (clock += ms), clock];
  const post = (body: string, headers: Record<string, string> = {}) => {
    const x = observer.begin({ method: 'POST', path: '/mcp', headers: { 'content-type': 'application/json', ...headers } }, ...t());
    x.requestData(Buffer.from(body));
    x.requestEnd(...t());
    return {
      answer: (status: number, text: string, ms = 1) => {
        x.responseHead(status, { 'content-type': 'application/json' }, ...t(ms));
        x.responseData(Buffer.from(text), ...t());
        x.responseEnd(...t());
      },
      stream: (events: string[], ms = 1) => {
        x.responseHead(200, { 'content-type': 'text/event-stream' }, ...t(ms));
        for (const e of events) x.responseData(Buffer.from(`event: message\ndata: ${e}\n\n`), ...t());
      },
      close: () => x.fail('client-aborted', undefined, ...t()),
    };
  };
  return { records, post, observer };
}

const mcp = (records: Draft[]) => records.filter((r) => ['request', 'response', 'notification', 'pending'].includes(r.kind as string));

describe('stateless Streamable HTTP: a request is paired with the answer of its own exchange', () => {
  it('concurrent clients reusing id 1 get their own answers and latencies, and check passes', () => {
    const { records, post } = httpSetup();
    const a = post(call(1, 'Bergen', 'client-a'));
    const b = post(call(1, 'Oslo', 'client-b'));
    const c = post(call(1, 'Paris', 'client-a'));
    c.answer(200, answer(1, 'Paris: Cloudy'), 50);
    a.answer(200, answer(1, 'Bergen: Rain'), 250);
    b.answer(200, answer(1, 'Oslo: Clear'), 600);
    const responses = records.filter((r) => r.kind === 'response');
    const requestOf = (r: Draft) => records.find((q) => q.seq === r.requestSeq)!;
    expect(responses.map((r) => [String(requestOf(r).raw).match(/"city":"(\w+)"/)![1], String(r.raw).match(/"text":"(\w+)/)![1]])).toEqual([
      ['Paris', 'Paris'],
      ['Bergen', 'Bergen'],
      ['Oslo', 'Oslo'],
    ]);
    // Each latency is its own exchange's: Oslo waited longest.
    const latency = Object.fromEntries(responses.map((r) => [String(r.raw).match(/"text":"(\w+)/)![1], r.latencyMs as number]));
    expect(latency.Oslo).toBeGreaterThan(latency.Bergen!);
    expect(latency.Bergen).toBeGreaterThan(latency.Paris!);
    expect(records.filter((r) => r.kind === 'pending')).toEqual([]);
    // The session is the client's identity: client-a's two calls in one, client-b's in another.
    expect(new Set(responses.map((r) => r.session)).size).toBe(2);
    expect(requestOf(responses[0]!).session).toBe(requestOf(responses[1]!).session);
    const report = checkRecords(records.map((r) => ({ ...r, v: 1, label: 'trip', channel: r.channel ?? 'mcp-http' })) as unknown as LogRecord[]);
    expect(report.findings).toEqual([]);
  });

  it('a request its exchange never answers is pending when the exchange ends, not at the end of the session', () => {
    const { records, post } = httpSetup();
    const a = post(call(7, 'Bergen'));
    a.answer(200, '');
    const pending = records.filter((r) => r.kind === 'pending');
    expect(pending).toHaveLength(1);
    expect(pending[0]!.msg).toMatch(/never answered in its HTTP exchange/);
  });

  it('an HTTP 400 with "id": null answers the one request of its exchange (a 2025 server refusing the probe)', () => {
    const { records, post } = httpSetup();
    post(DISCOVER).answer(400, '{"jsonrpc":"2.0","error":{"code":-32000,"message":"Bad Request: Server not initialized"},"id":null}');
    const [response] = records.filter((r) => r.kind === 'response');
    expect(response).toMatchObject({ method: 'server/discover', versionFallback: true, level: 30 });
    expect(response!.msg).toMatch(/falls back to initialize/);
    expect(records.filter((r) => r.kind === 'pending')).toEqual([]);
  });

  it('the session key is read from _meta clientInfo without parsing the body, nested objects and all', () => {
    expect(statelessKey(call(1, 'Bergen', 'client-a'))).toBe('client:client-a\u00002.4.0');
    expect(statelessKey('{"params":{"_meta":{"io.modelcontextprotocol/clientInfo":{"name":"x}","icons":[{"src":"a"}],"version":"1"}}}}')).toBe('client:x}\u00001');
    expect(statelessKey('{"jsonrpc":"2.0","id":1,"method":"tools/list"}')).toBe('stateless');
  });

  it('Mcp-Method and Mcp-Name must say what the body says; a mismatch is a finding', () => {
    const { records, post } = httpSetup();
    post(call(1, 'Bergen'), { 'mcp-method': 'tools/call', 'mcp-name': 'get_weather', 'mcp-protocol-version': '2026-07-28' }).answer(200, answer(1, 'ok'));
    post(call(2, 'Oslo'), { 'mcp-method': 'tools/call', 'mcp-name': 'book_trip' }).answer(200, answer(2, 'ok'));
    const [good, bad] = records.filter((r) => r.kind === 'request');
    expect(good!.headerMismatch).toBeUndefined();
    expect(bad).toMatchObject({ level: 40, headerMismatch: [{ header: 'Mcp-Name', value: 'book_trip', body: 'get_weather' }] });
    expect(bad!.msg).toMatch(/the Mcp-Name header says "book_trip" but the body says "get_weather"/);
  });

  it('subscriptions/listen is a subscription: acknowledged, linked, and ended with its stream, never unanswered', () => {
    const { records, post } = httpSetup();
    const listen = post(`{"jsonrpc":"2.0","id":5,"method":"subscriptions/listen","params":{"notifications":{"toolsListChanged":true,"resourceSubscriptions":["trip://policy"]},${META()}}}`);
    listen.stream([
      '{"jsonrpc":"2.0","method":"notifications/subscriptions/acknowledged","params":{"notifications":{"toolsListChanged":true},"_meta":{"io.modelcontextprotocol/subscriptionId":5}}}',
      '{"jsonrpc":"2.0","method":"notifications/tools/list_changed","params":{"_meta":{"io.modelcontextprotocol/subscriptionId":5}}}',
    ]);
    listen.close();
    const [request, ack, changed, end] = mcp(records);
    expect(request!.msg).toMatch(/opens a subscription .* for tool list changes, updates of trip:\/\/policy/);
    expect(ack).toMatchObject({ method: 'notifications/subscriptions/acknowledged', subscriptionId: 5, requestSeq: request!.seq });
    expect(ack!.msg).toMatch(/acknowledges the subscription subscriptions\/listen #5: it will send tool list changes/);
    expect(changed).toMatchObject({ subscriptionId: 5 });
    expect(end).toMatchObject({ kind: 'pending', subscription: true });
    expect(end!.level ?? 30).toBe(30);
    expect(end!.msg).toMatch(/subscription \(subscriptions\/listen #5\) was open for .* and ended when its stream closed/);
    const report = checkRecords(records.map((r) => ({ ...r, v: 1, label: 'trip', channel: 'mcp-http' })) as unknown as LogRecord[]);
    expect(report.findings).toEqual([]);
  });
});

let clock = 0;
function frame(dir: Direction, text: string): Frame {
  const bytes = Buffer.from(text);
  clock += 10;
  return { dir, bytes, size: bytes.length, truncated: false, time: 1_800_000_000_000 + clock, mono: clock };
}
function stdio(lines: [Direction, string][]) {
  const records: Draft[] = [];
  const session = new McpSession({ sink: { write: (d) => (records.push({ ...d, seq: records.length } as Draft), records.length - 1) }, stdio: true });
  for (const [dir, text] of lines) session.observe(frame(dir, text));
  session.end(1_800_000_009_999, clock + 10);
  return records;
}

describe('the 2026-07-28 envelope and server/discover', () => {
  it('reads the revision and the client from _meta, the server from discover, and says what discover found', () => {
    const records = stdio([['c2s', DISCOVER], ['s2c', DISCOVERED], ['c2s', call(1, 'Bergen')], ['s2c', answer(1, 'Bergen: Rain')]]);
    expect(records[0]).toMatchObject({ protocolVersion: '2026-07-28', client: { name: 'trip-client', version: '2.4.0' } });
    expect(records[1]).toMatchObject({ supportedVersions: ['2026-07-28'], server: { name: 'trip-server', version: '2.0.0' }, resultType: 'complete' });
    expect(records[1]!.msg).toMatch(/^Server trip-server 2\.0\.0 speaks protocol 2026-07-28; capabilities tools\(listChanged\), resources\(listChanged\)/);
    // Each identity is said once per session.
    expect(records[2]!.client).toBeUndefined();
    expect(records[2]!.protocolVersion).toBe('2026-07-28');
    expect(records[3]!.server).toBeUndefined();
  });

  it('an initialize carrying only the new _meta still names the client and its version', () => {
    const [init] = stdio([['c2s', `{"jsonrpc":"2.0","id":0,"method":"initialize","params":{${META()}}}`]]);
    expect(init!.msg).toBe('Handshake: client trip-client 2.4.0 offers protocol 2026-07-28 with capabilities elicitation.');
  });

  it('a revision or a result type mcptap does not know is named as unknown, never rejected', () => {
    const [request, response] = stdio([
      ['c2s', call(1, 'Bergen').replace('2026-07-28', '2099-01-01')],
      ['s2c', answer(1, 'Bergen: Rain').replace('"resultType":"complete"', '"resultType":"deferred"')],
    ]);
    expect(request).toMatchObject({ protocolVersion: '2099-01-01' });
    expect(request!.msg).toMatch(/It names protocol 2099-01-01, a revision this version of mcptap does not know; relayed as is\.$/);
    expect(response).toMatchObject({ resultType: 'deferred', requestSeq: 0 });
    expect(response!.msg).toMatch(/Its resultType is "deferred", one this version of mcptap does not know/);
  });

  it('a server that does not know server/discover (-32601 over stdio) is version negotiation, not a failure', () => {
    const records = stdio([['c2s', DISCOVER], ['s2c', '{"jsonrpc":"2.0","id":"server-discover-probe-1","error":{"code":-32601,"message":"Method not found"}}']]);
    expect(records[1]).toMatchObject({ versionFallback: true, level: 30 });
  });

  it('names every error code of the revision, and says what a version negotiation failure offered', () => {
    const records = stdio([
      ['c2s', call(1, 'Bergen')],
      ['s2c', '{"jsonrpc":"2.0","id":1,"error":{"code":-32022,"message":"Unsupported protocol version: 2099-01-01","data":{"supported":["2026-07-28","2025-11-25"],"requested":"2099-01-01"}}}'],
      ['c2s', call(2, 'Bergen')],
      ['s2c', '{"jsonrpc":"2.0","id":2,"error":{"code":-32020,"message":"Header mismatch"}}'],
      ['c2s', call(3, 'Bergen')],
      ['s2c', '{"jsonrpc":"2.0","id":3,"error":{"code":-32021,"message":"Missing capability","data":{"requiredCapabilities":{"elicitation":{}}}}}'],
      ['c2s', call(4, 'Bergen')],
      ['s2c', '{"jsonrpc":"2.0","id":4,"error":{"code":-32602,"message":"Resource not found","data":{"uri":"trip://nope"}}}'],
    ]);
    const errors = records.filter((r) => r.kind === 'response').map((r) => r.msg);
    expect(errors[0]).toMatch(/unsupported protocol version.*The request named protocol 2099-01-01 the server does not speak; it offers 2026-07-28, 2025-11-25\./);
    expect(errors[1]).toMatch(/-32020 \(header mismatch/);
    expect(errors[2]).toMatch(/-32021 \(missing required client capability.*It needs the client to declare elicitation\./);
    expect(errors[3]).toMatch(/The resource trip:\/\/nope does not exist/);
  });
});

describe('subscriptions over stdio (as the SDK v2 client and server send them)', () => {
  it('a subscription the client cancels ends there, said as a subscription, and check passes', () => {
    const records = stdio([
      ['c2s', `{"jsonrpc":"2.0","id":"listen:0","method":"subscriptions/listen","params":{${META()},"notifications":{"toolsListChanged":true}}}`],
      ['s2c', '{"jsonrpc":"2.0","method":"notifications/subscriptions/acknowledged","params":{"notifications":{"toolsListChanged":true},"_meta":{"io.modelcontextprotocol/subscriptionId":"listen:0"}}}'],
      ['c2s', `{"jsonrpc":"2.0","method":"notifications/cancelled","params":{"requestId":"listen:0",${META()}}}`],
    ]);
    expect(records.map((r) => r.kind)).toEqual(['request', 'notification', 'notification', 'pending']);
    expect(records[3]).toMatchObject({ subscription: true, ageMs: 20 });
    expect(records[3]!.msg).toMatch(/ended when the client cancelled it/);
    const report = checkRecords(records.map((r) => ({ ...r, v: 1, session: 's', label: 'trip', channel: 'stdio' })) as unknown as LogRecord[]);
    expect(report.findings).toEqual([]);
  });
});

describe('multi-round-trip calls (input_required)', () => {
  const records = stdio([['c2s', BOOK], ['s2c', ASKS], ['c2s', RETRY], ['s2c', BOOKED]]);
  const [first, asks, retry, booked] = records;

  it('says what the server asks, and links the retry to the first round', () => {
    expect(asks).toMatchObject({ resultType: 'input_required', round: 1, firstSeq: first!.seq, inputRequests: ['confirm'] });
    expect(asks!.msg).toMatch(/^The server needs input before it can finish tool book_trip \(round 1, \d+ ms\): elicitation confirm — "Really book Bergen\?"/);
    expect(retry).toMatchObject({ round: 2, firstSeq: first!.seq });
    expect(retry!.msg).toBe('Client calls tool book_trip again (round 2) with the answers to what the server asked: confirm (accept).');
  });

  it('times the call from its first request to the complete result, and each round on its own', () => {
    expect(booked).toMatchObject({ resultType: 'complete', round: 2, firstSeq: first!.seq, latencyMs: 10, callLatencyMs: 30 });
    expect(booked!.msg).toMatch(/round 2 of one call that took 30 ms from its first request/);
  });

  it('a retry whose first round mcptap did not see is named, not linked', () => {
    const [alone] = stdio([['c2s', RETRY]]);
    expect(alone!.round).toBeUndefined();
    expect(alone!.msg).toMatch(/a later round of a call whose first round mcptap did not see/);
  });
});

describe('tasks', () => {
  it('links tasks/get and tasks/result to the request that created the task', () => {
    const records = stdio([
      ['c2s', '{"jsonrpc":"2.0","id":1,"method":"tools/call","params":{"name":"slow","task":{"ttl":60000}}}'],
      ['s2c', '{"jsonrpc":"2.0","id":1,"result":{"task":{"taskId":"t-9","status":"working"}}}'],
      ['c2s', '{"jsonrpc":"2.0","id":2,"method":"tasks/get","params":{"taskId":"t-9"}}'],
      ['c2s', '{"jsonrpc":"2.0","id":3,"method":"tasks/update","params":{"taskId":"t-9"}}'],
    ]);
    expect(records[2]).toMatchObject({ taskId: 't-9', taskRequestSeq: 0 });
    expect(records[2]!.msg).toBe('Client asks for the status of task t-9 (tasks/get), created by tools/call slow #1.');
    expect(records[3]!.msg).not.toMatch(/does not know/);
  });
});

describe('a multi-round-trip call is one call in every view and export', () => {
  // The same four frames as above, as the log holds them (the writer stamps v, seq, session, channel, label).
  const logged = stdio([['c2s', DISCOVER], ['s2c', DISCOVERED], ['c2s', BOOK], ['s2c', ASKS], ['c2s', RETRY], ['s2c', BOOKED]]).map(
    (r) => ({ ...r, v: 1, session: 'trip-s1', channel: 'stdio', label: 'trip' }) as unknown as LogRecord,
  );
  const trace = linkTrace(logged);
  const timeline = buildTimeline(logged, trace);

  it('trace: one round trip with its rounds, timed over the whole call; the session carries version and identities', () => {
    expect(trace.roundTrips).toHaveLength(1);
    const mcp = trace.roundTrips[0]!.mcp!;
    expect(mcp.rounds).toEqual([
      { seq: 2, latencyMs: 10, resultType: 'input_required', inputRequests: ['confirm'] },
      { seq: 4, latencyMs: 10, resultType: 'complete' },
    ]);
    expect(mcp.latencyMs).toBe(30);
    const [session] = formatTraceJson(trace).map((l) => JSON.parse(l)).filter((l) => l.type === 'session');
    expect(session).toMatchObject({ protocolVersion: '2026-07-28', client: { name: 'trip-client' }, server: { name: 'trip-server', version: '2.0.0' }, supportedVersions: ['2026-07-28'] });
  });

  it('pretty, timeline, mermaid and html name the rounds and what the server asked', () => {
    const pretty = formatPretty(logged, { color: false }).join('\n');
    expect(pretty).toMatch(/tools\/call book_trip #3 round 2/);
    const text = formatTimeline(timeline, { color: false }).join('\n');
    expect(text).toMatch(/input required \(round 1\): confirm/);
    expect(text).toMatch(/asks: Really book Bergen\?/);
    expect(text).toMatch(/round 2 of a call of 30 ms/);
    expect(formatMermaid(timeline)).toMatch(/input required \(round 1\)/);
    const html = formatHtml(logged, trace, timeline);
    expect(html).toMatch(/in 2 rounds \(1: asked confirm 10 ms; 2: complete 10 ms\)/);
    expect(html).toMatch(/trip-server 2\.0\.0 \(2026-07-28\), client trip-client 2\.4\.0/);
  });

  it('HAR: each round its own entry, tied to the call by firstSeq and round', () => {
    const entries = buildHar(logged).log.entries.filter((e) => e._mcptap.method === 'tools/call');
    expect(entries.map((e) => [e._mcptap.round ?? 1, e._mcptap.firstSeq, e._mcptap.resultType])).toEqual([
      [1, 2, 'input_required'],
      [2, 2, 'complete'],
    ]);
    expect(entries[1]!._mcptap.callLatencyMs).toBe(30);
    expect(entries[0]!._mcptap.protocolVersion).toBe('2026-07-28');
    const discover = buildHar(logged).log.entries.find((e) => e._mcptap.method === 'server/discover')!;
    expect(discover._mcptap).toMatchObject({ client: { name: 'trip-client' }, server: { name: 'trip-server' }, supportedVersions: ['2026-07-28'] });
  });

  it('OTLP: one span for the call, its rounds as children, and mcp.protocol.version on each', () => {
    const spans = buildSpans(logged, trace).filter((s) => s.name.startsWith('tools/call'));
    const call = spans.find((s) => s.name === 'tools/call book_trip')!;
    const rounds = spans.filter((s) => s.name.includes('(round'));
    expect(rounds.map((s) => s.name)).toEqual(['tools/call book_trip (round 1)', 'tools/call book_trip (round 2)']);
    for (const round of rounds) {
      expect(round.parentSpanId).toBe(call.spanId);
      expect(round.traceId).toBe(call.traceId);
    }
    expect(call.endTime - call.startTime).toBe(30);
    expect(call.attributes).toMatchObject({ 'mcp.protocol.version': '2026-07-28', 'mcptap.rounds': 2 });
  });
});
