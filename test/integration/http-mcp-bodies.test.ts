/**
 * The answer to an MCP POST is written once (log format v5): its frame records carry its messages and the
 * http-end keeps only the text around them (`bodyInFrames`, `bodyAround`). Real SDK clients against real SDK
 * servers through the HTTP tap: every answer a client received (teed off its fetch) must come back from the
 * log byte for byte, while the log's http-end lines hold no copy of it.
 */
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { mkdtempSync, readFileSync, rmSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { dirname, join } from 'node:path';
import { Client } from '@modelcontextprotocol/sdk/client/index.js';
import { StreamableHTTPClientTransport } from '@modelcontextprotocol/sdk/client/streamableHttp.js';
import { StreamableHTTPClientTransport as V2Transport } from '@modelcontextprotocol/client';
import { startHttpTap, readAllRecords, type LogRecord } from '../../src/index.js';
import { LogTail } from '../../src/ui/tail.js';
import { startEverything, startStatelessJsonServer, type Everything } from './http-mcp-scenario.js';
// @ts-expect-error — a plain .mjs helper without type declarations
import { runTripScenario, startTripServer } from '../support/v2-scenario.mjs';

type Rec = LogRecord & Record<string, unknown>;

/** A fetch that keeps the text of every answer to a POST, as the client received it. */
function teeFetch(answers: Promise<string>[]): typeof fetch {
  return async (url, init) => {
    const response = await fetch(url, init);
    if (init?.method === 'POST') answers.push(textOf(response.clone()));
    return response;
  };
}

/** All of a body's text, or as much as came before the client closed the stream (SDK v1 closes a POST's SSE). */
async function textOf(response: Response): Promise<string> {
  const reader = response.body?.getReader();
  if (!reader) return '';
  const decoder = new TextDecoder();
  let text = '';
  try {
    for (let read = await reader.read(); !read.done; read = await reader.read()) text += decoder.decode(read.value, { stream: true });
  } catch {
    // aborted by the client: what it received so far
  }
  return text + decoder.decode();
}

/** What the tap logged for the POSTs: the http-end lines as written, as the reader and as the live view's tail give them back. */
async function postEnds(logFile: string): Promise<{ lines: Rec[]; read: Rec[]; tailed: Rec[] }> {
  const posts = (records: Rec[]) => records.filter((r) => r.kind === 'http-end' && r.method === 'POST');
  const lines = readFileSync(logFile, 'utf8').trim().split('\n').map((line) => JSON.parse(line) as Rec);
  const tailed = (await new LogTail(dirname(logFile)).poll()) as Rec[];
  return { lines: posts(lines), read: posts((await readAllRecords([logFile])) as Rec[]), tailed: posts(tailed) };
}

/** Run `session` through a tap in front of `target`; the POST answers it received, and what the log says of them. */
async function throughTap(target: string, session: (url: string, fetch: typeof globalThis.fetch) => Promise<void>): Promise<{ answers: string[]; lines: Rec[]; read: Rec[]; tailed: Rec[] }> {
  const logDir = mkdtempSync(join(tmpdir(), 'mcptap-http-bodies-'));
  try {
    const tap = await startHttpTap({ target, logDir, label: 'bodies' });
    const pending: Promise<string>[] = [];
    try {
      await session(tap.url, teeFetch(pending));
    } finally {
      await tap.close();
    }
    return { answers: await Promise.all(pending), ...(await postEnds(tap.logFile)) };
  } finally {
    rmSync(logDir, { recursive: true, force: true });
  }
}

/** An SDK v1 client at `url`/mcp, over `fetch`: it lists the tools and makes `call`. */
async function v1Session(url: string, fetch: typeof globalThis.fetch, call: { name: string; arguments: Record<string, unknown> }): Promise<void> {
  const client = new Client({ name: 'bodies', version: '1' });
  await client.connect(new StreamableHTTPClientTransport(new URL(`${url}/mcp`), { fetch }));
  try {
    await client.listTools();
    await client.callTool(call);
  } finally {
    await client.close();
  }
}

function expectLoggedOnce(result: { answers: string[]; lines: Rec[]; read: Rec[]; tailed: Rec[] }): void {
  const { answers, lines, read, tailed } = result;
  expect(answers.filter((a) => a !== '').length).toBeGreaterThanOrEqual(3);
  // Byte for byte, whatever order the answers ended in; the live view's tail puts them back as readLogs does.
  expect(read.map((end) => end.body ?? '').sort()).toEqual([...answers].sort());
  expect(tailed.map((end) => end.body ?? '')).toEqual(read.map((end) => end.body ?? ''));
  for (const line of lines.filter((l) => l.resBytes !== 0)) {
    expect(line.body).toBeUndefined();
    expect(line.bodyInFrames).toBeGreaterThanOrEqual(1);
    expect((line.bodyAround as string[]).length).toBe((line.bodyInFrames as number) + 1);
  }
}

describe('the answers to MCP POSTs, logged once through the HTTP tap', () => {
  let everything: Everything;

  beforeAll(async () => {
    everything = await startEverything('streamableHttp');
  });

  afterAll(async () => {
    await everything?.stop();
  });

  it('comes back byte for byte from SSE answers with priming events and ids (SDK v1 client, server-everything)', async () => {
    const result = await throughTap(everything.url, (url, fetch) => v1Session(url, fetch, { name: 'echo', arguments: { message: 'once, not twice' } }));
    expectLoggedOnce(result);
    // The priming event and the ids are what lies around the frames.
    expect(result.lines.some((l) => (l.bodyAround as string[] | undefined)?.[0]?.startsWith('id: '))).toBe(true);
  });

  it('comes back byte for byte from JSON answers (SDK v1 stateless server, enableJsonResponse)', async () => {
    const server = await startStatelessJsonServer();
    try {
      const result = await throughTap(server.url, (url, fetch) => v1Session(url, fetch, { name: 'get_weather', arguments: { city: 'Bergen' } }));
      expectLoggedOnce(result);
      // A JSON answer is its one frame, with nothing around it.
      for (const line of result.lines.filter((l) => l.resBytes !== 0)) expect(line.bodyAround).toEqual(['', '']);
    } finally {
      server.stop();
    }
  });

  it('comes back byte for byte from a 2026-07-28 server (SDK v2 client and server, a multi-round-trip call)', async () => {
    const trip = await startTripServer();
    try {
      const result = await throughTap(trip.url.replace(/\/mcp$/, ''), async (url, fetch) => {
        await runTripScenario(new V2Transport(new URL(`${url}/mcp`), { fetch }));
      });
      expectLoggedOnce(result);
    } finally {
      await trip.stop();
    }
  });
});
