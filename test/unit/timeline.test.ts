import { describe, expect, it } from 'vitest';
import { linkTrace, traceLines } from '../../src/trace/link.js';
import { buildTimeline, formatTimeline } from '../../src/trace/timeline.js';
import { formatRoundTripSummary, width } from '../../src/trace/summary.js';
import { weatherRoundTrip } from './trace-fixture.js';

describe('buildTimeline', () => {
  const records = weatherRoundTrip();
  const timeline = buildTimeline(records, linkTrace(records));

  it('has User, Host, the LLM and the server, in that order', () => {
    expect(timeline.participants.map((p) => [p.id, p.name, p.kind])).toEqual([
      ['user', 'User', 'user'],
      ['host', 'Host / client', 'host'],
      ['llm:ollama:ollama', 'LLM (ollama)', 'llm'],
      ['mcp:weather', 'weather', 'mcp'],
    ]);
  });

  it('tells the classic loop as arrows: question, chat, tool call, tools/call, result, fed back, answer', () => {
    const story = timeline.steps.filter((s) => s.time >= records[5]!.time).map((s) => `${s.from}>${s.to} ${s.style} ${s.text}`);
    expect(story).toEqual([
      'user>host request what is the weather in California?',
      'host>llm:ollama:ollama request chat qwen2.5:3b (1 message, 1 tool)',
      'llm:ollama:ollama>host reply tool call get_weather {"location":"California"}',
      'host>mcp:weather request tools/call get_weather {"location":"California"}',
      "mcp:weather>host reply result: It's always raining in California (12 ms)",
      'host>llm:ollama:ollama request tool result fed back: get_weather',
      'llm:ollama:ollama>host reply answer: The weather report indicates that it is always raining in California.',
      'host>user reply The weather report indicates that it is always raining in California.',
    ]);
  });

  it('names two LLM proxies by label and marks errors and unanswered requests', () => {
    const base = { v: 1, seq: 0, msg: 'm' };
    const records2 = [
      { ...base, time: 1, session: 'a', channel: 'ollama' as const, label: 'ollama-a', kind: 'llm-error' as const, dir: 's2c' as const, exchange: '1', endpoint: '/api/chat', status: 404, phase: 'before-stream' as const, error: 'model not found' },
      { ...base, time: 2, session: 'b', channel: 'openai' as const, label: 'openai-b', kind: 'llm-error' as const, dir: 's2c' as const, exchange: '1', endpoint: '/v1/chat/completions', status: 500, phase: 'in-stream' as const, error: 'boom' },
      { ...base, time: 3, session: 'c', channel: 'stdio' as const, label: 'w', kind: 'pending' as const, dir: 'c2s' as const, id: 4, method: 'tools/call', tool: 'slow', requestSeq: 1, ageMs: 9 },
    ];
    const t = buildTimeline(records2, linkTrace(records2));
    expect(t.participants.map((p) => p.name)).toEqual(['Host / client', 'LLM ollama-a', 'LLM openai-b', 'w']);
    expect(t.steps.map((s) => [s.style, s.text])).toEqual([
      ['error', 'error 404: model not found'],
      ['error', 'error 500: boom'],
      ['note', 'tools/call slow #4 never answered'],
    ]);
  });
});

describe('formatTimeline', () => {
  it('prints relative times and arrows, plain without colour', () => {
    const records = weatherRoundTrip();
    const lines = formatTimeline(buildTimeline(records, linkTrace(records)), { color: false });
    expect(lines[0]).toBe('+0.000s  Host / client → weather       initialize');
    expect(lines).toContain('+0.330s  Host / client → weather       tools/call get_weather {"location":"California"}');
    expect(lines.join('\n')).not.toContain('\u001b[');
  });

  it('colours only when asked', () => {
    const records = weatherRoundTrip();
    expect(formatTimeline(buildTimeline(records, linkTrace(records)), { color: true })[0]).toContain('\u001b[');
  });
});

describe('formatRoundTripSummary', () => {
  it('tabulates each round trip, the turns and the findings', () => {
    const records = weatherRoundTrip();
    const lines = formatRoundTripSummary(linkTrace(records), { color: false });
    expect(lines[0]).toBe('Tool round trips (model → MCP server → result fed back → answer)');
    expect(lines[1]).toMatch(/^#\s+turn\s+tool\s+arguments\s+model decided\s+MCP\s+tool\s+fed back\s+answer$/);
    expect(lines[2]).toMatch(/^1\s+1\s+get_weather\s+\{"location":"California"\}\s+ollama qwen2\.5:3b 300 ms\s+weather tools\/call #2\s+12 ms\s+yes \+8 ms\s+The weather report/);
    expect(lines).toContain('Turns');
    expect(lines.find((l) => l.startsWith('1 ') && l.includes('what is the weather'))).toMatch(/2\s+1\s+780 ms\s+750 ms\s+12 ms\s+18 ms$/);
    expect(lines).not.toContain('Findings');
  });

  it('lists findings, and is empty for a trace with nothing to say', () => {
    const records = weatherRoundTrip().filter((r) => !(r.kind === 'llm-request' && r.toolResults.length > 0));
    const lines = formatRoundTripSummary(linkTrace(records), { color: false });
    expect(lines).toContain('Findings');
    expect(lines.at(-1)).toBe('warn result-not-fed-back: weather answered get_weather #2, but no later request to the model carries that result back.');
    expect(formatRoundTripSummary(linkTrace([]), { color: false })).toEqual([]);
  });

  it('counts East Asian wide characters as two columns so tables stay aligned', () => {
    expect(width('上海')).toBe(4);
    expect(width('天气 ok')).toBe(7);
    expect(width('abc')).toBe(3);
  });
});

describe('a long log', () => {
  // Each of these once spread a list as long as the log into one call, which overflows the stack past about a
  // hundred thousand items (`mcptap view` of a 146,440-record log failed so).
  const trace = linkTrace(weatherRoundTrip());
  const roundTrips = Array.from({ length: 150_000 }, () => trace.roundTrips[0]!);

  it('formatTimeline lines up 300,000 steps', () => {
    const record = weatherRoundTrip()[0]!;
    const steps = Array.from({ length: 300_000 }, (_, i) => ({ time: i, from: 'host', to: 'server', text: 'tools/call', style: 'request' as const, record }));
    const lines = formatTimeline({ participants: [{ id: 'host', name: 'Host' }, { id: 'server', name: 'weather' }] as never, steps }, { color: false });
    expect(lines).toHaveLength(300_000);
    expect(lines[299_999]).toBe('+299.999s  Host → weather  tools/call');
  });

  it('formatRoundTripSummary tabulates 150,000 round trips', () => {
    const lines = formatRoundTripSummary({ ...trace, roundTrips }, { color: false });
    expect(lines.filter((l) => /^\d+\s+1\s+get_weather/.test(l))).toHaveLength(150_000);
  });

  it('traceLines lists 150,000 round trips outside any turn', () => {
    const lines = traceLines({ ...trace, turns: [], roundTrips: roundTrips.map((r) => ({ ...r, turn: null })) });
    expect(lines).toHaveLength(trace.sessions.length + 150_000 + trace.diagnostics.length);
  });
});
