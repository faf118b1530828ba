/**
 * OpenTelemetry against a local OTLP/HTTP receiver (a plain node http server on port 0 collecting POSTs to
 * /v1/traces): `--otlp-endpoint` on `mcptap http` and on the stdio wrapper streams spans while an agent runs (the
 * real `ollama` client, the official SDK Client, the recorded LLM stand-in and the weather server) with the tool
 * round trip joined live into the LLM call's trace, `mcptap export --format otlp --endpoint` joins it too (and
 * groups the turn), a traceparent in params._meta is
 * honoured, and a receiver that is down costs nothing but a notice.
 *
 * Spawns bin/mcptap.js, which runs the built dist/: build first (npm test does).
 */
import { execFile } from 'node:child_process';
import http from 'node:http';
import { mkdtempSync, rmSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { promisify } from 'node:util';
import { afterEach, describe, expect, it } from 'vitest';
import { Client } from '@modelcontextprotocol/sdk/client/index.js';
import { StdioClientTransport } from '@modelcontextprotocol/sdk/client/stdio.js';
import { runOllamaAgent, toolboxFrom, type Toolbox } from '../../src/demo/agent.js';
// @ts-expect-error -- a plain .mjs fixture without type declarations
import { startLlmUpstream } from '../../fixtures/llm-upstream.mjs';
import { startHttpCli } from '../support/http-cli.js';

const BIN = 'bin/mcptap.js';
const run = promisify(execFile);
const cleanups: (() => Promise<void> | void)[] = [];
afterEach(async () => {
  for (const c of cleanups.splice(0).reverse()) await c();
});

interface Span {
  traceId: string;
  spanId: string;
  parentSpanId?: string;
  name: string;
  attributes: Record<string, unknown>;
  resource: Record<string, unknown>;
}

/** A minimal OTLP/HTTP JSON receiver: collects every span POSTed to /v1/traces. */
async function startReceiver(): Promise<{ url: string; spans: Span[]; posts: number; close(): Promise<void> }> {
  const state = { spans: [] as Span[], posts: 0 };
  const server = http.createServer((req, res) => {
    const chunks: Buffer[] = [];
    req.on('data', (c: Buffer) => chunks.push(c));
    req.on('end', () => {
      if (req.method !== 'POST' || req.url !== '/v1/traces') {
        res.writeHead(404).end();
        return;
      }
      state.posts++;
      const body = JSON.parse(Buffer.concat(chunks).toString('utf8')) as { resourceSpans: { resource: { attributes: Attr[] }; scopeSpans: { spans: (Omit<Span, 'attributes' | 'resource'> & { attributes: Attr[] })[] }[] }[] };
      for (const rs of body.resourceSpans) {
        for (const ss of rs.scopeSpans) {
          for (const s of ss.spans) state.spans.push({ ...s, attributes: flat(s.attributes), resource: flat(rs.resource.attributes) });
        }
      }
      res.writeHead(200, { 'content-type': 'application/json' }).end('{}');
    });
  });
  await new Promise<void>((resolve) => server.listen(0, '127.0.0.1', resolve));
  const port = (server.address() as { port: number }).port;
  return {
    url: `http://127.0.0.1:${port}`,
    get spans() {
      return state.spans;
    },
    get posts() {
      return state.posts;
    },
    close: () => new Promise<void>((resolve) => server.close(() => resolve())),
  };
}

type Attr = { key: string; value: Record<string, unknown> };
function flat(attrs: Attr[]): Record<string, unknown> {
  const out: Record<string, unknown> = {};
  for (const a of attrs) {
    const v = a.value;
    out[a.key] = 'stringValue' in v ? v.stringValue : 'intValue' in v ? Number(v.intValue) : 'boolValue' in v ? v.boolValue : 'doubleValue' in v ? v.doubleValue : 'arrayValue' in v ? ((v.arrayValue as { values?: { stringValue?: string }[] }).values ?? []).map((x) => x.stringValue) : v;
  }
  return out;
}

async function until<T>(what: string, probe: () => T | undefined, ms = 10_000): Promise<T> {
  const end = Date.now() + ms;
  for (;;) {
    const value = probe();
    if (value !== undefined) return value;
    if (Date.now() > end) throw new Error(`timed out waiting for ${what}`);
    await new Promise((r) => setTimeout(r, 50));
  }
}

/** `mcptap http` as a child process; resolves once it listens. */
/** The SDK Client talking to the weather server through `mcptap [flags] -- node fixtures/weather-server.mjs`. */
async function connectWeather(flags: string[]): Promise<{ client: Client; toolbox: Toolbox; stderr: () => string; close(): Promise<void> }> {
  const transport = new StdioClientTransport({
    command: process.execPath,
    args: [BIN, ...flags, '--', process.execPath, 'fixtures/weather-server.mjs'],
    stderr: 'pipe',
  });
  let err = '';
  transport.stderr?.on('data', (c: Buffer) => (err += c.toString('utf8')));
  const client = new Client({ name: 'otlp-test-agent', version: '1.0.0' });
  await client.connect(transport);
  return {
    client,
    stderr: () => err,
    toolbox: await toolboxFrom(client),
    close: () => client.close(),
  };
}

function tempDir(): string {
  const dir = mkdtempSync(join(tmpdir(), 'mcptap-otlp-'));
  cleanups.push(() => rmSync(dir, { recursive: true, force: true }));
  return dir;
}

describe('--otlp-endpoint and export --format otlp', () => {
  it('streams spans from both taps while the agent runs, and the export joins the round trip into one trace', async () => {
    const dir = tempDir();
    const receiver = await startReceiver();
    cleanups.push(() => receiver.close());
    const upstream = (await startLlmUpstream({ speed: 0 })) as { url: string; close(): Promise<void> };
    cleanups.push(() => upstream.close());
    const llm = await startHttpCli(['--target', upstream.url, '--log-dir', dir, '--name', 'llm', '--otlp-endpoint', receiver.url]);
    // The fast path (no yargs) reads --otlp-endpoint too.
    const weather = await connectWeather(['--log-dir', dir, '--name', 'weather', '--otlp-endpoint', receiver.url]);

    const result = await runOllamaAgent({ baseUrl: llm.url, model: 'qwen2.5:3b', prompt: 'what is the weather in California?', toolbox: weather.toolbox, stream: false });
    expect(result.toolCalls).toHaveLength(1);

    // Live: the spans arrive while both taps still run.
    const liveCall = await until('the live tools/call span', () => receiver.spans.find((s) => s.name === 'tools/call get_weather'));
    await until('both live LLM spans', () => (receiver.spans.filter((s) => s.name === 'chat qwen2.5:3b').length === 2 ? true : undefined));
    expect(liveCall.attributes).toMatchObject({ 'mcp.method.name': 'tools/call', 'gen_ai.tool.name': 'get_weather', 'gen_ai.operation.name': 'execute_tool', 'network.transport': 'pipe', 'mcp.protocol.version': expect.any(String) });
    expect(liveCall.resource).toMatchObject({ 'service.name': 'mcptap', 'mcptap.label': 'weather' });
    const liveLlm = receiver.spans.find((s) => s.name === 'chat qwen2.5:3b')!;
    expect(liveLlm.attributes).toMatchObject({ 'gen_ai.operation.name': 'chat', 'gen_ai.provider.name': 'ollama', 'gen_ai.request.model': 'qwen2.5:3b' });
    expect(liveLlm.resource).toMatchObject({ 'mcptap.label': 'llm' });
    expect(receiver.spans.map((s) => s.name)).toEqual(expect.arrayContaining(['initialize', 'tools/list']));
    // The round trip is joined live too: the stdio tap found the model's call in the LLM proxy's log.
    const liveAsker = receiver.spans.find((s) => s.name === 'chat qwen2.5:3b' && (s.attributes['mcptap.tool_calls'] as string[] | undefined)?.includes('get_weather'))!;
    expect(liveCall.traceId).toBe(liveAsker.traceId);
    expect(liveCall.parentSpanId).toBe(liveAsker.spanId);
    expect(receiver.spans.find((s) => s.name === 'tools/list')!.parentSpanId).toBeUndefined();

    await weather.close();
    expect(await llm.stop()).toBe(0);

    // Offline, with both logs: the tools/call span is a child of the LLM call whose reply asked for it.
    const exported = await startReceiver();
    cleanups.push(() => exported.close());
    const { stderr } = await run(process.execPath, [BIN, 'export', '--format', 'otlp', '--endpoint', exported.url, dir]);
    expect(stderr).toMatch(/sent \d+ spans/);
    const call = exported.spans.find((s) => s.name === 'tools/call get_weather')!;
    const asker = exported.spans.find((s) => s.name === 'chat qwen2.5:3b' && (s.attributes['mcptap.tool_calls'] as string[] | undefined)?.includes('get_weather'))!;
    expect(asker).toBeDefined();
    expect(call.traceId).toBe(asker.traceId);
    expect(call.parentSpanId).toBe(asker.spanId);
    const turn = exported.spans.find((s) => s.name === 'turn 1')!;
    expect(exported.spans.filter((s) => s.traceId === turn.traceId).map((s) => s.name).sort()).toEqual(['chat qwen2.5:3b', 'chat qwen2.5:3b', 'tools/call get_weather', 'turn 1']);
    // Live and exported spans have the same ids.
    expect(call.spanId).toBe(liveCall.spanId);
    expect(receiver.spans.some((s) => s.spanId === asker.spanId)).toBe(true);
  });

  it('honours a traceparent the client puts in params._meta', async () => {
    const dir = tempDir();
    const receiver = await startReceiver();
    cleanups.push(() => receiver.close());
    const weather = await connectWeather(['stdio', '--log-dir', dir, '--otlp-endpoint', `${receiver.url}/v1/traces`]);
    const traceparent = '00-0af7651916cd43dd8448eb211c80319c-b7ad6b7169203331-01';
    await weather.client.callTool({ name: 'get_weather', arguments: { location: 'Oslo' }, _meta: { traceparent } });
    const span = await until('the traced tools/call span', () => receiver.spans.find((s) => s.name === 'tools/call get_weather'));
    expect(span.traceId).toBe('0af7651916cd43dd8448eb211c80319c');
    expect(span.parentSpanId).toBe('b7ad6b7169203331');
    await weather.close();
  });

  it('a receiver that is down changes nothing for the client and gives one notice', async () => {
    const dir = tempDir();
    const gone = await startReceiver();
    const url = gone.url;
    await gone.close();
    const weather = await connectWeather(['--log-dir', dir, '--otlp-endpoint', url]);
    for (let i = 0; i < 3; i++) {
      const text = await weather.toolbox.call('get_weather', { location: `City ${i}` });
      expect(text).toContain(`City ${i}`);
    }
    await until('the notice', () => (/could not send spans/.test(weather.stderr()) ? true : undefined));
    await weather.close();
    expect(weather.stderr().match(/could not send spans/g)).toHaveLength(1);
  });

  it('refuses an endpoint that is not an http URL, plainly', async () => {
    const result = await run(process.execPath, [BIN, '--otlp-endpoint', 'grpc://127.0.0.1:4317', '--', process.execPath, '-e', '']).catch((e: { code: number; stderr: string }) => e);
    expect((result as { code: number }).code).toBe(2);
    expect((result as { stderr: string }).stderr).toContain('--otlp-endpoint must be an http:// or https:// URL');
  });
});
