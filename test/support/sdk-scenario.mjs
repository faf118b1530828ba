/**
 * One scripted MCP session driven by the official SDK Client, over any transport: initialize, tools/list,
 * tools/call (plain, image, unknown tool, progress, structured content), the server's requests (roots at
 * start-up, sampling, elicitation), resources and prompts.
 *
 * It returns only what a client sees (no timings, no stderr, nothing that differs per run), so two runs can be
 * compared with toEqual: against the real server-everything, through mcptap, and against `mcptap replay`.
 *
 * Plain ESM (not TypeScript) because scripts/make-fixtures.mjs runs it under plain Node 20 to record fixtures.
 */
import { Client } from '@modelcontextprotocol/sdk/client/index.js';
import {
  CallToolResultSchema,
  CreateMessageRequestSchema,
  ElicitRequestSchema,
  ListRootsRequestSchema,
  LoggingMessageNotificationSchema,
} from '@modelcontextprotocol/sdk/types.js';

/** The everything server's entry point and its stdio mode, relative to the repository root. */
export const EVERYTHING = ['node_modules/@modelcontextprotocol/server-everything/dist/index.js', 'stdio'];

/** The answer the client's stand-in LLM gives to sampling requests. */
export const SAMPLING_ANSWER = 'The sky is blue because of Rayleigh scattering.';

/**
 * Run the scenario over `transport` (an SDK client transport, not yet started) and close it.
 * @param {import('@modelcontextprotocol/sdk/shared/transport.js').Transport} transport
 * @returns {Promise<Record<string, unknown>>}
 */
export async function runSdkScenario(transport) {
  const client = new Client(
    { name: 'mcptap-scenario-client', version: '1.0.0' },
    { capabilities: { sampling: {}, elicitation: {}, roots: { listChanged: true } } },
  );
  /** @type {unknown[]} */
  const serverRequests = [];
  /** @type {unknown[]} */
  const logging = [];
  /** @type {() => void} */
  let rootsAsked = () => {};
  const rootsAskedOnce = new Promise((resolve) => {
    rootsAsked = () => resolve(undefined);
  });
  client.setRequestHandler(CreateMessageRequestSchema, async (request) => {
    serverRequests.push({ method: request.method, messages: request.params.messages, maxTokens: request.params.maxTokens });
    return { role: 'assistant', content: { type: 'text', text: SAMPLING_ANSWER }, model: 'stand-in-llm', stopReason: 'endTurn' };
  });
  client.setRequestHandler(ElicitRequestSchema, async (request) => {
    serverRequests.push({ method: request.method, message: request.params.message });
    return { action: 'accept', content: { name: 'Ada Lovelace' } };
  });
  client.setRequestHandler(ListRootsRequestSchema, async (request) => {
    serverRequests.push({ method: request.method });
    rootsAsked();
    return { roots: [{ uri: 'file:///work/project', name: 'project' }] };
  });
  client.setNotificationHandler(LoggingMessageNotificationSchema, (n) => {
    logging.push({ level: n.params.level, data: n.params.data });
  });

  await client.connect(transport);
  // Progress as it arrives on the wire: the SDK hands notifications to `onprogress` a tick after it reads them
  // but settles the request at once, so progress sent right before the response can miss `onprogress`.
  /** @type {unknown[]} */
  const progressOnWire = [];
  const deliver = transport.onmessage;
  transport.onmessage = (message, extra) => {
    if (message && typeof message === 'object' && 'method' in message && message.method === 'notifications/progress') progressOnWire.push(message.params);
    deliver?.(message, extra);
  };
  try {
    // server-everything asks for roots 350 ms after initialized; wait for it so the conversation's order is fixed.
    await Promise.race([rootsAskedOnce, new Promise((resolve) => setTimeout(resolve, 5000))]);
    const tools = (await client.listTools()).tools;
    const echo = await client.callTool({ name: 'echo', arguments: { message: 'hello from the scenario' } });
    const sum = await client.callTool({ name: 'get-sum', arguments: { a: 2, b: 3 } });
    const image = await client.callTool({ name: 'get-tiny-image', arguments: {} });
    const structured = await client.callTool({ name: 'get-structured-content', arguments: { location: 'Chicago' } });
    const unknownTool = await client.callTool({ name: 'no-such-tool', arguments: {} }).catch((e) => ({ thrown: String(e?.message ?? e) }));
    /** @type {unknown[]} */
    const progressSeen = [];
    const longRunning = await client.callTool(
      { name: 'trigger-long-running-operation', arguments: { duration: 0.3, steps: 3 } },
      CallToolResultSchema,
      { onprogress: (p) => progressSeen.push(p) },
    );
    // At least the first steps reach onprogress (the last may race the response, see above).
    const progressHandled = progressSeen.length >= 2;
    const sampling = await client.callTool({ name: 'trigger-sampling-request', arguments: { prompt: 'Why is the sky blue?', maxTokens: 50 } });
    const elicitation = await client.callTool({ name: 'trigger-elicitation-request', arguments: {} });
    const roots = await client.callTool({ name: 'get-roots-list', arguments: {} });
    const resources = await client.listResources();
    const first = resources.resources[0];
    const resourceRead = first ? await client.readResource({ uri: first.uri }) : undefined;
    const templates = await client.listResourceTemplates();
    const prompts = await client.listPrompts();
    const simplePrompt = await client.getPrompt({ name: 'simple-prompt' });
    const argsPrompt = await client.getPrompt({ name: 'args-prompt', arguments: { city: 'Paris' } });
    const ping = await client.ping();
    return {
      serverInfo: client.getServerVersion(),
      capabilities: client.getServerCapabilities(),
      instructions: client.getInstructions(),
      tools,
      echo,
      sum,
      image,
      structured,
      unknownTool,
      longRunning,
      progress: progressOnWire,
      progressHandled,
      sampling,
      elicitation,
      roots,
      serverRequests,
      logging,
      resources: resources.resources,
      resourceRead,
      templates: templates.resourceTemplates,
      prompts: prompts.prompts,
      simplePrompt,
      argsPrompt,
      ping,
    };
  } finally {
    await client.close();
  }
}
