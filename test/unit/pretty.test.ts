import { describe, expect, it } from 'vitest';
import { formatPretty } from '../../src/trace/pretty.js';
import type { LogRecord } from '../../src/log/schema.js';

const base = { v: 1, session: 's', channel: 'stdio', label: 'weather' } as const;
const records = [
  { ...base, seq: 0, time: Date.UTC(2026, 10, 29, 14, 10, 26, 789), kind: 'request', dir: 'c2s', id: 2, method: 'tools/call', tool: 'get_weather', bytes: 10, raw: '{}', msg: 'Client calls tool get_weather.' },
  { ...base, seq: 1, time: Date.UTC(2026, 10, 29, 14, 10, 26, 802), kind: 'response', dir: 's2c', id: 2, method: 'tools/call', tool: 'get_weather', latencyMs: 13.47, bytes: 10, raw: '{}', msg: 'Tool get_weather returned 1 text (13 ms).' },
  { ...base, seq: 2, time: Date.UTC(2026, 10, 29, 14, 10, 26, 900), kind: 'response', dir: 's2c', id: 3, error: { code: -32601, message: 'nope' }, bytes: 10, raw: '{}', msg: 'Error -32601.' },
  { ...base, channel: 'ollama', seq: 3, time: Date.UTC(2026, 10, 29, 14, 10, 27, 0), kind: 'http-request', dir: 'c2s', exchange: 'x1', method: 'POST', path: '/api/chat', headers: {}, bodyBytes: 3, msg: 'POST /api/chat with a 3-byte body.' },
] as unknown as LogRecord[];

describe('formatPretty', () => {
  it('shows time, label, arrow, kind, method with tool and id, latency and the sentence, without colour when asked', () => {
    const lines = formatPretty(records, { color: false, relative: true });
    expect(lines[0]).toBe('+0.000s weather → request      tools/call get_weather #2 Client calls tool get_weather.');
    expect(lines[1]).toBe('+0.013s weather ← response     tools/call get_weather #2 13.47ms Tool get_weather returned 1 text (13 ms).');
    expect(lines[2]).toContain('error');
    expect(lines.join('\n')).not.toContain('\u001b[');
  });

  it('does not repeat the method of an HTTP record, whose sentence already starts with it', () => {
    const [line] = formatPretty([records[3]!], { color: false, relative: true });
    expect(line).toBe('+0.000s weather → http-request POST /api/chat with a 3-byte body.');
  });

  it('colours errors red and requests blue when colour is on', () => {
    const lines = formatPretty(records, { color: true });
    expect(lines[0]).toContain('\u001b[34mrequest');
    expect(lines[2]).toContain('\u001b[31merror');
  });
});

describe('formatPretty on a long log', () => {
  it('formats 300,000 records (a list that long, spread into one call, overflows the stack)', () => {
    const many = Array.from({ length: 300_000 }, (_, i) => ({ ...records[0]!, seq: i, time: records[0]!.time + i }));
    const lines = formatPretty(many, { color: false, relative: true });
    expect(lines).toHaveLength(300_000);
    expect(lines[299_999]).toBe('+299.999s weather → request      tools/call get_weather #2 Client calls tool get_weather.');
  });
});
