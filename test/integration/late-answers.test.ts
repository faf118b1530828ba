/**
 * More requests in flight than mcptap tracks, every one answered: the official SDK client fires 12,000 tool calls
 * at once at an SDK server that answers none until all have come; SDK v1 (2025-11-25) and SDK v2 (2026-07-28,
 * stateless: no initialize, each request carrying its revision). mcptap's table holds 10,000: past that it lets
 * the oldest tenth go at once, twice here (an `evicted` record each time, 2,002 requests in all), and pairs their
 * answers all the same when they come: no answer to
 * "a request mcptap did not see", `check` passes the log, and the trace and the exports (HAR, OTLP) show every
 * call with its result.
 */
import { Client } from '@modelcontextprotocol/sdk/client/index.js';
import { StdioClientTransport } from '@modelcontextprotocol/sdk/client/stdio.js';
import { Client as ClientV2 } from '@modelcontextprotocol/client';
import { StdioClientTransport as StdioClientTransportV2 } from '@modelcontextprotocol/client/stdio';
import { beforeAll, describe, expect, it } from 'vitest';
import { checkRecords } from '../../src/check/check.js';
import { buildHar } from '../../src/export/har.js';
import { SpanBuilder } from '../../src/export/otlp-spans.js';
import { SpanStream } from '../../src/export/otlp-stream.js';
import { readAllRecords } from '../../src/log/reader.js';
import { linkTrace } from '../../src/trace/link.js';
import type { LogRecord } from '../../src/log/schema.js';
import { tempDir } from '../support/temp-dir.js';

const CALLS = 12_000;

interface Run {
  records: LogRecord[];
  texts: string[];
}

/** The calls through mcptap, all at once; the records of its logs once it has exited. */
async function loadTest(sdk: 'v1' | 'v2'): Promise<Run> {
  const logDir = tempDir('mcptap-late-');
  const server = sdk === 'v1' ? 'test/support/barrier-server.mjs' : 'test/support/barrier-server-v2.mjs';
  const options = {
    command: process.execPath,
    args: ['bin/mcptap.js', '--log-dir', logDir, '--', process.execPath, server],
    env: { ...(process.env as Record<string, string>), BARRIER: String(CALLS) },
    stderr: 'pipe' as const,
  };
  // SDK v2 in its `auto` mode probes with server/discover first, in a process of its own.
  const client = sdk === 'v1' ? new Client({ name: 'load-test', version: '1.0.0' }) : new ClientV2({ name: 'load-test', version: '2.4.0' }, { versionNegotiation: { mode: 'auto' } });
  await client.connect(sdk === 'v1' ? new StdioClientTransport(options) : new StdioClientTransportV2(options));
  const results = await Promise.all(Array.from({ length: CALLS }, (_, n) => client.callTool({ name: 'wait', arguments: { n } })));
  const texts = results.map((r) => (r.content as { text: string }[])[0]!.text);
  await client.close();
  // The log is complete once mcptap has exited: wait for its exit record.
  let records: LogRecord[] = [];
  for (const until = Date.now() + 30_000; Date.now() < until; await new Promise((r) => setTimeout(r, 50))) {
    records = await readAllRecords([logDir]);
    if (records.at(-1)?.kind === 'lifecycle' && (records.at(-1) as { event?: string }).event === 'exit') break;
  }
  return { records, texts };
}

describe.each(['v1', 'v2'] as const)('12,000 tool calls in flight at once, all answered (SDK %s)', (sdk) => {
  let records: LogRecord[];
  let texts: string[];
  beforeAll(async () => {
    ({ records, texts } = await loadTest(sdk));
  }, 120_000);

  it('the client gets every answer', () => {
    expect(texts).toEqual(Array.from({ length: CALLS }, (_, n) => `call ${n}`));
  });

  it('the oldest are evicted, 1,001 at a time, and each answer is paired with its request all the same', () => {
    const calls = records.filter((r) => r.kind === 'request' && r.method === 'tools/call');
    expect(calls).toHaveLength(CALLS);
    expect(records.filter((r) => r.kind === 'pending')).toEqual([]);
    const evictions = records.filter((r) => r.kind === 'evicted');
    expect(evictions.map((r) => r.kind === 'evicted' && r.requests.length)).toEqual([1001, 1001]);
    const evicted = evictions.flatMap((r) => (r.kind === 'evicted' ? r.requests : []));
    const answers = records.filter((r) => r.kind === 'response' && r.method === 'tools/call');
    expect(answers).toHaveLength(CALLS);
    const late = answers.filter((r) => r.kind === 'response' && r.afterPending === true);
    expect(late.map((r) => r.kind === 'response' && r.requestSeq).sort()).toEqual(evicted.map((e) => e.requestSeq).sort());
    expect(records.filter((r) => r.msg.includes('did not see'))).toEqual([]);
  });

  it('the trace shows every call with its result, the evicted ones too', () => {
    const trips = linkTrace(records).roundTrips;
    expect(trips).toHaveLength(CALLS);
    expect(trips.filter((t) => t.result === null)).toEqual([]);
    expect(trips.map((t) => t.result).sort()).toEqual(texts.slice().sort());
  });

  it('the HAR export has an entry for every call with its answer, the evicted ones too', () => {
    const entries = buildHar(records).log.entries.filter((e) => e.request.url.includes('/tools/call'));
    expect(entries).toHaveLength(CALLS);
    expect(entries.filter((e) => e.response.status !== 200)).toEqual([]);
    const late = entries.filter((e) => e.comment?.startsWith('Answered after mcptap had stopped tracking'));
    expect(late).toHaveLength(2002);
  });

  it('the OTLP export has a span for every call, ended by its answer, the evicted ones too', () => {
    const stream = new SpanStream();
    const spans = records.flatMap((r) => stream.push(r));
    spans.push(...stream.end());
    const calls = spans.filter((s) => s.attributes['mcp.method.name'] === 'tools/call');
    expect(calls).toHaveLength(CALLS);
    expect(calls.filter((s) => s.status.code === 'error')).toEqual([]);
  });

  it('so do the live OTLP exporter\'s spans, built within its bound on what it holds open', () => {
    const builder = new SpanBuilder();
    const spans = records.flatMap((r) => builder.push(r));
    spans.push(...builder.end(records.at(-1)!.time));
    const calls = spans.filter((s) => s.attributes['mcp.method.name'] === 'tools/call');
    expect(calls).toHaveLength(CALLS);
    expect(calls.filter((s) => s.status.code === 'error')).toEqual([]);
  });

  it('check passes the log', () => {
    const report = checkRecords(records);
    expect(report.findings).toEqual([]);
    expect(report.failed).toBe(false);
  });
});
