/**
 * The SDK's StreamableHTTPClientTransport and SSEClientTransport against server-everything, directly and
 * through mcptap's HTTP tap: the client must see the same thing both ways, and the log must correlate every
 * message — including the server's requests on SSE streams, answered by the client in later POSTs.
 */
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { mkdtempSync, rmSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { startHttpTap, readAllRecords, type LogRecord } from '../../src/index.js';
import { runHttpScenario, startEverything, startStatelessJsonServer, type Everything, type HttpScenarioResult } from './http-mcp-scenario.js';

type Rec = LogRecord & Record<string, unknown>;

describe.each(['streamableHttp', 'sse'] as const)('MCP over HTTP (%s) through mcptap', (mode) => {
  let everything: Everything;
  let logDir: string;
  let direct: HttpScenarioResult;
  let tapped: HttpScenarioResult;
  let records: Rec[];

  beforeAll(async () => {
    logDir = mkdtempSync(join(tmpdir(), 'mcptap-http-mcp-'));
    everything = await startEverything(mode);
    direct = await runHttpScenario(mode, everything.url);
    const tap = await startHttpTap({ target: everything.url, logDir, label: `everything-${mode}` });
    try {
      tapped = await runHttpScenario(mode, tap.url);
    } finally {
      await tap.close();
    }
    records = (await readAllRecords([tap.logFile])) as Rec[];
  });

  afterAll(async () => {
    await everything?.stop();
    if (logDir) rmSync(logDir, { recursive: true, force: true });
  });

  it('gives the client exactly what it gets directly', () => {
    expect(tapped).toEqual(direct);
    // The scenario really exercised server requests and progress (a broken scenario would compare equal too).
    expect(direct.samplingRequests).toHaveLength(1);
    expect(direct.elicitationRequests).toBe(1);
    expect(direct.progress.length).toBeGreaterThanOrEqual(2);
    expect(direct.rootsRequested).toBe(true);
  });

  it('logs every JSON-RPC message on the MCP channel, in one session, with the HTTP exchange that carried it', () => {
    const channel = mode === 'sse' ? 'mcp-sse' : 'mcp-http';
    const messages = records.filter((r) => r.kind === 'request' || r.kind === 'response' || r.kind === 'notification');
    expect(messages.length).toBeGreaterThan(20);
    for (const m of messages) {
      expect(m.channel).toBe(channel);
      expect(typeof m.exchange).toBe('string');
    }
    // One MCP session: every message carries the same session id, distinct from the proxy's own.
    const sessions = new Set(messages.map((m) => m.session));
    expect(sessions.size).toBe(1);
    expect(records.filter((r) => r.kind === 'invalid')).toEqual([]);
  });

  it('correlates each client request with its response, across exchanges', () => {
    const requests = records.filter((r) => r.kind === 'request' && r.dir === 'c2s');
    const methods = requests.map((r) => r.method);
    expect(methods).toContain('initialize');
    expect(methods).toContain('tools/list');
    for (const request of requests) {
      const answer = records.find((r) => r.kind === 'response' && r.requestSeq === request.seq);
      expect(answer, `answer to ${String(request.method)} ${String(request.id)}`).toBeDefined();
      expect(answer!.method).toBe(request.method);
    }
    // The 1.5 MB echo went both ways whole (the client compared equal) and is correlated though cut in the log.
    expect(direct.bigEcho.tail).toBe('the-end');
    const bigCall = records.find((r) => r.kind === 'request' && r.tool === 'echo' && r.truncated === true);
    expect(bigCall, 'the big echo request, cut at --max-body').toBeDefined();
    const bigAnswer = records.find((r) => r.kind === 'response' && r.requestSeq === bigCall!.seq);
    expect(bigAnswer).toMatchObject({ truncated: true, tool: 'echo' });
    expect(bigAnswer!.bytes as number).toBeGreaterThan(1536 * 1024);
    const sum = records.find((r) => r.kind === 'response' && r.tool === 'get-sum');
    expect(sum?.raw).toContain('42');
    const unknown = records.find((r) => r.kind === 'response' && r.tool === 'no-such-tool');
    expect(unknown).toBeDefined();
  });

  it('matches a server request on an SSE stream with the client answer in a later POST', () => {
    for (const method of ['sampling/createMessage', 'elicitation/create', 'roots/list']) {
      const request = records.find((r) => r.kind === 'request' && r.dir === 's2c' && r.method === method);
      expect(request, method).toBeDefined();
      const answer = records.find((r) => r.kind === 'response' && r.dir === 'c2s' && r.requestSeq === request!.seq);
      expect(answer, `answer to ${method}`).toBeDefined();
      // The request came down an event stream; the answer went up in its own POST.
      expect(answer!.exchange).not.toBe(request!.exchange);
      const carrier = records.find((r) => r.kind === 'http-request' && r.exchange === answer!.exchange);
      expect(carrier?.method).toBe('POST');
    }
    const sampling = records.find((r) => r.kind === 'response' && r.method === 'sampling/createMessage');
    expect(sampling?.raw).toContain('Rayleigh');
  });

  it('links progress notifications to the tools/call they report on', () => {
    const call = records.find((r) => r.kind === 'request' && r.tool === 'trigger-long-running-operation');
    const progress = records.filter((r) => r.kind === 'notification' && r.method === 'notifications/progress');
    expect(progress.length).toBeGreaterThanOrEqual(2);
    for (const p of progress) {
      expect(p.relatedMethod).toBe('tools/call');
      expect(p.requestSeq).toBe(call!.seq);
    }
  });

  it('records every HTTP exchange from request to end, with secrets out of the headers', () => {
    const ends = records.filter((r) => r.kind === 'http-end');
    const starts = records.filter((r) => r.kind === 'http-request');
    expect(ends.length).toBe(starts.length);
    for (const end of ends) expect(['complete', 'client-aborted']).toContain(end.outcome);
    if (mode === 'streamableHttp') {
      // Notifications and responses POSTed by the client are answered 202 with no body.
      expect(records.some((r) => r.kind === 'http-response' && r.status === 202)).toBe(true);
      // The session id the initialize response assigned is on later requests.
      const init = records.find((r) => r.kind === 'http-response' && (r.headers as Record<string, string>)['mcp-session-id']);
      expect(init).toBeDefined();
      expect(records.some((r) => r.kind === 'http-request' && r.method === 'DELETE')).toBe(true);
    } else {
      const endpoint = records.find((r) => r.kind === 'sse' && r.event === 'endpoint');
      expect(String(endpoint?.data)).toMatch(/^\/message\?sessionId=/);
    }
  });
});

describe('a stateless MCP server answering in JSON (SDK StreamableHTTPServerTransport) through mcptap', () => {
  it('gives the client the same answers and keeps the whole conversation in one correlated session', async () => {
    const { Client } = await import('@modelcontextprotocol/sdk/client/index.js');
    const { StreamableHTTPClientTransport } = await import('@modelcontextprotocol/sdk/client/streamableHttp.js');
    const server = await startStatelessJsonServer();
    const base = server.url;
    const run = async (url: string): Promise<unknown[]> => {
      const client = new Client({ name: 'c', version: '1' });
      await client.connect(new StreamableHTTPClientTransport(new URL(`${url}/mcp`)));
      try {
        return [await client.listTools(), await client.callTool({ name: 'get_weather', arguments: { city: 'California' } })];
      } finally {
        await client.close();
      }
    };
    const logDir = mkdtempSync(join(tmpdir(), 'mcptap-http-stateless-'));
    try {
      const direct = await run(base);
      const tap = await startHttpTap({ target: base, logDir, label: 'stateless' });
      let tapped: unknown[];
      try {
        tapped = await run(tap.url);
      } finally {
        await tap.close();
      }
      expect(tapped).toEqual(direct);
      const records = (await readAllRecords([tap.logFile])) as Rec[];
      const messages = records.filter((r) => r.kind === 'request' || r.kind === 'response' || r.kind === 'notification');
      expect(messages.map((m) => `${m.kind} ${m.method}`)).toEqual([
        'request initialize',
        'response initialize',
        'notification notifications/initialized',
        'request tools/list',
        'response tools/list',
        'request tools/call',
        'response tools/call',
      ]);
      expect(new Set(messages.map((m) => m.session)).size).toBe(1);
      expect(messages.at(-1)).toMatchObject({ channel: 'mcp-http', tool: 'get_weather', requestSeq: messages.at(-2)!.seq });
      expect(String(messages.at(-1)!.raw)).toContain("It's always raining in California");
    } finally {
      server.stop();
      rmSync(logDir, { recursive: true, force: true });
    }
  });
});
