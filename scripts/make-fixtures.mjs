#!/usr/bin/env node
/**
 * Regenerate fixtures/captures/: real captures made with mcptap itself (run `npx tsc -p .` first; this drives the
 * built CLI in bin/mcptap.js exactly as a user would).
 *
 *   node scripts/make-fixtures.mjs            every capture this script knows how to make
 *   node scripts/make-fixtures.mjs stdio      only the stdio ones
 *   node scripts/make-fixtures.mjs http       only the HTTP ones (needs the HTTP tap: `mcptap http`)
 *
 * Captures (each one log file, renamed to a stable name):
 *   mcp-stdio/everything-sdk.ndjson   the SDK client scenario (test/support/sdk-scenario.mjs) ↔ server-everything
 *   mcp-stdio/polluted.ndjson         server-everything behind a shell that prints a banner on stdout first
 *   mcp-stdio/unanswered.ndjson       a client that hangs up while a tools/call is still running
 *   mcp-http/everything-sdk.ndjson    the same scenario over Streamable HTTP: server-everything behind `mcptap http`
 *   mcp-sse/everything-sdk.ndjson     the same over the legacy HTTP+SSE transport (2024-11-05)
 *   ollama/agent.ndjson               test/support/ollama-agent.mjs (real `ollama` client, streaming) ↔
 *                                     fixtures/llm-upstream.mjs (the captured turns) behind `mcptap http`
 *   openai/agent.ndjson               test/support/openai-agent.mjs (real `openai` client, streaming SSE), same
 *   roundtrip/weather.ndjson          one agent round trip in two logs: fixtures/weather-server.mjs behind the
 *   roundtrip/ollama.ndjson           stdio tap, the LLM stand-in behind the HTTP tap, the ollama agent between
 *   broken-roundtrip/*.ndjson         the same, but the host answers the tool call itself: no MCP server runs it
 */
import { spawn } from 'node:child_process';
import { mkdtempSync, readdirSync, renameSync, mkdirSync, rmSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join, resolve, dirname } from 'node:path';
import { fileURLToPath } from 'node:url';
import { Client } from '@modelcontextprotocol/sdk/client/index.js';
import { StdioClientTransport } from '@modelcontextprotocol/sdk/client/stdio.js';
import { runSdkScenario, EVERYTHING } from '../test/support/sdk-scenario.mjs';

const ROOT = resolve(dirname(fileURLToPath(import.meta.url)), '..');
const OUT = join(ROOT, 'fixtures', 'captures');
const MCPTAP = join(ROOT, 'bin', 'mcptap.js');
const NODE = process.execPath;
const EVERYTHING_ABS = [join(ROOT, EVERYTHING[0]), EVERYTHING[1]];
/** Big enough that no frame of these sessions is cut in the log: a replay needs whole frames. */
const MAX_BODY = String(16 * 1024 * 1024);

/** Run `drive(transport)` against mcptap wrapping `command args`; move the one log written to fixtures/captures/<to>. */
async function recordStdio(to, label, command, args, drive) {
  const dir = mkdtempSync(join(tmpdir(), 'mcptap-fixture-'));
  const transport = new StdioClientTransport({
    command: NODE,
    args: [MCPTAP, '--log-dir', dir, '--name', label, '--max-body', MAX_BODY, '--', command, ...args],
    cwd: ROOT,
    stderr: 'pipe',
  });
  await drive(transport);
  // The tap writes its exit record after the child is gone; wait for the file to be complete.
  await waitFor(() => readdirSync(dir).some((f) => f.endsWith('.ndjson')), 5000);
  await new Promise((r) => setTimeout(r, 500));
  moveLog(dir, to);
}

/** Move the one log in `dir` whose name starts with `prefix` to fixtures/captures/<to>; remove `dir` when empty. */
function moveLog(dir, to, prefix = '') {
  const logs = readdirSync(dir).filter((f) => f.endsWith('.ndjson') && f.startsWith(prefix));
  if (logs.length !== 1) throw new Error(`expected one log${prefix ? ` named ${prefix}*` : ''} in ${dir}, found ${logs.length}`);
  const target = join(OUT, to);
  mkdirSync(dirname(target), { recursive: true });
  renameSync(join(dir, logs[0]), target);
  if (readdirSync(dir).length === 0) rmSync(dir, { recursive: true, force: true });
  process.stdout.write(`wrote ${target}\n`);
}

async function waitFor(check, ms) {
  const until = Date.now() + ms;
  while (!check()) {
    if (Date.now() > until) throw new Error('timed out waiting for the log');
    await new Promise((r) => setTimeout(r, 50));
  }
}

async function stdioCaptures() {
  await recordStdio('mcp-stdio/everything-sdk.ndjson', 'everything', NODE, EVERYTHING_ABS, async (transport) => {
    await runSdkScenario(transport);
  });

  // A server whose launcher prints to stdout before the server starts: the classic broken mcpServers entry.
  const polluter = `echo "Everything server booting (this line breaks MCP clients)"; exec "${NODE}" "${EVERYTHING_ABS[0]}" stdio`;
  await recordStdio('mcp-stdio/polluted.ndjson', 'polluted', 'sh', ['-c', polluter], async (transport) => {
    const client = new Client({ name: 'fixture-client', version: '1.0.0' });
    await client.connect(transport);
    await client.listTools();
    await client.close();
  });

  // The client gives up while a long tools/call is still running: the request is never answered.
  await recordStdio('mcp-stdio/unanswered.ndjson', 'unanswered', NODE, EVERYTHING_ABS, async (transport) => {
    const client = new Client({ name: 'fixture-client', version: '1.0.0' });
    await client.connect(transport);
    await client.listTools();
    client.callTool({ name: 'trigger-long-running-operation', arguments: { duration: 30, steps: 1 } }).catch(() => {});
    await new Promise((r) => setTimeout(r, 300));
    await client.close();
  });
}

/** A free TCP port (server-everything takes its port from $PORT and cannot be given 0). */
async function freePort() {
  const { createServer } = await import('node:net');
  return new Promise((resolve, reject) => {
    const server = createServer();
    server.once('error', reject);
    server.listen(0, '127.0.0.1', () => {
      const { port } = server.address();
      server.close(() => resolve(port));
    });
  });
}

/** Start a child and wait until its output matches `ready`; returns the child and the match. */
async function startChild(command, args, ready, env = process.env) {
  const child = spawn(command, args, { cwd: ROOT, env, stdio: ['ignore', 'pipe', 'pipe'] });
  let output = '';
  const match = await new Promise((resolve, reject) => {
    const onData = (chunk) => {
      output += chunk.toString('utf8');
      const m = ready.exec(output);
      if (m) resolve(m);
    };
    child.stdout.on('data', onData);
    child.stderr.on('data', onData);
    child.once('exit', (code) => reject(new Error(`${command} ${args.join(' ')} exited (${code}) before it was ready:\n${output}`)));
    setTimeout(() => reject(new Error(`timed out starting ${command} ${args.join(' ')}:\n${output}`)), 15000).unref();
  });
  child.removeAllListeners('exit');
  return { child, match };
}

async function stopChild(child, signal = 'SIGINT') {
  if (child.exitCode !== null || child.signalCode !== null) return;
  const gone = new Promise((resolve) => child.once('exit', resolve));
  child.kill(signal);
  await gone;
}

/** `mcptap http` in front of `target`, logging into `dir` (default: a fresh folder); `drive(url)` runs the client through it. */
async function recordHttp(to, label, target, drive, dir = mkdtempSync(join(tmpdir(), 'mcptap-fixture-'))) {
  const { child, match } = await startChild(
    NODE,
    [MCPTAP, 'http', '--target', target, '--listen', '0', '--log-dir', dir, '--name', label, '--max-body', MAX_BODY],
    /listening on (http:\/\/\S+?),/,
  );
  try {
    await drive(match[1]);
  } finally {
    await stopChild(child);
  }
  if (to) moveLog(dir, to, label);
}

async function httpCaptures() {
  const { StreamableHTTPClientTransport } = await import('@modelcontextprotocol/sdk/client/streamableHttp.js');
  const port = await freePort();
  const everything = await startChild(NODE, [EVERYTHING_ABS[0], 'streamableHttp'], /listening on port|running on port/i, { ...process.env, PORT: String(port) });
  try {
    await recordHttp('mcp-http/everything-sdk.ndjson', 'everything-http', `http://127.0.0.1:${port}`, async (url) => {
      await runSdkScenario(new StreamableHTTPClientTransport(new URL(`${url}/mcp`)));
    });
  } finally {
    await stopChild(everything.child);
  }
  // The legacy HTTP+SSE transport (2024-11-05): responses travel on the GET stream, requests as POSTs.
  const { SSEClientTransport } = await import('@modelcontextprotocol/sdk/client/sse.js');
  const ssePort = await freePort();
  const legacy = await startChild(NODE, [EVERYTHING_ABS[0], 'sse'], /listening on port|running on port/i, { ...process.env, PORT: String(ssePort) });
  try {
    await recordHttp('mcp-sse/everything-sdk.ndjson', 'everything-sse', `http://127.0.0.1:${ssePort}`, async (url) => {
      await runSdkScenario(new SSEClientTransport(new URL(`${url}/sse`)));
    });
  } finally {
    await stopChild(legacy.child);
  }

  // The LLM stand-in plays the captured Ollama turns at 4× their recorded pace (the fixture keeps the spacing).
  const { startLlmUpstream } = await import('../fixtures/llm-upstream.mjs');
  const { runOllamaAgent } = await import('../test/support/ollama-agent.mjs');
  const { runOpenAiAgent } = await import('../test/support/openai-agent.mjs');
  const upstream = await startLlmUpstream({ speed: 4, port: 0 });
  try {
    await recordHttp('ollama/agent.ndjson', 'ollama', upstream.url, async (url) => {
      const run = await runOllamaAgent(url);
      process.stdout.write(`ollama agent answered: ${run.answer.slice(0, 80)}…\n`);
    });
    await recordHttp('openai/agent.ndjson', 'openai', upstream.url, async (url) => {
      const run = await runOpenAiAgent(url);
      process.stdout.write(`openai agent answered: ${run.answer.slice(0, 80)}…\n`);
    });

    // One whole round trip in two logs, as a user runs it: the agent's MCP server (fixtures/weather-server.mjs)
    // behind the stdio tap, its LLM behind the HTTP tap. `check` passes the folder; the LLM log alone shows the
    // tool call that no MCP server in it ran (a broken round trip).
    const dir = mkdtempSync(join(tmpdir(), 'mcptap-fixture-'));
    const weather = new Client({ name: 'fixture-agent', version: '1.0.0' });
    await weather.connect(
      new StdioClientTransport({
        command: NODE,
        args: [MCPTAP, '--log-dir', dir, '--name', 'weather', '--max-body', MAX_BODY, '--', NODE, join(ROOT, 'fixtures', 'weather-server.mjs')],
        cwd: ROOT,
        stderr: 'pipe',
      }),
    );
    const callTool = async (name, args) => {
      const result = await weather.callTool({ name, arguments: args });
      return result.content.filter((c) => c.type === 'text').map((c) => c.text).join('\n');
    };
    await recordHttp(undefined, 'ollama', upstream.url, async (url) => {
      const run = await runOllamaAgent(url, { callTool });
      process.stdout.write(`round trip answered: ${run.answer.slice(0, 80)}…\n`);
    }, dir);
    await weather.close();
    await waitFor(() => readdirSync(dir).filter((f) => f.startsWith('weather')).length === 1, 5000);
    await new Promise((r) => setTimeout(r, 500));
    moveLog(dir, 'roundtrip/weather.ndjson', 'weather');
    moveLog(dir, 'roundtrip/ollama.ndjson', 'ollama');

    // A broken round trip: the host has the weather server connected (and lists its tools) but answers the
    // model's tool call itself, so no MCP server runs it. `check` on this folder fails with "broken".
    const brokenDir = mkdtempSync(join(tmpdir(), 'mcptap-fixture-'));
    const idle = new Client({ name: 'fixture-agent', version: '1.0.0' });
    await idle.connect(
      new StdioClientTransport({
        command: NODE,
        args: [MCPTAP, '--log-dir', brokenDir, '--name', 'weather', '--max-body', MAX_BODY, '--', NODE, join(ROOT, 'fixtures', 'weather-server.mjs')],
        cwd: ROOT,
        stderr: 'pipe',
      }),
    );
    await idle.listTools();
    await recordHttp(undefined, 'ollama', upstream.url, async (url) => {
      await runOllamaAgent(url);
    }, brokenDir);
    await idle.close();
    await waitFor(() => readdirSync(brokenDir).filter((f) => f.startsWith('weather')).length === 1, 5000);
    await new Promise((r) => setTimeout(r, 500));
    moveLog(brokenDir, 'broken-roundtrip/weather.ndjson', 'weather');
    moveLog(brokenDir, 'broken-roundtrip/ollama.ndjson', 'ollama');
  } finally {
    await upstream.close();
  }
}

const which = process.argv[2] ?? 'all';
if (which === 'all' || which === 'stdio') await stdioCaptures();
if (which === 'all' || which === 'http') await httpCaptures();
