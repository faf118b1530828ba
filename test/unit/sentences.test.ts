/**
 * What a learner reads, on the recorded LangGraph/LangChain agent session (fixtures/ollama: a ReAct agent with
 * langchain-mcp-adapters on Ollama; fixtures/openai: the OpenAI-compatible run): each sentence names the thing —
 * the tool a result belongs to, what a chunk carries — and the tables show only what they have.
 */
import { readFileSync } from 'node:fs';
import { join } from 'node:path';
import { describe, expect, it } from 'vitest';
import { LlmTurn } from '../../src/session/llm-turn.js';
import type { RecordDraft } from '../../src/log/schema.js';
import { formatRoundTripSummary } from '../../src/trace/summary.js';
import { linkTrace } from '../../src/trace/link.js';
import { readAllRecords } from '../../src/log/reader.js';

const FIXTURES = join(import.meta.dirname, '../../fixtures');
const read = (file: string): string => readFileSync(join(FIXTURES, file), 'utf8');

function exchange(channel: 'ollama' | 'openai', endpoint: string, body: string, frames: string[] = []): RecordDraft[] {
  const records: RecordDraft[] = [];
  const t = new LlmTurn({ sink: { write: (d) => records.push(d) }, channel, exchange: 'x1', endpoint, chunks: true });
  t.request(body, 1, 0);
  t.responseHead(200);
  frames.forEach((f, i) => t.frame(f, undefined, 2 + i, 1 + i));
  t.end(undefined, 100, 100);
  return records;
}

describe('the request that carries a tool result back names the tool', () => {
  it('Ollama (LangChain sends the result without tool_name)', () => {
    const [request] = exchange('ollama', '/api/chat', read('ollama/turn2.request.json'));
    expect(request!.msg).toContain('carrying back 1 tool result (get_weather)');
  });
  it('OpenAI (the result says only its tool_call_id)', () => {
    const [request] = exchange('openai', '/v1/chat/completions', read('openai/turn2.request.json'));
    expect(request!.msg).toContain('carrying back 1 tool result (get_weather)');
    expect(request!.msg).not.toContain('01964beeb9ee27098b74149d86560b35');
  });
});

describe('a streamed chunk says what it carries', () => {
  it('Ollama: the chunk with the tool call, then the end', () => {
    const frames = read('ollama/turn1.response.ndjson').split('\n').filter(Boolean);
    const chunks = exchange('ollama', '/api/chat', read('ollama/turn1.request.json'), frames).filter((r) => r.kind === 'llm-chunk');
    expect(chunks.map((c) => c.msg)).toEqual(['Model streams the tool call get_weather, now complete.', 'The stream says it is done.']);
  });
  it('OpenAI: the pieces of the tool call, the one that completes it by name, then metadata', () => {
    const frames = read('openai/turn1.response.sse').split('\n').filter((l) => l.startsWith('data: ')).map((l) => l.slice(6));
    const sentences = exchange('openai', '/v1/chat/completions', read('openai/turn1.request.json'), frames).filter((r) => r.kind === 'llm-chunk').map((c) => c.msg);
    expect(sentences).toContain('Model streams a tool call.');
    expect(sentences).toContain('Model streams the tool call get_weather, now complete.');
    expect(sentences).not.toContain('Model streams a chunk.');
    expect(sentences.at(-1)).toBe('The stream says it is done.');
  });
  it('Ollama text: the words themselves', () => {
    const frames = read('ollama/turn2.response.ndjson').split('\n').filter(Boolean);
    const first = exchange('ollama', '/api/chat', read('ollama/turn2.request.json'), frames).find((r) => r.kind === 'llm-chunk');
    expect(first!.msg).toMatch(/^Model streams ".+"\.$/);
  });
});

describe('tables show what they have', () => {
  it('MCP-only logs: the tool calls, without the model columns', async () => {
    const records = await readAllRecords([join(FIXTURES, 'captures/mcp-stdio/everything-sdk.ndjson')]);
    const lines = formatRoundTripSummary(linkTrace(records), { color: false });
    expect(lines[0]).toBe('Tool calls (no model call in these logs)');
    expect(lines.join('\n')).not.toMatch(/no model call\)|fed back/);
  });
  it('a round trip keeps the arguments in the order the model wrote them', async () => {
    const records = await readAllRecords([join(FIXTURES, 'captures/roundtrip')]);
    const trace = linkTrace(records);
    const trip = trace.roundTrips[0]!;
    expect(formatRoundTripSummary({ ...trace, roundTrips: [{ ...trip, arguments: { zone: 'west', city: 'LA' } }] }, { color: false }).join('\n')).toContain('{"zone":"west","city":"LA"}');
  });
});
