/**
 * `mcptap demo`: the whole agent ↔ LLM ↔ MCP round trip, offline, in a few seconds.
 *
 * Three real peers and two real taps, all logging into one fresh folder:
 * - the weather MCP server (fixtures/weather-server.mjs, the official SDK's McpServer), started by the official
 *   SDK Client as `mcptap --log-dir DIR --name weather -- node fixtures/weather-server.mjs` — the same prefix a
 *   user puts in an mcpServers entry;
 * - an LLM stand-in (fixtures/llm-upstream.mjs) that answers with the recorded Ollama, OpenAI, Anthropic and
 *   Gemini frames, behind the HTTP tap (startHttpTap), as `mcptap http` would sit in front of the API;
 * - the agent loop of MCP tutorials, with the real `ollama`, `openai`, `@anthropic-ai/sdk` or `@google/genai`
 *   npm client (the Anthropic one naming the tools `mcp__weather__…` as Claude Code does).
 * Then the logs are read back, linked and printed: the timeline and the round-trip table.
 */
import { existsSync, mkdirSync, readdirSync, rmSync } from 'node:fs';
import { dirname, join } from 'node:path';
import { fileURLToPath, pathToFileURL } from 'node:url';
import { startHttpTap } from '../capture/http.js';
import { resolveLogDir } from '../log/location.js';
import { readAllRecords } from '../log/reader.js';
import type { LogRecord } from '../log/schema.js';
import { linkTrace, type Trace } from '../trace/link.js';
import { buildTimeline, formatTimeline } from '../trace/timeline.js';
import { formatRoundTripSummary } from '../trace/summary.js';
import { MCPTAP_VERSION } from '../version.js';
import { McptapError } from '../types.js';
import { load, runAnthropicAgent, runGeminiAgent, runOllamaAgent, runOpenAiAgent, toolboxFrom, type AgentOptions, type AgentRun, type Toolbox } from './agent.js';

/** The package folder (dist/demo/run.js and src/demo/run.ts are both two levels down). */
const PACKAGE_ROOT = join(dirname(fileURLToPath(import.meta.url)), '..', '..');

/** Which LLM client the demo's agent uses. */
export type DemoClient = 'ollama' | 'openai' | 'anthropic' | 'gemini';

/** Every demo client, for the CLI's choices. */
export const DEMO_CLIENTS: readonly DemoClient[] = ['ollama', 'openai', 'anthropic', 'gemini'];

export interface DemoOptions {
  /** Folder for the logs; default: a fresh `demo-<UTC time>` folder inside the usual log folder. */
  logDir?: string;
  client?: DemoClient;
  prompt?: string;
  /** Replay speed of the recorded model (1 = as recorded; higher is faster). Default 20. */
  speed?: number;
  /** A real LLM API to use instead of the recorded stand-in (e.g. http://127.0.0.1:11434 for a local Ollama). */
  llmUrl?: string;
  /** The model to ask; default: the model of the recorded frames. */
  model?: string;
  color?: boolean;
  /** Progress lines go here while the demo runs (default: nowhere). */
  progress?: (line: string) => void;
}

export interface DemoResult {
  logDir: string;
  run: AgentRun;
  records: LogRecord[];
  trace: Trace;
  /** The report to print: timeline, round-trip table, where the logs are. */
  lines: string[];
}

/** The models the captured frames came from. */
const MODELS: Record<DemoClient, string> = { ollama: 'qwen2.5:3b', openai: 'Qwen/Qwen2.5-32B-Instruct', anthropic: 'claude-sonnet-4-5-20250929', gemini: 'gemini-2.5-flash' };
const PROMPTS: Record<DemoClient, string> = {
  ollama: 'what is the weather in California?',
  openai: 'what is the weather in Shanghai?',
  anthropic: "What's the weather in New York right now?",
  gemini: 'what is the weather in California?',
};
const AGENTS: Record<DemoClient, (options: AgentOptions) => Promise<AgentRun>> = { ollama: runOllamaAgent, openai: runOpenAiAgent, anthropic: runAnthropicAgent, gemini: runGeminiAgent };

/** Run the demo and return its report; the caller prints it. A demo that fails takes back what it wrote. */
export async function runDemo(options: DemoOptions = {}): Promise<DemoResult> {
  const logDir = options.logDir ?? join(resolveLogDir(undefined), `demo-${new Date().toISOString().replace(/[-:]/g, '').replace(/\.\d+Z$/, 'Z')}`);
  const before = existsSync(logDir) ? new Set(readdirSync(logDir)) : undefined;
  // The first folder this call creates (undefined when logDir was there already): what a failure removes.
  const created = mkdirSync(logDir, { recursive: true, mode: 0o700 });
  try {
    return await runInFolder(logDir, options);
  } catch (error) {
    if (created !== undefined) rmSync(created, { recursive: true, force: true });
    else for (const name of readdirSync(logDir)) if (!before?.has(name)) rmSync(join(logDir, name), { recursive: true, force: true });
    throw error;
  }
}

async function runInFolder(logDir: string, options: DemoOptions): Promise<DemoResult> {
  const client = options.client ?? 'ollama';
  const say = options.progress ?? (() => {});
  const color = options.color ?? false;

  const upstream = options.llmUrl !== undefined ? { url: options.llmUrl, close: async () => {} } : await startStandIn(options.speed ?? 20);
  const cleanups: (() => Promise<unknown>)[] = [() => upstream.close()];
  let run: AgentRun;
  try {
    const tap = await startHttpTap({ target: upstream.url, logDir, label: client, warn: (m) => say(`mcptap: ${m}`) });
    cleanups.unshift(() => tap.close());
    say(`${options.llmUrl !== undefined ? 'LLM' : `LLM stand-in (recorded ${client} frames)`} at ${upstream.url}, behind mcptap http at ${tap.url}`);

    const mcp = await connectWeatherServer(logDir);
    cleanups.unshift(() => mcp.close());
    say(`weather MCP server started as: mcptap --log-dir ${logDir} --name weather -- node fixtures/weather-server.mjs`);

    const agent = AGENTS[client];
    const prompt = options.prompt ?? PROMPTS[client];
    say(`agent (${client} npm client): "${prompt}"`);
    run = await agent({ baseUrl: tap.url, model: options.model ?? MODELS[client], prompt, toolbox: mcp.toolbox }).catch((error: unknown) => {
      if (error instanceof McptapError) throw error;
      const why = (error as Error)?.message ?? String(error);
      throw new McptapError('DEMO_AGENT', `the demo's agent got no answer from the LLM at ${upstream.url} (${why})${options.llmUrl !== undefined ? '; check that it is running and that --llm is right' : ''}.`, { cause: error });
    });
  } finally {
    // Closing the MCP client ends the wrapper's stdin, so the server exits and the wrapper flushes its log.
    for (const cleanup of cleanups) await cleanup().catch(() => {});
  }

  const records = await readAllRecords([logDir]);
  const trace = linkTrace(records);
  const summary = formatRoundTripSummary(trace, { color });
  const lines = [
    ...formatTimeline(buildTimeline(records, trace), { color }),
    '',
    ...summary,
    '',
    `Logs (${new Set(records.map((r) => r.session)).size} sessions, ${records.length} records) are in ${logDir}`,
    `  every record, merged by time:  npx mcptap view ${logDir}`,
    `  the linked trace as NDJSON:    npx mcptap view --format json ${logDir}`,
    `  one page to open offline:      npx mcptap view --format html -o trace.html ${logDir}`,
  ];
  return { logDir, run, records, trace, lines };
}

/**
 * The official SDK Client, speaking to the weather server through the stdio tap as a child process: the honest
 * way — the exact bytes a host would send pass through the same `mcptap -- …` prefix a user would configure.
 */
async function connectWeatherServer(logDir: string): Promise<{ toolbox: Toolbox; close(): Promise<void> }> {
  const { Client } = await load<typeof import('@modelcontextprotocol/sdk/client/index.js')>('@modelcontextprotocol/sdk/client/index.js');
  const { StdioClientTransport } = await load<typeof import('@modelcontextprotocol/sdk/client/stdio.js')>('@modelcontextprotocol/sdk/client/stdio.js');
  const transport = new StdioClientTransport({
    command: process.execPath,
    args: [join(PACKAGE_ROOT, 'bin', 'mcptap.js'), '--log-dir', logDir, '--name', 'weather', '--', process.execPath, join(PACKAGE_ROOT, 'fixtures', 'weather-server.mjs')],
    cwd: PACKAGE_ROOT,
    // mcptap's "logging to" notice and the server's banner: not part of the demo's output.
    stderr: 'ignore',
  });
  const client = new Client({ name: 'mcptap-demo-agent', version: MCPTAP_VERSION });
  await client.connect(transport);
  const toolbox = await toolboxFrom(client);
  return { toolbox, close: () => client.close() };
}

/** The recorded LLM (fixtures/llm-upstream.mjs): answers with the recorded frames of each API. */
async function startStandIn(speed: number): Promise<{ url: string; close(): Promise<void> }> {
  const { startLlmUpstream } = await loadFixture<{ startLlmUpstream: (o: { speed?: number }) => Promise<{ url: string; close(): Promise<void> }> }>('llm-upstream.mjs');
  return startLlmUpstream({ speed });
}

/** A fixture module shipped with mcptap (fixtures/ is in the package's files). */
async function loadFixture<T>(name: string): Promise<T> {
  const file = join(PACKAGE_ROOT, 'fixtures', name);
  try {
    return (await import(pathToFileURL(file).href)) as T;
  } catch (error) {
    throw new McptapError('DEMO_FIXTURE', `the demo could not load ${file} (${(error as Error).message}). Reinstall mcptap, or run the demo from a full clone.`, { cause: error });
  }
}
