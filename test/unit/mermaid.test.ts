import { describe, expect, it } from 'vitest';
import { linkTrace } from '../../src/trace/link.js';
import { buildTimeline } from '../../src/trace/timeline.js';
import { escapeText, formatMermaid } from '../../src/trace/mermaid.js';
import { weatherRoundTrip } from './trace-fixture.js';

describe('formatMermaid', () => {
  const records = weatherRoundTrip();
  const text = formatMermaid(buildTimeline(records, linkTrace(records)));
  const lines = text.trimEnd().split('\n');

  it('declares the user as an actor and each participant once', () => {
    expect(lines.slice(0, 5)).toEqual([
      'sequenceDiagram',
      '  actor U0 as User',
      '  participant H1 as Host / client',
      '  participant L2 as LLM (ollama)',
      '  participant M3 as weather',
    ]);
  });

  it('draws requests solid and replies dashed', () => {
    expect(lines).toContain('  H1->>M3: tools/call get_weather {"location":"California"}');
    expect(lines).toContain("  M3-->>H1: result: It's always raining in California (12 ms)");
    expect(lines).toContain('  L2-->>H1: tool call get_weather {"location":"California"}');
    expect(lines).toContain('  H1->>L2: tool result fed back: get_weather');
    expect(lines.filter((l) => /->>|-->>|--x|Note over/.test(l))).toHaveLength(13);
  });

  it('escapes what Mermaid would read as syntax, and keeps every statement on one line', () => {
    expect(escapeText('a;b #1 <use_mcp_tool>\nnext')).toBe('a#59;b #35;1 #lt;use_mcp_tool#gt; next');
  });

  it('draws failed replies with a cross and notes over a lifeline', () => {
    const base = { v: 1, seq: 0, msg: 'm', session: 's', channel: 'stdio' as const, label: 'w' };
    const recs = [
      { ...base, time: 1, kind: 'request' as const, dir: 'c2s' as const, id: 1, method: 'tools/call', tool: 't', bytes: 1, raw: '{"jsonrpc":"2.0","id":1,"method":"tools/call","params":{"name":"t"}}' },
      { ...base, time: 2, kind: 'response' as const, dir: 's2c' as const, id: 1, method: 'tools/call', requestSeq: 0, latencyMs: 1, bytes: 1, raw: '{}', error: { code: -32602, message: 'bad; args' } },
      { ...base, time: 3, kind: 'invalid' as const, dir: 's2c' as const, reason: 'not JSON', bytes: 5, raw: 'hello' },
    ];
    const m = formatMermaid(buildTimeline(recs, linkTrace(recs)));
    expect(m.split('\n').slice(0, 3)).toEqual(['sequenceDiagram', '  participant H0 as Host / client', '  participant M1 as w']);
    expect(m).toContain('  M1--xH0: error -32602: bad#59; args (1 ms)');
    expect(m).toContain('  Note over M1: not JSON-RPC (not JSON)');
  });
});
