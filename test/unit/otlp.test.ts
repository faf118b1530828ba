import { describe, expect, it } from 'vitest';
import { buildSpans, llmSpanId, mcpSpanId, parseTraceparent, SpanBuilder, type SpanData } from '../../src/export/otlp-spans.js';
import { formatOtlp, serializeOtlpJson } from '../../src/export/otlp.js';
import { linkTrace } from '../../src/trace/link.js';
import { LOG_FORMAT_VERSION, type LogRecord } from '../../src/log/schema.js';

// Literal records in the shapes the taps write: an Ollama proxy log and a stdio MCP server log, one round trip.
const T0 = 1_780_000_000_000;
let seq = 0;
const base = (session: string, channel: LogRecord['channel'], label: string, time: number) => ({ v: 1, time: T0 + time, seq: seq++, session, channel, label, msg: 'm' });

function mcpPair(time: number, id: number, method: string, params: unknown, latency: number, result: unknown, extra: { error?: { code: number; message: string }; isError?: boolean; tool?: string } = {}): LogRecord[] {
  const req = { ...base('weather-1', 'stdio', 'weather', time), kind: 'request' as const, dir: 'c2s' as const, id, method, ...(extra.tool ? { tool: extra.tool } : {}), bytes: 1, raw: JSON.stringify({ jsonrpc: '2.0', id, method, params }) };
  const res = {
    ...base('weather-1', 'stdio', 'weather', time + latency),
    kind: 'response' as const,
    dir: 's2c' as const,
    id,
    method,
    ...(extra.tool ? { tool: extra.tool } : {}),
    requestSeq: req.seq,
    latencyMs: latency,
    ...(extra.error ? { error: extra.error } : {}),
    ...(extra.isError !== undefined ? { isError: extra.isError } : {}),
    bytes: 1,
    raw: JSON.stringify(extra.error ? { jsonrpc: '2.0', id, error: extra.error } : { jsonrpc: '2.0', id, result }),
  };
  return [req, res];
}

const llm = (time: number, exchange: string, duration: number, toolCalls: { id?: string; name: string; arguments: unknown }[], toolResults: { toolCallId?: string; name?: string; content: string }[], content = ''): LogRecord[] => [
  { ...base('llm-1', 'ollama', 'ollama', time), kind: 'llm-request', dir: 'c2s', exchange, endpoint: '/api/chat', model: 'qwen2.5:3b', stream: true, messageCount: 1, tools: ['get_weather'], toolResults, prompt: 'Weather in Paris?' },
  { ...base('llm-1', 'ollama', 'ollama', time + duration), kind: 'llm-response', dir: 's2c', exchange, endpoint: '/api/chat', model: 'qwen2.5:3b', status: 200, content, toolCalls, finishReason: 'stop', usage: { promptTokens: 120, completionTokens: 18 }, durationMs: duration },
];

const TP = '00-4bf92f3577b34da6a3ce929d0e0e4736-00f067aa0ba902b7-01';

function scenario(): LogRecord[] {
  const records: LogRecord[] = [
    ...mcpPair(0, 0, 'initialize', { protocolVersion: '2025-11-25', capabilities: {}, clientInfo: { name: 'agent', version: '1' } }, 4, { protocolVersion: '2025-11-25', capabilities: { tools: {} }, serverInfo: { name: 'weather', version: '1' } }),
    ...mcpPair(10, 1, 'tools/list', {}, 2, { tools: [{ name: 'get_weather', inputSchema: { type: 'object' } }] }),
    ...llm(100, 'x1', 400, [{ id: 'call_1', name: 'get_weather', arguments: { city: 'Paris' } }], []),
    ...mcpPair(520, 2, 'tools/call', { name: 'get_weather', arguments: { city: 'Paris' } }, 30, { content: [{ type: 'text', text: 'Sunny, 21 C' }] }, { tool: 'get_weather' }),
    ...llm(600, 'x2', 300, [], [{ toolCallId: 'call_1', content: 'Sunny, 21 C' }], 'It is sunny in Paris.'),
    ...mcpPair(1000, 3, 'tools/call', { name: 'get_weather', arguments: { city: 'Oslo' }, _meta: { traceparent: TP } }, 5, { content: [{ type: 'text', text: 'no such city' }], isError: true }, { tool: 'get_weather', isError: true }),
    ...mcpPair(1100, 4, 'resources/read', { uri: 'file:///x' }, 3, undefined, { error: { code: -32002, message: 'Resource not found' } }),
  ];
  return records.sort((a, b) => a.time - b.time || a.seq - b.seq);
}

const find = (spans: SpanData[], name: string, n = 0): SpanData => {
  const found = spans.filter((s) => s.name === name);
  if (!found[n]) throw new Error(`no span ${name} #${n} among ${spans.map((s) => s.name).join(', ')}`);
  return found[n];
};

describe('parseTraceparent', () => {
  it('reads a W3C traceparent and rejects malformed or all-zero ones', () => {
    expect(parseTraceparent(TP)).toEqual({ traceId: '4bf92f3577b34da6a3ce929d0e0e4736', spanId: '00f067aa0ba902b7', sampled: true });
    expect(parseTraceparent('00-00000000000000000000000000000000-00f067aa0ba902b7-01')).toBeUndefined();
    expect(parseTraceparent('00-4bf92f3577b34da6a3ce929d0e0e4736-0000000000000000-01')).toBeUndefined();
    expect(parseTraceparent('ff-4bf92f3577b34da6a3ce929d0e0e4736-00f067aa0ba902b7-01')).toBeUndefined();
    expect(parseTraceparent('00-4bf92f35-00f067aa0ba902b7-01')).toBeUndefined();
    expect(parseTraceparent(42)).toBeUndefined();
  });
});

describe('buildSpans', () => {
  const records = scenario();
  const spans = buildSpans(records, linkTrace(records));

  it('makes one span per MCP request and per LLM call, plus one per turn', () => {
    const names = spans.map((s) => s.name).sort();
    expect(names).toEqual(['chat qwen2.5:3b', 'chat qwen2.5:3b', 'initialize', 'resources/read', 'tools/call get_weather', 'tools/call get_weather', 'tools/list', 'turn 1'].sort());
  });

  it('names MCP spans and attributes them per the MCP conventions', () => {
    const call = find(spans, 'tools/call get_weather');
    expect(call.kind).toBe('client');
    expect(call.attributes).toMatchObject({
      'mcp.method.name': 'tools/call',
      'gen_ai.tool.name': 'get_weather',
      'gen_ai.operation.name': 'execute_tool',
      'jsonrpc.request.id': '2',
      'mcp.protocol.version': '2025-11-25',
      'network.transport': 'pipe',
    });
    expect(call.endTime - call.startTime).toBe(30);
    expect(call.status.code).toBe('unset');
    // Arguments and results are opt-in in the conventions: never attributes.
    expect(JSON.stringify(call.attributes)).not.toContain('Paris');
  });

  it('joins the round trip: the tools/call span is a child of the LLM call that asked for it, in the turn trace', () => {
    const decide = find(spans, 'chat qwen2.5:3b', 0);
    const answer = find(spans, 'chat qwen2.5:3b', 1);
    const call = find(spans, 'tools/call get_weather', 0);
    const turn = find(spans, 'turn 1');
    expect(decide.spanId).toBe(llmSpanId('llm-1', 'x1'));
    const request = records.find((r) => r.kind === 'request' && r.method === 'tools/call' && r.id === 2)!;
    expect(call.spanId).toBe(mcpSpanId('weather-1', request.seq));
    expect(call.traceId).toBe(decide.traceId);
    expect(call.parentSpanId).toBe(decide.spanId);
    expect(call.attributes['gen_ai.tool.call.id']).toBe('call_1');
    expect(answer.traceId).toBe(decide.traceId);
    expect(decide.parentSpanId).toBe(turn.spanId);
    expect(answer.parentSpanId).toBe(turn.spanId);
    expect(turn.parentSpanId).toBeUndefined();
    expect(call.links).toEqual([{ traceId: answer.traceId, spanId: answer.spanId, attributes: { 'mcptap.link': 'result-fed-back' } }]);
    // MCP calls outside the round trip stay in traces of their own.
    expect(find(spans, 'tools/list').traceId).not.toBe(decide.traceId);
  });

  it('attributes LLM spans per the GenAI conventions', () => {
    const decide = find(spans, 'chat qwen2.5:3b', 0);
    expect(decide.attributes).toMatchObject({
      'gen_ai.operation.name': 'chat',
      'gen_ai.provider.name': 'ollama',
      'gen_ai.request.model': 'qwen2.5:3b',
      'gen_ai.usage.input_tokens': 120,
      'gen_ai.usage.output_tokens': 18,
      'gen_ai.tool.call.id': 'call_1',
      'gen_ai.response.finish_reasons': ['stop'],
    });
    expect(decide.startTime).toBe(T0 + 100);
    expect(decide.endTime).toBe(T0 + 500);
  });

  it('names the provider and operation of Anthropic and Gemini calls', () => {
    const call = (channel: LogRecord['channel'], endpoint: string, model: string): SpanData => {
      const records: LogRecord[] = [
        { ...base(`${channel}-1`, channel, channel, 0), kind: 'llm-request', dir: 'c2s', exchange: 'x1', endpoint, model, stream: true, messageCount: 1, tools: [], toolResults: [] },
        { ...base(`${channel}-1`, channel, channel, 50), kind: 'llm-response', dir: 's2c', exchange: 'x1', endpoint, model, status: 200, content: 'hi', toolCalls: [], durationMs: 50 },
      ];
      return buildSpans(records, linkTrace(records)).find((s) => s.name.endsWith(model))!;
    };
    expect(call('anthropic', '/v1/messages', 'claude-sonnet-4-5').attributes).toMatchObject({ 'gen_ai.provider.name': 'anthropic', 'gen_ai.operation.name': 'chat' });
    expect(call('gemini', '/v1beta/models/gemini-2.5-flash:streamGenerateContent', 'gemini-2.5-flash').attributes).toMatchObject({ 'gen_ai.provider.name': 'gcp.gemini', 'gen_ai.operation.name': 'generate_content' });
  });

  it('honours a traceparent in params._meta, and marks tool errors and JSON-RPC errors', () => {
    const traced = find(spans, 'tools/call get_weather', 1);
    expect(traced.traceId).toBe('4bf92f3577b34da6a3ce929d0e0e4736');
    expect(traced.parentSpanId).toBe('00f067aa0ba902b7');
    expect(traced.attributes['error.type']).toBe('tool_error');
    expect(traced.status.code).toBe('error');
    const read = find(spans, 'resources/read');
    expect(read.attributes).toMatchObject({ 'error.type': '-32002', 'mcp.resource.uri': 'file:///x' });
    expect(read.status).toEqual({ code: 'error', message: 'Resource not found' });
  });

  it('gives the same ids when exported twice, so live and offline exports agree', () => {
    const again = buildSpans(records, linkTrace(records));
    expect(again.map((s) => s.spanId)).toEqual(spans.map((s) => s.spanId));
    for (const s of spans) {
      expect(s.spanId).toMatch(/^[0-9a-f]{16}$/);
      expect(s.traceId).toMatch(/^[0-9a-f]{32}$/);
    }
  });
});

describe('SpanBuilder (record by record, as the live exporter uses it)', () => {
  it('completes a span only when its answer arrives, and turns a never-answered request into an error span', () => {
    const b = new SpanBuilder();
    const [req, res] = mcpPair(0, 7, 'tools/call', { name: 'slow', arguments: {}, _meta: { progressToken: 'p' } }, 50, { content: [] }, { tool: 'slow' });
    expect(b.push(req!)).toEqual([]);
    const progress: LogRecord = { ...base('weather-1', 'stdio', 'weather', 20), kind: 'notification', dir: 's2c', method: 'notifications/progress', requestSeq: req!.seq, progressToken: 'p', bytes: 1, raw: JSON.stringify({ jsonrpc: '2.0', method: 'notifications/progress', params: { progressToken: 'p', progress: 1, total: 2 } }) };
    expect(b.push(progress)).toEqual([]);
    const [span] = b.push(res!);
    expect(span!.events).toEqual([{ name: 'notifications/progress', time: T0 + 20, attributes: { 'mcp.progress.progress': 1, 'mcp.progress.total': 2 } }]);
    const [lonely] = mcpPair(100, 8, 'ping', {}, 1, {});
    b.push(lonely!);
    const ended = b.end(T0 + 900);
    expect(ended).toHaveLength(1);
    expect(ended[0]!.attributes['error.type']).toBe('no_response');
    expect(ended[0]!.endTime).toBe(T0 + 900);
  });

  it('keeps at most maxOpen requests waiting, the newest', () => {
    const b = new SpanBuilder({ maxOpen: 3 });
    for (let i = 0; i < 10; i++) b.push(mcpPair(i, 100 + i, 'ping', {}, 1, {})[0]!);
    const left = b.end(T0 + 50);
    expect(left.length).toBeGreaterThan(0);
    expect(left.length).toBeLessThanOrEqual(3);
    expect(left.map((s) => s.attributes['jsonrpc.request.id'])).toContain('109');
  });
});

describe('OTLP/JSON', () => {
  it('serializes through OpenTelemetry into an ExportTraceServiceRequest grouped by resource', () => {
    const json = JSON.parse(formatOtlp(scenario())) as { resourceSpans: { resource: { attributes: { key: string; value: { stringValue?: string } }[] }; scopeSpans: { scope: { name: string }; spans: Record<string, unknown>[] }[] }[] };
    expect(json.resourceSpans).toHaveLength(2);
    const labels = json.resourceSpans.map((rs) => rs.resource.attributes.find((a) => a.key === 'mcptap.label')?.value.stringValue).sort();
    expect(labels).toEqual(['ollama', 'weather']);
    const service = json.resourceSpans[0]!.resource.attributes.find((a) => a.key === 'service.name');
    expect(service?.value.stringValue).toBe('mcptap');
    const all = json.resourceSpans.flatMap((rs) => rs.scopeSpans.flatMap((ss) => ss.spans));
    expect(all).toHaveLength(8);
    const call = all.find((s) => s.name === 'tools/call get_weather' && s.parentSpanId !== '00f067aa0ba902b7')!;
    expect(call.traceId).toMatch(/^[0-9a-f]{32}$/);
    expect(call.kind).toBe(3); // OTLP SPAN_KIND_CLIENT
    expect(call.startTimeUnixNano).toBe(`${BigInt(T0 + 520) * 1_000_000n}`);
    expect(call.endTimeUnixNano).toBe(`${BigInt(T0 + 550) * 1_000_000n}`);
  });

  it('keeps sub-millisecond times', () => {
    const span: SpanData = { traceId: 'a'.repeat(32), spanId: 'b'.repeat(16), name: 'x', kind: 'internal', startTime: 1000.0015, endTime: 2000.25, attributes: {}, status: { code: 'ok' }, events: [], links: [], resource: { label: 'l', session: 's', channel: 'stdio' } };
    const json = JSON.parse(serializeOtlpJson([span])) as { resourceSpans: { scopeSpans: { spans: { startTimeUnixNano: string; endTimeUnixNano: string; status: { code: number } }[] }[] }[] };
    const out = json.resourceSpans[0]!.scopeSpans[0]!.spans[0]!;
    expect(out.startTimeUnixNano).toBe('1000001500');
    expect(out.endTimeUnixNano).toBe('2000250000');
    expect(out.status.code).toBe(1);
  });
});

describe('teeSink (how the taps hand records to the live exporter)', () => {
  it('passes each draft to the log first, then the stamped record with the log\u2019s seq; an observer that throws is switched off', async () => {
    const { teeSink } = await import('../../src/export/tee-sink.js');
    const written: unknown[] = [];
    let nextSeq = 10;
    const log = { write: (d: unknown) => (written.push(d), nextSeq++) };
    const seen: LogRecord[] = [];
    let throwNext = false;
    const sink = teeSink(log, { session: 'tap-1', channel: 'http', label: 'llm' }, (r) => {
      if (throwNext) throw new Error('observer bug');
      seen.push(r);
    });
    expect(sink.write({ time: 1, kind: 'stderr', dir: 's2c', text: 'x', bytes: 1, msg: 'm' })).toBe(10);
    expect(sink.write({ time: 2, kind: 'stderr', dir: 's2c', text: 'y', bytes: 1, msg: 'm', session: 'mcp-7', channel: 'mcp-http' })).toBe(11);
    expect(seen).toMatchObject([
      { v: LOG_FORMAT_VERSION, seq: 10, session: 'tap-1', channel: 'http', label: 'llm', level: 30, text: 'x' },
      { seq: 11, session: 'mcp-7', channel: 'mcp-http', text: 'y' },
    ]);
    throwNext = true;
    expect(sink.write({ time: 3, kind: 'stderr', dir: 's2c', text: 'z', bytes: 1, msg: 'm' })).toBe(12);
    throwNext = false;
    expect(sink.write({ time: 4, kind: 'stderr', dir: 's2c', text: 'w', bytes: 1, msg: 'm' })).toBe(13);
    expect(seen).toHaveLength(2);
    expect(written).toHaveLength(4);
  });
});

describe('buildSpans on a long log', () => {
  it('ends 150,000 requests that were never answered (once spread into one call, which overflows the stack)', () => {
    const ping = mcpPair(0, 0, 'ping', {}, 1, {})[0]!;
    const requests = Array.from({ length: 150_000 }, (_, i) => ({ ...ping, seq: i, time: ping.time + i, id: i }) as LogRecord);
    const spans = buildSpans(requests);
    expect(spans).toHaveLength(150_000);
    expect(spans[0]!.name).toBe('ping');
  });
});
