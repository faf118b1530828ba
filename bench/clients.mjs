// Many streaming clients at once, side by side: `clients` clients loop over paced Ollama-shaped streams (50
// chunks 10 ms apart, bench/stream-upstream.mjs) through a bare http-proxy, then through `mcptap http` with
// full logging. Per relay: chunk lag (the upstream stamps each chunk as it writes it; the client notes when it
// arrives), time to first byte, and the relay's peak RSS. Run: node bench/clients.mjs [clients] [seconds]
import { spawn } from 'node:child_process';
import http from 'node:http';
import { mkdtempSync, readFileSync, rmSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { dirname, join } from 'node:path';
import { fileURLToPath } from 'node:url';

const here = dirname(fileURLToPath(import.meta.url));
const CHUNKS = 50;
const MS = 10;

/** Start a child; resolves with it and the port it prints (`pattern` on `stream`). */
function startAndWait(argv, pattern, stream) {
  const child = spawn(process.execPath, argv, { stdio: ['ignore', 'pipe', 'pipe'] });
  return new Promise((resolve, reject) => {
    let text = '';
    child.once('exit', (code) => reject(new Error(`${argv[0]} exited with ${code}: ${text}`)));
    child[stream].on('data', (d) => {
      text += d;
      const m = pattern.exec(text);
      if (m) resolve({ child, port: Number(m[1]) });
    });
  });
}

const body = JSON.stringify({ model: 'bench', stream: true, messages: [{ role: 'user', content: 'Say something long.' }] });
const pct = (sorted, p) => sorted[Math.min(sorted.length - 1, Math.floor((p / 100) * sorted.length))];

/** One streamed turn: pushes each chunk's lag (ms) into `lags`; resolves with the time to first byte. */
function turn(port, agent, lags) {
  const start = performance.now();
  return new Promise((resolve, reject) => {
    const req = http.request({ host: '127.0.0.1', port, path: `/api/chat?mode=paced&n=${CHUNKS}&ms=${MS}&stamp=1`, method: 'POST', agent, headers: { 'content-type': 'application/json' } }, (res) => {
      let first = 0;
      let tail = '';
      res.setEncoding('utf8');
      res.on('data', (text) => {
        const now = Number(process.hrtime.bigint()) / 1e6; // the upstream's clock: see stream-upstream.mjs
        if (!first) first = performance.now();
        const parts = (tail + text).split('\n');
        tail = parts.pop();
        for (const line of parts) {
          const at = line.indexOf('"sent":');
          if (at !== -1) lags.push(now - Number.parseFloat(line.slice(at + 7)));
        }
      });
      res.on('end', () => (res.statusCode === 200 ? resolve(first - start) : reject(new Error(`status ${res.statusCode}`))));
      res.on('error', reject);
    });
    req.on('error', reject);
    req.end(body);
  });
}

/** `clients` clients for `seconds` through the relay on `port` (pid `pid`): lag and TTFB percentiles, peak RSS. */
async function load(port, pid, clients, seconds) {
  const agent = new http.Agent({ keepAlive: true, maxSockets: clients });
  const lags = [];
  const ttfbs = [];
  let errors = 0;
  let peakKb = 0;
  const poll = setInterval(() => {
    const m = /VmHWM:\s+(\d+) kB/.exec(readFileSync(`/proc/${pid}/status`, 'utf8'));
    if (m) peakKb = Math.max(peakKb, Number(m[1]));
  }, 200);
  const deadline = performance.now() + seconds * 1000;
  await Promise.all(
    Array.from({ length: clients }, async () => {
      while (performance.now() < deadline) {
        try {
          ttfbs.push(await turn(port, agent, lags));
        } catch {
          errors++;
        }
      }
    }),
  );
  clearInterval(poll);
  agent.destroy();
  lags.sort((a, b) => a - b);
  ttfbs.sort((a, b) => a - b);
  return { turns: ttfbs.length, errors, lagP50Ms: pct(lags, 50), lagP99Ms: pct(lags, 99), ttfbP99Ms: pct(ttfbs, 99), peakRssMb: peakKb / 1024 };
}

/** The bare http-proxy, then mcptap http, each under the same load against one upstream. */
export async function runClientsBenchmark({ clients = 100, seconds = 15 } = {}) {
  const upstream = await startAndWait([join(here, 'stream-upstream.mjs')], /^(\d+)/m, 'stdout');
  const target = `http://127.0.0.1:${upstream.port}`;
  const logDir = mkdtempSync(join(tmpdir(), 'mcptap-clients-'));
  const rows = [];
  try {
    for (const [subject, argv, pattern, stream] of [
      ['bare http-proxy', [join(here, 'bare-http-proxy.mjs'), target], /^(\d+)/m, 'stdout'],
      ['mcptap http (full logging)', [join(here, '..', 'bin', 'mcptap.js'), 'http', '--target', target, '--log-dir', logDir], /listening on http:\/\/127\.0\.0\.1:(\d+)/, 'stderr'],
    ]) {
      const relay = await startAndWait(argv, pattern, stream);
      // A short warm-up at the same load, so V8 has compiled the relay's code before it is measured.
      await load(relay.port, relay.child.pid, clients, 2);
      rows.push({ subject, clients, seconds, ...(await load(relay.port, relay.child.pid, clients, seconds)) });
      relay.child.kill('SIGTERM');
      await new Promise((r) => relay.child.once('exit', r));
    }
  } finally {
    upstream.child.kill();
    rmSync(logDir, { recursive: true, force: true });
  }
  return rows;
}

if (import.meta.url === `file://${process.argv[1]}`) {
  console.table(await runClientsBenchmark({ clients: Number(process.argv[2] ?? 100), seconds: Number(process.argv[3] ?? 15) }));
}
