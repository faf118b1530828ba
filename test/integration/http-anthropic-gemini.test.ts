/**
 * The real `@anthropic-ai/sdk` and `@google/genai` clients against fixtures/llm-upstream.mjs (the recorded turns
 * of fixtures/anthropic and fixtures/gemini, served by a real HTTP server), directly and through `mcptap http`
 * (the CLI): identical results both ways; the log holds each turn reassembled (text, thinking, tool calls with
 * parsed arguments and ids, stop reason, tokens, time to first token); no piece of either key is in the log;
 * `mcptap check` passes the clean run and fails the run with an overloaded_error event.
 *
 * Spawns bin/mcptap.js, which runs the built dist/: build first (npm test does).
 */
import { createServer } from 'node:http';
import type { AddressInfo } from 'node:net';
import { mkdtempSync, readdirSync, readFileSync, rmSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import Anthropic from '@anthropic-ai/sdk';
import { GoogleGenAI } from '@google/genai';
import { readAllRecords, replay, startHttpTap, type LogRecord } from '../../src/index.js';
import { buildHttpExchanges, planExchange } from '../../src/replay/http-script.js';
import { startHttpCli } from '../support/http-cli.js';
import { mcptap } from '../support/mcptap-cli.js';
// @ts-expect-error — a plain .mjs fixture without type declarations
import { startLlmUpstream } from '../../fixtures/llm-upstream.mjs';

type Rec = LogRecord & Record<string, unknown>;
type Upstream = { url: string; close(): Promise<void> };

// Credential-shaped values built at run time, so this file itself holds no key-looking literal.
const ANTHROPIC_KEY = ['sk', 'ant', 'api03', 'Zx9Yw8Vu7Ts6Rq5Po4Nm3Lk2Jh1Gf0EdCbA'].join('-');
const GOOGLE_KEY = `AIza${'SyB1c2D3e4F5g6H7i8J9k0LmNoPqRsTuVwX'}`;

const fixture = (p: string): Record<string, unknown> => JSON.parse(readFileSync(join('fixtures', p), 'utf8')) as Record<string, unknown>;
const anthropicTurn1 = fixture('anthropic/turn1.request.json') as unknown as Anthropic.MessageCreateParamsNonStreaming;
const anthropicTurn2 = fixture('anthropic/turn2.request.json') as unknown as Anthropic.MessageCreateParamsNonStreaming;
const geminiTurn1 = fixture('gemini/turn1.request.json');
const geminiTurn2 = fixture('gemini/turn2.request.json');
const ANSWER_A = "It's clear in New York right now, with a low around 65°F and a light southwest wind around 6 mph.";
const ANSWER_G = "The weather service says it's always raining in California, so take an umbrella.";

function expectNoPieceOf(secret: string, text: string): void {
  for (let i = 0; i + 6 <= secret.length; i++) expect(text.includes(secret.slice(i, i + 6)), `"${secret.slice(i, i + 6)}" is in the log`).toBe(false);
}

/** A Gemini request file as the SDK's parameters. */
function geminiParams(body: Record<string, unknown>): { model: string; contents: never; config: never } {
  const generation = body.generationConfig as Record<string, unknown>;
  return { model: 'gemini-2.5-flash', contents: body.contents as never, config: { tools: body.tools, systemInstruction: body.systemInstruction, ...generation } as never };
}

/** The SDK's response objects, without the HTTP headers @google/genai attaches (the date differs per call). */
const plain = (value: unknown): unknown => JSON.parse(JSON.stringify(value, (k, v: unknown) => (k === 'sdkHttpResponse' ? undefined : v)));

/** Every call of a two-turn tool loop with both clients, streamed and not. */
async function runClients(baseUrl: string): Promise<Record<string, unknown>> {
  const out: Record<string, unknown> = {};
  const anthropic = new Anthropic({ apiKey: ANTHROPIC_KEY, baseURL: baseUrl, maxRetries: 0 });
  out.a1 = await anthropic.messages.create(anthropicTurn1);
  out.a2 = await anthropic.messages.create(anthropicTurn2);
  const events1: unknown[] = [];
  for await (const event of await anthropic.messages.create({ ...anthropicTurn1, stream: true })) events1.push(event);
  out.aStream1 = events1;
  const events2: unknown[] = [];
  for await (const event of await anthropic.messages.create({ ...anthropicTurn2, stream: true })) events2.push(event);
  out.aStream2 = events2;
  // The SDK's own reassembly of the stream, to compare with mcptap's.
  out.aFinal = await anthropic.messages.stream(anthropicTurn1).finalMessage();

  const ai = new GoogleGenAI({ apiKey: GOOGLE_KEY, httpOptions: { baseUrl } });
  out.g1 = plain(await ai.models.generateContent(geminiParams(geminiTurn1)));
  out.g2 = plain(await ai.models.generateContent(geminiParams(geminiTurn2)));
  const chunks1: unknown[] = [];
  for await (const chunk of await ai.models.generateContentStream(geminiParams(geminiTurn1))) chunks1.push(plain(chunk));
  out.gStream1 = chunks1;
  const chunks2: unknown[] = [];
  for await (const chunk of await ai.models.generateContentStream(geminiParams(geminiTurn2))) chunks2.push(plain(chunk));
  out.gStream2 = chunks2;
  // The REST form without alt=sse: one JSON array, the key in the query.
  const array = await fetch(`${baseUrl}/v1beta/models/gemini-2.5-flash:streamGenerateContent?key=${GOOGLE_KEY}`, { method: 'POST', headers: { 'content-type': 'application/json' }, body: JSON.stringify(geminiTurn2) });
  out.gArray = JSON.parse(await array.text());
  return out;
}

const check = (dir: string) => mcptap(['check', dir]);

describe('@anthropic-ai/sdk and @google/genai through mcptap http', () => {
  let upstream: Upstream;
  let logDir: string;
  let direct: Record<string, unknown>;
  let tapped: Record<string, unknown>;
  let records: Rec[];
  let logText: string;

  beforeAll(async () => {
    logDir = mkdtempSync(join(tmpdir(), 'mcptap-dialects-'));
    upstream = (await startLlmUpstream({ speed: 10 })) as Upstream;
    direct = await runClients(upstream.url);
    const http = await startHttpCli(['--target', upstream.url, '--log-dir', logDir, '--name', 'llm']);
    try {
      tapped = await runClients(http.url);
    } finally {
      await http.stop();
    }
    records = (await readAllRecords([logDir])) as Rec[];
    logText = readdirSync(logDir)
      .map((f) => readFileSync(join(logDir, f), 'utf8'))
      .join('');
  });

  afterAll(async () => {
    await upstream?.close();
    if (logDir) rmSync(logDir, { recursive: true, force: true });
  });

  const responses = (channel: string): Rec[] => records.filter((r) => r.kind === 'llm-response' && r.channel === channel);

  it('gives both clients exactly what they get directly', () => {
    expect(tapped).toEqual(direct);
    // The SDK hands on every event but the ping (the fixture's 20 events).
    expect((direct.aStream1 as unknown[]).length).toBe(19);
    expect((direct.gArray as unknown[]).length).toBe(3);
  });

  it('logs one llm-request per call on the right channel, with what each carries', () => {
    const requests = records.filter((r) => r.kind === 'llm-request');
    expect(requests.map((r) => `${r.channel} ${r.stream}`)).toEqual([
      'anthropic false',
      'anthropic false',
      'anthropic true',
      'anthropic true',
      'anthropic true',
      'gemini false',
      'gemini false',
      'gemini true',
      'gemini true',
      'gemini true',
    ]);
    expect(requests[0]).toMatchObject({ endpoint: '/v1/messages', model: 'claude-sonnet-4-5-20250929', tools: ['mcp__weather__get_weather'], maxTokens: 4096, thinkingConfig: { type: 'enabled', budget_tokens: 1024 } });
    expect(requests[1]!.toolResults).toEqual([{ toolCallId: 'toolu_01A09q90qw90lq917835lq9', content: 'Clear, with a low around 65. Southwest wind around 6 mph.' }]);
    expect(requests[5]).toMatchObject({ model: 'gemini-2.5-flash', tools: ['get_weather'], prompt: 'what is the weather in California?' });
    expect(requests[6]!.toolResults).toEqual([{ name: 'get_weather', content: "It's always raining in California" }]);
    expect(requests[9]!.endpoint).toBe('/v1beta/models/gemini-2.5-flash:streamGenerateContent');
  });

  it('reassembles Anthropic turns: thinking, text, the tool call with parsed input and id, stop reason, cache tokens, TTFT', () => {
    const [turn1, turn2, stream1, stream2, helper] = responses('anthropic');
    const call = [{ id: 'toolu_01A09q90qw90lq917835lq9', name: 'mcp__weather__get_weather', arguments: { location: 'New York' } }];
    for (const r of [turn1, stream1, helper]) {
      expect(r).toMatchObject({ status: 200, toolCalls: call, finishReason: 'tool_use', content: "I'll look up the current weather in New York.", model: 'claude-sonnet-4-5-20250929' });
      expect(r!.thinking).toMatch(/^The user wants the current weather in New York\./);
      expect(r!.usage).toEqual({ promptTokens: 712, completionTokens: 89, cacheCreationTokens: 0, cacheReadTokens: 2048, totalTokens: 2849 });
    }
    // The SDK's own reassembly agrees with mcptap's.
    const final = direct.aFinal as Anthropic.Message;
    expect(final.content.find((b) => b.type === 'tool_use')).toMatchObject({ id: call[0]!.id, name: call[0]!.name, input: call[0]!.arguments });
    expect(turn2!.content).toBe(ANSWER_A);
    expect(stream2).toMatchObject({ content: ANSWER_A, finishReason: 'end_turn', chunkCount: 10 });
    expect(stream1!.chunkCount).toBe(20);
    for (const r of [stream1, stream2]) expect(typeof r!.ttftMs).toBe('number');
    expect(turn1!.ttftMs).toBeUndefined();
    // Paced 20 ms apart ÷ 10: the first content (a thinking delta, the fourth event) comes after the first events.
    expect(stream1!.ttftMs as number).toBeLessThan(stream1!.durationMs as number);
    const chunks = records.filter((r) => r.kind === 'llm-chunk' && r.exchange === stream2!.exchange);
    expect(chunks.map((c) => c.delta ?? '').join('')).toBe(ANSWER_A);
  });

  it('reassembles Gemini turns: the functionCall, the text of SSE and JSON-array streams, usage, TTFT', () => {
    const [turn1, turn2, stream1, stream2, array] = responses('gemini');
    for (const r of [turn1, stream1]) expect(r).toMatchObject({ toolCalls: [{ name: 'get_weather', arguments: { location: 'California' } }], finishReason: 'STOP', usage: { promptTokens: 96, completionTokens: 16, totalTokens: 112 } });
    expect(turn2!.content).toBe(ANSWER_G);
    for (const r of [stream2, array]) {
      expect(r).toMatchObject({ content: ANSWER_G, finishReason: 'STOP', chunkCount: 3, model: 'gemini-2.5-flash', usage: { promptTokens: 131, completionTokens: 19, totalTokens: 150 } });
      expect(typeof r!.ttftMs).toBe('number');
    }
    expect(records.filter((r) => r.kind === 'llm-chunk' && r.exchange === array!.exchange)).toHaveLength(3);
  });

  it('keeps both keys out of the log: headers, the ?key= query, everywhere', () => {
    expectNoPieceOf(ANTHROPIC_KEY, logText);
    expectNoPieceOf(GOOGLE_KEY, logText);
    const heads = records.filter((r) => r.kind === 'http-request') as (Rec & { headers: Record<string, string>; path: string })[];
    // @anthropic-ai/sdk 1.x sends the key as `Authorization: Bearer` (older clients and Claude Code: x-api-key).
    for (const r of heads.filter((h) => h.channel === 'anthropic')) {
      expect(r.headers['x-api-key'] ?? r.headers.authorization).toBe('[redacted]');
      expect(r.headers['anthropic-version']).toMatch(/^\d{4}-\d{2}-\d{2}$/);
    }
    expect(heads.filter((h) => h.channel === 'gemini' && h.headers['x-goog-api-key'] === '[redacted]')).toHaveLength(4);
    expect(heads.find((h) => h.path.includes('key='))!.path).toBe('/v1beta/models/gemini-2.5-flash:streamGenerateContent?key=[redacted]');
  });

  it('replays the recorded Anthropic and Gemini streams to the same clients, paced as recorded', async () => {
    const stand = await replay({ logs: logDir, listen: { port: 0 } });
    try {
      expect(await runClients(stand.url!)).toEqual(direct);
      expect(stand.misses).toEqual([]);
    } finally {
      await stand.close();
    }
    // Each streamed reply goes out in its recorded pieces at their recorded times, not in one lump.
    const streamed = buildHttpExchanges(records.map((record) => ({ record }))).filter((e) => (e.chunks?.length ?? 0) > 1);
    // Anthropic: three streams of many events; Gemini: turn 2 as SSE and as a JSON array (turn 1 is one chunk).
    expect(streamed.map((e) => e.path.replace(/\?.*/, ''))).toEqual([...Array(3).fill('/v1/messages'), '/v1/models/gemini-2.5-flash:streamGenerateContent', '/v1beta/models/gemini-2.5-flash:streamGenerateContent']);
    for (const e of streamed) {
      const plan = planExchange(e);
      expect(plan.length, e.path).toBeGreaterThan(1);
      expect(plan.at(-1)!.atMs).toBeGreaterThan(plan[0]!.atMs);
    }
  });

  it('leaves each SSE stream\u2019s body to its chunk records, and reads it back as the upstream sent it', async () => {
    const lines = logText.split('\n').filter(Boolean).map((l) => JSON.parse(l) as Rec);
    const ends = lines.filter((r) => r.kind === 'http-end' && r.bodyInEvents !== undefined);
    // Anthropic's three streams (named events) and Gemini's two alt=sse streams; the JSON array keeps its body.
    expect(ends.map((r) => r.channel).sort()).toEqual(['anthropic', 'anthropic', 'anthropic', 'gemini', 'gemini']);
    for (const end of ends) expect(end).not.toHaveProperty('body');
    const anthropicChunk = lines.find((r) => r.kind === 'llm-chunk' && r.channel === 'anthropic');
    expect(anthropicChunk!.event).toBe('message_start');
    for (const [channel, name] of [['anthropic', 'anthropic/turn1.response.sse'], ['gemini', 'gemini/turn1.response.sse']] as const) {
      const read = records.find((r) => r.kind === 'http-end' && r.exchange === ends.find((e) => e.channel === channel)!.exchange)!;
      expect(read.body, channel).toBe(readFileSync(join('fixtures', name), 'utf8'));
    }
  });

  it('mcptap check passes the clean run', async () => {
    const { code, stdout } = await check(logDir);
    expect(stdout).toContain('PASS');
    expect(code).toBe(0);
  });
});

describe('an overloaded_error mid-stream through mcptap http', () => {
  it('reaches the client as the SDK’s error, is an llm-error with its type, and fails mcptap check', async () => {
    const logDir = mkdtempSync(join(tmpdir(), 'mcptap-overloaded-'));
    const upstream = (await startLlmUpstream({ speed: 0 })) as Upstream;
    const http = await startHttpCli(['--target', upstream.url, '--log-dir', logDir, '--name', 'claude']);
    const attempt = async (baseURL: string): Promise<unknown> => {
      const events: string[] = [];
      try {
        for await (const event of await new Anthropic({ apiKey: ANTHROPIC_KEY, baseURL, maxRetries: 0 }).messages.create({ ...anthropicTurn2, model: 'overloaded', stream: true })) events.push(event.type);
        return { events };
      } catch (error) {
        return { events, error: (error as Error).message };
      }
    };
    try {
      const viaTap = await attempt(http.url);
      expect(viaTap).toEqual(await attempt(upstream.url));
      expect(viaTap).toMatchObject({ events: ['message_start', 'content_block_start', 'content_block_delta'], error: expect.stringContaining('overloaded_error') });
    } finally {
      await http.stop();
      await upstream.close();
    }
    const records = (await readAllRecords([logDir])) as Rec[];
    expect(records.filter((r) => r.kind === 'llm-error')).toMatchObject([{ channel: 'anthropic', phase: 'in-stream', error: 'Overloaded', errorType: 'overloaded_error', status: 200 }]);
    expect(records.find((r) => r.kind === 'llm-response')).toMatchObject({ content: "It's clear in New York", level: 40 });
    const { code, stdout } = await check(logDir);
    expect(stdout).toContain('FAIL');
    expect(stdout).toContain('overloaded_error');
    expect(code).toBe(1);
    rmSync(logDir, { recursive: true, force: true });
  });
});

describe('a key the model streams back, cut at every position, through mcptap http', () => {
  it('reaches both clients whole and the log in no piece', async () => {
    // The upstream cuts the reply at the position the model name says (`cut-7`), in the real APIs' event shapes.
    const said = (key: string): string => `Your key is ${key}, keep it.`;
    const cutAt = (model: string, key: string): number => said(key).indexOf(key) + Number(model.slice(4));
    const upstream = createServer((req, res) => {
      let body = '';
      req.on('data', (c: Buffer) => (body += c.toString()));
      req.on('end', () => {
        res.writeHead(200, { 'content-type': 'text/event-stream; charset=utf-8' });
        if (req.url!.startsWith('/v1/messages')) {
          const text = said(ANTHROPIC_KEY);
          const at = cutAt((JSON.parse(body) as { model: string }).model, ANTHROPIC_KEY);
          const ev = (type: string, data: object): string => `event: ${type}\ndata: ${JSON.stringify({ type, ...data })}\n\n`;
          const delta = (t: string): string => ev('content_block_delta', { index: 0, delta: { type: 'text_delta', text: t } });
          res.end(
            ev('message_start', { message: { id: 'msg_1', type: 'message', role: 'assistant', model: 'claude-x', content: [], stop_reason: null, stop_sequence: null, usage: { input_tokens: 5, output_tokens: 1 } } }) +
              ev('content_block_start', { index: 0, content_block: { type: 'text', text: '' } }) +
              delta(text.slice(0, at)) +
              ev('ping', {}) +
              delta(text.slice(at)) +
              ev('content_block_stop', { index: 0 }) +
              ev('message_delta', { delta: { stop_reason: 'end_turn', stop_sequence: null }, usage: { output_tokens: 12 } }) +
              ev('message_stop', {}),
          );
        } else {
          const text = said(GOOGLE_KEY);
          const at = cutAt(decodeURIComponent(/models\/([^:]+):/.exec(req.url!)![1]!), GOOGLE_KEY);
          const chunk = (t: string, last: boolean): string => `data: ${JSON.stringify({ candidates: [{ content: { parts: [{ text: t }], role: 'model' }, index: 0, ...(last ? { finishReason: 'STOP' } : {}) }], modelVersion: 'gemini-2.5-flash' })}\r\n\r\n`;
          res.end(chunk(text.slice(0, at), false) + chunk(text.slice(at), true));
        }
      });
    });
    await new Promise<void>((r) => upstream.listen(0, '127.0.0.1', r));
    const logDir = mkdtempSync(join(tmpdir(), 'mcptap-split-key-'));
    const tap = await startHttpTap({ target: `http://127.0.0.1:${(upstream.address() as AddressInfo).port}`, logDir, label: 'split' });
    try {
      const anthropic = new Anthropic({ apiKey: 'k', baseURL: tap.url, maxRetries: 0 });
      for (let i = 1; i < ANTHROPIC_KEY.length; i++) {
        const message = await anthropic.messages.stream({ model: `cut-${i}`, max_tokens: 50, messages: [{ role: 'user', content: 'my key?' }] }).finalMessage();
        expect(message.content).toMatchObject([{ type: 'text', text: said(ANTHROPIC_KEY) }]);
      }
      const ai = new GoogleGenAI({ apiKey: 'k', httpOptions: { baseUrl: tap.url } });
      for (let i = 1; i < GOOGLE_KEY.length; i++) {
        let text = '';
        for await (const c of await ai.models.generateContentStream({ model: `cut-${i}`, contents: 'my key?' })) text += c.text ?? '';
        expect(text).toBe(said(GOOGLE_KEY));
      }
    } finally {
      await tap.close();
      await new Promise((r) => upstream.close(r));
    }
    const log = readdirSync(logDir)
      .map((f) => readFileSync(join(logDir, f), 'utf8'))
      .join('');
    expectNoPieceOf(ANTHROPIC_KEY, log);
    expectNoPieceOf(GOOGLE_KEY, log);
    const replies = log.split('\n').filter((l) => l.includes('"kind":"llm-response"'));
    expect(replies).toHaveLength(ANTHROPIC_KEY.length - 1 + GOOGLE_KEY.length - 1);
    for (const r of replies) expect((JSON.parse(r) as { content: string }).content).toBe('Your key is [redacted], keep it.');
    rmSync(logDir, { recursive: true, force: true });
  });
});
