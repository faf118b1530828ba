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
 *   mcp-http/everything-sdk.ndjson    the same scenario over Streamable HTTP, through `mcptap http`
 *   ollama/agent.ndjson               an ollama-client agent ↔ fixtures/llm-upstream.mjs, through `mcptap http`
 */
import { spawn } from 'node:child_process';
import { mkdtempSync, readdirSync, renameSync, mkdirSync, rmSync, existsSync } from 'node:fs';
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

function moveLog(dir, to) {
  const logs = readdirSync(dir).filter((f) => f.endsWith('.ndjson'));
  if (logs.length !== 1) throw new Error(`expected one log in ${dir}, found ${logs.length}`);
  const target = join(OUT, to);
  mkdirSync(dirname(target), { recursive: true });
  renameSync(join(dir, logs[0]), target);
  rmSync(dir, { recursive: true, force: true });
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

async function httpCaptures() {
  const http = await import('./make-fixtures-http.mjs').catch(() => undefined);
  if (!http) {
    process.stdout.write('skipping HTTP captures: scripts/make-fixtures-http.mjs is not there yet\n');
    return;
  }
  await http.makeHttpFixtures({ ROOT, OUT, MCPTAP, NODE, EVERYTHING_ABS, MAX_BODY, moveLog, waitFor, spawn, mkdtempSync, tmpdir, existsSync });
}

const which = process.argv[2] ?? 'all';
if (which === 'all' || which === 'stdio') await stdioCaptures();
if (which === 'all' || which === 'http') await httpCaptures();
