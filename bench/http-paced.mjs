#!/usr/bin/env node
/**
 * A paced stream through the HTTP tap, side by side with the same stream direct: does every chunk reach the
 * client as it is sent, and how much later than direct?
 *
 * The upstream (fixtures/llm-upstream.mjs, its own process) writes `n` chunks `ms` apart on GET /paced, each
 * stamped with Date.now() at the moment it is written. mcptap runs as the real CLI in its own process. The
 * A bare http-proxy (bench/bare-http-proxy.mjs, logging nothing) runs too, to tell the proxy's own cost from
 * mcptap's. The client (this process) records when headers and each chunk arrive, so for every chunk we know how long it took
 * from the upstream's write to the client: direct, and through mcptap.
 *
 *   node bench/http-paced.mjs [--chunks 50] [--interval 5] [--runs 10]
 *
 * Needs a build (npx tsc -p .): it starts bin/mcptap.js.
 */
import http from 'node:http';
import { spawn } from 'node:child_process';
import { mkdtempSync, rmSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join, dirname } from 'node:path';
import { fileURLToPath } from 'node:url';
import { performance } from 'node:perf_hooks';

const root = join(dirname(fileURLToPath(import.meta.url)), '..');
const arg = (name, fallback) => {
  const i = process.argv.indexOf(`--${name}`);
  return i === -1 ? fallback : Number(process.argv[i + 1]);
};
const CHUNKS = arg('chunks', 50);
const INTERVAL = arg('interval', 5);
const RUNS = arg('runs', 10);

/** Start a child and resolve with the first URL it prints (stdout or stderr). */
function startChild(args, name) {
  return new Promise((resolve, reject) => {
    const child = spawn(process.execPath, args, { cwd: root, stdio: ['ignore', 'pipe', 'pipe'] });
    let out = '';
    const onData = (d) => {
      out += d.toString();
      const m = /(http:\/\/127\.0\.0\.1:\d+)/.exec(out) ?? /^(\d+)\s*$/m.exec(out);
      if (m) resolve({ child, url: m[1].startsWith('http') ? m[1] : `http://127.0.0.1:${m[1]}` });
    };
    child.stdout.on('data', onData);
    child.stderr.on('data', onData);
    child.once('exit', (code) => reject(new Error(`${name} exited with ${code}: ${out}`)));
  });
}

/** One paced request: arrival times (ms since the request started) and the per-chunk delay since the upstream wrote it. */
function measure(base) {
  return new Promise((resolve, reject) => {
    const t0 = performance.now();
    const wall0 = Date.now();
    const arrivals = [];
    const delays = [];
    let headersMs;
    let pending = '';
    const req = http.get(`${base}/paced?n=${CHUNKS}&ms=${INTERVAL}`, { agent: false }, (res) => {
      headersMs = performance.now() - t0;
      res.on('data', (chunk) => {
        const now = performance.now();
        const wallNow = wall0 + (now - t0);
        arrivals.push(now - t0);
        pending += chunk.toString('utf8');
        let nl;
        while ((nl = pending.indexOf('\n')) !== -1) {
          const line = pending.slice(0, nl);
          pending = pending.slice(nl + 1);
          const sent = Number(line.split(' ')[2]);
          delays.push(wallNow - sent);
        }
      });
      res.on('end', () => resolve({ headersMs, arrivals, delays }));
      res.on('error', reject);
    });
    req.on('error', reject);
  });
}

const median = (xs) => {
  const s = [...xs].sort((a, b) => a - b);
  return s.length ? s[Math.floor((s.length - 1) / 2)] : NaN;
};
const p95 = (xs) => {
  const s = [...xs].sort((a, b) => a - b);
  return s.length ? s[Math.min(s.length - 1, Math.ceil(s.length * 0.95) - 1)] : NaN;
};
const f = (x) => x.toFixed(2).padStart(8);

const logDir = mkdtempSync(join(tmpdir(), 'mcptap-bench-paced-'));
const upstream = await startChild(['fixtures/llm-upstream.mjs', '--port', '0'], 'upstream');
const tap = await startChild(['bin/mcptap.js', 'http', '--target', upstream.url, '--listen', '0', '--log-dir', logDir, '--name', 'bench-paced'], 'mcptap');
// http-proxy alone, inspecting nothing: what the proxy costs before mcptap logs anything.
const bare = await startChild(['bench/bare-http-proxy.mjs', upstream.url], 'bare http-proxy');
try {
  const paths = { direct: upstream.url, 'http-proxy': bare.url, mcptap: tap.url };
  // Warm every path (JIT, connection setup) before measuring.
  for (const url of Object.values(paths)) await measure(url);
  const results = { direct: [], 'http-proxy': [], mcptap: [] };
  for (let i = 0; i < RUNS; i++) for (const [name, url] of Object.entries(paths)) results[name].push(await measure(url));
  console.log(`Paced stream: ${CHUNKS} chunks, ${INTERVAL} ms apart, ${RUNS} runs each (median over runs; delays are per chunk, upstream write → client read).`);
  console.log(`${'path'.padEnd(10)} ${'headers'.padStart(8)} ${'1st byte'.padStart(8)} ${'last'.padStart(8)} ${'reads'.padStart(6)} ${'delay p50'.padStart(9)} ${'delay p95'.padStart(9)} ${'delay max'.padStart(9)}`);
  for (const [name, runs] of Object.entries(results)) {
    const all = runs.flatMap((r) => r.delays);
    console.log(
      `${name.padEnd(10)} ${f(median(runs.map((r) => r.headersMs)))} ${f(median(runs.map((r) => r.arrivals[0])))} ${f(median(runs.map((r) => r.arrivals.at(-1))))} ${String(median(runs.map((r) => r.arrivals.length))).padStart(6)} ${f(median(all)).padStart(9)} ${f(p95(all)).padStart(9)} ${f(Math.max(...all)).padStart(9)}`,
    );
  }
  const dFirst = median(results.mcptap.map((r) => r.arrivals[0])) - median(results.direct.map((r) => r.arrivals[0]));
  const dDelay = median(results.mcptap.flatMap((r) => r.delays)) - median(results.direct.flatMap((r) => r.delays));
  console.log(`mcptap adds ${dFirst.toFixed(2)} ms to the first byte and ${dDelay.toFixed(2)} ms to the median chunk; ${median(results.mcptap.map((r) => r.arrivals.length))} of ${CHUNKS} chunks arrive as separate reads (chunk by chunk, not buffered).`);
} finally {
  tap.child.kill('SIGTERM');
  bare.child.kill('SIGTERM');
  upstream.child.kill('SIGTERM');
  await new Promise((r) => setTimeout(r, 300));
  rmSync(logDir, { recursive: true, force: true });
}
