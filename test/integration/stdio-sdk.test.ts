/**
 * The official MCP SDK client against server-everything, once directly and once through mcptap: the client must
 * not be able to tell the difference, and the log must correlate everything that happened.
 *
 * Spawns bin/mcptap.js, which runs the built CLI: build first (`npx tsc -p .`, or `npm test`).
 */
import { join } from 'node:path';
import { beforeAll, describe, expect, test } from 'vitest';
import { checkRecords } from '../../src/check/check.js';
import { readAllRecords } from '../../src/log/reader.js';
import type { LogRecord } from '../../src/log/schema.js';
import { BIG, EVERYTHING, runScenario, type ScenarioResult } from './stdio-sdk-scenario.js';
import { tempDir } from '../support/temp-dir.js';

type Rec = LogRecord & Record<string, unknown>;

let logDir: string;
let direct: ScenarioResult;
let tapped: ScenarioResult;
let records: Rec[];

beforeAll(async () => {
  logDir = tempDir('mcptap-sdk-');
  direct = await runScenario('node', EVERYTHING);
  tapped = await runScenario('node', ['bin/mcptap.js', '--log-dir', logDir, '--', 'node', ...EVERYTHING]);
  records = (await readAllRecords([logDir])) as Rec[];
});

describe('the SDK client sees the same session through mcptap', () => {
  const same = [
    'serverInfo',
    'capabilities',
    'instructions',
    'toolNames',
    'echoLength',
    'echoTail',
    'image',
    'unknownTool',
    'longRunning',
    'cancelled',
    'sampling',
    'samplingRequests',
    'elicitation',
    'elicitationRequests',
    'roots',
    'rootsRequests',
    'resources',
    'resourceRead',
    'prompts',
    'prompt',
  ] as const;
  for (const key of same) {
    test(key, () => {
      expect(tapped[key]).toEqual(direct[key]);
    });
  }

  test('what was compared is what the scenario asked for', () => {
    expect(direct.serverInfo).toMatchObject({ name: 'mcp-servers/everything' });
    expect(direct.capabilities).toHaveProperty('tools');
    expect(direct.toolNames).toEqual(expect.arrayContaining(['echo', 'get-tiny-image', 'trigger-long-running-operation', 'trigger-sampling-request', 'trigger-elicitation-request', 'get-roots-list']));
    expect(direct.echoLength).toBeGreaterThan(BIG);
    expect(direct.echoTail).toBe('the-end');
    expect(direct.image.some((c) => c.type === 'image' && c.mimeType === 'image/png' && c.dataLength > 1000)).toBe(true);
    expect(direct.unknownTool).toMatchObject({ isError: true });
    expect(direct.cancelled).toBe('rejected: McpError: MCP error -32001: the user pressed stop');
    expect(direct.samplingRequests).toHaveLength(1);
    expect(direct.elicitationRequests).toBe(1);
    expect(direct.rootsRequests).toBeGreaterThanOrEqual(1);
    expect(JSON.stringify(direct.roots)).toContain('file:///work/project');
    expect(direct.resources).not.toHaveLength(0);
    expect(direct.prompts).toContain('simple-prompt');
  });

  test('progress reaches the client through mcptap', () => {
    // The SDK drops a progress notification that arrives in the same read as the response (its handler runs a
    // microtask later), so how many of the 3 arrive depends on chunking, directly or not.
    for (const run of [direct, tapped]) {
      expect(run.progress.length).toBeGreaterThanOrEqual(1);
      run.progress.forEach((p, i) => expect(p).toEqual({ progress: i + 1, total: 3 }));
    }
  });

  test('stderr is relayed; mcptap adds only its one line saying where the log is', () => {
    const [first, ...rest] = tapped.stderr.split('\n');
    expect(first).toMatch(new RegExp(`^mcptap: logging server-everything to ${logDir}/server-everything-\\d{8}T\\d{6}Z-\\d+\\.ndjson$`));
    expect(rest.join('\n')).toBe(direct.stderr);
  });
});

describe('the log correlates all of it', () => {
  const byKind = (kind: string) => records.filter((r) => r.kind === kind);

  test('one session, from start to a clean exit, nothing invalid, only the cancelled call pending', () => {
    expect(new Set(records.map((r) => r.session)).size).toBe(1);
    expect(records[0]).toMatchObject({ kind: 'lifecycle', event: 'start', command: 'node', args: EVERYTHING });
    expect(records.at(-1)).toMatchObject({ kind: 'lifecycle', event: 'exit', code: 0, signal: null });
    expect(byKind('invalid')).toEqual([]);
    expect(records.map((r) => r.seq)).toEqual(records.map((_, i) => i));
  });

  test('the cancelled call: cancellation linked to it, no answer owed, pending without a warning', () => {
    const calls = byKind('request').filter((r) => r.tool === 'trigger-long-running-operation');
    expect(calls).toHaveLength(2);
    const cancelledCall = calls[1]!;
    const cancel = byKind('notification').find((r) => r.method === 'notifications/cancelled')!;
    expect(cancel).toMatchObject({ dir: 'c2s', relatedId: cancelledCall.id, relatedMethod: 'tools/call', requestSeq: cancelledCall.seq });
    expect(cancel.msg).toBe(`Client cancels request tools/call trigger-long-running-operation #${String(cancelledCall.id)}: the user pressed stop.`);
    expect(byKind('pending')).toEqual([
      expect.objectContaining({ id: cancelledCall.id, requestSeq: cancelledCall.seq, cancelled: true, level: 30, tool: 'trigger-long-running-operation' }),
    ]);
  });

  test('check passes the log: the cancelled call was owed no answer (the unknown tool is a tool error, not failed on)', () => {
    const report = checkRecords(records);
    expect(report.findings.map((f) => f.signal)).toEqual(['tool-errors']);
    expect(report.failed).toBe(false);
  });

  test('every other request is answered in the other direction, with method, latency and requestSeq', () => {
    const pending = new Set(byKind('pending').map((r) => r.requestSeq));
    const requests = byKind('request').filter((r) => !pending.has(r.seq));
    const responses = byKind('response');
    expect(responses).toHaveLength(requests.length);
    for (const request of requests) {
      const response = responses.find((r) => r.requestSeq === request.seq);
      expect(response, `answer to ${String(request.method)} #${String(request.id)}`).toBeDefined();
      expect(response).toMatchObject({ id: request.id, method: request.method, dir: request.dir === 'c2s' ? 's2c' : 'c2s' });
      expect(typeof response!.latencyMs).toBe('number');
      expect(response!.latencyMs as number).toBeGreaterThanOrEqual(0);
    }
  });

  test('server-initiated sampling, elicitation and roots requests travel s2c and are answered c2s', () => {
    const serverRequests = byKind('request').filter((r) => r.dir === 's2c');
    expect(serverRequests.map((r) => r.method)).toEqual(expect.arrayContaining(['roots/list', 'sampling/createMessage', 'elicitation/create']));
    const sampling = byKind('response').find((r) => r.method === 'sampling/createMessage')!;
    expect(sampling).toMatchObject({ dir: 'c2s' });
    expect(sampling.msg).toMatch(/^Client returns the LLM\u2019s completion from stand-in-llm: "The sky is blue/);
    expect(byKind('response').find((r) => r.method === 'elicitation/create')!.msg).toMatch(/answered the elicitation with action accept/);
    expect(byKind('response').find((r) => r.method === 'roots/list')!.msg).toMatch(/^Client returns 1 root/);
  });

  test('the handshake, tools/list and tool results read well', () => {
    const init = byKind('response').find((r) => r.method === 'initialize')!;
    expect(init.msg).toMatch(/^Handshake: server mcp-servers\/everything 2\.0\.0 answers with protocol \S+; capabilities .*tools\(listChanged\)/);
    const list = byKind('response').filter((r) => r.method === 'tools/list').at(-1)!;
    expect(list.msg).toMatch(new RegExp(`^Server offers ${direct.toolNames.length} tools: echo, `));
    const image = byKind('response').find((r) => r.tool === 'get-tiny-image')!;
    expect(image.msg).toMatch(/^Tool get-tiny-image returned 2 text, 1 image \(/);
    const unknown = byKind('response').find((r) => r.tool === 'no-such-tool')!;
    expect(unknown).toMatchObject({ isError: true, level: 40 });
  });

  test('the 1 MB echo: head kept, sha256 of the whole frame, still correlated', () => {
    const request = byKind('request').find((r) => r.tool === 'echo')!;
    expect(request).toMatchObject({ method: 'tools/call', truncated: true });
    expect(request.bytes as number).toBeGreaterThan(BIG);
    expect(Buffer.byteLength(request.raw as string)).toBe(1024 * 1024);
    expect(request.sha256).toMatch(/^[0-9a-f]{64}$/);
    const response = byKind('response').find((r) => r.requestSeq === request.seq)!;
    expect(response).toMatchObject({ tool: 'echo', truncated: true });
  });

  test('progress notifications carry relatedId of the long-running call', () => {
    const call = byKind('request').find((r) => r.tool === 'trigger-long-running-operation')!;
    const progress = byKind('notification').filter((r) => r.method === 'notifications/progress' && r.relatedId === call.id);
    expect(progress).toHaveLength(3);
    for (const p of progress) expect(p).toMatchObject({ relatedId: call.id, relatedMethod: 'tools/call', requestSeq: call.seq, progressToken: call.progressToken });
    expect(progress.map((p) => p.msg)).toEqual([1, 2, 3].map((n) => `Progress for tools/call trigger-long-running-operation #${String(call.id)}: ${n} of 3.`));
  });

  test('stderr of the server is logged', () => {
    expect(byKind('stderr').map((r) => r.text)).toContain('Starting default (STDIO) server...');
  });
});
