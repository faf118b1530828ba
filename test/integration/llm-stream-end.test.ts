/**
 * A stream is complete when its protocol's terminator came, whatever the socket does next. The current `openai`
 * client (7.x) stops reading at `data: [DONE]`, so an upstream that ends the response a moment later used to
 * leave a log saying the client gave up: an llm-error and a failing `check` on clean traffic. Through
 * `mcptap http` (the CLI) from a scripted upstream that ends 0, 1, 5 and 50 ms after `[DONE]`: no error record,
 * `check` passes; a stream cut before `[DONE]` still fails. Spawns bin/mcptap.js: build first (npm test does).
 */
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import OpenAI7 from 'openai7';
import OpenAI6 from 'openai';
import { readAllRecords } from '../../src/log/reader.js';
import { replay } from '../../src/replay/replay.js';
import { startHttpCli, type HttpCli } from '../support/http-cli.js';
import { startScriptedLlm, type ScriptedLlm } from '../support/scripted-llm.js';
import { tempDir } from '../support/temp-dir.js';
import { mcptap } from '../support/mcptap-cli.js';

const GAPS = [0, 1, 5, 50];
const ROUNDS = 2;

const REQUEST = { model: 'gpt-test', messages: [{ role: 'user', content: 'weather in Paris?' }], tools: [{ type: 'function', function: { name: 'get_weather', parameters: { type: 'object' } } }], stream: true };

type Client = { chat: { completions: { create(body: unknown): Promise<AsyncIterable<{ choices: { delta?: { tool_calls?: { function?: { arguments?: string } }[] } }[] }>> } } };

/** Streams one tool call and returns its joined arguments (throws what the client throws). */
async function streamToolCall(client: Client): Promise<string> {
  const stream = await client.chat.completions.create(REQUEST);
  let args = '';
  for await (const c of stream) for (const t of c.choices[0]?.delta?.tool_calls ?? []) args += t.function?.arguments ?? '';
  return args;
}

const check = (dir: string) => mcptap(['check', dir]);

describe.each([
  ['openai 7.x', OpenAI7],
  ['openai 6.x', OpenAI6],
])('a stream that ends after [DONE], through mcptap http (%s)', (name, OpenAI) => {
  let llm: ScriptedLlm;
  let tap: HttpCli;
  let dir: string;
  const results: string[] = [];

  beforeAll(async () => {
    dir = tempDir('mcptap-stream-end-');
    llm = await startScriptedLlm();
    tap = await startHttpCli(['--target', llm.url, '--log-dir', dir, '--name', 'llm']);
    const client = new OpenAI({ baseURL: `${tap.url}/v1`, apiKey: 'sk-test-not-a-real-key-0000', maxRetries: 0 }) as unknown as Client;
    for (const gap of GAPS) {
      llm.gapMs = gap;
      for (let i = 0; i < ROUNDS; i++) results.push(await streamToolCall(client));
    }
    // Let the last responses end upstream before the tap stops.
    await new Promise((resolve) => setTimeout(resolve, 80));
    await tap.stop();
  });

  afterAll(async () => {
    await llm?.close();
  });

  it('hands every tool call to the client', () => {
    expect(results).toEqual(Array(GAPS.length * ROUNDS).fill('{"city":"Paris"}'));
  });

  it('logs every reply complete: no llm-error, no cut-off, no warning', async () => {
    const records = await readAllRecords([dir]);
    expect(records.filter((r) => r.kind === 'llm-error').map((r) => r.msg)).toEqual([]);
    const replies = records.filter((r) => r.kind === 'llm-response');
    expect(replies).toHaveLength(GAPS.length * ROUNDS);
    for (const r of replies) {
      expect(r.msg).not.toMatch(/cut off/);
      expect(r.level ?? 30).toBe(30);
      expect(r.toolCalls).toEqual([{ name: 'get_weather', id: 'call_w1', index: 0, arguments: { city: 'Paris' }, completedMs: expect.any(Number) }]);
    }
    const ends = records.filter((r) => r.kind === 'http-end');
    for (const end of ends) expect(end.level ?? 30, end.msg).toBe(30);
    // 7.x stops reading at [DONE]: with a 50 ms gap the client, not the upstream, closes the connection.
    if (name === 'openai 7.x') expect(ends.filter((e) => e.outcome === 'client-aborted' && e.replyComplete === true).length).toBeGreaterThan(0);
  });

  it('passes check', async () => {
    const result = await check(dir);
    expect(result.stdout).toMatch(/PASS/);
    expect(result.code).toBe(0);
  });

  it('is replayed as complete streams: each response ends after [DONE]', async () => {
    const stand = await replay({ logs: dir, listen: 0, noDelay: true, onNote: () => {} });
    try {
      // A reader that reads each body to its end, as curl does: none may hang, whoever closed it when recorded.
      for (let i = 0; i < GAPS.length * ROUNDS; i++) {
        const res = await fetch(`${stand.url}/v1/chat/completions`, { method: 'POST', headers: { 'content-type': 'application/json' }, body: JSON.stringify(REQUEST), signal: AbortSignal.timeout(5000) });
        expect(await res.text()).toMatch(/data: \[DONE\]\n\n$/);
      }
    } finally {
      await stand.close();
    }
  });
});

describe('a stream cut before [DONE], through mcptap http', () => {
  it('is logged cut off and fails check', async () => {
    const dir = tempDir('mcptap-stream-cut-');
    const llm = await startScriptedLlm({ cutBeforeDone: true });
    const tap = await startHttpCli(['--target', llm.url, '--log-dir', dir, '--name', 'llm']);
    const client = new OpenAI7({ baseURL: `${tap.url}/v1`, apiKey: 'sk-test-not-a-real-key-0000', maxRetries: 0 }) as unknown as Client;
    try {
      await streamToolCall(client).catch((error: unknown) => error);
    } finally {
      await tap.stop();
      await llm.close();
    }
    const records = await readAllRecords([dir]);
    expect(records.filter((r) => r.kind === 'llm-error').map((r) => r.msg)).toEqual([expect.stringMatching(/failed mid-stream: the upstream broke off the reply after 3 chunks/)]);
    expect(records.find((r) => r.kind === 'llm-response')?.msg).toMatch(/cut off/);
    const result = await check(dir);
    expect(result.code).toBe(1);
    expect(result.stdout).toMatch(/FAIL/);
  });
});
