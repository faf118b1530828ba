#!/usr/bin/env node
/**
 * How fast the replay answers, with no pauses: the stdio engine over a synthetic capture of N tools/call round
 * trips (pure, in-process), and the HTTP replay serving N recorded JSON exchanges over a real socket.
 *
 *   npx tsc -p . && node bench/replay.mjs [N]      (default N = 20000 for the engine, N / 10 for HTTP)
 */
import { buildScript, McpReplayEngine, startHttpReplay } from '../dist/index.js';

const N = Number(process.argv[2] ?? 20000);

function engineCapture(n) {
  const records = [];
  let seq = 0;
  const base = { v: 1, session: 's', channel: 'stdio', label: 'bench', msg: '', bytes: 1 };
  for (let i = 0; i < n; i++) {
    const req = { jsonrpc: '2.0', id: i, method: 'tools/call', params: { name: 'get_forecast', arguments: { city: `c${i}` } } };
    records.push({ ...base, time: i, seq: seq++, kind: 'request', dir: 'c2s', id: i, method: 'tools/call', tool: 'get_forecast', raw: JSON.stringify(req) });
    records.push({ ...base, time: i, seq: seq++, kind: 'response', dir: 's2c', id: i, requestSeq: seq - 2, raw: JSON.stringify({ jsonrpc: '2.0', id: i, result: { content: [{ type: 'text', text: `sunny ${i}` }] } }) });
  }
  return records;
}

function httpCapture(n) {
  const records = [];
  let seq = 0;
  const base = { v: 1, session: 'h', channel: 'ollama', label: 'bench', msg: '' };
  for (let i = 0; i < n; i++) {
    const x = `x${i}`;
    const body = JSON.stringify({ model: 'm', messages: [{ role: 'user', content: `q${i}` }], stream: false });
    const answer = JSON.stringify({ model: 'm', message: { role: 'assistant', content: `a${i}` }, done: true });
    records.push({ ...base, time: i, seq: seq++, kind: 'http-request', dir: 'c2s', exchange: x, method: 'POST', path: '/api/chat', headers: {}, body, bodyBytes: body.length });
    records.push({ ...base, time: i, seq: seq++, kind: 'http-response', dir: 's2c', exchange: x, status: 200, headers: { 'content-type': 'application/json' }, ttfbMs: 1 });
    records.push({ ...base, time: i, seq: seq++, kind: 'http-end', exchange: x, method: 'POST', path: '/api/chat', status: 200, outcome: 'complete', reqBytes: body.length, resBytes: answer.length, durationMs: 1, body: answer });
  }
  return records;
}

let t = performance.now();
const engine = new McpReplayEngine(buildScript(engineCapture(N)));
const built = performance.now() - t;
t = performance.now();
for (let i = 0; i < N; i++) engine.receive(JSON.stringify({ jsonrpc: '2.0', id: i, method: 'tools/call', params: { name: 'get_forecast', arguments: { city: `c${i}` } } }));
const answered = performance.now() - t;
console.log(`stdio engine: ${N} recorded calls indexed in ${built.toFixed(0)} ms, answered in ${answered.toFixed(0)} ms (${((N / answered) * 1000).toFixed(0)} calls/s); ${JSON.stringify(engine.stats)}`);

const M = Math.max(1, Math.floor(N / 10));
const server = await startHttpReplay({ records: httpCapture(M), noDelay: true });
t = performance.now();
for (let i = 0; i < M; i++) {
  const res = await fetch(`${server.url}/api/chat`, { method: 'POST', body: JSON.stringify({ model: 'm', messages: [{ role: 'user', content: `q${i}` }], stream: false }) });
  await res.text();
}
const served = performance.now() - t;
console.log(`HTTP replay: ${M} recorded exchanges served one after another in ${served.toFixed(0)} ms (${((M / served) * 1000).toFixed(0)} requests/s), ${server.misses.length} misses`);
await server.close();
