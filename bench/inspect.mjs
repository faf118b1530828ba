// Inspection alone, on one core: literal frames fed to the stdio inspector in this process as the channel's
// thread feeds it (waiting for the disk as it does), records written to a log file.
// `node bench/inspect.mjs [small|large|large-json] [frames]`; prints frames per CPU second and CPU ns per byte
// (all threads, and the main thread alone: the rest is the thread pool writing the log and V8's helpers).
// large-json: 64 KiB frames whose text is JSON inside a JSON string (a tool result quoting a document), every
// other character a `\"` to escape. flood: small requests that the server side echoes back, as `mcptap -- cat`
// does: nothing is answered, and past 10,000 open requests each new one pushes the oldest out (a `pending` record).
import { mkdtempSync, readFileSync, rmSync, statSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { StdioInspector } from '../dist/inspect/stdio-inspector.js';
import { openLogForInspection } from '../dist/inspect/inspector-log.js';
import { CALL } from '../dist/capture/stdio-calls.js';
import { logsBacklogged, whenLogsDrained } from '../dist/log/writer.js';

/**
 * A client's requests and a server's answers, as chunks of up to 64 KiB the way a pipe hands them over. Only
 * the chunks' Buffers are kept (outside the JavaScript heap): a heap holding the traffic as strings makes every
 * collection of the inspector's young garbage walk its pages, a cost no inspection thread has.
 */
export function traffic(kind, frames) {
  const c2s = [];
  const s2c = [];
  let bytes = 0;
  const payload = kind === 'large' ? 'x'.repeat(64 * 1024 - 120) : kind === 'large-json' ? '{\\"k\\":1}'.repeat(Math.floor((64 * 1024 - 120) / 9)) : '';
  // The same number of frames per chunk both ways, so each answer comes after its request.
  const perChunk = kind === 'small' || kind === 'flood' ? 600 : 1;
  for (let first = 0; first < frames / 2; first += perChunk) {
    let requests = '';
    let answers = '';
    for (let id = first; id < Math.min(first + perChunk, frames / 2); id++) {
      const request = `{"jsonrpc":"2.0","id":${id},"method":"tools/call","params":{"name":"echo","arguments":{"text":"hello ${id}${payload}"}}}\n`;
      requests += request;
      answers += kind === 'flood' ? request : `{"jsonrpc":"2.0","id":${id},"result":{"content":[{"type":"text","text":"hello ${id}${payload}"}]}}\n`;
    }
    c2s.push(Buffer.from(requests));
    s2c.push(Buffer.from(answers));
    bytes += c2s.at(-1).length + s2c.at(-1).length;
  }
  return { c2s, s2c, bytes };
}

/**
 * CPU ns this process's main thread has used (Linux: schedstat; undefined elsewhere). process.cpuUsage counts
 * every thread: the thread pool's writes of the log and V8's helpers too.
 */
function mainThreadNs() {
  try {
    return Number(readFileSync(`/proc/self/task/${process.pid}/schedstat`, 'utf8').split(' ')[0]);
  } catch {
    return undefined;
  }
}

export async function runInspectBench({ kind = 'small', frames = kind === 'small' || kind === 'flood' ? 200_000 : 2000 } = {}) {
  const dir = mkdtempSync(join(tmpdir(), 'mcptap-inspect-'));
  const logFile = join(dir, 'inspect.ndjson');
  const config = openLogForInspection({ logFile, session: 'bench', label: 'bench', maxBody: 1024 * 1024 }, () => {});
  const inspector = new StdioInspector(config, { notice: (m) => process.stderr.write(`${m}\n`) });
  const { c2s, s2c, bytes } = traffic(kind, frames);
  const t0 = performance.now();
  const cpu0 = process.cpuUsage();
  const main0 = mainThreadNs();
  // Requests and answers interleave in chunks, as they would through a relay.
  const n = Math.max(c2s.length, s2c.length);
  for (let i = 0; i < n; i++) {
    if (c2s[i]) inspector.apply([CALL.data, 0, c2s[i], Date.now(), performance.now()]);
    if (s2c[i]) inspector.apply([CALL.data, 1, s2c[i], Date.now(), performance.now()]);
    if (i % 8 === 7) await new Promise((r) => setImmediate(r));
    if (logsBacklogged()) await whenLogsDrained();
  }
  inspector.apply([CALL.endStreams, Date.now(), performance.now()]);
  await inspector.close([CALL.close, { time: Date.now(), kind: 'lifecycle', event: 'exit', msg: 'end' }]);
  const cpu = process.cpuUsage(cpu0);
  const main1 = mainThreadNs();
  const wallMs = performance.now() - t0;
  const cpuUs = cpu.user + cpu.system;
  const logBytes = statSync(logFile).size;
  if (!process.env.KEEP) rmSync(dir, { recursive: true, force: true });
  else console.error(logFile);
  const mainNsPerByte = main0 === undefined || main1 === undefined ? undefined : (main1 - main0) / bytes;
  return { kind, frames, bytes, wallMs, cpuMs: cpuUs / 1000, framesPerCpuSecond: frames / (cpuUs / 1e6), nsPerByte: (cpuUs * 1000) / bytes, mainNsPerByte, logBytes };
}

if (import.meta.url === `file://${process.argv[1]}`) {
  const kind = process.argv[2] ?? 'small';
  const frames = process.argv[3] ? Number(process.argv[3]) : undefined;
  const r = await runInspectBench({ kind, ...(frames ? { frames } : {}) });
  console.log(JSON.stringify(r));
}
