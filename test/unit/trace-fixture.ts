/**
 * One canned round trip as literal records, in the shapes the taps write: an MCP weather server's log and an
 * Ollama proxy's log, merged by time. Shared by the view tests (timeline, mermaid, html).
 */
import type { LogRecord } from '../../src/log/schema.js';

export const T0 = Date.UTC(2026, 10, 29, 12, 0, 0);
const RAIN = "It's always raining in California";

export function weatherRoundTrip(): LogRecord[] {
  let seqW = 0;
  let seqL = 0;
  const w = (time: number) => ({ v: 1, time: T0 + time, seq: seqW++, session: 'weather-s1', channel: 'stdio' as const, label: 'weather', msg: 'm' });
  const l = (time: number) => ({ v: 1, time: T0 + time, seq: seqL++, session: 'llm-s1', channel: 'ollama' as const, label: 'ollama', msg: 'm' });
  const rpc = (o: unknown) => JSON.stringify({ jsonrpc: '2.0', ...(o as object) });
  const records: LogRecord[] = [
    { ...w(0), kind: 'request', dir: 'c2s', id: 0, method: 'initialize', bytes: 10, raw: rpc({ id: 0, method: 'initialize', params: { protocolVersion: '2025-11-25', capabilities: {}, clientInfo: { name: 'demo-agent', version: '1.0.0' } } }) },
    { ...w(4), kind: 'response', dir: 's2c', id: 0, method: 'initialize', requestSeq: 0, latencyMs: 4, bytes: 10, raw: rpc({ id: 0, result: { protocolVersion: '2025-11-25', capabilities: { tools: {} }, serverInfo: { name: 'weather', version: '1.0.0' } } }) },
    { ...w(5), kind: 'notification', dir: 'c2s', method: 'notifications/initialized', bytes: 10, raw: rpc({ method: 'notifications/initialized' }) },
    { ...w(6), kind: 'request', dir: 'c2s', id: 1, method: 'tools/list', bytes: 10, raw: rpc({ id: 1, method: 'tools/list' }) },
    { ...w(8), kind: 'response', dir: 's2c', id: 1, method: 'tools/list', requestSeq: 3, latencyMs: 2, bytes: 10, raw: rpc({ id: 1, result: { tools: [{ name: 'get_weather', inputSchema: { type: 'object' } }] } }) },
    { ...l(20), kind: 'llm-request', dir: 'c2s', exchange: '1', endpoint: '/api/chat', model: 'qwen2.5:3b', stream: false, messageCount: 1, tools: ['get_weather'], toolResults: [], prompt: 'what is the weather in California?' },
    { ...l(320), kind: 'llm-response', dir: 's2c', exchange: '1', endpoint: '/api/chat', model: 'qwen2.5:3b', status: 200, content: '', toolCalls: [{ name: 'get_weather', arguments: { location: 'California' } }], durationMs: 300 },
    { ...w(330), kind: 'request', dir: 'c2s', id: 2, method: 'tools/call', tool: 'get_weather', bytes: 10, raw: rpc({ id: 2, method: 'tools/call', params: { name: 'get_weather', arguments: { location: 'California' } } }) },
    { ...w(342), kind: 'response', dir: 's2c', id: 2, method: 'tools/call', tool: 'get_weather', requestSeq: 5, latencyMs: 12, isError: false, bytes: 10, raw: rpc({ id: 2, result: { content: [{ type: 'text', text: RAIN }] } }) },
    { ...l(350), kind: 'llm-request', dir: 'c2s', exchange: '2', endpoint: '/api/chat', model: 'qwen2.5:3b', stream: false, messageCount: 3, tools: ['get_weather'], toolResults: [{ name: 'get_weather', content: RAIN }], prompt: 'what is the weather in California?' },
    { ...l(800), kind: 'llm-response', dir: 's2c', exchange: '2', endpoint: '/api/chat', model: 'qwen2.5:3b', status: 200, content: 'The weather report indicates that it is always raining in California.', toolCalls: [], durationMs: 450 },
  ];
  return records.sort((a, b) => a.time - b.time);
}
