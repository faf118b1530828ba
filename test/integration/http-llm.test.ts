/**
 * The real `ollama` and `openai` npm clients against fixtures/llm-upstream.mjs (the captured turns, served by a
 * real HTTP server), directly and through mcptap's HTTP tap: identical results both ways, and the log holds
 * each turn reassembled — tool calls, answer text, usage, timings — plus the errors the fixture can produce.
 */
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { mkdtempSync, readFileSync, rmSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { Ollama, type ChatRequest } from 'ollama';
import OpenAI from 'openai';
import { settledRecords } from '../support/settled-records.js';
import { startHttpTap, readAllRecords, type HttpTap, type LogRecord } from '../../src/index.js';
// @ts-expect-error — a plain .mjs fixture without type declarations
import { startLlmUpstream } from '../../fixtures/llm-upstream.mjs';

type Rec = LogRecord & Record<string, unknown>;
type Upstream = { url: string; port: number; close(): Promise<void> };

const fixture = (p: string): Record<string, unknown> => JSON.parse(readFileSync(join('fixtures', p), 'utf8')) as Record<string, unknown>;
// The recorded requests, as the clients' own request types (stream is set at each call).
const ollamaTurn1 = fixture('ollama/turn1.request.json') as unknown as ChatRequest;
const ollamaTurn2 = fixture('ollama/turn2.request.json') as unknown as ChatRequest;
const openaiTurn1 = fixture('openai/turn1.request.json') as unknown as OpenAI.Chat.ChatCompletionCreateParamsNonStreaming;
const openaiTurn2 = fixture('openai/turn2.request.json') as unknown as OpenAI.Chat.ChatCompletionCreateParamsNonStreaming;

/** Every call the agent makes in a two-turn tool loop, stream on and off, with both clients. */
async function runClients(baseUrl: string): Promise<Record<string, unknown>> {
  const ollama = new Ollama({ host: baseUrl });
  const out: Record<string, unknown> = {};
  out.ollamaTurn1 = await ollama.chat({ ...ollamaTurn1, stream: false });
  out.ollamaTurn2 = await ollama.chat({ ...ollamaTurn2, stream: false });
  const parts1: unknown[] = [];
  for await (const part of await ollama.chat({ ...ollamaTurn1, stream: true })) parts1.push(part);
  const parts2: unknown[] = [];
  for await (const part of await ollama.chat({ ...ollamaTurn2, stream: true })) parts2.push(part);
  out.ollamaStream1 = parts1;
  out.ollamaStream2 = parts2;
  out.tags = await ollama.list();

  const openai = new OpenAI({ baseURL: `${baseUrl}/v1`, apiKey: 'sk-test-0123456789abcdefghijklmnop', maxRetries: 0 });
  out.openaiTurn1 = await openai.chat.completions.create({ ...openaiTurn1, stream: false });
  out.openaiTurn2 = await openai.chat.completions.create({ ...openaiTurn2, stream: false });
  const chunks1: unknown[] = [];
  for await (const chunk of await openai.chat.completions.create({ ...openaiTurn1, stream: true, stream_options: { include_usage: true } })) chunks1.push(chunk);
  const chunks2: unknown[] = [];
  for await (const chunk of await openai.chat.completions.create({ ...openaiTurn2, stream: true })) chunks2.push(chunk);
  out.openaiStream1 = chunks1;
  out.openaiStream2 = chunks2;
  // The SDK's own stream helper joins the tool-call deltas: a second, independent reassembly to compare with.
  const runner = openai.chat.completions.stream({ ...openaiTurn1, stream: true });
  out.openaiFinal = await runner.finalChatCompletion();
  return out;
}

describe('Ollama and OpenAI clients through mcptap', () => {
  let upstream: Upstream;
  let logDir: string;
  let direct: Record<string, unknown>;
  let tapped: Record<string, unknown>;
  let records: Rec[];
  let logFile: string;

  beforeAll(async () => {
    logDir = mkdtempSync(join(tmpdir(), 'mcptap-http-llm-'));
    upstream = (await startLlmUpstream({ speed: 20 })) as Upstream;
    direct = await runClients(upstream.url);
    const tap = await startHttpTap({ target: upstream.url, logDir, label: 'llm' });
    try {
      tapped = await runClients(tap.url);
    } finally {
      await tap.close();
    }
    logFile = tap.logFile;
    records = (await readAllRecords([logFile])) as Rec[];
  });

  afterAll(async () => {
    await upstream?.close();
    if (logDir) rmSync(logDir, { recursive: true, force: true });
  });

  it('gives both clients exactly what they get directly', () => {
    expect(tapped).toEqual(direct);
    // The calls really went through the captured turns.
    expect(JSON.stringify(direct.ollamaTurn1)).toContain('get_weather');
    expect((direct.ollamaStream2 as unknown[]).length).toBeGreaterThan(50);
    expect(JSON.stringify(direct.openaiFinal)).toContain('{\\"city\\": \\"上海\\"}');
  });

  it('logs one llm-request and one llm-response per call, on the right channel', () => {
    const requests = records.filter((r) => r.kind === 'llm-request');
    const responses = records.filter((r) => r.kind === 'llm-response');
    expect(requests.map((r) => `${r.channel} ${r.endpoint} ${r.stream}`)).toEqual([
      'ollama /api/chat false',
      'ollama /api/chat false',
      'ollama /api/chat true',
      'ollama /api/chat true',
      'openai /v1/chat/completions false',
      'openai /v1/chat/completions false',
      'openai /v1/chat/completions true',
      'openai /v1/chat/completions true',
      'openai /v1/chat/completions true',
    ]);
    expect(responses).toHaveLength(9);
    for (const r of responses) {
      expect(r.status).toBe(200);
      expect(requests.some((q) => q.exchange === r.exchange)).toBe(true);
    }
    const first = requests[0]!;
    expect(first.tools).toEqual(['add', 'multiple', 'get_weather']);
    expect(first.model).toBe('qwen2.5:3b');
    expect(first.toolResults).toEqual([]);
    // Turn 2 carries the MCP tool result back to the model.
    expect(requests[1]!.toolResults).toEqual([{ content: "It's always raining in California" }]);
    expect(requests[5]!.toolResults).toEqual([{ toolCallId: '01964beeb9ee27098b74149d86560b35', content: '{"Celsius": 27, "type": "sunny"}' }]);
  });

  it('reassembles Ollama turns: whole tool calls with object arguments, answer text, ns durations in ms', () => {
    const responses = records.filter((r) => r.kind === 'llm-response' && r.channel === 'ollama');
    const [turn1, turn2, stream1, stream2] = responses;
    expect(turn1!.toolCalls).toEqual([{ name: 'get_weather', arguments: { location: 'California' } }]);
    // A stream says when the call was complete: at its chunk, before the reply ended.
    expect(stream1!.toolCalls).toEqual([{ name: 'get_weather', arguments: { location: 'California' }, completedMs: expect.any(Number) }]);
    expect((stream1!.toolCalls as { completedMs: number }[])[0]!.completedMs).toBeLessThanOrEqual(stream1!.durationMs as number);
    for (const r of [turn1, stream1]) {
      expect(r!.finishReason).toBe('stop');
      expect(r!.usage).toEqual({ promptTokens: 273, completionTokens: 20, totalTokens: 293, totalMs: 7427.76, loadMs: 3209.95, promptEvalMs: 3245.53, evalMs: 965.04, tokensPerSecond: 20.72 });
    }
    const answer = (direct.ollamaTurn2 as { message: { content: string } }).message.content;
    expect(answer).toMatch(/^The weather report indicates that it's always raining in California\./);
    expect(turn2!.content).toBe(answer);
    expect(stream2!.content).toBe(answer);
    expect(stream2!.chunkCount).toBe((direct.ollamaStream2 as unknown[]).length);
    expect(typeof stream2!.ttftMs).toBe('number');
    const chunks = records.filter((r) => r.kind === 'llm-chunk' && r.exchange === stream2!.exchange);
    expect(chunks).toHaveLength((direct.ollamaStream2 as unknown[]).length);
    expect(chunks.map((c) => c.delta ?? '').join('')).toBe(answer);
    // Paced by the recorded timestamps: the chunks arrive spread out, not in one lump.
    expect((chunks.at(-1)!.sinceMs as number) - (chunks[0]!.sinceMs as number)).toBeGreaterThan(50);
  });

  it('reassembles OpenAI turns: tool-call deltas joined by index, arguments parsed, usage', () => {
    const responses = records.filter((r) => r.kind === 'llm-response' && r.channel === 'openai');
    const [turn1, turn2, stream1, stream2, helper] = responses;
    expect(turn1!.toolCalls).toEqual([{ id: '01964be6e485603d6a2a0acbbc7eba91', name: 'get_weather', arguments: { city: '上海' } }]);
    expect(turn1!.finishReason).toBe('tool_calls');
    expect(turn2!.content).toBe('上海当前的天气是晴天，温度是27摄氏度。');
    for (const r of [stream1, helper]) {
      expect(r!.toolCalls).toEqual([{ id: 'call_TMbE01', name: 'get_weather', arguments: { city: '上海' }, index: 0, completedMs: expect.any(Number) }]);
      expect((r!.toolCalls as { completedMs: number }[])[0]!.completedMs).toBeLessThanOrEqual(r!.durationMs as number);
      expect(r!.finishReason).toBe('tool_calls');
      expect(r!.usage).toEqual({ promptTokens: 180, completionTokens: 20, totalTokens: 200 });
    }
    expect(stream2!.content).toBe('上海当前的天气是晴天，温度是27摄氏度。');
  });

  it('keeps the API key out of the log', () => {
    const text = JSON.stringify(records);
    expect(text).not.toContain('sk-test-0123456789abcdefghijklmnop');
    const openaiRequest = records.find((r) => r.kind === 'http-request' && r.path === '/v1/chat/completions');
    expect((openaiRequest!.headers as Record<string, string>).authorization).toBe('[redacted]');
  });

  it('records each exchange with its chunk timing for replay', () => {
    const streamed = records.find((r) => r.kind === 'http-end' && r.exchange === records.filter((q) => q.kind === 'llm-response' && q.channel === 'ollama')[3]!.exchange);
    const chunks = streamed!.chunks as [number, number][];
    expect(chunks.length).toBeGreaterThan(10);
    expect(chunks.reduce((n, [, bytes]) => n + bytes, 0)).toBe(streamed!.resBytes);
    expect(streamed!.outcome).toBe('complete');
    expect(String(streamed!.body)).toContain('"done":true');
  });

  it('leaves streamed bodies to their chunk records (Ollama lines, OpenAI events), and reads them back byte for byte', async () => {
    const lines = readFileSync(logFile, 'utf8').split('\n').filter(Boolean).map((l) => JSON.parse(l) as Rec);
    const ends = lines.filter((r) => r.kind === 'http-end' && (r.bodyInChunks !== undefined || r.bodyInEvents !== undefined));
    // Ollama's two streams; OpenAI's two, and the SDK's stream helper.
    expect(ends.map((r) => `${r.path} ${r.bodyInChunks !== undefined ? 'lines' : 'events'}`)).toEqual([...Array(2).fill('/api/chat lines'), ...Array(3).fill('/v1/chat/completions events')]);
    for (const end of ends) expect(end).not.toHaveProperty('body');
    const served = [
      await fetch(`${upstream.url}/api/chat`, { method: 'POST', body: JSON.stringify({ ...ollamaTurn1, stream: true }) }),
      await fetch(`${upstream.url}/v1/chat/completions`, { method: 'POST', headers: { 'content-type': 'application/json' }, body: JSON.stringify({ ...openaiTurn1, stream: true, stream_options: { include_usage: true } }) }),
    ];
    for (const [i, end] of [ends[0]!, ends[2]!].entries()) {
      const read = records.find((r) => r.kind === 'http-end' && r.exchange === end.exchange)!;
      expect(read.body).toBe(await served[i]!.text());
      expect(read.bodyInChunks ?? read.bodyInEvents).toBe(records.filter((r) => r.kind === 'llm-chunk' && r.exchange === end.exchange).length);
    }
  });
});

describe('LLM API failures through mcptap', () => {
  let upstream: Upstream;
  let tap: HttpTap;
  let logDir: string;

  beforeAll(async () => {
    logDir = mkdtempSync(join(tmpdir(), 'mcptap-http-llm-err-'));
    upstream = (await startLlmUpstream({ speed: 0 })) as Upstream;
    tap = await startHttpTap({ target: upstream.url, logDir, label: 'llm-errors' });
  });

  afterAll(async () => {
    await tap?.close();
    await upstream?.close();
    if (logDir) rmSync(logDir, { recursive: true, force: true });
  });

  const recordsNow = async (ready?: (records: Rec[]) => boolean): Promise<Rec[]> => (await settledRecords([tap.logFile], 5000, ready as never)) as Rec[];

  it('logs an error status before the stream as llm-error, and the client sees the same error', async () => {
    const viaTap = await new Ollama({ host: tap.url }).chat({ model: 'missing', messages: [{ role: 'user', content: 'hi' }] }).catch((e: Error) => e.message);
    const direct = await new Ollama({ host: upstream.url }).chat({ model: 'missing', messages: [{ role: 'user', content: 'hi' }] }).catch((e: Error) => e.message);
    expect(viaTap).toBe(direct);
    const openaiError = await new OpenAI({ baseURL: `${tap.url}/v1`, apiKey: 'k', maxRetries: 0 }).chat.completions
      .create({ model: 'missing', messages: [{ role: 'user', content: 'hi' }] })
      .catch((e: { status?: number }) => e.status);
    expect(openaiError).toBe(404);
    const is404 = (r: Rec): boolean => r.kind === 'llm-error' && r.status === 404;
    const errors = (await recordsNow((all) => all.filter(is404).length >= 2)).filter(is404);
    expect(errors.map((e) => [e.channel, e.phase, e.status])).toEqual([
      ['ollama', 'before-stream', 404],
      ['openai', 'before-stream', 404],
    ]);
    expect(errors[0]!.error).toBe('model "missing" not found, try pulling it first');
    expect(errors[1]!.error).toBe('The model `missing` does not exist.');
  });

  it('logs an error inside a stream (an NDJSON {"error"} line, an SSE error event)', async () => {
    const parts: unknown[] = [];
    const failure = await (async () => {
      for await (const part of await new Ollama({ host: tap.url }).chat({ model: 'error-mid-stream', messages: ollamaTurn2.messages, stream: true })) parts.push(part);
    })().catch((e: Error) => e.message);
    expect(failure).toContain('unexpected EOF');
    const sse = await fetch(`${tap.url}/v1/chat/completions`, { method: 'POST', headers: { 'content-type': 'application/json' }, body: JSON.stringify({ model: 'error-mid-stream', stream: true, messages: [] }) });
    expect(await sse.text()).toContain('event: error');
    const inStream = (r: Rec): boolean => r.kind === 'llm-error' && r.phase === 'in-stream';
    const errors = (await recordsNow((all) => all.filter(inStream).length >= 2)).filter(inStream);
    expect(errors.map((e) => e.channel)).toEqual(['ollama', 'openai']);
    expect(errors[0]!.error).toContain('unexpected EOF');
    expect(errors[1]!.error).toBe('The server had an error while processing your request.');
  });

  it('ends the client connection when the upstream resets mid-stream, and says so', async () => {
    const failure = await (async () => {
      for await (const part of await new Ollama({ host: tap.url }).chat({ model: 'reset-mid-stream', messages: ollamaTurn2.messages, stream: true })) void part;
      return 'completed';
    })().catch((e: Error) => `failed: ${e.message}`);
    expect(failure).toMatch(/^failed/);
    const records = await recordsNow();
    const end = records.find((r) => r.kind === 'http-end' && r.outcome === 'upstream-reset');
    expect(end).toBeDefined();
    expect(end!.resBytes as number).toBeGreaterThan(0);
    // The turn is logged as far as it got, flagged as cut off.
    expect(records.find((r) => r.kind === 'llm-error' && r.exchange === end!.exchange)).toMatchObject({ phase: 'in-stream', error: 'the upstream broke off the reply after 3 chunks' });
    expect(records.find((r) => r.kind === 'llm-response' && r.exchange === end!.exchange)).toMatchObject({ content: 'The weather report', chunkCount: 3, level: 40 });
  });
});

describe('an OpenAI-compatible base URL with a path as the target', () => {
  it('forwards to the path under the base URL and still recognizes the API', async () => {
    const logDir = mkdtempSync(join(tmpdir(), 'mcptap-http-llm-base-'));
    const upstream = (await startLlmUpstream({ speed: 0 })) as Upstream;
    // As with https://api.openai.com/v1: the client's base URL is the proxy itself.
    const tap = await startHttpTap({ target: `${upstream.url}/v1`, logDir, label: 'base-url' });
    try {
      const viaTap = await new OpenAI({ baseURL: tap.url, apiKey: 'k', maxRetries: 0 }).chat.completions.create({ ...openaiTurn2, stream: false });
      const direct = await new OpenAI({ baseURL: `${upstream.url}/v1`, apiKey: 'k', maxRetries: 0 }).chat.completions.create({ ...openaiTurn2, stream: false });
      expect(viaTap).toEqual(direct);
    } finally {
      await tap.close();
      await upstream.close();
    }
    const records = (await readAllRecords([tap.logFile])) as Rec[];
    expect(records.find((r) => r.kind === 'http-request')).toMatchObject({ path: '/chat/completions', channel: 'openai' });
    expect(records.find((r) => r.kind === 'llm-response')).toMatchObject({ endpoint: '/v1/chat/completions', content: '上海当前的天气是晴天，温度是27摄氏度。' });
    rmSync(logDir, { recursive: true, force: true });
  });
});
