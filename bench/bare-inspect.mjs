// The floor for any inspector written in JavaScript on this machine, beside bench/inspect.mjs: the same frames,
// through the least an inspector can do and still log them (split lines, JSON.parse, pair a request with its
// answer, one record line with the frame as JSON, written in 1 MiB blocks). No annotation, no redaction, no
// schema: what it costs is what JSON.parse, building a string and writing it cost here.
// `node bench/bare-inspect.mjs [small|large|large-json] [frames]`; prints frames per CPU second and CPU ns per byte.
import { closeSync, mkdtempSync, openSync, rmSync, writeSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { traffic } from './inspect.mjs';

/** One direction's chunks: frames cut at `\n`, each logged as one line. */
function inspect(chunk, dir, state) {
  for (let start = 0; ; ) {
    const lf = chunk.indexOf(10, start);
    if (lf === -1) return;
    const text = chunk.utf8Slice(start, lf);
    const message = JSON.parse(text);
    const id = message.id;
    let pairing = '';
    if (message.method !== undefined) state.open.set(id, state.seq);
    else if (state.open.has(id)) {
      pairing = `,"requestSeq":${state.open.get(id)}`;
      state.open.delete(id);
    }
    const line = `{"v":2,"seq":${state.seq++},"time":${Date.now()},"dir":"${dir}","id":${JSON.stringify(id)}${pairing},"raw":${text}}\n`;
    if (state.filled + line.length * 3 > state.block.length) flush(state);
    state.filled += state.block.utf8Write(line, state.filled);
    start = lf + 1;
  }
}

function flush(state) {
  writeSync(state.fd, state.block, 0, state.filled);
  state.filled = 0;
}

export function runBareInspectBench({ kind = 'small', frames = kind === 'small' ? 200_000 : 2000 } = {}) {
  const dir = mkdtempSync(join(tmpdir(), 'mcptap-bare-inspect-'));
  const { c2s, s2c, bytes } = traffic(kind, frames);
  const state = { fd: openSync(join(dir, 'bare.ndjson'), 'w'), block: Buffer.allocUnsafe(1024 * 1024 + 3 * 70 * 1024), filled: 0, seq: 0, open: new Map() };
  const cpu0 = process.cpuUsage();
  for (let i = 0; i < Math.max(c2s.length, s2c.length); i++) {
    if (c2s[i]) inspect(c2s[i], 'c2s', state);
    if (s2c[i]) inspect(s2c[i], 's2c', state);
  }
  flush(state);
  closeSync(state.fd);
  const cpu = process.cpuUsage(cpu0);
  const cpuUs = cpu.user + cpu.system;
  rmSync(dir, { recursive: true, force: true });
  return { kind, frames, bytes, cpuMs: cpuUs / 1000, framesPerCpuSecond: frames / (cpuUs / 1e6), nsPerByte: (cpuUs * 1000) / bytes };
}

if (import.meta.url === `file://${process.argv[1]}`) {
  const kind = process.argv[2] ?? 'small';
  const frames = process.argv[3] ? Number(process.argv[3]) : undefined;
  console.log(JSON.stringify(runBareInspectBench({ kind, ...(frames ? { frames } : {}) })));
}
