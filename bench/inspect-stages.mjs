// Where a small frame's inspection goes, stage by stage: the frames of bench/inspect.mjs through more of the
// stdio inspector's pipeline each time, CPU µs per frame for each (the differences are the stages' costs).
//   node bench/inspect-stages.mjs [frames]
// framing: LineFramer and the frame's text; decode: + decodeJsonRpc; session: + McpSession (annotation,
// correlation) into a sink that keeps nothing; record: + the record's line (recordJson); log: + LogWriter
// without redaction (stamp, queue, file); redacted: + redaction, as mcptap runs.
import { mkdtempSync, rmSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { LineFramer } from '../dist/framing/lines.js';
import { decodeJsonRpc } from '../dist/protocols/jsonrpc.js';
import { McpSession } from '../dist/session/mcp-session.js';
import { recordJson } from '../dist/log/record-json.js';
import { LogWriter } from '../dist/log/writer.js';
import { traffic } from './inspect.mjs';

const STAGES = ['framing', 'decode', 'session', 'record', 'log', 'redacted'];

function sinkFor(stage, dir) {
  if (stage === 'log' || stage === 'redacted') {
    return new LogWriter({ file: join(dir, `${stage}.ndjson`), session: 'bench-20261202T051336Z-2205', channel: 'stdio', label: 'bench', ...(stage === 'log' ? { redact: false } : {}) });
  }
  let seq = 0;
  return stage === 'record' ? { write: (draft) => (recordJson(draft, '{"v":2,', '}\n'), seq++) } : { write: () => seq++ };
}

async function run(stage, frames) {
  const dir = mkdtempSync(join(tmpdir(), 'mcptap-stages-'));
  const { c2s, s2c } = traffic('small', frames);
  const sink = sinkFor(stage, dir);
  const session = new McpSession({ sink, stdio: true });
  const observe = stage === 'framing' ? (f) => f.bytes.toString('utf8') : stage === 'decode' ? (f) => decodeJsonRpc(f.bytes.toString('utf8')) : (f) => session.observe(f);
  const framers = [new LineFramer({ dir: 'c2s', maxFrameBytes: 1 << 20 }), new LineFramer({ dir: 's2c', maxFrameBytes: 1 << 20 })];
  const cpu0 = process.cpuUsage();
  for (let i = 0; i < c2s.length; i++) {
    for (const [k, chunk] of [[0, c2s[i]], [1, s2c[i]]]) for (const frame of framers[k].push(chunk, Date.now(), performance.now())) observe(frame);
    // The event loop turns, as in the inspection thread, so the log's writes go out.
    if (i % 8 === 7) await new Promise((r) => setImmediate(r));
  }
  session.end(Date.now(), performance.now());
  if (sink instanceof LogWriter) await sink.close();
  const cpu = process.cpuUsage(cpu0);
  rmSync(dir, { recursive: true, force: true });
  return (cpu.user + cpu.system) / frames;
}

const frames = Number(process.argv[2] ?? 200_000);
const results = Object.fromEntries(STAGES.map((s) => [s, []]));
// Three rounds that take turns, the median counting.
for (let round = 0; round < 3; round++) for (const stage of STAGES) results[stage].push(await run(stage, frames));
let before = 0;
for (const stage of STAGES) {
  const median = results[stage].sort((a, b) => a - b)[1];
  console.log(`${stage.padEnd(9)} ${median.toFixed(2)} µs a frame in all, +${(median - before).toFixed(2)} for this stage`);
  before = median;
}
