/**
 * MCP 2026-07-28 with the official SDK v2 packages, through mcptap: several concurrent v2 clients over
 * stateless Streamable HTTP reusing the same ids, and a v2 client over stdio (whose SDK probes the server on a
 * second, short-lived process first). The clients must see what they see directly; the logs must pair every
 * answer with its own request, show the multi-round-trip booking as one call, and pass `check`.
 */
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { mkdtempSync, rmSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { fileURLToPath } from 'node:url';
import { startHttpTap, readAllRecords, listLogFiles, replay, type LogRecord } from '../../src/index.js';
import { checkRecords } from '../../src/check/check.js';
// @ts-expect-error — a plain .mjs helper without type declarations
import { httpTransport, runTripScenario, startTripServer, stdioTransport, TRIP_SERVER, v2Client } from '../support/v2-scenario.mjs';

type Rec = LogRecord & Record<string, unknown>;
const BIN = fileURLToPath(new URL('../../bin/mcptap.js', import.meta.url));

/** Three clients at once, two of them the same program: every one starts its ids at 0. */
const CLIENTS = [
  { name: 'client-a', city: 'Bergen', delayMs: 300 },
  { name: 'client-b', city: 'Oslo', delayMs: 900 },
  { name: 'client-a', city: 'Paris', delayMs: 600 },
];

/** Every answer's request, by its seq. */
function pairs(records: Rec[]): [Rec, Rec][] {
  const bySeq = new Map(records.map((r) => [`${r.session}#${r.seq}`, r]));
  return records.filter((r) => r.kind === 'response').map((r) => [bySeq.get(`${r.session}#${r.requestSeq}`)!, r]);
}

describe('concurrent SDK v2 clients over stateless Streamable HTTP, through mcptap', () => {
  let server: Awaited<ReturnType<typeof startTripServer>>;
  let logDir: string;
  let direct: unknown[];
  let tapped: unknown[];
  let records: Rec[];

  beforeAll(async () => {
    logDir = mkdtempSync(join(tmpdir(), 'mcptap-2026-http-'));
    server = await startTripServer();
    direct = await Promise.all(CLIENTS.map((c) => runTripScenario(httpTransport(server.url), c)));
    const tap = await startHttpTap({ target: new URL(server.url).origin, logDir, label: 'trip' });
    try {
      tapped = await Promise.all(CLIENTS.map((c) => runTripScenario(httpTransport(`${tap.url}/mcp`), c)));
    } finally {
      await tap.close();
    }
    records = (await readAllRecords([tap.logFile])) as Rec[];
  }, 60_000);

  afterAll(async () => {
    await server?.stop();
    if (logDir) rmSync(logDir, { recursive: true, force: true });
  });

  it('gives every client what it gets directly', () => {
    expect(tapped).toEqual(direct);
    expect(direct[0]).toMatchObject({ version: '2026-07-28', booking: [{ type: 'text', text: 'Booked Bergen.' }] });
  });

  it('pairs every answer with its own request: same id, same exchange, the right city', () => {
    const all = pairs(records);
    expect(all.length).toBe(CLIENTS.length * 6); // discover, tools/list, weather, two booking rounds, resource
    for (const [request, response] of all) {
      expect(request.id).toEqual(response.id);
      expect(request.exchange).toBe(response.exchange);
    }
    for (const [request, response] of all.filter(([q]) => q.tool === 'get_weather')) {
      const city = /"city":"(\w+)"/.exec(String(request.raw))![1]!;
      expect(String(response.raw)).toContain(`${city}:`);
    }
    // Each latency is measured from its own request. The wall and monotonic clocks are read one after the other,
    // and a thread preempted between the two on a busy machine moves them a few ms apart; a mis-pair is caught above.
    for (const [request, response] of all) expect(Math.abs((response.latencyMs as number) - (response.time - request.time))).toBeLessThanOrEqual(10);
  });

  it('has no false duplicate, no pending, and check passes', () => {
    expect(records.filter((r) => r.kind === 'pending')).toEqual([]);
    expect(records.filter((r) => /must be unique|did not see/.test(r.msg))).toEqual([]);
    expect(checkRecords(records).findings).toEqual([]);
  });

  it('groups stateless traffic by client identity, with its revision and both identities on the records', () => {
    const sessions = new Set(records.filter((r) => r.kind === 'request').map((r) => r.session));
    expect(sessions.size).toBe(2); // client-a (two programs, one identity) and client-b
    const clients = records.filter((r) => r.kind === 'request' && r.client).map((r) => (r.client as { name: string }).name);
    expect(clients.sort()).toEqual(['client-a', 'client-b']);
    expect(records.filter((r) => r.kind === 'request').every((r) => r.protocolVersion === '2026-07-28')).toBe(true);
    expect(records.filter((r) => r.kind === 'response' && r.server).map((r) => r.session).length).toBe(2);
  });

  it('shows each booking as one call of two rounds, timed from its first request', () => {
    const asks = records.filter((r) => r.resultType === 'input_required');
    expect(asks).toHaveLength(3);
    const finals = records.filter((r) => r.kind === 'response' && r.tool === 'book_trip' && r.resultType === 'complete');
    expect(finals).toHaveLength(3);
    for (const done of finals) {
      const first = records.find((r) => r.session === done.session && r.seq === done.firstSeq)!;
      expect(first).toMatchObject({ kind: 'request', tool: 'book_trip' });
      expect(done.round).toBe(2);
      expect(done.callLatencyMs).toBeGreaterThanOrEqual(done.latencyMs as number);
    }
  });

  it('mcptap replay serves every round back to the same concurrent clients, with identical results', async () => {
    const files = await listLogFiles([logDir]);
    const server = await replay({ logs: files, listen: 0, noDelay: true });
    try {
      const replayed = await Promise.all(CLIENTS.map((c) => runTripScenario(httpTransport(`${server.url}/mcp`), c)));
      expect(replayed).toEqual(direct);
      expect(server.misses).toEqual([]);
    } finally {
      await server.close();
    }
  }, 30_000);
});

describe('an SDK v2 client over stdio, through the mcptap wrapper', () => {
  let logDir: string;
  let direct: unknown;
  let tapped: unknown;
  let logs: Rec[][];

  beforeAll(async () => {
    logDir = mkdtempSync(join(tmpdir(), 'mcptap-2026-stdio-'));
    direct = await runTripScenario(stdioTransport(process.execPath, [TRIP_SERVER]));
    tapped = await runTripScenario(stdioTransport(process.execPath, [BIN, '--log-dir', logDir, '--', process.execPath, TRIP_SERVER]));
    const files = (await listLogFiles([logDir])).sort();
    logs = await Promise.all(files.map(async (f) => (await readAllRecords([f])) as Rec[]));
  }, 60_000);

  afterAll(() => {
    if (logDir) rmSync(logDir, { recursive: true, force: true });
  });

  it('gives the client what it gets directly', () => {
    expect(tapped).toEqual(direct);
  });

  it('says the probe process is a version probe, not a failure, and check stays green on both logs', () => {
    expect(logs).toHaveLength(2);
    const probe = logs.find((log) => log.some((r) => r.method === 'server/discover'))!;
    const exit = probe.find((r) => r.kind === 'lifecycle' && r.event === 'exit')!;
    expect(exit).toMatchObject({ probe: true });
    expect(exit.level ?? 30).toBe(30);
    expect(exit.msg).toMatch(/version probe/);
    for (const log of logs) expect(checkRecords(log).findings).toEqual([]);
  });

  it('pairs by id on the one connection, with no initialize, and links the booking rounds', () => {
    const session = logs.find((log) => log.some((r) => r.tool === 'book_trip'))!;
    expect(session.some((r) => r.method === 'initialize')).toBe(false);
    const all = pairs(session);
    expect(all.length).toBe(5);
    for (const [request, response] of all) expect(request.id).toEqual(response.id);
    const done = session.find((r) => r.tool === 'book_trip' && r.resultType === 'complete')!;
    expect(done).toMatchObject({ round: 2 });
    expect(session.find((r) => r.seq === done.firstSeq)).toMatchObject({ tool: 'book_trip', kind: 'request' });
  });

  it('mcptap replay of the log folder stands in for the server, the probe included, with identical results', async () => {
    const server = await replay({ logs: logDir, noDelay: true });
    expect(await runTripScenario(stdioTransport(server.command, server.args))).toEqual(direct);
  }, 30_000);
});

describe('an SDK v2 subscription (subscriptions/listen) through mcptap', () => {
  it('over HTTP and stdio: acknowledged, ended as a subscription, never unanswered; check passes', async () => {
    const server = await startTripServer();
    const logDir = mkdtempSync(join(tmpdir(), 'mcptap-2026-listen-'));
    const listen = async (transport: unknown): Promise<void> => {
      const client = v2Client();
      await client.connect(transport as Parameters<typeof client.connect>[0]);
      const subscription = await client.listen({ toolsListChanged: true });
      await subscription.close();
      await client.close();
    };
    try {
      const tap = await startHttpTap({ target: new URL(server.url).origin, logDir, label: 'trip' });
      try {
        await listen(httpTransport(`${tap.url}/mcp`));
      } finally {
        await tap.close();
      }
      await listen(stdioTransport(process.execPath, [BIN, '--log-dir', logDir, '--', process.execPath, TRIP_SERVER]));
      const logs = await Promise.all((await listLogFiles([logDir])).map(async (f) => (await readAllRecords([f])) as Rec[]));
      const all = logs.flat();
      expect(all.filter((r) => r.method === 'notifications/subscriptions/acknowledged' && r.subscriptionId !== undefined)).toHaveLength(2);
      expect(all.filter((r) => r.kind === 'pending').map((r) => r.subscription)).toEqual([true, true]);
      for (const log of logs) expect(checkRecords(log).findings).toEqual([]);
    } finally {
      await server.stop();
      rmSync(logDir, { recursive: true, force: true });
    }
  }, 30_000);
});
