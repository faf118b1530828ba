// Inspection alone, on one core: literal frames fed to the stdio inspector in this process as the channel's
// thread feeds it (waiting for the disk as it does), records written to a log file.
// `node bench/inspect.mjs [small|large|large-json] [frames]`; prints frames per CPU second and CPU ns per byte.
// large-json: 64 KiB frames whose text is JSON inside a JSON string (a tool result quoting a document), every
// other character a `\"` to escape.
import { mkdtempSync, rmSync, statSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { StdioInspector } from '../dist/inspect/stdio-inspector.js';
import { openLogForInspection } from '../dist/inspect/inspector-log.js';
import { CALL } from '../dist/capture/stdio-calls.js';
import { logsBacklogged, whenLogsDrained } from '../dist/log/writer.js';

/** A client's requests and a server's answers, as chunks of up to 64 KiB the way a pipe hands them over. */
export function traffic(kind, frames) {
  const c2s = [];
  const s2c = [];
  const payload = kind === 'large' ? 'x'.repeat(64 * 1024 - 120) : kind === 'large-json' ? '{\\"k\\":1}'.repeat(Math.floor((64 * 1024 - 120) / 9)) : '';
  for (let id = 0; id < frames / 2; id++) {
    c2s.push(`{"jsonrpc":"2.0","id":${id},"method":"tools/call","params":{"name":"echo","arguments":{"text":"hello ${id}${payload}"}}}\n`);
    s2c.push(`{"jsonrpc":"2.0","id":${id},"result":{"content":[{"type":"text","text":"hello ${id}${payload}"}]}}\n`);
  }
  // The same number of frames per chunk both ways, so each answer comes after its request.
  const perChunk = kind === 'small' ? 600 : 1;
  const chunk = (lines) => {
    const out = [];
    for (let i = 0; i < lines.length; i += perChunk) out.push(Buffer.from(lines.slice(i, i + perChunk).join('')));
    return out;
  };
  return { c2s: chunk(c2s), s2c: chunk(s2c), bytes: c2s.join('').length + s2c.join('').length };
}

export async function runInspectBench({ kind = 'small', frames = kind === 'small' ? 200_000 : 2000 } = {}) {
  const dir = mkdtempSync(join(tmpdir(), 'mcptap-inspect-'));
  const logFile = join(dir, 'inspect.ndjson');
  const config = openLogForInspection({ logFile, session: 'bench', label: 'bench', maxBody: 1024 * 1024 }, () => {});
  const inspector = new StdioInspector(config, { notice: (m) => process.stderr.write(`${m}\n`) });
  const { c2s, s2c, bytes } = traffic(kind, frames);
  const t0 = performance.now();
  const cpu0 = process.cpuUsage();
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
  const wallMs = performance.now() - t0;
  const cpuUs = cpu.user + cpu.system;
  const logBytes = statSync(logFile).size;
  if (!process.env.KEEP) rmSync(dir, { recursive: true, force: true });
  else console.error(logFile);
  return { kind, frames, bytes, wallMs, cpuMs: cpuUs / 1000, framesPerCpuSecond: frames / (cpuUs / 1e6), nsPerByte: (cpuUs * 1000) / bytes, logBytes };
}

if (import.meta.url === `file://${process.argv[1]}`) {
  const kind = process.argv[2] ?? 'small';
  const frames = process.argv[3] ? Number(process.argv[3]) : undefined;
  const r = await runInspectBench({ kind, ...(frames ? { frames } : {}) });
  console.log(JSON.stringify(r));
}
