/**
 * One scripted MCP session, driven by the official SDK Client over StdioClientTransport against
 * server-everything. The SDK integration test runs it twice — directly and through mcptap — and compares the
 * results, so the scenario returns only what a client would see (no timings, no ids that differ per run).
 */
import { Client } from '@modelcontextprotocol/sdk/client/index.js';
import { StdioClientTransport } from '@modelcontextprotocol/sdk/client/stdio.js';
import {
  CallToolResultSchema,
  CreateMessageRequestSchema,
  ElicitRequestSchema,
  ListRootsRequestSchema,
} from '@modelcontextprotocol/sdk/types.js';

/** The everything server, started in stdio mode. */
export const EVERYTHING = ['node_modules/@modelcontextprotocol/server-everything/dist/index.js', 'stdio'];

/** What the client saw; compared between a direct run and a run through mcptap. */
export interface ScenarioResult {
  serverInfo: unknown;
  capabilities: unknown;
  instructions: unknown;
  toolNames: string[];
  echoLength: number;
  echoTail: string;
  image: { type: string; mimeType?: string; dataLength: number }[];
  unknownTool: unknown;
  longRunning: unknown;
  progress: { progress: number; total?: number }[];
  cancelled: string;
  sampling: unknown;
  samplingRequests: unknown[];
  elicitation: unknown;
  elicitationRequests: number;
  roots: unknown;
  rootsRequests: number;
  resources: unknown;
  resourceRead: unknown;
  prompts: unknown;
  prompt: unknown;
  stderr: string;
}

/** Size of the echo argument: 1 MB, to cross the log's default --max-body cap. */
export const BIG = 1024 * 1024;

/** Run the scenario against `command args` (the server itself, or mcptap wrapping it). */
export async function runScenario(command: string, args: string[], env?: Record<string, string>): Promise<ScenarioResult> {
  const transport = new StdioClientTransport({ command, args, stderr: 'pipe', cwd: process.cwd(), ...(env ? { env } : {}) });
  let stderr = '';
  transport.stderr?.on('data', (chunk: Buffer) => {
    stderr += chunk.toString('utf8');
  });
  const client = new Client(
    { name: 'mcptap-test-client', version: '1.0.0' },
    { capabilities: { sampling: {}, elicitation: {}, roots: { listChanged: true } } },
  );
  const samplingRequests: unknown[] = [];
  let elicitationRequests = 0;
  let rootsRequests = 0;
  client.setRequestHandler(CreateMessageRequestSchema, async (request) => {
    samplingRequests.push(request.params.messages);
    return { role: 'assistant', content: { type: 'text', text: 'The sky is blue because of Rayleigh scattering.' }, model: 'stand-in-llm', stopReason: 'endTurn' };
  });
  client.setRequestHandler(ElicitRequestSchema, async () => {
    elicitationRequests++;
    return { action: 'accept', content: { name: 'Ada Lovelace' } };
  });
  client.setRequestHandler(ListRootsRequestSchema, async () => {
    rootsRequests++;
    return { roots: [{ uri: 'file:///work/project', name: 'project' }] };
  });

  await client.connect(transport);
  try {
    const toolNames = (await client.listTools()).tools.map((t) => t.name).sort();
    const message = 'x'.repeat(BIG - 10) + 'the-end';
    const echo = await client.callTool({ name: 'echo', arguments: { message } });
    const echoText = (echo.content as { text: string }[])[0]!.text;
    const tiny = await client.callTool({ name: 'get-tiny-image', arguments: {} });
    const image = (tiny.content as { type: string; mimeType?: string; data?: string; text?: string }[]).map((c) => ({
      type: c.type,
      ...(c.mimeType ? { mimeType: c.mimeType } : {}),
      dataLength: (c.data ?? c.text ?? '').length,
    }));
    const unknownTool = await client.callTool({ name: 'no-such-tool', arguments: {} }).catch((e: Error) => ({ thrown: e.message }));
    const progress: { progress: number; total?: number }[] = [];
    const longRunning = await client.callTool(
      { name: 'trigger-long-running-operation', arguments: { duration: 0.6, steps: 3 } },
      CallToolResultSchema,
      { onprogress: (p) => progress.push({ progress: p.progress, ...(p.total !== undefined ? { total: p.total } : {}) }) },
    );
    // The user gives up on a slow call: the SDK sends notifications/cancelled and rejects the call.
    const controller = new AbortController();
    const cancelled = await client
      .callTool({ name: 'trigger-long-running-operation', arguments: { duration: 1, steps: 2 } }, CallToolResultSchema, {
        signal: controller.signal,
        onprogress: () => controller.abort('the user pressed stop'),
      })
      .then(
        () => 'completed',
        (e: unknown) => `rejected: ${String(e)}`,
      );
    const sampling = await client.callTool({ name: 'trigger-sampling-request', arguments: { prompt: 'Why is the sky blue?', maxTokens: 50 } });
    const elicitation = await client.callTool({ name: 'trigger-elicitation-request', arguments: {} });
    const roots = await client.callTool({ name: 'get-roots-list', arguments: {} });
    const resources = await client.listResources();
    const first = resources.resources[0]!;
    const resourceRead = await client.readResource({ uri: first.uri });
    const prompts = await client.listPrompts();
    const prompt = await client.getPrompt({ name: 'simple-prompt' });
    return {
      serverInfo: client.getServerVersion(),
      capabilities: client.getServerCapabilities(),
      instructions: client.getInstructions(),
      toolNames,
      echoLength: echoText.length,
      echoTail: echoText.slice(-7),
      image,
      unknownTool,
      longRunning,
      progress,
      cancelled,
      sampling,
      samplingRequests,
      elicitation,
      elicitationRequests,
      roots,
      rootsRequests,
      resources: resources.resources.map((r) => r.uri),
      resourceRead,
      prompts: prompts.prompts.map((p) => p.name),
      prompt,
      stderr,
    };
  } finally {
    await client.close();
  }
}
