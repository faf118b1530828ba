/**
 * One scripted MCP session over HTTP, driven by the official SDK Client (StreamableHTTPClientTransport or
 * SSEClientTransport) against server-everything started in `streamableHttp` or `sse` mode. The HTTP tests run
 * it directly and through mcptap and compare what the client saw, so it returns no timings and no ids that
 * differ per run.
 */
import { spawn, type ChildProcess } from 'node:child_process';
import { createServer } from 'node:net';
import { Client } from '@modelcontextprotocol/sdk/client/index.js';
import { StreamableHTTPClientTransport } from '@modelcontextprotocol/sdk/client/streamableHttp.js';
import { SSEClientTransport } from '@modelcontextprotocol/sdk/client/sse.js';
import {
  CallToolResultSchema,
  CreateMessageRequestSchema,
  ElicitRequestSchema,
  ListRootsRequestSchema,
} from '@modelcontextprotocol/sdk/types.js';

const EVERYTHING = 'node_modules/@modelcontextprotocol/server-everything/dist/index.js';

/** A free TCP port on 127.0.0.1 (server-everything takes its port from $PORT and cannot be given 0). */
export async function freePort(): Promise<number> {
  return new Promise((resolve, reject) => {
    const server = createServer();
    server.once('error', reject);
    server.listen(0, '127.0.0.1', () => {
      const address = server.address();
      const port = typeof address === 'object' && address ? address.port : 0;
      server.close(() => resolve(port));
    });
  });
}

/** server-everything in an HTTP mode, listening on a free port. */
export interface Everything {
  url: string;
  child: ChildProcess;
  stop(): Promise<void>;
}

/** Start server-everything (`streamableHttp` or `sse`) and wait until it listens. */
export async function startEverything(mode: 'streamableHttp' | 'sse'): Promise<Everything> {
  for (let attempt = 0; ; attempt++) {
    const port = await freePort();
    const child = spawn(process.execPath, [EVERYTHING, mode], { env: { ...process.env, PORT: String(port) }, stdio: ['ignore', 'pipe', 'pipe'] });
    let output = '';
    const ready = await new Promise<boolean>((resolve) => {
      const onData = (chunk: Buffer): void => {
        output += chunk.toString('utf8');
        if (/listening on port|running on port/i.test(output)) resolve(true);
        if (/already in use|EADDRINUSE/i.test(output)) resolve(false);
      };
      child.stdout!.on('data', onData);
      child.stderr!.on('data', onData);
      child.once('exit', () => resolve(false));
      setTimeout(() => resolve(false), 15_000).unref();
    });
    const stop = (): Promise<void> =>
      new Promise((resolve) => {
        if (child.exitCode !== null || child.signalCode !== null) return resolve();
        child.once('exit', () => resolve());
        child.kill('SIGTERM');
      });
    if (ready) return { url: `http://127.0.0.1:${port}`, child, stop };
    await stop();
    if (attempt >= 2) throw new Error(`server-everything ${mode} did not start: ${output}`);
  }
}

/** What the client saw; compared between a direct run and a run through mcptap. */
export interface HttpScenarioResult {
  serverInfo: unknown;
  capabilities: unknown;
  toolNames: string[];
  echo: unknown;
  bigEcho: { length: number; tail: string };
  sum: unknown;
  longRunning: unknown;
  progress: { progress: number; total?: number }[];
  sampling: unknown;
  samplingRequests: unknown[];
  elicitation: unknown;
  elicitationRequests: number;
  rootsRequested: boolean;
  prompts: string[];
  unknownTool: unknown;
}

/** Run the scenario against `baseUrl` (server-everything itself, or mcptap in front of it). */
export async function runHttpScenario(mode: 'streamableHttp' | 'sse', baseUrl: string): Promise<HttpScenarioResult> {
  const client = new Client(
    { name: 'mcptap-http-test-client', version: '1.0.0' },
    { capabilities: { sampling: {}, elicitation: {}, roots: { listChanged: true } } },
  );
  const samplingRequests: unknown[] = [];
  let elicitationRequests = 0;
  let rootsRequested = false;
  client.setRequestHandler(CreateMessageRequestSchema, async (request) => {
    samplingRequests.push(request.params.messages);
    return { role: 'assistant', content: { type: 'text', text: 'The sky is blue because of Rayleigh scattering.' }, model: 'stand-in-llm', stopReason: 'endTurn' };
  });
  client.setRequestHandler(ElicitRequestSchema, async () => {
    elicitationRequests++;
    return { action: 'accept', content: { name: 'Ada Lovelace' } };
  });
  client.setRequestHandler(ListRootsRequestSchema, async () => {
    rootsRequested = true;
    return { roots: [{ uri: 'file:///work/project', name: 'project' }] };
  });
  const streamable = mode === 'streamableHttp' ? new StreamableHTTPClientTransport(new URL(`${baseUrl}/mcp`)) : undefined;
  const transport = streamable ?? new SSEClientTransport(new URL(`${baseUrl}/sse`));
  await client.connect(transport);
  try {
    const toolNames = (await client.listTools()).tools.map((t) => t.name).sort();
    const echo = await client.callTool({ name: 'echo', arguments: { message: 'hello through the tap' } });
    // Over the log's 1 MiB --max-body both ways: the traffic must pass whole, the log keeps the head.
    const big = await client.callTool({ name: 'echo', arguments: { message: `${'x'.repeat(1536 * 1024)}the-end` } });
    const bigText = (big.content as { text: string }[])[0]!.text;
    const sum = await client.callTool({ name: 'get-sum', arguments: { a: 2, b: 40 } });
    const progress: { progress: number; total?: number }[] = [];
    const longRunning = await client.callTool(
      { name: 'trigger-long-running-operation', arguments: { duration: 0.3, steps: 3 } },
      CallToolResultSchema,
      { onprogress: (p) => progress.push({ progress: p.progress, ...(p.total !== undefined ? { total: p.total } : {}) }) },
    );
    // Server → client requests, sent on the SSE stream of the tools/call POST (or the legacy stream) and answered
    // by the client in a new POST.
    const sampling = await client.callTool({ name: 'trigger-sampling-request', arguments: { prompt: 'Why is the sky blue?', maxTokens: 50 } });
    const elicitation = await client.callTool({ name: 'trigger-elicitation-request', arguments: {} });
    const prompts = (await client.listPrompts()).prompts.map((p) => p.name).sort();
    const unknownTool = await client.callTool({ name: 'no-such-tool', arguments: {} }).catch((e: Error) => ({ thrown: e.message }));
    // The server asks for roots 350 ms after initialization, on its standalone stream.
    for (let i = 0; i < 40 && !rootsRequested; i++) await new Promise((r) => setTimeout(r, 50));
    return {
      serverInfo: client.getServerVersion(),
      capabilities: client.getServerCapabilities(),
      toolNames,
      echo,
      bigEcho: { length: bigText.length, tail: bigText.slice(-7) },
      sum,
      longRunning,
      progress,
      sampling,
      samplingRequests,
      elicitation,
      elicitationRequests,
      rootsRequested,
      prompts,
      unknownTool,
    };
  } finally {
    if (streamable) await streamable.terminateSession().catch(() => {});
    await client.close();
  }
}

/**
 * The SDK's stateless pattern: a fresh server and transport per request, no session id, JSON replies; one
 * tool, get_weather. Resolves with its base URL and a stop function.
 */
export async function startStatelessJsonServer(): Promise<{ url: string; stop: () => void }> {
  const { McpServer } = await import('@modelcontextprotocol/sdk/server/mcp.js');
  const { StreamableHTTPServerTransport } = await import('@modelcontextprotocol/sdk/server/streamableHttp.js');
  const { z } = await import('zod');
  const http = await import('node:http');
  const server = http.createServer((req, res) => {
    const mcp = new McpServer({ name: 'stateless-weather', version: '1.0.0' });
    mcp.registerTool('get_weather', { description: 'Weather for a city', inputSchema: { city: z.string() } }, async ({ city }) => ({
      content: [{ type: 'text', text: `It's always raining in ${city}` }],
    }));
    const transport = new StreamableHTTPServerTransport({ sessionIdGenerator: undefined, enableJsonResponse: true });
    res.on('close', () => void transport.close());
    void mcp.connect(transport).then(() => transport.handleRequest(req, res));
  });
  await new Promise<void>((resolve) => server.listen(0, '127.0.0.1', () => resolve()));
  const address = server.address();
  return { url: `http://127.0.0.1:${typeof address === 'object' && address ? address.port : 0}`, stop: () => server.close() };
}
