/**
 * The two revisions side by side, through mcptap, with the official SDKs: a v1 client (2025-11-25) against the
 * v2 trip server, and a v2 client (2026-07-28, `auto`) against v1 servers, whose refusal of its server/discover
 * probe (-32601 on stdio, an HTTP 400 with `"id": null` on Streamable HTTP) makes it fall back to initialize.
 * Every answer must be paired with its request and `check` must find nothing.
 */
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { mkdtempSync, rmSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { fileURLToPath } from 'node:url';
import { Client } from '@modelcontextprotocol/sdk/client/index.js';
import { StdioClientTransport } from '@modelcontextprotocol/sdk/client/stdio.js';
import { StreamableHTTPClientTransport } from '@modelcontextprotocol/sdk/client/streamableHttp.js';
import { startHttpTap, readAllRecords, listLogFiles, type LogRecord } from '../../src/index.js';
import { checkRecords } from '../../src/check/check.js';
// @ts-expect-error — a plain .mjs helper without type declarations
import { httpTransport, startTripServer, stdioTransport, TRIP_SERVER, v2Client } from '../support/v2-scenario.mjs';
import { startEverything, type Everything } from './http-mcp-scenario.js';

type Rec = LogRecord & Record<string, unknown>;
const BIN = fileURLToPath(new URL('../../bin/mcptap.js', import.meta.url));
const WEATHER = fileURLToPath(new URL('../../fixtures/weather-server.mjs', import.meta.url));

let logDir: string;
beforeAll(() => {
  logDir = mkdtempSync(join(tmpdir(), 'mcptap-2026-mixed-'));
});
afterAll(() => {
  if (logDir) rmSync(logDir, { recursive: true, force: true });
});

/** The records of every log written under `dir`. */
async function logsIn(dir: string): Promise<Rec[][]> {
  const files = (await listLogFiles([dir])).sort();
  return Promise.all(files.map(async (f) => (await readAllRecords([f])) as Rec[]));
}

/** Every response is paired with a request of the same id. */
function expectPaired(records: Rec[]): void {
  const bySeq = new Map(records.map((r) => [`${r.session}#${r.seq}`, r]));
  const responses = records.filter((r) => r.kind === 'response');
  expect(responses.length).toBeGreaterThan(0);
  for (const r of responses) {
    const request = bySeq.get(`${r.session}#${r.requestSeq}`);
    expect(request, r.msg).toBeDefined();
    if (r.id !== null) expect(request!.id).toEqual(r.id);
  }
}

async function v1Call(transport: StdioClientTransport | StreamableHTTPClientTransport) {
  const client = new Client({ name: 'v1-client', version: '1.32.2' });
  await client.connect(transport);
  try {
    return (await client.callTool({ name: 'get_weather', arguments: { city: 'Oslo' } })).content;
  } finally {
    await client.close();
  }
}

async function v2Call(transport: unknown, name: string, arguments_: Record<string, unknown>) {
  const client = v2Client();
  await client.connect(transport as Parameters<typeof client.connect>[0]);
  try {
    return { version: client.getNegotiatedProtocolVersion?.(), content: (await client.callTool({ name, arguments: arguments_ })).content };
  } finally {
    await client.close();
  }
}

describe('a v1 client against the v2 server', () => {
  it('over stdio: the 2025 handshake, read as before, and check passes', async () => {
    const dir = join(logDir, 'v1-stdio');
    const content = await v1Call(new StdioClientTransport({ command: process.execPath, args: [BIN, '--log-dir', dir, '--', process.execPath, TRIP_SERVER], stderr: 'ignore' }));
    expect(content).toEqual([{ type: 'text', text: 'Oslo: Clear, 4 °C' }]);
    const [log] = await logsIn(dir);
    expect(log!.find((r) => r.method === 'initialize' && r.kind === 'response')!.msg).toMatch(/^Handshake: server trip-server 2\.0\.0 answers with protocol 2025-11-25/);
    expectPaired(log!);
    expect(checkRecords(log!).findings).toEqual([]);
  });

  it('over Streamable HTTP (the v2 server serves 2025 statelessly): check passes', async () => {
    const server = await startTripServer();
    const dir = join(logDir, 'v1-http');
    const tap = await startHttpTap({ target: new URL(server.url).origin, logDir: dir, label: 'trip' });
    try {
      expect(await v1Call(new StreamableHTTPClientTransport(new URL(`${tap.url}/mcp`)))).toEqual([{ type: 'text', text: 'Oslo: Clear, 4 °C' }]);
    } finally {
      await tap.close();
      await server.stop();
    }
    const [log] = await logsIn(dir);
    expectPaired(log!);
    expect(checkRecords(log!).findings).toEqual([]);
  });
});

describe('a v2 client against v1 servers: the probe is refused, the client falls back', () => {
  let everything: Everything;
  beforeAll(async () => {
    everything = await startEverything('streamableHttp');
  });
  afterAll(async () => {
    await everything?.stop();
  });

  it('over stdio: the probe gets -32601, said as version negotiation; both logs pass check', async () => {
    const dir = join(logDir, 'v2-stdio');
    const got = await v2Call(stdioTransport(process.execPath, [BIN, '--log-dir', dir, '--', process.execPath, WEATHER]), 'get_weather', { location: 'California' });
    expect(got).toEqual({ version: '2025-11-25', content: [{ type: 'text', text: "It's always raining in California" }] });
    const logs = await logsIn(dir);
    const refused = logs.flat().find((r) => r.kind === 'response' && r.method === 'server/discover')!;
    expect(refused).toMatchObject({ versionFallback: true, error: { code: -32601 } });
    for (const log of logs) {
      expectPaired(log);
      expect(checkRecords(log).findings).toEqual([]);
    }
  });

  it('over Streamable HTTP: the 400 with "id": null answers the probe, and check passes', async () => {
    const dir = join(logDir, 'v2-http');
    const tap = await startHttpTap({ target: everything.url, logDir: dir, label: 'everything' });
    let got;
    try {
      got = await v2Call(httpTransport(`${tap.url}/mcp`), 'echo', { message: 'hi' });
    } finally {
      await tap.close();
    }
    const [log] = await logsIn(dir);
    const refused = log!.find((r) => r.kind === 'response' && r.method === 'server/discover');
    expect(refused, JSON.stringify(log!.filter((r) => r.kind !== 'lifecycle').map((r) => r.msg))).toMatchObject({ versionFallback: true, id: null });
    expectPaired(log!);
    expect(checkRecords(log!).findings).toEqual([]);
    expect(got).toEqual({ version: '2025-11-25', content: [{ type: 'text', text: 'Echo: hi' }] });
  });
});
