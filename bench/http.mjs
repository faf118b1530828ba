// HTTP benchmarks, side by side in one run: the NDJSON upstream reached directly, through a bare TCP relay (the
// floor for any relay), through a bare http-proxy (the floor for any http-proxy based tap), through `mcptap http`
// with full logging and chunk records, and through mitmdump in reverse mode recording flows when it is installed
// (Debian package mitmproxy).
// Run: node bench/http.mjs [--quick]
import { spawn } from 'node:child_process';
import http from 'node:http';
import net from 'node:net';
import { existsSync, mkdtempSync, readdirSync, readFileSync, rmSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { dirname, join } from 'node:path';
import { fileURLToPath } from 'node:url';
import { untilIdle } from './idle.mjs';

const here = dirname(fileURLToPath(import.meta.url));
const MCPTAP = join(here, '..', 'bin', 'mcptap.js');

/** Start a child that prints its port on its first stdout line; resolves with {child, port}. */
function startPrintingPort(command, args) {
  const child = spawn(command, args, { stdio: ['ignore', 'pipe', 'inherit'] });
  return new Promise((resolve, reject) => {
    child.once('error', reject);
    child.stdout.once('data', (d) => resolve({ child, port: Number(String(d).trim().split('\n')[0]) }));
  });
}

async function freePort() {
  const server = net.createServer();
  await new Promise((r) => server.listen(0, '127.0.0.1', r));
  const { port } = server.address();
  await new Promise((r) => server.close(r));
  return port;
}

async function waitForPort(port, timeoutMs = 15000) {
  const until = Date.now() + timeoutMs;
  for (;;) {
    const ok = await new Promise((resolve) => {
      const s = net.connect(port, '127.0.0.1', () => (s.end(), resolve(true)));
      s.once('error', () => resolve(false));
    });
    if (ok) return;
    if (Date.now() > until) throw new Error(`nothing listens on ${port}`);
    await new Promise((r) => setTimeout(r, 50));
  }
}

const CHAT = { body: JSON.stringify({ model: 'bench', messages: [{ role: 'user', content: 'go' }], stream: true }), headers: { 'content-type': 'application/json' } };
/** An MCP tools/call as the SDK's client POSTs it (the upstream's server is stateless: no initialize first). */
const MCP_CALL = {
  body: JSON.stringify({ jsonrpc: '2.0', id: 1, method: 'tools/call', params: { name: 'read_doc', arguments: {} } }),
  headers: { 'content-type': 'application/json', accept: 'application/json, text/event-stream', 'mcp-protocol-version': '2025-11-25' },
};

/** One POST (a chat by default); resolves with time to first body byte, the largest gap between chunks, and the total time (ms). */
export function fetchTimed(url, request = CHAT) {
  return new Promise((resolve, reject) => {
    const t0 = performance.now();
    let first;
    let lastAt;
    let maxGap = 0;
    let bytes = 0;
    let chunks = 0;
    const req = http
      .request(url, { method: 'POST', agent: false, headers: request.headers }, (res) => {
        res.on('data', (d) => {
          const now = performance.now();
          if (first === undefined) first = now - t0;
          else maxGap = Math.max(maxGap, now - lastAt);
          lastAt = now;
          bytes += d.length;
          chunks++;
        });
        res.on('end', () => resolve({ ttfbMs: first, maxGapMs: maxGap, totalMs: performance.now() - t0, bytes, chunks }));
        res.on('error', reject);
      })
      .on('error', reject);
    req.end(request.body);
  });
}

const median = (xs) => [...xs].sort((a, b) => a - b)[Math.floor(xs.length / 2)];

/** The exchanges whose path holds `marker` that mcptap's log in `logDir` says it could not inspect whole. */
function cutExchanges(logDir, marker) {
  let cut = 0;
  for (const file of readdirSync(logDir).filter((f) => f.endsWith('.ndjson'))) {
    for (const line of readFileSync(join(logDir, file), 'utf8').split('\n')) {
      if (line.includes('"kind":"http-end"') && line.includes(marker) && line.includes('"uninspectedBytes"')) cut++;
    }
  }
  return cut;
}

function peakRssPoller(pid) {
  let peakKb = 0;
  const timer = setInterval(() => {
    try {
      const m = /VmHWM:\s+(\d+) kB/.exec(readFileSync(`/proc/${pid}/status`, 'utf8'));
      if (m) peakKb = Math.max(peakKb, Number(m[1]));
    } catch {
      // gone
    }
  }, 50);
  return () => (clearInterval(timer), peakKb / 1024);
}

export async function runHttpBenchmarks({ quick = false } = {}) {
  const logDir = mkdtempSync(join(tmpdir(), 'mcptap-bench-http-'));
  const children = [];
  try {
    const upstream = await startPrintingPort(process.execPath, [join(here, 'stream-upstream.mjs')]);
    children.push(upstream.child);
    const target = `http://127.0.0.1:${upstream.port}`;
    const subjects = [{ name: 'direct', port: upstream.port }];

    const tcp = await startPrintingPort(process.execPath, [join(here, 'bare-tcp-relay.mjs'), target]);
    children.push(tcp.child);
    subjects.push({ name: 'bare TCP relay (parses nothing)', port: tcp.port, pid: tcp.child.pid });

    const bare = await startPrintingPort(process.execPath, [join(here, 'bare-http-proxy.mjs'), target]);
    children.push(bare.child);
    subjects.push({ name: 'bare http-proxy', port: bare.port, pid: bare.child.pid });

    const mcptapPort = await freePort();
    const mcptap = spawn(process.execPath, [MCPTAP, 'http', '--target', target, '--listen', String(mcptapPort), '--log-dir', logDir], { stdio: 'ignore' });
    children.push(mcptap);
    await waitForPort(mcptapPort);
    subjects.push({ name: 'mcptap http (full logging, chunk records)', port: mcptapPort, pid: mcptap.pid });

    const mitmdump = ['/usr/bin/mitmdump', '/usr/local/bin/mitmdump'].find((p) => existsSync(p));
    if (mitmdump) {
      const port = await freePort();
      const flows = join(logDir, 'mitm.flows');
      const mitm = spawn(mitmdump, ['-q', '--mode', `reverse:${target}`, '--listen-host', '127.0.0.1', '--listen-port', String(port), '-w', flows], { stdio: 'ignore' });
      children.push(mitm);
      await waitForPort(port, 30000);
      subjects.push({ name: 'mitmdump reverse, recording', port, pid: mitm.pid });
    }

    // Each subject is warmed up with the measured workload (a fresh Node process runs its code slowly until V8
    // has compiled it, which takes mcptap longer than a bare proxy: its inspection has more code). Then rounds
    // of runs take turns, each after the relays have gone idle, so that drift of the machine during the run
    // and work a relay still does for an earlier run fall on no subject in particular.
    const runs = quick ? 3 : 7;
    const rounds = quick ? 1 : 3;
    const streamN = 2000;
    const stream = new Map(subjects.map((s) => [s, []]));
    const sse = new Map(subjects.map((s) => [s, []]));
    const alone = new Map(subjects.map((s) => [s, []]));
    const paced = new Map(subjects.map((s) => [s, []]));
    const mcpCalls = new Map(subjects.map((s) => [s, []]));
    const pids = subjects.map((s) => s.pid ?? upstream.child.pid);
    for (const subject of subjects) {
      const base = `http://127.0.0.1:${subject.port}`;
      for (let i = 0; i < (quick ? 1 : 3); i++) await fetchTimed(`${base}/api/chat?mode=stream&n=${streamN}`);
      for (let i = 0; i < (quick ? 1 : 3); i++) await fetchTimed(`${base}/v1/chat/completions?mode=stream&n=${streamN}`);
      await fetchTimed(`${base}/api/chat?mode=paced&n=50&ms=5`);
      for (let i = 0; i < (quick ? 10 : 30); i++) await fetchTimed(`${base}/mcp`, MCP_CALL);
    }
    for (let round = 0; round < rounds; round++) {
      for (const subject of subjects) {
        const base = `http://127.0.0.1:${subject.port}`;
        await untilIdle([...pids, upstream.child.pid]);
        for (let i = 0; i < runs; i++) stream.get(subject).push(await fetchTimed(`${base}/api/chat?mode=stream&n=${streamN}`));
        await untilIdle([...pids, upstream.child.pid]);
        for (let i = 0; i < runs; i++) sse.get(subject).push(await fetchTimed(`${base}/v1/chat/completions?mode=stream&n=${streamN}`));
        await untilIdle([...pids, upstream.child.pid]);
        for (let i = 0; i < runs; i++) paced.get(subject).push(await fetchTimed(`${base}/api/chat?mode=paced&n=50&ms=5`));
        await untilIdle([...pids, upstream.child.pid]);
        for (let i = 0; i < runs * 10; i++) mcpCalls.get(subject).push(await fetchTimed(`${base}/mcp`, MCP_CALL));
        // The same stream alone, as a chat turn comes: each one once every process has gone idle. Back to back,
        // a stream also pays for what a relay still does for the ones before it (mcptap's inspection thread
        // may still be working on the stream before).
        for (let i = 0; i < runs; i++) {
          await untilIdle([...pids, upstream.child.pid]);
          alone.get(subject).push(await fetchTimed(`${base}/api/chat?mode=stream&n=${streamN}`));
        }
      }
    }
    const rows = subjects.map((subject) => ({
      subject: subject.name,
      streamMs: median(stream.get(subject).map((r) => r.totalMs)),
      sseStreamMs: median(sse.get(subject).map((r) => r.totalMs)),
      aloneStreamMs: median(alone.get(subject).map((r) => r.totalMs)),
      pacedTtfbMs: median(paced.get(subject).map((r) => r.ttfbMs)),
      pacedMaxGapMs: median(paced.get(subject).map((r) => r.maxGapMs)),
      pacedChunksSeen: median(paced.get(subject).map((r) => r.chunks)),
      mcpCallMs: median(mcpCalls.get(subject).map((r) => r.totalMs)),
    }));
    // Memory: one long stream (1 GiB, or 128 MiB with --quick) through each relay, its peak RSS and rate.
    const mb = quick ? 128 : 1024;
    for (const row of rows) {
      const subject = subjects.find((s) => s.name === row.subject);
      if (!subject.pid || subject.name.startsWith('mitmdump')) continue;
      const stop = peakRssPoller(subject.pid);
      const big = await fetchTimed(`http://127.0.0.1:${subject.port}/api/chat?mode=big&mb=${mb}`);
      row.bigStreamMBps = big.bytes / 1e6 / (big.totalMs / 1000);
      row.bigStreamPeakRssMb = stop();
    }
    // Sustained, after the memory (peak RSS is the process's high-water mark): 100 streams back to back, faster
    // than the inspection takes their chunks; how many of them mcptap's log could not inspect whole (their
    // http-ends say uninspectedBytes).
    const sustainedN = quick ? 30 : 100;
    const tapped = subjects.find((s) => s.name.startsWith('mcptap'));
    await untilIdle([...pids, upstream.child.pid]);
    for (let i = 0; i < sustainedN; i++) await fetchTimed(`http://127.0.0.1:${tapped.port}/api/chat?mode=stream&n=${streamN}&sustained=1`);
    await untilIdle([tapped.pid]);
    rows.find((r) => r.subject === tapped.name).sustainedCut = cutExchanges(logDir, 'sustained=1');
    return { rows, bigStreamMb: mb, sustainedN };
  } finally {
    for (const child of children) child.kill('SIGTERM');
    await new Promise((r) => setTimeout(r, 300));
    rmSync(logDir, { recursive: true, force: true });
  }
}

if (import.meta.url === `file://${process.argv[1]}`) {
  const { rows } = await runHttpBenchmarks({ quick: process.argv.includes('--quick') });
  console.table(rows);
}
