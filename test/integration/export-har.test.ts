/**
 * `mcptap export --format har` on real logs — an agent loop with the real `ollama` client behind `mcptap http`
 * (in front of the recorded LLM stand-in) and its tool behind `mcptap -- node fixtures/weather-server.mjs` — gives
 * an archive with the HAR 1.2 structure that a real HAR reader accepts: Playwright's routeFromHAR (the HAR replay
 * of the browser-automation library, in headless Chromium) serves the recorded LLM reply back for the recorded
 * request.
 *
 * Spawns bin/mcptap.js, which runs the built dist/: build first (npm test does).
 */
import { execFile } from 'node:child_process';
import { mkdtempSync, readFileSync, rmSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { promisify } from 'node:util';
import { afterEach, describe, expect, it } from 'vitest';
import { chromium } from 'playwright-core';
import { Client } from '@modelcontextprotocol/sdk/client/index.js';
import { StdioClientTransport } from '@modelcontextprotocol/sdk/client/stdio.js';
import { runOllamaAgent, toolboxFrom } from '../../src/demo/agent.js';
import type { HarEntry } from '../../src/export/har.js';
import { harProblems } from '../support/har-1.2.js';
import { CHROMIUM, HAVE_CHROMIUM } from '../support/chromium.js';
// @ts-expect-error -- a plain .mjs fixture without type declarations
import { startLlmUpstream } from '../../fixtures/llm-upstream.mjs';
import { startHttpCli } from '../support/http-cli.js';

const BIN = 'bin/mcptap.js';
const run = promisify(execFile);
const cleanups: (() => Promise<void> | void)[] = [];
afterEach(async () => {
  for (const c of cleanups.splice(0).reverse()) await c();
});

describe('mcptap export --format har', () => {
  it('exports an agent run as HAR 1.2 that Playwright\u2019s HAR reader replays', async () => {
    const dir = mkdtempSync(join(tmpdir(), 'mcptap-har-'));
    cleanups.push(() => rmSync(dir, { recursive: true, force: true }));
    const logs = join(dir, 'logs');
    const upstream = (await startLlmUpstream({ speed: 0 })) as { url: string; close(): Promise<void> };
    cleanups.push(() => upstream.close());
    const llm = await startHttpCli(['--target', upstream.url, '--log-dir', logs, '--name', 'llm']);
    const transport = new StdioClientTransport({ command: process.execPath, args: [BIN, '--log-dir', logs, '--name', 'weather', '--', process.execPath, 'fixtures/weather-server.mjs'], stderr: 'ignore' });
    const client = new Client({ name: 'har-test-agent', version: '1.0.0' });
    await client.connect(transport);
    const result = await runOllamaAgent({
      baseUrl: llm.url,
      model: 'qwen2.5:3b',
      prompt: 'what is the weather in California?',
      stream: true,
      toolbox: await toolboxFrom(client),
    });
    await client.close();
    await llm.stop();
    expect(result.toolCalls).toHaveLength(1);

    const file = join(dir, 'run.har');
    const { stderr } = await run(process.execPath, [BIN, 'export', '--format', 'har', '-o', file, logs]);
    expect(stderr).toMatch(/wrote har of \d+ records/);
    const har = JSON.parse(readFileSync(file, 'utf8')) as { log: { entries: HarEntry[] } };
    expect(harProblems(har)).toEqual([]);

    // Two LLM calls, as they went to the upstream, with the agent's streamed NDJSON bodies.
    const chats = har.log.entries.filter((e) => e.request.url === `${upstream.url}/api/chat`);
    expect(chats).toHaveLength(2);
    for (const e of chats) {
      expect(e.request.method).toBe('POST');
      expect(e.response.status).toBe(200);
      expect(e.response.content.mimeType).toContain('application/x-ndjson');
      expect(e.response.content.text!.trim().split('\n').length).toBeGreaterThan(1);
      expect(e._llm).toMatchObject({ model: 'qwen2.5:3b', stream: true });
      expect(e.timings.wait).toBeGreaterThanOrEqual(0);
    }
    expect(chats[0]!._llm!.toolCalls).toMatchObject([{ name: 'get_weather', arguments: { location: 'California' } }]);
    // The stdio MCP calls, one entry each, in the documented URL form.
    const mcpUrls = har.log.entries.filter((e) => e.request.url.startsWith('mcp+stdio://')).map((e) => e.request.url);
    expect(mcpUrls).toEqual(['mcp+stdio://weather/initialize', 'mcp+stdio://weather/tools/list', 'mcp+stdio://weather/tools/call?name=get_weather']);
    const call = har.log.entries.find((e) => e.request.url.endsWith('tools/call?name=get_weather'))!;
    expect(JSON.parse(call.response.content.text!)).toMatchObject({ result: { content: [{ type: 'text', text: "It's always raining in California" }] } });

    // The replay by a real HAR reader needs Chromium (test/support/chromium.ts); the checks above stand without it.
    if (!HAVE_CHROMIUM) return;
    // A real HAR reader: Playwright replays the archive; the upstream is gone, so only the HAR can answer.
    await upstream.close();
    cleanups.pop();
    const browser = await chromium.launch({ executablePath: CHROMIUM, args: ['--headless', '--no-sandbox', '--disable-gpu', '--disable-quic', '--no-first-run', '--disable-background-networking', '--disable-component-update', '--disable-sync'] });
    cleanups.push(() => browser.close());
    const context = await browser.newContext();
    await context.routeFromHAR(file, { url: '**/api/**', notFound: 'abort' });
    const tab = await context.newPage();
    await tab.route('**/blank', (route) => route.fulfill({ status: 200, contentType: 'text/html', body: '<!doctype html><title>blank</title>' }));
    await tab.goto(`${upstream.url}/blank`);
    const replayed = await tab.evaluate(async (body) => {
      const res = await fetch('/api/chat', { method: 'POST', headers: { 'content-type': 'application/json' }, body });
      return { status: res.status, text: await res.text() };
    }, chats[0]!.request.postData!.text);
    expect(replayed.status).toBe(200);
    expect(replayed.text).toBe(chats[0]!.response.content.text);
  });
});
