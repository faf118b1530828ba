// stdio benchmarks, side by side in one run: the echo server spawned directly, behind a bare Node pipe relay
// (the floor for any Node wrapper), behind the same relay writing all it relays to a file (the floor for one
// that logs), and behind mcptap with full logging. Run: node bench/stdio.mjs, or
// node bench/stdio.mjs --sustained [rounds] for the sustained 64 KiB flood alone.
import { spawn } from 'node:child_process';
import { mkdtempSync, readdirSync, readFileSync, rmSync, statSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { dirname, join } from 'node:path';
import { fileURLToPath } from 'node:url';
import { untilIdle } from './idle.mjs';

const here = dirname(fileURLToPath(import.meta.url));
const ECHO = join(here, 'echo-server.mjs');
const BARE = join(here, 'bare-relay.mjs');
const MCPTAP = join(here, '..', 'bin', 'mcptap.js');

/** The bare relay that also writes every byte it relays to a file. */
export const BARE_TEE = 'bare relay, writing what it relays to a file';

/** The ways to reach a server (the echo server by default). `logDir` receives mcptap's logs and the tee's file. */
export function stdioSubjects(logDir, server = [process.execPath, ECHO]) {
  const [command, ...args] = server;
  return [
    { name: 'direct', command, args },
    { name: 'bare relay', command: process.execPath, args: [BARE, '--', ...server] },
    { name: BARE_TEE, command: process.execPath, args: [BARE, '--tee', join(logDir, 'relayed.tee'), '--', ...server] },
    { name: 'mcptap (full logging)', command: process.execPath, args: [MCPTAP, '--log-dir', logDir, '--', ...server] },
  ];
}

function start(subject, env = process.env) {
  const child = spawn(subject.command, subject.args, { stdio: ['pipe', 'pipe', 'ignore'], env });
  child.stdin.on('error', () => {});
  return child;
}

/** Resolves with each complete line the child writes, through `onLine`. */
function onLines(child, onLine) {
  let tail = '';
  child.stdout.setEncoding('utf8');
  child.stdout.on('data', (text) => {
    let start = 0;
    let nl;
    while ((nl = text.indexOf('\n', start)) !== -1) {
      onLine(tail + text.slice(start, nl));
      tail = '';
      start = nl + 1;
    }
    tail += text.slice(start);
  });
}

async function stop(child) {
  const exited = new Promise((resolve) => child.once('exit', resolve));
  child.stdin.end();
  await exited;
}

/**
 * A fresh Node process runs slowly at first: V8 compiles each function once it is hot, on helper threads that
 * take the same cores, and mcptap has far more code to compile than a bare relay. Measured on 2 cores through
 * mcptap, V8's helper threads used 52–64 µs of CPU per round trip together after 500 warm-up round trips,
 * 12–14 µs after 3000, 4–8 µs after 20000 (a bare relay's: about 8). So each measurement is taken twice in
 * the same process, one window after the other: while the process is fresh, and once it has warmed up (and
 * gone idle, its log written).
 */

/**
 * CPU ms used so far by process `pid`: its main thread, and all its threads (Linux /proc; undefined elsewhere).
 * CPU time holds on a busy machine better than a rate does.
 */
function cpuMs(pid) {
  const ms = (path) => {
    const stat = readFileSync(path, 'utf8');
    const fields = stat.slice(stat.lastIndexOf(')') + 2).split(' ');
    return (Number(fields[11]) + Number(fields[12])) * 10; // clock ticks of 10 ms
  };
  try {
    return { main: ms(`/proc/${pid}/task/${pid}/stat`), all: ms(`/proc/${pid}/stat`) };
  } catch {
    return undefined;
  }
}

/** Runs `window`, then waits until `pid` is idle (its inspection caught up): the window's result with the CPU used. */
async function withCpu(pid, window, per, names) {
  const before = cpuMs(pid);
  const result = await window();
  await untilIdle([pid]);
  const after = cpuMs(pid);
  if (before && after) Object.assign(result, { [names[0]]: (after.main - before.main) * per, [names[1]]: (after.all - before.all) * per });
  return result;
}

/** The latency and rate of `rounds` sequential round trips through `once`. */
async function roundTripWindow(once, firstId, rounds) {
  const samples = new Float64Array(rounds);
  const begin = process.hrtime.bigint();
  for (let i = 0; i < rounds; i++) {
    const t0 = process.hrtime.bigint();
    await once(firstId + i);
    samples[i] = Number(process.hrtime.bigint() - t0) / 1000;
  }
  const seconds = Number(process.hrtime.bigint() - begin) / 1e9;
  samples.sort();
  return {
    msgsPerSecond: rounds / seconds,
    p50us: samples[Math.floor(rounds * 0.5)],
    p99us: samples[Math.floor(rounds * 0.99)],
  };
}

/**
 * Sequential request → response round trips: msgs/s and latency percentiles in µs, for the `rounds` after
 * `warmup` (`fresh`) and for the `rounds` after those (`warm`).
 */
export async function roundTrips(subject, rounds = 5000, warmup = 500) {
  const child = start(subject);
  let waiting;
  onLines(child, () => waiting?.());
  const once = (id) =>
    new Promise((resolve) => {
      waiting = resolve;
      child.stdin.write(`{"jsonrpc":"2.0","id":${id},"method":"tools/call","params":{"name":"echo","arguments":{"text":"hi"}}}\n`);
    });
  for (let i = 0; i < warmup; i++) await once(i);
  const fresh = await roundTripWindow(once, warmup, rounds);
  await untilIdle([child.pid]);
  // µs per round trip
  const warm = await withCpu(child.pid, () => roundTripWindow(once, warmup + rounds, rounds), 1000 / rounds, ['rtMainUs', 'rtAllUs']);
  await stop(child);
  return { fresh, warm };
}

/**
 * Pipelined 64 KiB frames echoed back: MB/s of payload through the relay (both ways), for the first `frames`
 * (`fresh`) and for the `frames` after those (`warm`).
 */
export async function throughput(subject, frames = 512, frameBytes = 64 * 1024) {
  const child = start(subject);
  const padding = 'x'.repeat(frameBytes - 80);
  const line = `{"jsonrpc":"2.0","method":"notifications/message","params":{"data":"${padding}"}}\n`;
  const measureWindow = async () => {
    const total = Buffer.byteLength(line) * frames;
    let received = 0;
    let onData;
    const done = new Promise((resolve) => {
      onData = (chunk) => {
        received += chunk.length;
        if (received >= total) resolve();
      };
      child.stdout.on('data', onData);
    });
    const begin = process.hrtime.bigint();
    for (let i = 0; i < frames; i++) {
      if (!child.stdin.write(line)) await new Promise((resolve) => child.stdin.once('drain', resolve));
    }
    await done;
    child.stdout.off('data', onData);
    return { mbPerSecond: total / 1e6 / (Number(process.hrtime.bigint() - begin) / 1e9) };
  };
  const peak = watchPeakRss(child.pid);
  const fresh = await measureWindow();
  // The relay may still be logging the first window's frames: the second starts once it has gone idle.
  await untilIdle([child.pid]);
  // ms per 100 MB of frames
  const warm = await withCpu(child.pid, measureWindow, 100e6 / (Buffer.byteLength(line) * frames), ['mbMainMs', 'mbAllMs']);
  const peakRssMb = peak.stop();
  await stop(child);
  return { fresh, warm, peakRssMb };
}

/**
 * Milliseconds from spawn to the answer of the first request (the start-up a host waits for), in `env`.
 * NODE_EXTRA_CA_CERTS alone costs every Node process about 90 ms on this machine (Node 20 reads the whole
 * certificate store at boot when it is set), which is why the start-up is also measured without it.
 */
export async function startup(subject, runs = 10, env = process.env) {
  const times = [];
  for (let i = 0; i < runs; i++) {
    const t0 = process.hrtime.bigint();
    const child = start(subject, env);
    await new Promise((resolve) => {
      onLines(child, resolve);
      child.stdin.write('{"jsonrpc":"2.0","id":0,"method":"initialize","params":{"protocolVersion":"2025-06-18","capabilities":{},"clientInfo":{"name":"bench","version":"0"}}}\n');
    });
    times.push(Number(process.hrtime.bigint() - t0) / 1e6);
    await stop(child);
  }
  times.sort((a, b) => a - b);
  return { medianMs: times[Math.floor(times.length / 2)] };
}

/** Samples the peak RSS of process `pid` (Linux: /proc VmHWM) until stop(), which gives it in MB. */
function watchPeakRss(pid) {
  let peakKb = 0;
  const poll = setInterval(() => {
    try {
      const m = /VmHWM:\s+(\d+) kB/.exec(readFileSync(`/proc/${pid}/status`, 'utf8'));
      if (m) peakKb = Math.max(peakKb, Number(m[1]));
    } catch {
      // the process has gone
    }
  }, 20);
  return { stop: () => (clearInterval(poll), peakKb / 1024) };
}

/** Peak RSS (MB) of the relay process while one `megabytes` MB frame passes through (Linux: /proc VmHWM). */
export async function peakRssOneFrame(subject, megabytes = 100) {
  const child = start(subject);
  const peak = watchPeakRss(child.pid);
  const size = megabytes * 1024 * 1024;
  let received = 0;
  const done = new Promise((resolve) => {
    child.stdout.on('data', (chunk) => {
      received += chunk.length;
      if (received >= size + 1) resolve();
    });
  });
  const piece = Buffer.alloc(1024 * 1024, 0x61);
  for (let i = 0; i < megabytes; i++) {
    if (!child.stdin.write(piece)) await new Promise((resolve) => child.stdin.once('drain', resolve));
  }
  child.stdin.write('\n');
  await done;
  await new Promise((resolve) => setTimeout(resolve, 60));
  const peakRssMb = peak.stop();
  await stop(child);
  return { peakRssMb };
}

/**
 * A flood: `requests` small JSON-RPC requests piped at once through the subject wrapping `cat` (twice as many
 * frames, both ways). Time until the last byte is back, from it until the process has exited, peak RSS, and for
 * mcptap the frames its log holds.
 */
export async function flood(subject, requests = 200_000) {
  const child = start(subject);
  const peak = watchPeakRss(child.pid);
  const lines = [];
  for (let i = 0; i < requests; i++) lines.push(`{"jsonrpc":"2.0","id":${i},"method":"tools/call","params":{"name":"echo","arguments":{"text":"flood ${i}"}}}\n`);
  const data = Buffer.from(lines.join(''));
  const begin = process.hrtime.bigint();
  let received = 0;
  let lastByte;
  child.stdout.on('data', (chunk) => {
    received += chunk.length;
    if (received >= data.length) lastByte ??= process.hrtime.bigint();
  });
  // 'close', not 'exit': 'exit' may come before the last of the child's output has been read.
  const exited = new Promise((resolve) => child.once('close', () => resolve(process.hrtime.bigint())));
  child.stdin.end(data);
  const end = await exited;
  const floodPeakRssMb = peak.stop();
  const ms = (a, b) => Number(b - a) / 1e6;
  return { floodLastByteMs: lastByte ? ms(begin, lastByte) : undefined, floodExitAfterMs: lastByte ? ms(lastByte, end) : undefined, floodTotalMs: ms(begin, end), floodPeakRssMb };
}

/** Frames (records of `kind`) in the newest log of `logDir`. */
function framesLogged(logDir, kind) {
  const files = readdirSync(logDir).filter((f) => f.endsWith('.ndjson')).sort((a, b) => statSync(join(logDir, a)).mtimeMs - statSync(join(logDir, b)).mtimeMs);
  const text = readFileSync(join(logDir, files.at(-1)), 'utf8');
  let frames = 0;
  const marker = `"kind":"${kind}"`;
  for (let at = text.indexOf(marker); at !== -1; at = text.indexOf(marker, at + 1)) frames++;
  return frames;
}

function withoutExtraCaCerts() {
  const env = { ...process.env };
  delete env.NODE_EXTRA_CA_CERTS;
  return env;
}

/** Every stdio figure for every subject, in one run. */
export async function runStdioBenchmarks({ quick = false } = {}) {
  const logDir = mkdtempSync(join(tmpdir(), 'mcptap-bench-'));
  try {
    const rows = [];
    // The 100 MB frame goes through `cat`: the relay's memory is measured, not a JSON server's.
    const catSubjects = stdioSubjects(logDir, ['cat']);
    const subjects = stdioSubjects(logDir);
    // Rates in rounds that take turns, so that drift of the machine during the run falls on no subject in
    // particular; each subject's figure is its median round (the p50/p99 are that round's).
    const rounds = quick ? 1 : 3;
    const rtRuns = new Map(subjects.map((s) => [s, []]));
    const tpRuns = new Map(subjects.map((s) => [s, []]));
    const sustainedRuns = new Map(subjects.map((s) => [s, []]));
    const floodRuns = new Map(subjects.map((s) => [s, []]));
    for (let round = 0; round < rounds; round++) {
      for (const [i, subject] of subjects.entries()) {
        rtRuns.get(subject).push(await roundTrips(subject, quick ? 1000 : 5000));
        tpRuns.get(subject).push(await throughput(subject, quick ? 128 : 512));
        // The burst above fits in what the relay buffers; a sustained flood of 64 KiB frames does not. Through
        // cat, so the server's own parsing takes no core from the relay and the log must keep up with a pipe.
        const run = await throughput(catSubjects[i], quick ? 300 : 1500);
        const sustained = { ...run.warm, peakRssMb: run.peakRssMb };
        if (subject.name.startsWith('mcptap')) sustained.framesLogged = framesLogged(logDir, 'notification');
        sustainedRuns.get(subject).push(sustained);
        const f = await flood(catSubjects[i], quick ? 20_000 : 200_000);
        if (subject.name.startsWith('mcptap')) f.floodFramesLogged = framesLogged(logDir, 'request');
        floodRuns.get(subject).push(f);
      }
    }
    const medianBy = (runs, key) => [...runs].sort((a, b) => a[key] - b[key])[Math.floor(runs.length / 2)];
    for (const [i, subject] of subjects.entries()) {
      // Per window: the median round of round trips (with its latencies) and of 64 KiB frames.
      const rates = (window) => ({
        ...medianBy(rtRuns.get(subject).map((r) => r[window]), 'msgsPerSecond'),
        ...medianBy(tpRuns.get(subject).map((r) => r[window]), 'mbPerSecond'),
      });
      const su = await startup(subject, quick ? 3 : 10);
      const withoutExtraCa = process.env.NODE_EXTRA_CA_CERTS === undefined ? undefined : await startup(subject, quick ? 3 : 10, withoutExtraCaCerts());
      const mem = await peakRssOneFrame(catSubjects[i], quick ? 20 : 100);
      const sustained = medianBy(sustainedRuns.get(subject), 'mbPerSecond');
      const floodMedian = medianBy(floodRuns.get(subject), 'floodTotalMs');
      rows.push({ subject: subject.name, warm: rates('warm'), fresh: rates('fresh'), sustainedMbPerSecond: sustained.mbPerSecond, sustainedMainMs: sustained.mbMainMs, sustainedAllMs: sustained.mbAllMs, sustainedRuns: sustainedRuns.get(subject), ...floodMedian, floodRuns: floodRuns.get(subject), ...su, ...(withoutExtraCa ? { medianMsWithoutExtraCa: withoutExtraCa.medianMs } : {}), ...mem });
    }
    return rows;
  } finally {
    rmSync(logDir, { recursive: true, force: true });
  }
}

/**
 * Only the sustained 64 KiB flood, bare relay and mcptap taking turns `rounds` times: each run's MB/s and CPU
 * per 100 MB (main thread, all threads), and mcptap's median against the bare relay's.
 */
export async function runSustained(rounds = 5, frames = 1500) {
  const logDir = mkdtempSync(join(tmpdir(), 'mcptap-bench-'));
  try {
    const subjects = stdioSubjects(logDir).filter((s) => s.name !== 'direct');
    const runs = new Map(subjects.map((s) => [s.name, []]));
    for (let round = 0; round < rounds; round++) {
      for (const subject of subjects) runs.get(subject.name).push((await throughput(subject, frames)).warm);
    }
    const median = (values) => [...values].sort((a, b) => a - b)[Math.floor(values.length / 2)];
    const rows = subjects.map((s) => {
      const r = runs.get(s.name);
      return { subject: s.name, mbPerSecond: median(r.map((x) => x.mbPerSecond)), runs: r.map((x) => Math.round(x.mbPerSecond)).join(' '), mainMsPer100MB: median(r.map((x) => x.mbMainMs)), allMsPer100MB: median(r.map((x) => x.mbAllMs)) };
    });
    const rate = (name) => rows.find((row) => row.subject === name).mbPerSecond;
    return { rows, ratio: rate('mcptap (full logging)') / rate('bare relay'), teeRatio: rate(BARE_TEE) / rate('bare relay') };
  } finally {
    rmSync(logDir, { recursive: true, force: true });
  }
}

if (import.meta.url === `file://${process.argv[1]}`) {
  const sustained = process.argv.indexOf('--sustained');
  if (sustained !== -1) {
    const { rows, ratio, teeRatio } = await runSustained(Number(process.argv[sustained + 1]) || 5);
    console.table(rows);
    console.log(`mcptap / bare relay: ${ratio.toFixed(2)}×; bare relay writing a file / bare relay: ${teeRatio.toFixed(2)}×`);
  } else console.table(await runStdioBenchmarks({ quick: process.argv.includes('--quick') }));
}
