#!/usr/bin/env node
// Load: many concurrent streaming clients through `mcptap http` for a while, with no errors and flat memory.
//
//   node bench/load.mjs [--clients 100] [--seconds 60] [--chunks 50] [--ms 10] [--no-chunks]
//
// Each client loops: POST /api/chat to bench/stream-upstream.mjs through mcptap (Ollama-shaped NDJSON, `--chunks`
// chunks `--ms` apart, so every request is a streamed LLM turn that mcptap reassembles and logs chunk by chunk),
// reads the reply to the end and checks it is the whole stream. mcptap's resident memory is sampled every
// second from /proc (ps elsewhere). Prints requests, errors, latency percentiles and the memory series; the
// verdict on memory compares the second half of the run with the first. Not run by CI (it takes a minute and
// both cores); results go in docs/benchmarks.md.
import { execFileSync, spawn } from 'node:child_process';
import http from 'node:http';
import { mkdtempSync, readFileSync, readdirSync, rmSync, statSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { dirname, join } from 'node:path';
import { fileURLToPath } from 'node:url';

const here = dirname(fileURLToPath(import.meta.url));
const MCPTAP = join(here, '..', 'bin', 'mcptap.js');

const args = process.argv.slice(2);
const flag = (name, fallback) => {
  const i = args.indexOf(`--${name}`);
  return i === -1 ? fallback : Number(args[i + 1]);
};
const CLIENTS = flag('clients', 100);
const SECONDS = flag('seconds', 60);
const CHUNKS = flag('chunks', 50);
const MS = flag('ms', 10);
const NO_CHUNKS = args.includes('--no-chunks');

/** Start a child and resolve when `pattern` matches its output (stdout or stderr); resolves with the match. */
function startAndWait(command, argv, pattern, stream) {
  const child = spawn(command, argv, { stdio: ['ignore', 'pipe', 'pipe'] });
  return new Promise((resolve, reject) => {
    let text = '';
    child.once('error', reject);
    child.once('exit', (code) => reject(new Error(`${argv[0]} exited with ${code} before it was ready:\n${text}`)));
    child[stream].on('data', (d) => {
      text += d;
      const m = pattern.exec(text);
      if (m) resolve({ child, match: m });
    });
  });
}

function rssKb(pid) {
  try {
    const status = readFileSync(`/proc/${pid}/status`, 'utf8');
    return Number(/VmRSS:\s+(\d+)/.exec(status)?.[1]);
  } catch {
    return Number(execFileSync('ps', ['-o', 'rss=', '-p', String(pid)], { encoding: 'utf8' }).trim());
  }
}

const agent = new http.Agent({ keepAlive: true, maxSockets: CLIENTS });
const body = JSON.stringify({ model: 'bench', stream: true, messages: [{ role: 'user', content: 'Say something long.' }] });

/** One streamed turn; resolves with timings, rejects on any error or a short reply. */
function turn(port) {
  const start = performance.now();
  return new Promise((resolve, reject) => {
    const req = http.request(
      { host: '127.0.0.1', port, path: `/api/chat?mode=paced&n=${CHUNKS}&ms=${MS}`, method: 'POST', agent, headers: { 'content-type': 'application/json', authorization: 'Bearer bench-not-a-secret-0000' } },
      (res) => {
        let first = 0;
        let lines = 0;
        let tail = '';
        res.on('data', (d) => {
          if (!first) first = performance.now();
          const text = tail + d;
          const parts = text.split('\n');
          tail = parts.pop();
          lines += parts.length;
        });
        res.on('end', () => {
          if (res.statusCode !== 200) return reject(new Error(`status ${res.statusCode}`));
          if (lines !== CHUNKS + 1) return reject(new Error(`got ${lines} lines, expected ${CHUNKS + 1}`));
          resolve({ ttfbMs: first - start, totalMs: performance.now() - start });
        });
        res.on('error', reject);
      },
    );
    req.on('error', reject);
    req.end(body);
  });
}

const pct = (sorted, p) => sorted[Math.min(sorted.length - 1, Math.floor((p / 100) * sorted.length))];

async function main() {
  const upstream = await startAndWait(process.execPath, [join(here, 'stream-upstream.mjs')], /^(\d+)/m, 'stdout');
  const upstreamPort = Number(upstream.match[1]);
  const logDir = mkdtempSync(join(tmpdir(), 'mcptap-load-'));
  const mcptap = await startAndWait(
    process.execPath,
    [MCPTAP, 'http', '--target', `http://127.0.0.1:${upstreamPort}`, '--log-dir', logDir, ...(NO_CHUNKS ? ['--no-chunks'] : [])],
    /listening on http:\/\/127\.0\.0\.1:(\d+)/,
    'stderr',
  );
  const port = Number(mcptap.match[1]);
  const pid = mcptap.child.pid;
  console.log(`mcptap http (pid ${pid}) on :${port} → upstream :${upstreamPort}; ${CLIENTS} clients × ${SECONDS} s, ${CHUNKS} chunks ${MS} ms apart per turn${NO_CHUNKS ? ', --no-chunks' : ''}`);

  const memory = [{ s: 0, kb: rssKb(pid) }];
  const started = performance.now();
  const sampler = setInterval(() => memory.push({ s: Math.round((performance.now() - started) / 1000), kb: rssKb(pid) }), 1000);
  const deadline = started + SECONDS * 1000;
  const timings = [];
  const errors = new Map();
  const client = async () => {
    while (performance.now() < deadline) {
      try {
        timings.push(await turn(port));
      } catch (error) {
        errors.set(error.message, (errors.get(error.message) ?? 0) + 1);
      }
    }
  };
  await Promise.all(Array.from({ length: CLIENTS }, client));
  clearInterval(sampler);
  memory.push({ s: Math.round((performance.now() - started) / 1000), kb: rssKb(pid) });
  const elapsed = (performance.now() - started) / 1000;

  mcptap.child.kill('SIGTERM');
  await new Promise((r) => mcptap.child.once('exit', r));
  upstream.child.kill();
  agent.destroy();
  const logBytes = readdirSync(logDir).reduce((sum, f) => sum + statSync(join(logDir, f)).size, 0);
  // What mcptap itself recorded about failed exchanges: the first few causes, from the log.
  const failures = new Map();
  for (const f of readdirSync(logDir)) {
    for (const line of readFileSync(join(logDir, f), 'utf8').split('\n')) {
      if (!line.includes('"http-end"') || line.includes('"outcome":"complete"')) continue;
      const r = JSON.parse(line);
      const key = `${r.outcome}: ${r.error?.code ?? ''} ${r.error?.message ?? ''}`;
      failures.set(key, (failures.get(key) ?? 0) + 1);
    }
  }
  rmSync(logDir, { recursive: true, force: true });

  const ttfb = timings.map((t) => t.ttfbMs).sort((a, b) => a - b);
  const total = timings.map((t) => t.totalMs).sort((a, b) => a - b);
  const errorCount = [...errors.values()].reduce((a, b) => a + b, 0);
  const half = Math.floor(memory.length / 2);
  const mean = (xs) => xs.reduce((a, b) => a + b.kb, 0) / xs.length;
  const firstHalf = mean(memory.slice(1, half));
  const secondHalf = mean(memory.slice(half));
  const fmt = (ms) => `${ms.toFixed(1)} ms`;
  console.log(`\nturns: ${timings.length} in ${elapsed.toFixed(1)} s (${(timings.length / elapsed).toFixed(1)}/s), errors: ${errorCount}`);
  for (const [message, n] of errors) console.log(`  ${n} × ${message}`);
  for (const [cause, n] of failures) console.log(`  logged by mcptap: ${n} × ${cause}`);
  if (timings.length) {
    console.log(`time to first byte: p50 ${fmt(pct(ttfb, 50))}, p99 ${fmt(pct(ttfb, 99))}, max ${fmt(ttfb.at(-1))}`);
    console.log(`whole turn (ideal ${CHUNKS * MS} ms): p50 ${fmt(pct(total, 50))}, p99 ${fmt(pct(total, 99))}, max ${fmt(total.at(-1))}`);
  }
  console.log(`log written: ${(logBytes / 1024 / 1024).toFixed(1)} MB`);
  console.log(`mcptap RSS (MB) by second: ${memory.map((m) => (m.kb / 1024).toFixed(0)).join(' ')}`);
  console.log(`mean RSS first half ${(firstHalf / 1024).toFixed(1)} MB, second half ${(secondHalf / 1024).toFixed(1)} MB (${(((secondHalf - firstHalf) / firstHalf) * 100).toFixed(1)}%)`);
  process.exitCode = errorCount > 0 ? 1 : 0;
}

await main();
