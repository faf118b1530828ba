/**
 * The verdicts on a Claude Code turn: the model calls one of Claude Code's own tools (`Read`, run by the host,
 * no MCP server) and an MCP tool (`mcp__weather__get_weather`) in one reply, and both results go back as
 * `tool_result` blocks. The Anthropic records come from the HTTP observer fed the wire bytes; the MCP server's
 * records are literal. The MCP call links with `fedBack: true`; the host's own tool is worth knowing (info),
 * not a failure, so `check` passes.
 */
import { describe, expect, it } from 'vitest';
import { HttpObserver } from '../../src/session/http-exchange.js';
import { checkRecords } from '../../src/check/check.js';
import { linkTrace } from '../../src/trace/link.js';
import type { LogRecord, RecordDraft } from '../../src/log/schema.js';

const T0 = 1_790_000_000_000;
const sse = (type: string, data: object): string => `event: ${type}\ndata: ${JSON.stringify({ type, ...data })}\n\n`;
const toolUse = (index: number, id: string, name: string, json: string): string[] => [
  sse('content_block_start', { index, content_block: { type: 'tool_use', id, name, input: {} } }),
  sse('content_block_delta', { index, delta: { type: 'input_json_delta', partial_json: json } }),
  sse('content_block_stop', { index }),
];
const stop = (reason: string): string => sse('message_delta', { delta: { stop_reason: reason, stop_sequence: null }, usage: { output_tokens: 40 } }) + sse('message_stop', {});
const start = sse('message_start', { message: { id: 'msg_1', type: 'message', role: 'assistant', model: 'claude-sonnet-4-5', content: [], usage: { input_tokens: 900, output_tokens: 1 } } });
const TOOLS = [{ name: 'Read', input_schema: { type: 'object' } }, { name: 'mcp__weather__get_weather', input_schema: { type: 'object' } }];

function llmRecords(): LogRecord[] {
  const records: LogRecord[] = [];
  let seq = 0;
  const sink = { write: (d: RecordDraft): number => records.push({ v: 1, seq: seq++, session: 'claude-1', label: 'claude', ...d } as unknown as LogRecord) - 1 };
  const observer = new HttpObserver({ sink, session: 'claude-1', maxBody: 1 << 20, chunks: false });
  const call = (at: number, body: object, reply: string[]): void => {
    const x = observer.begin({ method: 'POST', path: '/v1/messages?beta=true', headers: { 'content-type': 'application/json', 'anthropic-version': '2023-06-01' } }, T0 + at, at);
    x.requestData(Buffer.from(JSON.stringify({ model: 'claude-sonnet-4-5', max_tokens: 32000, stream: true, tools: TOOLS, ...body })));
    x.requestEnd(T0 + at, at);
    x.responseHead(200, { 'content-type': 'text/event-stream; charset=utf-8' }, T0 + at + 5, at + 5);
    reply.forEach((piece, i) => x.responseData(Buffer.from(piece), T0 + at + 10 + i, at + 10 + i));
    x.responseEnd(T0 + at + 40, at + 40);
  };
  const ask = { role: 'user', content: [{ type: 'text', text: 'Read /tmp/notes.txt and tell me the weather in New York' }] };
  const asked = [...toolUse(0, 'toolu_R', 'Read', '{"file_path":"/tmp/notes.txt"}'), ...toolUse(1, 'toolu_W', 'mcp__weather__get_weather', '{"location":"New York"}')];
  call(0, { messages: [ask] }, [start, ...asked, stop('tool_use')]);
  const back = {
    role: 'user',
    content: [
      { type: 'tool_result', tool_use_id: 'toolu_R', content: 'buy milk' },
      { type: 'tool_result', tool_use_id: 'toolu_W', content: [{ type: 'text', text: 'Clear, with a low around 65.' }] },
    ],
  };
  const text = [sse('content_block_start', { index: 0, content_block: { type: 'text', text: '' } }), sse('content_block_delta', { index: 0, delta: { type: 'text_delta', text: 'Buy milk; it is clear in New York.' } }), sse('content_block_stop', { index: 0 })];
  call(300, { messages: [ask, { role: 'assistant', content: [] }, back] }, [start, ...text, stop('end_turn')]);
  return records;
}

function mcpRecords(): LogRecord[] {
  let seq = 0;
  const rec = (at: number, r: Record<string, unknown>): LogRecord => ({ v: 1, time: T0 + at, seq: seq++, session: 'weather-1', channel: 'stdio', label: 'weather', msg: 'm', bytes: 1, ...r }) as unknown as LogRecord;
  const raw = (o: object): string => JSON.stringify({ jsonrpc: '2.0', ...o });
  return [
    rec(-900, { kind: 'request', dir: 'c2s', id: 0, method: 'initialize', raw: raw({ id: 0, method: 'initialize', params: { protocolVersion: '2025-11-25', capabilities: {}, clientInfo: { name: 'claude-code', version: '2' } } }) }),
    rec(-890, { kind: 'response', dir: 's2c', id: 0, method: 'initialize', requestSeq: 0, latencyMs: 10, raw: raw({ id: 0, result: { protocolVersion: '2025-11-25', capabilities: { tools: {} }, serverInfo: { name: 'weather', version: '1' } } }) }),
    rec(-800, { kind: 'request', dir: 'c2s', id: 1, method: 'tools/list', raw: raw({ id: 1, method: 'tools/list' }) }),
    rec(-790, { kind: 'response', dir: 's2c', id: 1, method: 'tools/list', requestSeq: 2, latencyMs: 10, raw: raw({ id: 1, result: { tools: [{ name: 'get_weather', inputSchema: { type: 'object' } }] } }) }),
    rec(100, { kind: 'request', dir: 'c2s', id: 2, method: 'tools/call', tool: 'get_weather', raw: raw({ id: 2, method: 'tools/call', params: { name: 'get_weather', arguments: { location: 'New York' } } }) }),
    rec(120, { kind: 'response', dir: 's2c', id: 2, method: 'tools/call', tool: 'get_weather', requestSeq: 4, latencyMs: 20, raw: raw({ id: 2, result: { content: [{ type: 'text', text: 'Clear, with a low around 65.' }] } }) }),
  ];
}

describe('a Claude Code turn with a host tool and an MCP tool', () => {
  const records = [...llmRecords(), ...mcpRecords()].sort((a, b) => a.time - b.time);
  const trace = linkTrace(records);

  it('links the MCP tool by its Claude Code name and fed-back tool_result, and calls the host tool what it is', () => {
    const weather = trace.roundTrips.find((r) => r.tool === 'mcp__weather__get_weather');
    expect(weather).toMatchObject({ llm: { channel: 'anthropic', toolCallId: 'toolu_W' }, mcp: { server: 'weather', id: 2 }, fedBack: true, result: 'Clear, with a low around 65.' });
    const read = trace.roundTrips.find((r) => r.tool === 'Read');
    expect(read).toMatchObject({ mcp: null, fedBack: true, diagnostics: ['tool-not-run'] });
    expect(trace.diagnostics.filter((d) => d.level === 'warn')).toEqual([]);
  });

  it('passes check', () => {
    const report = checkRecords(records);
    expect(report.findings.filter((f) => report.failOn.includes(f.signal))).toEqual([]);
    expect(report.failed).toBe(false);
  });
});
