import { describe, expect, it } from 'vitest';
import { canonicalJson, linkTrace, parseTextToolCalls, sameTool, toolResultText, traceLines } from '../../src/trace/link.js';
import { checkRecords } from '../../src/check/check.js';
import type { LlmToolCall, LlmToolResult, LogRecord } from '../../src/log/schema.js';

// Literal records in the shapes the taps write (src/log/schema.ts): an LLM proxy log and an MCP server log.
const T0 = 1_780_000_000_000;
let seq = 0;
const base = (session: string, channel: LogRecord['channel'], label: string, time: number) => ({
  v: 1,
  time: T0 + time,
  seq: seq++,
  session,
  channel,
  label,
  msg: 'm',
});

function llmRequest(time: number, exchange: string, extra: { tools?: string[]; toolResults?: LlmToolResult[]; historyToolCalls?: LlmToolCall[]; prompt?: string; channel?: 'ollama' | 'openai'; session?: string }): LogRecord {
  const channel = extra.channel ?? 'ollama';
  return {
    ...base(extra.session ?? 'llm-1', channel, 'llm', time),
    kind: 'llm-request',
    dir: 'c2s',
    exchange,
    endpoint: channel === 'ollama' ? '/api/chat' : '/v1/chat/completions',
    model: 'qwen2.5:3b',
    stream: false,
    messageCount: 1,
    tools: extra.tools ?? ['get_weather'],
    toolResults: extra.toolResults ?? [],
    ...(extra.historyToolCalls ? { historyToolCalls: extra.historyToolCalls } : {}),
    ...(extra.prompt !== undefined ? { prompt: extra.prompt } : {}),
  };
}

function llmResponse(time: number, exchange: string, durationMs: number, toolCalls: LlmToolCall[], content = '', channel: 'ollama' | 'openai' = 'ollama', session = 'llm-1'): LogRecord {
  return {
    ...base(session, channel, 'llm', time),
    kind: 'llm-response',
    dir: 's2c',
    exchange,
    endpoint: channel === 'ollama' ? '/api/chat' : '/v1/chat/completions',
    model: 'qwen2.5:3b',
    status: 200,
    content,
    toolCalls,
    durationMs,
  };
}

function mcpInitialize(time: number, session = 'weather-1', label = 'weather'): LogRecord[] {
  const req = { ...base(session, 'stdio', label, time), kind: 'request' as const, dir: 'c2s' as const, id: 0, method: 'initialize', bytes: 1, raw: JSON.stringify({ jsonrpc: '2.0', id: 0, method: 'initialize', params: { protocolVersion: '2025-11-25', capabilities: {}, clientInfo: { name: 'demo-agent', version: '1.0.0' } } }) };
  const res = { ...base(session, 'stdio', label, time + 5), kind: 'response' as const, dir: 's2c' as const, id: 0, method: 'initialize', requestSeq: req.seq, latencyMs: 5, bytes: 1, raw: JSON.stringify({ jsonrpc: '2.0', id: 0, result: { protocolVersion: '2025-11-25', capabilities: { tools: {} }, serverInfo: { name: 'weather', version: '1.0.0' } } }) };
  return [req, res];
}

function mcpToolsList(time: number, tools: string[], session = 'weather-1', label = 'weather'): LogRecord[] {
  const req = { ...base(session, 'stdio', label, time), kind: 'request' as const, dir: 'c2s' as const, id: 1, method: 'tools/list', bytes: 1, raw: '{"jsonrpc":"2.0","id":1,"method":"tools/list"}' };
  const res = { ...base(session, 'stdio', label, time + 2), kind: 'response' as const, dir: 's2c' as const, id: 1, method: 'tools/list', requestSeq: req.seq, latencyMs: 2, bytes: 1, raw: JSON.stringify({ jsonrpc: '2.0', id: 1, result: { tools: tools.map((name) => ({ name, inputSchema: { type: 'object' } })) } }) };
  return [req, res];
}

function mcpCall(time: number, id: number, tool: string, args: unknown, latency: number, text: string, opts: { isError?: boolean; session?: string } = {}): LogRecord[] {
  const session = opts.session ?? 'weather-1';
  const req = { ...base(session, 'stdio', 'weather', time), kind: 'request' as const, dir: 'c2s' as const, id, method: 'tools/call', tool, bytes: 1, raw: JSON.stringify({ jsonrpc: '2.0', id, method: 'tools/call', params: { name: tool, arguments: args } }) };
  const res = {
    ...base(session, 'stdio', 'weather', time + latency),
    kind: 'response' as const,
    dir: 's2c' as const,
    id,
    method: 'tools/call',
    tool,
    requestSeq: req.seq,
    latencyMs: latency,
    isError: opts.isError ?? false,
    bytes: 1,
    raw: JSON.stringify({ jsonrpc: '2.0', id, result: { content: [{ type: 'text', text }], isError: opts.isError ?? false } }),
  };
  return [req, res];
}

const byTime = (records: LogRecord[]): LogRecord[] => [...records].sort((a, b) => a.time - b.time);
const RAIN = "It's always raining in California";

describe('linkTrace: the Ollama loop (no tool-call ids, unnamed role:tool message)', () => {
  const records = byTime([
    ...mcpInitialize(0),
    ...mcpToolsList(10, ['get_weather']),
    llmRequest(100, 'x1', { prompt: 'what is the weather in California?' }),
    llmResponse(400, 'x1', 300, [{ name: 'get_weather', arguments: { location: 'California' } }]),
    ...mcpCall(410, 2, 'get_weather', { location: 'California' }, 20, RAIN),
    llmRequest(450, 'x2', {
      toolResults: [{ content: RAIN }],
      historyToolCalls: [{ name: 'get_weather', arguments: { location: 'California' } }],
      prompt: 'what is the weather in California?',
    }),
    llmResponse(900, 'x2', 450, [], 'The weather report indicates that it is always raining in California.'),
  ]);
  const trace = linkTrace(records);

  it('links the model call to the tools/call, its result, the feed-back and the answer', () => {
    expect(trace.roundTrips).toHaveLength(1);
    const trip = trace.roundTrips[0]!;
    expect(trip).toMatchObject({
      type: 'tool-round-trip',
      turn: 1,
      tool: 'get_weather',
      arguments: { location: 'California' },
      llm: { channel: 'ollama', model: 'qwen2.5:3b', toolCallId: null, decidedMs: 300, exchange: 'x1' },
      mcp: { session: 'weather-1', server: 'weather', id: 2, latencyMs: 20, isError: false },
      result: RAIN,
      fedBack: true,
      fedBackIn: { session: 'llm-1', exchange: 'x2' },
      answerPreview: 'The weather report indicates that it is always raining in California.',
      diagnostics: [],
    });
    expect(trip.mcp).not.toHaveProperty('arguments');
  });

  it('times each step of the round', () => {
    expect(trace.roundTrips[0]!.timing).toEqual({ decisionMs: 300, dispatchMs: 10, toolMs: 20, feedBackMs: 20, answerMs: 450, totalMs: 800 });
  });

  it('makes one turn of both LLM calls, with totals', () => {
    expect(trace.turns).toHaveLength(1);
    expect(trace.turns[0]).toMatchObject({
      type: 'turn',
      turn: 1,
      prompt: 'what is the weather in California?',
      exchanges: ['x1', 'x2'],
      llmCalls: 2,
      toolCalls: 1,
      answerPreview: 'The weather report indicates that it is always raining in California.',
      timing: { totalMs: 800, llmMs: 750, toolMs: 20, hostMs: 30 },
    });
  });

  it('describes each session: the server from its handshake, the LLM proxy by its models and tools', () => {
    const mcp = trace.sessions.find((s) => s.session === 'weather-1')!;
    expect(mcp).toMatchObject({ role: 'mcp', server: { name: 'weather', version: '1.0.0' }, client: { name: 'demo-agent' }, protocolVersion: '2025-11-25', tools: ['get_weather'], toolCalls: 1 });
    const llm = trace.sessions.find((s) => s.session === 'llm-1')!;
    expect(llm).toMatchObject({ role: 'llm', channel: 'ollama', models: ['qwen2.5:3b'], tools: ['get_weather'], llmCalls: 2 });
  });

  it('finds nothing wrong', () => {
    expect(trace.diagnostics).toEqual([]);
  });

  it('prints sessions, then the turn and its round trip', () => {
    expect(traceLines(trace).map((l) => l.type)).toEqual(['session', 'session', 'turn', 'tool-round-trip']);
  });
});

describe('linkTrace: the OpenAI loop (tool-call ids)', () => {
  const call = (id: string, city: string): LlmToolCall => ({ id, name: 'get_weather', arguments: { city } });
  const records = byTime([
    llmRequest(0, 'o1', { channel: 'openai', prompt: 'weather in two cities' }),
    llmResponse(200, 'o1', 200, [call('call_a', 'Paris'), call('call_b', 'Oslo')], '', 'openai'),
    // The host runs them in reverse order; ids, not order, must decide.
    ...mcpCall(210, 7, 'get_weather', { city: 'Oslo' }, 5, 'cold'),
    ...mcpCall(220, 8, 'get_weather', { city: 'Paris' }, 5, 'mild'),
    llmRequest(240, 'o2', { channel: 'openai', toolResults: [{ toolCallId: 'call_b', content: 'cold' }, { toolCallId: 'call_a', content: 'mild' }] }),
    llmResponse(300, 'o2', 60, [], 'Paris is mild, Oslo is cold.', 'openai'),
  ]);
  const trace = linkTrace(records);

  it('links each call to the server call with its arguments and feeds back by id', () => {
    expect(trace.roundTrips.map((r) => [r.llm?.toolCallId, r.mcp?.id, r.result, r.fedBack, r.fedBackIn?.exchange])).toEqual([
      ['call_a', 8, 'mild', true, 'o2'],
      ['call_b', 7, 'cold', true, 'o2'],
    ]);
    expect(trace.diagnostics).toEqual([]);
  });

  it('does not treat a result carried under another id as fed back', () => {
    const partial = byTime([
      llmRequest(0, 'o1', { channel: 'openai' }),
      llmResponse(200, 'o1', 200, [call('call_a', 'Paris')], '', 'openai'),
      ...mcpCall(210, 1, 'get_weather', { city: 'Paris' }, 5, 'mild'),
      llmRequest(240, 'o2', { channel: 'openai', toolResults: [{ toolCallId: 'call_zzz', content: 'mild' }] }),
    ]);
    const t = linkTrace(partial);
    expect(t.roundTrips[0]!.fedBack).toBe(false);
    expect(t.diagnostics.map((d) => d.code)).toEqual(['result-not-fed-back']);
  });
});

describe('linkTrace: diagnostics', () => {
  it('flags arguments the host changed between the model and the server', () => {
    const trace = linkTrace(
      byTime([
        llmRequest(0, 'x1', {}),
        llmResponse(100, 'x1', 100, [{ name: 'get_weather', arguments: { location: 'California' } }]),
        ...mcpCall(110, 1, 'get_weather', { location: 'CA' }, 5, RAIN),
        llmRequest(130, 'x2', { toolResults: [{ name: 'get_weather', content: RAIN }] }),
      ]),
    );
    const trip = trace.roundTrips[0]!;
    expect(trip.mcp?.arguments).toEqual({ location: 'CA' });
    expect(trip.diagnostics).toEqual(['arguments-changed']);
    const d = trace.diagnostics.find((x) => x.code === 'arguments-changed')!;
    expect(d.msg).toContain('{"location":"California"}');
    expect(d.msg).toContain('{"location":"CA"}');
  });

  it('prefers the call with the same arguments over an earlier one with other arguments', () => {
    const trace = linkTrace(
      byTime([
        ...mcpCall(50, 1, 'get_weather', { location: 'Texas' }, 5, 'hot'),
        llmRequest(0, 'x1', {}),
        llmResponse(100, 'x1', 100, [{ name: 'get_weather', arguments: { location: 'California' } }]),
        ...mcpCall(110, 2, 'get_weather', { location: 'California' }, 5, RAIN),
      ]),
    );
    const linked = trace.roundTrips.find((r) => r.llm !== null)!;
    expect(linked.mcp?.id).toBe(2);
    expect(linked.diagnostics).toEqual(['result-not-fed-back']);
    const direct = trace.roundTrips.find((r) => r.llm === null)!;
    expect(direct).toMatchObject({ mcp: { id: 1 }, turn: null, diagnostics: ['call-without-model'] });
  });

  it('says when the model asked for a tool no server ran, and does not link calls outside the window', () => {
    const trace = linkTrace(
      byTime([
        ...mcpCall(0, 1, 'get_weather', { location: 'California' }, 5, RAIN),
        llmRequest(1000, 'x1', {}),
        llmResponse(1100, 'x1', 100, [{ name: 'get_weather', arguments: { location: 'California' } }]),
        ...mcpCall(400_000, 2, 'get_weather', { location: 'California' }, 5, RAIN),
      ]),
      { windowMs: 60_000 },
    );
    const modelTrip = trace.roundTrips.find((r) => r.llm !== null)!;
    expect(modelTrip.mcp).toBeNull();
    expect(modelTrip.fedBack).toBe(false);
    expect(modelTrip.diagnostics).toEqual(['tool-not-run']);
    expect(trace.diagnostics.find((d) => d.code === 'tool-not-run')!.msg).toContain('no MCP server in these logs ran it');
  });

  it('compares the tools servers offer with the tools the model was given, both ways', () => {
    const trace = linkTrace(
      byTime([
        ...mcpInitialize(0),
        ...mcpToolsList(10, ['get_weather', 'get_alerts']),
        llmRequest(100, 'x1', { tools: ['get_weather', 'add'] }),
        llmResponse(200, 'x1', 100, [], 'Hello.'),
      ]),
    );
    expect(trace.diagnostics.map((d) => [d.code, d.tool, d.level])).toEqual([
      ['tool-not-offered-to-model', 'get_alerts', 'warn'],
      ['tool-not-on-any-server', 'add', 'info'],
    ]);
  });

  it('accepts a host prefix on tool names (weather__get_weather)', () => {
    const trace = linkTrace(
      byTime([
        ...mcpToolsList(10, ['get_weather']),
        llmRequest(100, 'x1', { tools: ['weather__get_weather'] }),
        llmResponse(200, 'x1', 100, [{ id: 'c1', name: 'weather__get_weather', arguments: {} }]),
        ...mcpCall(210, 3, 'get_weather', {}, 5, RAIN),
        llmRequest(230, 'x2', { tools: ['weather__get_weather'], toolResults: [{ toolCallId: 'c1', content: RAIN }] }),
      ]),
    );
    expect(trace.roundTrips[0]).toMatchObject({ mcp: { id: 3, tool: 'get_weather', mapping: 'server__tool' }, fedBack: true, diagnostics: [] });
    expect(trace.diagnostics.map((d) => [d.code, d.level])).toEqual([['tool-name-mapped', 'info']]);
  });

  it('recognises a tool call written as text (Cline) and finds its result fed back in the request body', () => {
    const xml =
      'I will look it up.\n<use_mcp_tool>\n<server_name>weather</server_name>\n<tool_name>get_forecast</tool_name>\n<arguments>\n{"latitude": 40.7128, "longitude": -74.006}\n</arguments>\n</use_mcp_tool>';
    const forecast = 'Overnight: Clear, with a low around 65.';
    const body = JSON.stringify({ model: 'm', messages: [{ role: 'user', content: `[use_mcp_tool for 'weather'] Result:\n${forecast}` }] });
    const records = byTime([
      llmRequest(0, 'c1', { tools: [] }),
      llmResponse(100, 'c1', 100, [], xml),
      ...mcpCall(120, 5, 'get_forecast', { longitude: -74.006, latitude: 40.7128 }, 300, forecast),
      { ...base('llm-1', 'ollama', 'llm', 500), kind: 'http-request', dir: 'c2s', exchange: 'c2', method: 'POST', path: '/api/chat', headers: {}, body, bodyBytes: body.length },
      llmRequest(500, 'c2', { tools: [] }),
      llmResponse(700, 'c2', 200, [], 'Clear tonight.'),
    ]);
    const trace = linkTrace(records);
    expect(trace.roundTrips).toHaveLength(1);
    expect(trace.roundTrips[0]).toMatchObject({
      tool: 'get_forecast',
      arguments: { latitude: 40.7128, longitude: -74.006 },
      llm: { viaText: true, serverName: 'weather' },
      mcp: { id: 5 },
      fedBack: true,
      answerPreview: 'Clear tonight.',
      diagnostics: ['tool-call-as-text'],
    });
    expect(trace.diagnostics.map((d) => d.code)).toEqual(['tool-call-as-text']);
  });

  it('reports a failed tool as isError and keeps the error text as the result', () => {
    const trace = linkTrace(
      byTime([
        llmRequest(0, 'x1', {}),
        llmResponse(100, 'x1', 100, [{ name: 'get_weather', arguments: { location: 'Atlantis' } }]),
        ...mcpCall(110, 1, 'get_weather', { location: 'Atlantis' }, 5, 'Unknown place: Atlantis', { isError: true }),
        llmRequest(130, 'x2', { toolResults: [{ name: 'get_weather', content: 'Unknown place: Atlantis' }] }),
      ]),
    );
    expect(trace.roundTrips[0]).toMatchObject({ mcp: { isError: true }, result: 'Unknown place: Atlantis', fedBack: true, answerPreview: null });
  });
});

describe('helpers', () => {
  it('canonicalJson sorts keys at every level', () => {
    expect(canonicalJson({ b: 1, a: { d: [{ z: 1, y: 2 }], c: null } })).toBe('{"a":{"c":null,"d":[{"y":2,"z":1}]},"b":1}');
    expect(canonicalJson({ a: 1, b: 2 })).toBe(canonicalJson({ b: 2, a: 1 }));
    expect(canonicalJson('{"not":"parsed"}')).toBe('"{\\"not\\":\\"parsed\\"}"');
  });

  it('sameTool allows a separator-delimited host prefix only', () => {
    expect(sameTool('get_weather', 'get_weather')).toBe(true);
    expect(sameTool('weather__get_weather', 'get_weather')).toBe(true);
    expect(sameTool('mcp.weather.get_weather', 'get_weather')).toBe(true);
    expect(sameTool('forget_weather', 'get_weather')).toBe(false);
    expect(sameTool('get_weather', 'weather')).toBe(false);
  });

  it('parseTextToolCalls reads each <use_mcp_tool> block and keeps bad JSON raw', () => {
    const text = '<use_mcp_tool><server_name>a</server_name><tool_name>t1</tool_name><arguments>{"x":1}</arguments></use_mcp_tool> and <use_mcp_tool><tool_name>t2</tool_name><arguments>{oops</arguments></use_mcp_tool>';
    expect(parseTextToolCalls(text)).toEqual([
      { server: 'a', call: { name: 't1', arguments: { x: 1 } } },
      { call: { name: 't2', arguments: '{oops', argumentsRaw: '{oops' } },
    ]);
    expect(parseTextToolCalls('no calls here')).toEqual([]);
  });

  it('toolResultText joins text blocks and names the others', () => {
    expect(toolResultText({ content: [{ type: 'text', text: 'a' }, { type: 'image', data: 'x' }, { type: 'text', text: 'b' }] })).toBe('a\n[image]\nb');
    expect(toolResultText({ structuredContent: { t: 1 } })).toBe('{"t":1}');
    expect(toolResultText(undefined)).toBeNull();
  });
});

describe('linkTrace: two agents at once', () => {
  it('does not take another agent\u2019s feed-back of the same tool for this call', () => {
    // The OpenAI agent's call (with an id) is answered later than the Ollama agent's (name only): the Ollama
    // feed-back must not count for the OpenAI call just because the tool name matches.
    const records = byTime([
      llmRequest(0, 'o1', { channel: 'openai', session: 'proxy' }),
      llmRequest(5, 'a1', { session: 'proxy' }),
      llmResponse(100, 'o1', 100, [{ id: 'call_1', name: 'get_weather', arguments: { city: 'Oslo' } }], '', 'openai', 'proxy'),
      llmResponse(105, 'a1', 100, [{ name: 'get_weather', arguments: { location: 'California' } }], '', 'ollama', 'proxy'),
      ...mcpCall(110, 1, 'get_weather', { location: 'California' }, 5, RAIN),
      ...mcpCall(112, 2, 'get_weather', { city: 'Oslo' }, 50, 'cold'),
      llmRequest(130, 'a2', { session: 'proxy', toolResults: [{ name: 'get_weather', content: RAIN }] }),
      llmRequest(200, 'o2', { channel: 'openai', session: 'proxy', toolResults: [{ toolCallId: 'call_1', content: 'cold' }] }),
    ]);
    const trips = linkTrace(records).roundTrips;
    expect(trips.map((t) => [t.llm?.exchange, t.mcp?.id, t.fedBackIn?.exchange])).toEqual([
      ['o1', 2, 'o2'],
      ['a1', 1, 'a2'],
    ]);
  });
});

describe('linkTrace: an LLM log alone', () => {
  it('notes tool calls it cannot place, without calling them a problem', () => {
    const trace = linkTrace(byTime([llmRequest(0, 'x1', {}), llmResponse(100, 'x1', 100, [{ name: 'get_weather', arguments: { location: 'Paris' } }])]));
    expect(trace.diagnostics.map((d) => [d.code, d.level])).toEqual([['tool-not-run', 'info']]);
    expect(trace.diagnostics[0]!.msg).toContain('no MCP server log was given');
  });
});

/** Two servers, as their logs show them: weather (get_weather, get_forecast) and math (add). */
function twoServers(): LogRecord[] {
  const server = (session: string, name: string, tools: string[], t: number): LogRecord[] => {
    const at = (dt: number) => base(session, 'stdio', name, t + dt);
    const rpc = (o: object) => JSON.stringify({ jsonrpc: '2.0', ...o });
    const init = { ...at(0), kind: 'request' as const, dir: 'c2s' as const, id: 0, method: 'initialize', bytes: 1, raw: rpc({ id: 0, method: 'initialize', params: {} }) };
    const list = { ...at(2), kind: 'request' as const, dir: 'c2s' as const, id: 1, method: 'tools/list', bytes: 1, raw: rpc({ id: 1, method: 'tools/list' }) };
    return [
      init,
      { ...at(1), kind: 'response', dir: 's2c', id: 0, method: 'initialize', requestSeq: init.seq, latencyMs: 1, bytes: 1, raw: rpc({ id: 0, result: { protocolVersion: '2025-11-25', capabilities: { tools: {} }, serverInfo: { name, version: '1' } } }) },
      list,
      { ...at(3), kind: 'response', dir: 's2c', id: 1, method: 'tools/list', requestSeq: list.seq, latencyMs: 1, bytes: 1, raw: rpc({ id: 1, result: { tools: tools.map((n) => ({ name: n, inputSchema: { type: 'object' } })) } }) },
    ];
  };
  return [...server('weather-1', 'weather', ['get_weather', 'get_forecast'], 0), ...server('math-1', 'math', ['add'], 0)];
}

/** A tools/call on one of twoServers() and its answer. */
function callOn(session: string, label: string, time: number, id: number, tool: string, args: unknown, text: string): LogRecord[] {
  const req = { ...base(session, 'stdio', label, time), kind: 'request' as const, dir: 'c2s' as const, id, method: 'tools/call', tool, bytes: 1, raw: JSON.stringify({ jsonrpc: '2.0', id, method: 'tools/call', params: { name: tool, arguments: args } }) };
  const res = { ...base(session, 'stdio', label, time + 5), kind: 'response' as const, dir: 's2c' as const, id, method: 'tools/call', tool, requestSeq: req.seq, latencyMs: 5, isError: false, bytes: 1, raw: JSON.stringify({ jsonrpc: '2.0', id, result: { content: [{ type: 'text', text }] } }) };
  return [req, res];
}

/**
 * One agent loop over twoServers() with the host's names for the tools: the model calls get_weather and add in
 * one reply, the host runs both, and feeds both results back by id.
 */
function loopNamed(named: (server: string, tool: string) => string): LogRecord[] {
  const offered = [named('weather', 'get_weather'), named('weather', 'get_forecast'), named('math', 'add')];
  return byTime([
    ...twoServers(),
    llmRequest(100, 'x1', { tools: offered, channel: 'openai' }),
    llmResponse(200, 'x1', 100, [{ id: 'c1', name: offered[0]!, arguments: { city: 'Paris' } }, { id: 'c2', name: offered[2]!, arguments: { a: 1, b: 2 } }], '', 'openai'),
    ...callOn('weather-1', 'weather', 210, 2, 'get_weather', { city: 'Paris' }, 'sunny'),
    ...callOn('math-1', 'math', 212, 2, 'add', { a: 1, b: 2 }, '3'),
    llmRequest(240, 'x2', { tools: offered, channel: 'openai', toolResults: [{ toolCallId: 'c1', content: 'sunny' }, { toolCallId: 'c2', content: '3' }] }),
    llmResponse(300, 'x2', 60, [], 'Sunny, and 3.', 'openai'),
  ]);
}

const LONG_TOOL = 'get_the_weather_forecast_for_the_next_fourteen_days_at_hourly_resolution';

describe('linkTrace: tool names as hosts rename them', () => {
  const schemes: [string, (server: string, tool: string) => string][] = [
    ['server__tool', (s, t) => `${s}__${t}`],
    ['mcp__server__tool', (s, t) => `mcp__${s}__${t}`],
    ['server___tool', (s, t) => `${s}___${t}`],
    ['server_tool', (s, t) => `${s}_${t}`],
    ['mcp_server_tool', (s, t) => `mcp_${s}_${t}`],
    ['server.tool', (s, t) => `${s}.${t}`],
    ['server/tool', (s, t) => `${s}/${t}`],
  ];
  it.each(schemes)('links every round trip named %s, says which mapping, and passes check', (scheme, named) => {
    const records = loopNamed(named);
    const trace = linkTrace(records);
    expect(trace.roundTrips.map((r) => [r.tool, r.mcp?.server, r.mcp?.tool, r.mcp?.mapping, r.fedBack, r.diagnostics])).toEqual([
      [named('weather', 'get_weather'), 'weather', 'get_weather', scheme, true, []],
      [named('math', 'add'), 'math', 'add', scheme, true, []],
    ]);
    expect(trace.diagnostics.map((d) => [d.code, d.level, d.tool])).toEqual([
      ['tool-name-mapped', 'info', 'get_weather'],
      ['tool-name-mapped', 'info', 'add'],
    ]);
    expect(trace.diagnostics[0]!.msg).toBe(`The host offers weather's tool get_weather to the model as ${named('weather', 'get_weather')} (${scheme}); its calls are linked by that mapping.`);
    expect(checkRecords(records).failed).toBe(false);
  });

  it('links a host prefix none of the server names has, by the prefix the offered tools share (wx_get_weather)', () => {
    const records = loopNamed((s, t) => `${s === 'weather' ? 'wx' : 'calc'}_${t}`);
    const trace = linkTrace(records);
    expect(trace.roundTrips.map((r) => [r.mcp?.server, r.mcp?.mapping, r.fedBack])).toEqual([
      ['weather', 'server_tool', true],
      ['math', 'server_tool', true],
    ]);
    expect(trace.diagnostics.filter((d) => d.level === 'warn')).toEqual([]);
  });

  it('links a name the host shortened to 64 characters', () => {
    const named = (s: string, t: string): string => `mcp__${s}__${t === 'get_forecast' ? LONG_TOOL : t}`.slice(0, 64);
    const long = named('weather', 'get_forecast');
    expect(long).toHaveLength(64);
    const records = byTime([
      ...twoServers().map((r) => (r.kind === 'response' && r.method === 'tools/list' && r.session === 'weather-1' ? { ...r, raw: r.raw.replace('get_forecast', LONG_TOOL) } : r)),
      llmRequest(100, 'x1', { tools: [named('weather', 'get_weather'), long, named('math', 'add')], channel: 'openai' }),
      llmResponse(200, 'x1', 100, [{ id: 'c1', name: long, arguments: { days: 14 } }], '', 'openai'),
      ...callOn('weather-1', 'weather', 210, 2, LONG_TOOL, { days: 14 }, 'rain'),
      llmRequest(240, 'x2', { tools: [long], channel: 'openai', toolResults: [{ toolCallId: 'c1', content: 'rain' }] }),
    ]);
    const trace = linkTrace(records);
    expect(trace.roundTrips.map((r) => [r.mcp?.tool, r.mcp?.mapping, r.fedBack])).toEqual([[LONG_TOOL, 'shortened to 64 characters', true]]);
    expect(trace.diagnostics.filter((d) => d.level === 'warn')).toEqual([]);
    expect(checkRecords(records).failed).toBe(false);
  });

  it('still reports a call no server ran, under a mapped name, and a server tool no request offered', () => {
    const named = (s: string, t: string): string => `${s}_${t}`;
    const records = byTime([
      ...twoServers(),
      llmRequest(100, 'x1', { tools: [named('weather', 'get_weather'), named('math', 'add')], channel: 'openai' }),
      llmResponse(200, 'x1', 100, [{ id: 'c1', name: named('weather', 'get_weather'), arguments: { city: 'Paris' } }], '', 'openai'),
      // The host ran add, not get_weather, and fed nothing back.
      ...callOn('math-1', 'math', 210, 2, 'add', { a: 1, b: 2 }, '3'),
    ]);
    const trace = linkTrace(records);
    expect(trace.roundTrips.map((r) => [r.tool, r.mcp?.server ?? null, r.diagnostics])).toEqual([
      ['weather_get_weather', null, ['tool-not-run']],
      ['add', 'math', ['call-without-model']],
    ]);
    expect(trace.diagnostics.filter((d) => d.level === 'warn').map((d) => [d.code, d.tool])).toEqual([
      ['tool-not-offered-to-model', 'get_forecast'],
      ['tool-not-run', 'weather_get_weather'],
    ]);
    const report = checkRecords(records);
    expect(report.failed).toBe(true);
    expect(report.findings.filter((f) => f.signal === 'broken')).toHaveLength(1);
  });

  it('does not read a single _ as a prefix when nothing says so (check_weather is not check + weather)', () => {
    const records = byTime([
      ...twoServers().map((r) => (r.kind === 'response' && r.method === 'tools/list' && r.session === 'math-1' ? { ...r, raw: r.raw.replace('"add"', '"weather"') } : r)),
      llmRequest(100, 'x1', { tools: ['lookup_weather'], channel: 'openai' }),
      llmResponse(200, 'x1', 100, [{ id: 'c1', name: 'check_weather', arguments: {} }], '', 'openai'),
      ...callOn('math-1', 'math', 210, 2, 'weather', {}, 'x'),
    ]);
    const trip = linkTrace(records).roundTrips.find((r) => r.llm !== null)!;
    expect(trip.mcp).toBeNull();
  });
});

describe('linkTrace: a decision timed at the chunk that completed the call', () => {
  it('times the round trip from that chunk, so a host that acted on it dispatches after, not before', () => {
    const records = byTime([
      ...mcpToolsList(0, ['get_weather']),
      llmRequest(100, 'x1', { channel: 'openai' }),
      // The call was complete 40 ms in; the response ended 60 ms in; the host sent tools/call at 145.
      llmResponse(160, 'x1', 60, [{ id: 'c1', name: 'get_weather', arguments: {}, completedMs: 40 }], '', 'openai'),
      ...mcpCall(145, 2, 'get_weather', {}, 5, RAIN),
      llmRequest(152, 'x2', { channel: 'openai', toolResults: [{ toolCallId: 'c1', content: RAIN }] }),
      llmResponse(200, 'x2', 48, [], 'Rain.', 'openai'),
    ]);
    const trace = linkTrace(records);
    expect(trace.roundTrips).toHaveLength(1);
    expect(trace.roundTrips[0]).toMatchObject({ time: T0 + 140, fedBack: true, llm: { decidedMs: 40 } });
    expect(trace.roundTrips[0]!.timing).toEqual({ decisionMs: 40, dispatchMs: 5, toolMs: 5, feedBackMs: 2, answerMs: 48, totalMs: 100 });
  });

  it('never prints a negative interval when two processes\u2019 clocks disagree by a millisecond', () => {
    const records = byTime([
      ...mcpToolsList(0, ['get_weather']),
      llmRequest(100, 'x1', { channel: 'openai' }),
      llmResponse(160, 'x1', 60, [{ id: 'c1', name: 'get_weather', arguments: {}, completedMs: 40 }], '', 'openai'),
      ...mcpCall(139, 2, 'get_weather', {}, 5, RAIN),
      llmRequest(143, 'x2', { channel: 'openai', toolResults: [{ toolCallId: 'c1', content: RAIN }] }),
    ]);
    const timing = linkTrace(records).roundTrips[0]!.timing;
    expect(timing.dispatchMs).toBe(0);
    expect(timing.feedBackMs).toBe(0);
  });
});
