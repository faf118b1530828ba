/**
 * The live view in headless Chromium (Debian's, driven by playwright-core): `mcptap ui` backfills a session that
 * ended before it started, and a stdio session started after the page loaded — the official SDK Client calling
 * the weather server through `mcptap --` — appears without a reload. The filters (method, tool, direction, kind,
 * errors) and the JSON of a clicked frame work on that live traffic, the page touches nothing but its own server,
 * and requests whose Host or Origin do not name the server (DNS rebinding) are refused.
 *
 * Needs chromium, the optional dependency of the browser checks (test/support/chromium.ts; without it the checks
 * skip and say why), and a built dist/ (npm test builds first).
 */
import { spawn, type ChildProcess } from 'node:child_process';
import http from 'node:http';
import { mkdtempSync, rmSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { afterEach, describe, expect, it } from 'vitest';
import { chromium, type BrowserContext, type Page } from 'playwright-core';
import WebSocket from 'ws';
import { Client } from '@modelcontextprotocol/sdk/client/index.js';
import { StdioClientTransport } from '@modelcontextprotocol/sdk/client/stdio.js';
import { runOllamaAgent, toolboxFrom } from '../../src/demo/agent.js';
import { CHROMIUM, HAVE_CHROMIUM, NEEDS_CHROMIUM } from '../support/chromium.js';
// @ts-expect-error -- a plain .mjs fixture without type declarations
import { startLlmUpstream } from '../../fixtures/llm-upstream.mjs';

const BIN = 'bin/mcptap.js';
const cleanups: (() => Promise<void> | void)[] = [];
afterEach(async () => {
  for (const c of cleanups.splice(0).reverse()) await c();
});

/** The SDK Client talking to the weather server through `mcptap --log-dir DIR --name NAME -- node fixtures/weather-server.mjs`. */
async function weatherSession(dir: string, name: string): Promise<Client> {
  const transport = new StdioClientTransport({
    command: process.execPath,
    args: [BIN, '--log-dir', dir, '--name', name, '--', process.execPath, 'fixtures/weather-server.mjs'],
    stderr: 'ignore',
  });
  const client = new Client({ name: `ui-test-${name}`, version: '1.0.0' });
  await client.connect(transport);
  await client.listTools();
  return client;
}

async function startUi(dir: string): Promise<{ url: string; port: number }> {
  const child: ChildProcess = spawn(process.execPath, [BIN, 'ui', '--listen', '0', dir], { stdio: ['ignore', 'ignore', 'pipe'] });
  const exited = new Promise<void>((resolve) => child.once('exit', () => resolve()));
  cleanups.push(async () => {
    child.kill('SIGTERM');
    await exited;
  });
  let err = '';
  const url = await new Promise<string>((resolve, reject) => {
    child.stderr!.on('data', (c: Buffer) => {
      err += c.toString('utf8');
      const m = / at (http:\/\/127\.0\.0\.1:\d+\/)/.exec(err);
      if (m) resolve(m[1]!);
    });
    child.once('exit', (code) => reject(new Error(`mcptap ui exited (${code}): ${err}`)));
  });
  return { url, port: Number(new URL(url).port) };
}

/** Headless Chromium with its profile in `dir`, closed after the test. */
async function browserContext(dir: string, viewport?: { width: number; height: number }): Promise<BrowserContext> {
  const context = await chromium.launchPersistentContext(join(dir, 'profile'), {
    executablePath: CHROMIUM,
    ...(viewport ? { viewport } : {}),
    args: ['--headless', '--no-sandbox', '--disable-gpu', '--disable-quic', '--no-first-run', '--disable-background-networking', '--disable-component-update', '--disable-sync'],
  });
  cleanups.push(() => context.close());
  return context;
}

/** Rows of the timeline as the page shows them now. */
function rows(tab: Page): Promise<{ session: string; kind: string; method?: string; tool?: string; dir?: string; err: boolean }[]> {
  return tab.$$eval('#timeline tbody tr.rec', (trs) =>
    trs.map((tr) => {
      const d = (tr as HTMLElement).dataset;
      return { session: d.session!, kind: d.kind!, method: d.method, tool: d.tool, dir: d.dir, err: tr.classList.contains('err') };
    }),
  );
}

describe('mcptap ui in headless Chromium', () => {
  it.runIf(HAVE_CHROMIUM)(`backfills past sessions and shows a session started after the page loaded, without a reload${NEEDS_CHROMIUM}`, async () => {
    const dir = mkdtempSync(join(tmpdir(), 'mcptap-ui-'));
    cleanups.push(() => rmSync(dir, { recursive: true, force: true }));
    const logs = join(dir, 'logs');

    // A session that is over before the view starts.
    const past = await weatherSession(logs, 'past');
    await past.callTool({ name: 'get_weather', arguments: { location: 'California' } });
    await past.close();

    const ui = await startUi(logs);
    const tab = await (await browserContext(dir, { width: 1400, height: 1000 })).newPage();
    const requests: string[] = [];
    const sockets: string[] = [];
    tab.on('request', (r) => requests.push(r.url()));
    tab.on('websocket', (ws) => sockets.push(ws.url()));
    await tab.goto(ui.url);
    await tab.waitForSelector('#status[data-state="live"]');

    // Backfill: the past session is there.
    await tab.waitForFunction(() => document.querySelectorAll('#timeline tr.rec[data-session^="past-"][data-method="tools/call"]').length === 2);
    await tab.evaluate(() => ((window as unknown as { marker: number }).marker = 42));

    // Live: a session that starts now appears without a reload.
    const live = await weatherSession(logs, 'live');
    cleanups.push(() => live.close());
    await live.callTool({ name: 'get_weather', arguments: { location: 'California' } });
    const failed = await live.callTool({ name: 'get_weather', arguments: { location: 'Atlantis' } });
    expect(failed.isError).toBe(true);
    await tab.waitForFunction(() => document.querySelectorAll('#timeline tr.rec[data-session^="live-"][data-method="tools/call"]').length === 4, undefined, { timeout: 15_000 });
    expect(await tab.evaluate(() => (window as unknown as { marker?: number }).marker)).toBe(42);
    expect(await tab.textContent('#status')).toMatch(/^live · \d+ records$/);

    // Round trips, sessions and the sequence diagram follow the live traffic.
    await tab.waitForFunction(() => document.querySelectorAll('#round-trips tbody tr.trip').length === 3, undefined, { timeout: 15_000 });
    expect(await tab.$$eval('#sessions tbody tr td:first-child', (tds) => tds.map((td) => td.textContent).sort())).toEqual(['live', 'past']);
    expect(await tab.locator('#diagram svg.sequence').count()).toBe(1);

    // Filters.
    const all = await rows(tab);
    await tab.fill('#filter-tool', 'get_weather');
    const byTool = await rows(tab);
    expect(byTool.length).toBe(6);
    expect(byTool.every((r) => r.tool === 'get_weather')).toBe(true);
    await tab.check('#filter-errors');
    const errors = await rows(tab);
    expect(errors).toHaveLength(1);
    expect(errors[0]).toMatchObject({ session: expect.stringMatching(/^live-/), kind: 'response', err: true });
    await tab.uncheck('#filter-errors');
    await tab.fill('#filter-tool', '');
    await tab.fill('#filter-method', 'tools/list');
    const lists = await rows(tab);
    expect(lists.length).toBe(4);
    expect(lists.every((r) => r.method === 'tools/list')).toBe(true);
    await tab.fill('#filter-method', '');
    await tab.selectOption('#filter-dir', 's2c');
    const s2c = await rows(tab);
    expect(s2c.length).toBeGreaterThan(0);
    expect(s2c.every((r) => r.dir === 's2c')).toBe(true);
    await tab.selectOption('#filter-dir', '');
    await tab.selectOption('#filter-kind', 'request');
    const requestsOnly = await rows(tab);
    expect(requestsOnly.every((r) => r.kind === 'request')).toBe(true);
    expect(requestsOnly.length).toBe(all.filter((r) => r.kind === 'request').length);
    await tab.selectOption('#filter-kind', '');
    expect((await rows(tab)).length).toBe(all.length);

    // Any frame's JSON.
    await tab.click('#timeline tr.rec[data-session^="live-"][data-method="tools/call"][data-kind="request"] >> nth=1');
    const json = JSON.parse((await tab.textContent('#json'))!) as Record<string, unknown>;
    expect(json).toMatchObject({ kind: 'request', method: 'tools/call', tool: 'get_weather', label: 'live' });
    expect(JSON.parse((await tab.textContent('#frame'))!)).toMatchObject({ method: 'tools/call', params: { name: 'get_weather', arguments: { location: 'Atlantis' } } });

    // Nothing but the server itself.
    const origin = ui.url.replace(/\/$/, '');
    expect(requests.filter((u) => !u.startsWith(origin))).toEqual([]);
    expect(sockets).toEqual([`ws://127.0.0.1:${ui.port}/ws`]);
  });

  it.runIf(HAVE_CHROMIUM)(`shows an agent loop while it runs: LLM calls, the tool call, and the linked round trip${NEEDS_CHROMIUM}`, async () => {
    const dir = mkdtempSync(join(tmpdir(), 'mcptap-ui-'));
    cleanups.push(() => rmSync(dir, { recursive: true, force: true }));
    const logs = join(dir, 'logs');
    const ui = await startUi(logs);
    const tab = await (await browserContext(dir)).newPage();
    await tab.goto(ui.url);
    await tab.waitForSelector('#status[data-state="live"]');
    expect(await tab.locator('#timeline tr.rec').count()).toBe(0);

    // The agent starts after the page: its LLM behind `mcptap http`, its tool behind the stdio tap.
    const upstream = (await startLlmUpstream({ speed: 0 })) as { url: string; close(): Promise<void> };
    cleanups.push(() => upstream.close());
    const llm = spawn(process.execPath, [BIN, 'http', '--target', upstream.url, '--log-dir', logs, '--name', 'llm'], { stdio: ['ignore', 'ignore', 'pipe'] });
    const llmExited = new Promise<void>((resolve) => llm.once('exit', () => resolve()));
    cleanups.push(async () => {
      llm.kill('SIGTERM');
      await llmExited;
    });
    let llmErr = '';
    const llmUrl = await new Promise<string>((resolve) => {
      llm.stderr!.on('data', (c: Buffer) => {
        llmErr += c.toString('utf8');
        const m = /listening on (http:\/\/\S+),/.exec(llmErr);
        if (m) resolve(m[1]!);
      });
    });
    const weather = await weatherSession(logs, 'weather');
    cleanups.push(() => weather.close());
    const run = await runOllamaAgent({
      baseUrl: llmUrl,
      model: 'qwen2.5:3b',
      prompt: 'what is the weather in California?',
      toolbox: await toolboxFrom(weather),
    });
    expect(run.toolCalls).toHaveLength(1);

    await tab.waitForFunction(() => document.querySelectorAll('#timeline tr.rec[data-kind="llm-response"]').length === 2, undefined, { timeout: 15_000 });
    await tab.waitForFunction(() => document.querySelectorAll('#timeline tr.rec[data-method="tools/call"]').length === 2, undefined, { timeout: 15_000 });
    // The round trip is linked across the two logs: model, MCP server, fed back.
    await tab.waitForFunction(() => [...document.querySelectorAll('#round-trips tr.trip')].some((tr) => /ollama qwen2\.5:3b/.test(tr.textContent ?? '') && /weather #\d+/.test(tr.textContent ?? '')), undefined, { timeout: 15_000 });
    const trip = await tab.$$eval('#round-trips tr.trip td', (tds) => tds.map((td) => td.textContent));
    expect(trip[1]).toBe('get_weather');
    expect(trip[6]).toBe('yes');
    expect(trip[7]).toBe("It's always raining in California");
    await tab.waitForFunction(() => [...document.querySelectorAll('#diagram svg.sequence g.participant text')].some((t) => t.textContent === 'LLM (ollama)'));
    // Filter by tool finds the model's tool call (on the LLM reply) and the MCP call.
    await tab.fill('#filter-tool', 'get_weather');
    const kinds = await tab.$$eval('#timeline tbody tr.rec', (trs) => trs.map((tr) => (tr as HTMLElement).dataset.kind));
    expect(new Set(kinds)).toEqual(new Set(['llm-response', 'llm-request', 'request', 'response']));
  });

  it.runIf(HAVE_CHROMIUM)(`shows an eviction as one row that the method and tool filters keep${NEEDS_CHROMIUM}`, async () => {
    const dir = mkdtempSync(join(tmpdir(), 'mcptap-ui-'));
    cleanups.push(() => rmSync(dir, { recursive: true, force: true }));
    const logs = join(dir, 'logs');
    // 6,000 requests through cat, which sends each back: 12,000 open, past the 10,000 the tap tracks.
    const cat = spawn(process.execPath, [BIN, '--log-dir', logs, '--', 'cat'], { stdio: ['pipe', 'ignore', 'ignore'] });
    const exited = new Promise<void>((resolve) => cat.once('exit', () => resolve()));
    const lines = Array.from({ length: 6000 }, (_, i) => `{"jsonrpc":"2.0","id":${i},"method":"tools/call","params":{"name":"echo","arguments":{"text":"x"}}}\n`);
    cat.stdin!.end(lines.join(''));
    await exited;
    const ui = await startUi(logs);
    const tab = await (await browserContext(dir)).newPage();
    await tab.goto(ui.url);
    await tab.waitForSelector('#status[data-state="live"]');
    // The page shows the newest 5,000 rows: the evictions, early in the log, are found with the kind filter.
    await tab.waitForSelector('#filter-kind option[value="evicted"]', { state: 'attached', timeout: 15_000 });
    await tab.selectOption('#filter-kind', 'evicted');
    await tab.waitForFunction(() => document.querySelectorAll('#timeline tr.rec').length === 2, undefined, { timeout: 15_000 });
    const shown = () => tab.$$eval('#timeline tr.rec', (trs) => trs.map((tr) => [tr.dataset.kind, tr.querySelector('td.w')?.textContent, tr.classList.contains('err')]));
    expect(await shown()).toEqual([
      ['evicted', '1001 requests: tools/call', true],
      ['evicted', '1001 requests: tools/call', true],
    ]);
    await tab.fill('#filter-method', 'tools/call');
    await tab.fill('#filter-tool', 'echo');
    expect(await shown()).toHaveLength(2);
    await tab.fill('#filter-method', 'ping');
    expect(await rows(tab)).toEqual([]);
    // The diagram draws the newest arrows only, as the html view does, and says so.
    await tab.waitForSelector('#diagram svg.sequence', { state: 'attached' });
    expect(await tab.textContent('#diagram-note')).toMatch(/^The diagram draws the newest 400 arrows; the \d+ before them are left out/);
  });

  it('refuses requests and WebSockets whose Host or Origin do not name it', async () => {
    const dir = mkdtempSync(join(tmpdir(), 'mcptap-ui-'));
    cleanups.push(() => rmSync(dir, { recursive: true, force: true }));
    const ui = await startUi(dir);
    const get = (headers: Record<string, string>): Promise<{ status: number; body: string }> =>
      new Promise((resolve, reject) => {
        const req = http.get({ host: '127.0.0.1', port: ui.port, path: '/', headers }, (res) => {
          let body = '';
          res.on('data', (c: Buffer) => (body += c.toString('utf8')));
          res.on('end', () => resolve({ status: res.statusCode ?? 0, body }));
        });
        req.on('error', reject);
      });
    expect((await get({})).status).toBe(200);
    expect((await get({ host: `localhost:${ui.port}` })).status).toBe(200);
    const rebound = await get({ host: `evil.example:${ui.port}` });
    expect(rebound.status).toBe(403);
    expect(rebound.body).toContain('DNS rebinding');
    expect((await get({ origin: 'http://evil.example' })).status).toBe(403);

    const wsStatus = (options: WebSocket.ClientOptions): Promise<number> =>
      new Promise((resolve) => {
        const ws = new WebSocket(`ws://127.0.0.1:${ui.port}/ws`, options);
        ws.on('open', () => {
          ws.close();
          resolve(101);
        });
        ws.on('unexpected-response', (_req, res) => resolve(res.statusCode ?? 0));
        ws.on('error', () => resolve(-1));
      });
    expect(await wsStatus({ origin: `http://127.0.0.1:${ui.port}` })).toBe(101);
    expect(await wsStatus({ origin: 'http://evil.example' })).toBe(403);
    expect(await wsStatus({ headers: { host: 'evil.example' } })).toBe(403);
  });
});
