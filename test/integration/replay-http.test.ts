/**
 * `mcptap replay LOG --listen`: recorded HTTP exchanges served to real clients — the SDK client over Streamable
 * HTTP (fixtures/captures/mcp-http/everything-sdk.ndjson, recorded from server-everything behind `mcptap http`)
 * and an agent with the real `ollama` client (fixtures/captures/ollama/agent.ndjson, recorded from the LLM
 * stand-in fixtures/llm-upstream.mjs). The CLI tests need a fresh build (bin/mcptap.js runs dist/).
 */
import { spawn, type ChildProcess } from 'node:child_process';
import { afterEach, describe, expect, test } from 'vitest';
import { StreamableHTTPClientTransport } from '@modelcontextprotocol/sdk/client/streamableHttp.js';
import { SSEClientTransport } from '@modelcontextprotocol/sdk/client/sse.js';
import { Ollama } from 'ollama';
import OpenAI from 'openai';
import { replay, type ReplayHandle } from '../../src/index.js';
import { startEverything } from './http-mcp-scenario.js';
// @ts-expect-error plain ESM helpers shared with scripts/make-fixtures.mjs
import { runSdkScenario } from '../support/sdk-scenario.mjs';
// @ts-expect-error plain ESM helper
import { runOllamaAgent } from '../support/ollama-agent.mjs';
// @ts-expect-error plain ESM helper
import { runOpenAiAgent } from '../support/openai-agent.mjs';
// @ts-expect-error plain ESM stand-in LLM written for the HTTP tap's tests
import { startLlmUpstream } from '../../fixtures/llm-upstream.mjs';

const MCP_CAPTURE = 'fixtures/captures/mcp-http/everything-sdk.ndjson';
const OLLAMA_CAPTURE = 'fixtures/captures/ollama/agent.ndjson';

const cleanup: (() => Promise<void>)[] = [];
afterEach(async () => {
  for (const c of cleanup.splice(0).reverse()) await c();
});

/** `mcptap replay LOG --listen 127.0.0.1:0 …` as a child; resolves with its URL once it says it listens. */
async function cliReplay(args: string[]): Promise<{ url: string; child: ChildProcess; stderr: () => string }> {
  const child = spawn(process.execPath, ['bin/mcptap.js', 'replay', ...args], { stdio: ['ignore', 'pipe', 'pipe'] });
  let err = '';
  child.stderr!.on('data', (c: Buffer) => (err += c.toString()));
  cleanup.push(async () => {
    if (child.exitCode !== null) return;
    const gone = new Promise((r) => child.once('exit', r));
    child.kill('SIGTERM');
    await gone;
  });
  const url = await new Promise<string>((resolve, reject) => {
    const look = (): void => {
      const m = /replaying \d+ recorded HTTP exchanges at (http:\/\/\S+)/.exec(err);
      if (m) resolve(m[1]!);
    };
    child.stderr!.on('data', look);
    child.once('exit', (code) => reject(new Error(`replay exited with ${code}: ${err}`)));
  });
  return { url, child, stderr: () => err };
}

describe('HTTP replay', () => {
  test('the SDK scenario over Streamable HTTP gets identical results from the replay as from server-everything', async () => {
    const everything = await startEverything('streamableHttp');
    cleanup.push(() => everything.stop());
    const live = await runSdkScenario(new StreamableHTTPClientTransport(new URL(`${everything.url}/mcp`)));
    const notes: string[] = [];
    const stand: ReplayHandle = await replay({ logs: MCP_CAPTURE, listen: 0, onNote: (n) => notes.push(n) });
    cleanup.push(() => stand.close());
    const replayed = await runSdkScenario(new StreamableHTTPClientTransport(new URL(`${stand.url}/mcp`)));
    expect(replayed).toEqual(live);
    expect(live.serverRequests.map((r: { method: string }) => r.method)).toEqual(['roots/list', 'sampling/createMessage', 'elicitation/create']);
    expect(live.progress).toHaveLength(3);
    expect(notes).toEqual([]);
  });

  test('legacy HTTP+SSE: with --no-delay every event still waits for the client message it answered', async () => {
    // On this transport every response travels on one long GET stream; played without the recorded pauses and
    // without waiting for the matching POSTs, the whole conversation would arrive before the first request.
    const everything = await startEverything('sse');
    cleanup.push(() => everything.stop());
    const live = await runSdkScenario(new SSEClientTransport(new URL(`${everything.url}/sse`)));
    const stand = await replay({ logs: 'fixtures/captures/mcp-sse/everything-sdk.ndjson', listen: 0, noDelay: true });
    cleanup.push(() => stand.close());
    const replayed = await runSdkScenario(new SSEClientTransport(new URL(`${stand.url}/sse`)));
    // Without pauses, progress and the response arrive together and the SDK's onprogress (run a tick later)
    // misses some: the wire shows all of them (`progress`), so only `progressHandled` may differ.
    expect({ ...replayed, progressHandled: undefined }).toEqual({ ...live, progressHandled: undefined });
    expect(replayed.progress).toHaveLength(3);
    expect(stand.misses).toEqual([]);
  });

  test('an agent using the ollama client gets the same answer from `mcptap replay --listen` as from the live stand-in', async () => {
    const upstream = await startLlmUpstream({ speed: 4, port: 0 });
    cleanup.push(() => upstream.close());
    const live = await runOllamaAgent(upstream.url);
    const stand = await cliReplay([OLLAMA_CAPTURE, '--listen', '127.0.0.1:0']);
    const replayed = await runOllamaAgent(stand.url);
    expect(replayed).toEqual(live);
    expect(live.toolCalls).toEqual([{ name: 'get_weather', arguments: { location: 'California' }, result: "It's always raining in California" }]);
    expect(live.answer).toMatch(/always raining in California/);
    // Streamed, not buffered: the client read the answer as many NDJSON chunks.
    expect(replayed.chunks).toBeGreaterThan(10);
    expect(stand.stderr()).not.toContain('replay miss');
  });

  test('an agent using the openai client (streaming SSE) gets the same answer from the replay as from the live stand-in', async () => {
    const upstream = await startLlmUpstream({ speed: 4, port: 0 });
    cleanup.push(() => upstream.close());
    const live = await runOpenAiAgent(upstream.url);
    const stand = await replay({ logs: 'fixtures/captures/openai/agent.ndjson', listen: { port: 0 } });
    cleanup.push(() => stand.close());
    const replayed = await runOpenAiAgent(stand.url);
    expect(replayed).toEqual(live);
    expect(live.toolCalls).toEqual([{ name: 'get_weather', arguments: { city: '上海' }, result: '{"Celsius": 27, "type": "sunny"}' }]);
    expect(live.answer).toContain('27');
    expect(stand.misses).toEqual([]);
  });

  test('a request not in the capture gets a 404 JSON error each client shows, and a line on stderr', async () => {
    const stand = await cliReplay([OLLAMA_CAPTURE, '--listen', '127.0.0.1:0', '--no-delay']);
    const ollama = new Ollama({ host: stand.url });
    await expect(ollama.chat({ model: 'qwen2.5:3b', messages: [{ role: 'user', content: 'something never asked' }] })).rejects.toMatchObject({
      status_code: 404,
      error: expect.stringMatching(/^mcptap replay: POST \/api\/chat with this body is not in the capture/),
    });
    await expect(ollama.list()).rejects.toMatchObject({ error: 'mcptap replay: GET /api/tags is not in the capture: nothing was recorded for that method and path.' });
    const openai = new OpenAI({ baseURL: `${stand.url}/v1`, apiKey: 'sk-test', maxRetries: 0 });
    await expect(openai.models.list()).rejects.toMatchObject({ status: 404, message: expect.stringContaining('GET /v1/models is not in the capture') });
    await new Promise((r) => setTimeout(r, 100));
    expect(stand.stderr()).toContain('mcptap: replay miss: POST /api/chat with this body is not in the capture');
    expect(stand.stderr()).toContain('mcptap: replay miss: GET /api/tags is not in the capture');
  });

  test('live ids that differ from the recorded ones come back in the responses, on the legacy SSE stream too', async () => {
    const stand = await replay({ logs: 'fixtures/captures/mcp-sse/everything-sdk.ndjson', listen: 0, noDelay: true });
    cleanup.push(() => stand.close());
    const stream = await fetch(`${stand.url}/sse`, { headers: { accept: 'text/event-stream' } });
    const reader = stream.body!.getReader();
    let text = '';
    const readUntil = async (pattern: RegExp): Promise<RegExpExecArray> => {
      for (;;) {
        const m = pattern.exec(text);
        if (m) return m;
        const { value, done } = await reader.read();
        if (done) throw new Error(`stream ended before ${pattern}: ${text}`);
        text += Buffer.from(value).toString('utf8');
      }
    };
    const endpoint = (await readUntil(/event: endpoint\ndata: (\S+)/))[1]!;
    const init = await fetch(`${stand.url}${endpoint}`, {
      method: 'POST',
      headers: { 'content-type': 'application/json' },
      body: JSON.stringify({ jsonrpc: '2.0', id: 'my-own-id', method: 'initialize', params: { protocolVersion: '2025-11-25', capabilities: {}, clientInfo: { name: 'raw', version: '0' } } }),
    });
    expect(init.status).toBe(202);
    const answer = JSON.parse((await readUntil(/data: (\{"result":.*"id":"my-own-id"\}|\{[^\n]*"id":"my-own-id"[^\n]*\})\n/))[1]!) as { id: string; result: { serverInfo: { name: string } } };
    expect(answer.id).toBe('my-own-id');
    expect(answer.result.serverInfo.name).toBe('mcp-servers/everything');
    await reader.cancel();
  });

  test('--ignore leaves a field out of matching; a stdio-only log says to drop --listen', async () => {
    const stand = await replay({ logs: OLLAMA_CAPTURE, listen: 0, noDelay: true, ignore: ['options'] });
    cleanup.push(() => stand.close());
    // The agent's first request plus an `options` field it never sent still finds the recorded answer.
    const { readFileSync } = await import('node:fs');
    const turn1 = JSON.parse(readFileSync('fixtures/ollama/turn1.request.json', 'utf8')) as { model: string; messages: unknown[]; tools: unknown[] };
    const parts = await new Ollama({ host: stand.url }).chat({ model: turn1.model, messages: turn1.messages as never, tools: turn1.tools as never, stream: true, options: { seed: 42 } });
    const names: string[] = [];
    for await (const part of parts) names.push(...(part.message.tool_calls ?? []).map((c) => c.function.name));
    expect(names).toEqual(['get_weather']);
    expect(stand.misses).toEqual([]);
    await expect(replay({ logs: 'fixtures/captures/mcp-stdio/everything-sdk.ndjson', listen: 0 })).rejects.toThrow(
      'the logs hold no complete HTTP exchanges to serve. Give a log written by `mcptap http` (for a stdio capture, leave out --listen).',
    );
  });
});
