import { describe, expect, test } from 'vitest';
import { diffRecords, formatDiff, hasDifferences } from '../../src/check/diff.js';
import type { LogRecord } from '../../src/log/schema.js';

/** A tiny capture builder: each call appends a request and its response with the given latency. */
function capture() {
  let seq = 0;
  let id = 0;
  const records: LogRecord[] = [];
  const rec = (kind: string, extra: Record<string, unknown>): number => {
    const r = { v: 1, time: 1000 + seq, seq: seq++, session: 's', channel: 'stdio', label: 'x', msg: '', kind, bytes: 1, ...extra } as LogRecord;
    records.push(r);
    return r.seq;
  };
  const call = (method: string, params: Record<string, unknown>, answer: Record<string, unknown>, latencyMs = 5): void => {
    const rid = id++;
    const tool = method === 'tools/call' ? (params.name as string) : undefined;
    const reqSeq = rec('request', { dir: 'c2s', id: rid, method, ...(tool ? { tool } : {}), raw: JSON.stringify({ jsonrpc: '2.0', id: rid, method, params }) });
    const error = answer.error as { code: number; message: string } | undefined;
    rec('response', { dir: 's2c', id: rid, method, requestSeq: reqSeq, latencyMs, ...(tool ? { tool } : {}), ...(error ? { error } : {}), raw: JSON.stringify({ jsonrpc: '2.0', id: rid, ...answer }) });
  };
  return { records, call };
}

const forecast = { name: 'get_forecast', description: 'Forecast for a city', inputSchema: { type: 'object', properties: { city: { type: 'string' } } } };
const alerts = { name: 'get_alerts', description: 'Alerts', inputSchema: { type: 'object' } };
const text = (t: string) => ({ result: { content: [{ type: 'text', text: t }] } });

describe('diffRecords', () => {
  test('identical captures have no differences', () => {
    const a = capture();
    a.call('tools/list', {}, { result: { tools: [forecast, alerts] } });
    a.call('tools/call', { name: 'get_forecast', arguments: { city: 'Paris' } }, text('Sunny'));
    const report = diffRecords(a.records, a.records);
    expect(hasDifferences(report)).toBe(false);
    expect(formatDiff(report)).toBe('Tools: the same.\nCalls: every call made in both captures has the same outcome.\nLatency: no regressions past the threshold.\n');
  });

  test('tools added, removed and changed (key order does not count)', () => {
    const a = capture();
    a.call('tools/list', {}, { result: { tools: [forecast, alerts] } });
    const b = capture();
    const reordered = { inputSchema: { properties: { city: { type: 'string' } }, type: 'object' }, description: 'Forecast for a city', name: 'get_forecast' };
    const changedAlerts = { ...alerts, description: 'Weather alerts', outputSchema: { type: 'object' } };
    b.call('tools/list', {}, { result: { tools: [reordered, changedAlerts, { name: 'get_radar', inputSchema: { type: 'object' } }] } });
    const report = diffRecords(a.records, b.records);
    expect(report.toolsAdded).toEqual(['get_radar']);
    expect(report.toolsRemoved).toEqual([]);
    expect(report.toolsChanged).toEqual([{ name: 'get_alerts', fields: ['description', 'outputSchema'] }]);
    expect(diffRecords(b.records, a.records).toolsRemoved).toEqual(['get_radar']);
  });

  test('outcomes are paired by tool and arguments, not by order', () => {
    const a = capture();
    a.call('tools/call', { name: 'get_forecast', arguments: { city: 'Paris' } }, text('Sunny'));
    a.call('tools/call', { name: 'get_forecast', arguments: { city: 'Oslo' } }, text('Snow'));
    const b = capture();
    b.call('tools/call', { name: 'get_forecast', arguments: { city: 'Oslo' } }, { result: { content: [{ type: 'text', text: 'upstream down' }], isError: true } });
    b.call('tools/call', { name: 'get_forecast', arguments: { city: 'Paris' } }, text('Sunny'));
    b.call('tools/call', { name: 'get_forecast', arguments: { city: 'Rome' } }, { error: { code: -32602, message: 'bad city' } });
    const report = diffRecords(a.records, b.records);
    expect(report.outcomesChanged).toEqual([
      {
        tool: 'get_forecast',
        arguments: { city: 'Oslo' },
        occurrence: 1,
        before: 'ok {"content":[{"text":"Snow","type":"text"}]}',
        after: 'isError {"content":[{"text":"upstream down","type":"text"}]}',
      },
    ]);
    expect(report.unpairedCalls).toEqual([0, 1]);
    expect(hasDifferences(report)).toBe(true);
  });

  test('a call that vanished, or a new one, is a difference, named in the report', () => {
    const a = capture();
    a.call('tools/call', { name: 'get_forecast', arguments: { city: 'Paris' } }, text('Sunny'));
    a.call('tools/call', { name: 'get_alerts', arguments: {} }, text('none'));
    const b = capture();
    b.call('tools/call', { name: 'get_forecast', arguments: { city: 'Paris' } }, text('Sunny'));
    b.call('tools/call', { name: 'get_forecast', arguments: { city: 'Rome' } }, text('Hot'));
    b.call('tools/call', { name: 'get_forecast', arguments: { city: 'Rome' } }, text('Hot'));
    const report = diffRecords(a.records, b.records);
    expect(report.outcomesChanged).toEqual([]);
    expect(report.callsOnlyIn).toEqual([[{ tool: 'get_alerts', arguments: {}, count: 1 }], [{ tool: 'get_forecast', arguments: { city: 'Rome' }, count: 2 }]]);
    expect(hasDifferences(report)).toBe(true);
    expect(formatDiff(report, ['v1', 'v2'])).toContain(
      'Calls only in v1 (no twin with the same tool and arguments in v2):\n  - get_alerts {}\nCalls only in v2 (no twin with the same tool and arguments in v1):\n  + get_forecast {"city":"Rome"} (×2)\n',
    );
    expect(hasDifferences(diffRecords(a.records, a.records))).toBe(false);
  });

  test('--ignore leaves fields out of result comparisons', () => {
    const a = capture();
    a.call('tools/call', { name: 'now', arguments: {} }, { result: { content: [], structuredContent: { at: 1, tz: 'UTC' } } });
    const b = capture();
    b.call('tools/call', { name: 'now', arguments: {} }, { result: { content: [], structuredContent: { at: 2, tz: 'UTC' } } });
    expect(diffRecords(a.records, b.records).outcomesChanged).toHaveLength(1);
    expect(diffRecords(a.records, b.records, { ignore: ['at'] }).outcomesChanged).toHaveLength(0);
  });

  test('latency regressions need both the percentage and the absolute floor', () => {
    const a = capture();
    const b = capture();
    for (const ms of [10, 12, 11]) a.call('tools/call', { name: 'slow', arguments: {} }, text('x'), ms);
    for (const ms of [40, 45, 41]) b.call('tools/call', { name: 'slow', arguments: {} }, text('x'), ms);
    for (const ms of [1, 1]) a.call('ping', {}, { result: {} }, ms);
    for (const ms of [3, 3]) b.call('ping', {}, { result: {} }, ms);
    const report = diffRecords(a.records, b.records);
    // ping tripled but only by 2 ms: below the 20 ms floor.
    expect(report.latencyRegressions).toEqual([{ what: 'tools/call slow', beforeMs: 11, afterMs: 41, samples: [3, 3] }]);
    expect(diffRecords(a.records, b.records, { minMs: 1 }).latencyRegressions.map((l) => l.what)).toEqual(['tools/call slow', 'ping']);
    expect(diffRecords(a.records, b.records, { thresholdPct: 300 }).latencyRegressions).toEqual([]);
    expect(formatDiff(report)).toContain('  ! tools/call slow: 11 ms → 41 ms (3 vs 3 calls)');
  });

  test("the client's latency answering server requests (sampling, elicitation) is not the server's", () => {
    const side = (ms: number): LogRecord[] => [
      { v: 1, time: 1, seq: 0, session: 's', channel: 'stdio', label: 'x', msg: '', kind: 'request', dir: 's2c', id: 0, method: 'sampling/createMessage', bytes: 1, raw: '{}' } as LogRecord,
      { v: 1, time: 2, seq: 1, session: 's', channel: 'stdio', label: 'x', msg: '', kind: 'response', dir: 'c2s', id: 0, requestSeq: 0, latencyMs: ms, bytes: 1, raw: '{}' } as LogRecord,
    ];
    expect(diffRecords(side(5), side(5000)).latencyRegressions).toEqual([]);
  });

  test('without a tools/list on one side, tools are not compared and say so', () => {
    const a = capture();
    a.call('ping', {}, { result: {} });
    const b = capture();
    b.call('tools/list', {}, { result: { tools: [forecast] } });
    const report = diffRecords(a.records, b.records);
    expect(report.toolsAdded).toEqual([]);
    expect(formatDiff(report, ['old.ndjson', 'new.ndjson'])).toContain('Tools: not compared — old.ndjson holds no tools/list answer.');
  });
});
