#!/usr/bin/env node
/**
 * What redaction costs per record: `node bench/redact.mjs` (after `npx tsc -p .`).
 *
 * LogWriter serializes each draft once and hands the JSON to Redactor.redactJson. For a clean record that is one
 * regex test over the line; only a hit parses and walks the record. This measures both paths against the cost
 * of the JSON.stringify the writer does anyway, for the record shapes that dominate real logs.
 */
import { randomBytes } from 'node:crypto';
import { mkdtempSync, rmSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { Redactor } from '../dist/log/redact.js';
import { LogWriter } from '../dist/log/writer.js';

const redactor = new Redactor();
const key = ['sk', 'proj', 'Abcdefghij0123456789KLMNOPqrstuv'].join('-');

const frame = (raw, extra = {}) => ({ time: Date.now(), kind: 'request', dir: 'c2s', id: 7, method: 'tools/call', tool: 'get_weather', bytes: raw.length, raw, msg: 'Client calls tool get_weather.', ...extra });
const toolCall = JSON.stringify({ jsonrpc: '2.0', id: 7, method: 'tools/call', params: { name: 'get_weather', arguments: { city: 'Paris', days: 3 }, _meta: { progressToken: 7 } } });
const result2k = JSON.stringify({ jsonrpc: '2.0', id: 7, result: { content: [{ type: 'text', text: 'Sunny and mild. '.repeat(120) }] } });
const result100k = JSON.stringify({ jsonrpc: '2.0', id: 8, result: { content: [{ type: 'text', text: 'Lorem ipsum dolor sit amet, consectetur adipiscing elit. '.repeat(1800) }] } });
// Big results as tools return them: an image (base64, where the prescreen's literals turn up by chance) and
// documentation that mentions keys and tokens. Both hold literals, so the screen itself runs.
const imageResult = JSON.stringify({ jsonrpc: '2.0', id: 10, result: { content: [{ type: 'image', mimeType: 'image/png', data: randomBytes(48 * 1024).toString('base64') }] } });
const docsResult = JSON.stringify({ jsonrpc: '2.0', id: 11, result: { content: [{ type: 'text', text: 'Pass the API token in a header; the key rotates monthly. See the auth guide for details. '.repeat(700) }] } });
const secretCall = JSON.stringify({ jsonrpc: '2.0', id: 9, method: 'tools/call', params: { name: 'login', arguments: { user: 'ann', password: 'hunter2', note: `key ${key}` } } });
const chunk = (i) => ({ time: Date.now(), kind: 'llm-chunk', dir: 's2c', exchange: 'e1', sinceMs: i, raw: JSON.stringify({ model: 'qwen3', message: { role: 'assistant', content: ' word' }, done: false }), delta: ' word', msg: 'chunk' });

const cases = [
  ['tools/call request, clean (~200 B)', () => frame(toolCall)],
  ['tools/call result, clean (~2 KB)', () => frame(result2k, { kind: 'response' })],
  ['tools/call result, clean (~100 KB)', () => frame(result100k, { kind: 'response' })],
  ['tools/call result, image (64 KB base64)', () => frame(imageResult, { kind: 'response' })],
  ['tools/call result, docs (~60 KB)', () => frame(docsResult, { kind: 'response' })],
  ['tools/call with password + sk- key', () => frame(secretCall)],
  ['llm-chunk (Ollama NDJSON line)', (i) => chunk(i)],
];

function time(label, make, iterations) {
  const drafts = Array.from({ length: 256 }, (_, i) => make(i));
  const jsons = drafts.map((d) => JSON.stringify(d));
  // Warm up, then measure stringify alone and stringify + redactJson.
  for (let i = 0; i < 2000; i++) redactor.redactJson(drafts[i & 255], jsons[i & 255]);
  let t = process.hrtime.bigint();
  let sink = 0;
  for (let i = 0; i < iterations; i++) sink += JSON.stringify(drafts[i & 255]).length;
  const stringifyNs = Number(process.hrtime.bigint() - t) / iterations;
  t = process.hrtime.bigint();
  for (let i = 0; i < iterations; i++) {
    const d = drafts[i & 255];
    sink += redactor.redactJson(d, JSON.stringify(d)).length;
  }
  const totalNs = Number(process.hrtime.bigint() - t) / iterations;
  const changed = redactor.redactJson(drafts[0], jsons[0]) !== jsons[0];
  console.log(`${label.padEnd(40)} stringify ${fmt(stringifyNs)}  + redaction ${fmt(totalNs - stringifyNs)}  ${changed ? '(redacted)' : '(clean)'}${sink < 0 ? '' : ''}`);
}

const fmt = (ns) => (ns >= 1000 ? `${(ns / 1000).toFixed(2)} µs` : `${ns.toFixed(0)} ns`).padStart(10);

console.log(`Node ${process.version}, per record (mean over many iterations)\n`);
// Records of tens of kilobytes take a thousand times longer than small ones: fewer iterations for them.
for (const [label, make] of cases) time(label, make, JSON.stringify(make(0)).length > 10_000 ? 2000 : 50_000);

// The whole write path, as the taps use it: LogWriter.write with redaction on (default) and off (--no-redact).
console.log('\nLogWriter.write, whole path (stamp, stringify, redaction, queue to disk):');
const dir = mkdtempSync(join(tmpdir(), 'mcptap-bench-redact-'));
for (const [label, make] of cases.filter(([label]) => /~200 B|~2 KB|llm-chunk/.test(label))) {
  const drafts = Array.from({ length: 256 }, (_, i) => make(i));
  const perRecord = {};
  for (const redact of [true, false]) {
    const writer = new LogWriter({ file: join(dir, `${redact}.ndjson`), session: 's', channel: 'stdio', label: 'bench', ...(redact ? {} : { redact: false }) });
    // Rounds of writes with a pause between them, in which the queue goes to disk: written all at once, the
    // records would outgrow the writer's queue, and the dropped ones would cost nothing.
    const rounds = 20;
    const perRound = 1000;
    let ns = 0;
    for (let round = -2; round < rounds; round++) {
      const t = process.hrtime.bigint();
      for (let i = 0; i < perRound; i++) writer.write(drafts[i & 255]);
      if (round >= 0) ns += Number(process.hrtime.bigint() - t);
      await new Promise((resolve) => setTimeout(resolve, 20));
    }
    perRecord[redact] = ns / (rounds * perRound);
    await writer.close();
  }
  console.log(`${label.padEnd(40)} redaction on ${fmt(perRecord.true)}  off ${fmt(perRecord.false)}`);
}
rmSync(dir, { recursive: true, force: true });
