// --otlp-endpoint costs: the echo server behind mcptap with full logging, without and with live spans streamed to
// a local OTLP/HTTP receiver (a plain node http server), and with the receiver down. Sequential tools/call round
// trips (msgs/s, p50/p99 µs) and start-up to the first answer. Run: node bench/otlp-live.mjs [--quick]
import http from 'node:http';
import { spawn } from 'node:child_process';
import { mkdtempSync, rmSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { dirname, join } from 'node:path';
import { fileURLToPath } from 'node:url';
import { roundTrips, startup } from './stdio.mjs';

const quick = process.argv.includes('--quick');
const here = dirname(fileURLToPath(import.meta.url));
const MCPTAP = join(here, '..', 'bin', 'mcptap.js');
const ECHO = join(here, 'echo-server.mjs');

// The receiver runs in its own process, so its JSON parsing does not slow this process's round trips.
const RECEIVER = `
  const http = require('node:http');
  let spans = 0;
  const server = http.createServer((req, res) => {
    let body = '';
    req.on('data', (c) => (body += c));
    req.on('end', () => {
      if (req.method === 'GET') return res.end(String(spans));
      try { for (const rs of JSON.parse(body).resourceSpans) for (const ss of rs.scopeSpans) spans += ss.spans.length; } catch {}
      res.writeHead(200, { 'content-type': 'application/json' }).end('{}');
    });
  });
  server.listen(0, '127.0.0.1', () => process.stdout.write(server.address().port + '\\n'));
`;
const receiverChild = spawn(process.execPath, ['-e', RECEIVER], { stdio: ['ignore', 'pipe', 'inherit'] });
const port = await new Promise((resolve) => receiverChild.stdout.once('data', (d) => resolve(Number(String(d).trim()))));
const endpoint = `http://127.0.0.1:${port}`;
const received = () =>
  new Promise((resolve) => http.get(`${endpoint}/count`, (res) => {
    let t = '';
    res.on('data', (c) => (t += c));
    res.on('end', () => resolve(Number(t)));
  }));
const down = http.createServer();
await new Promise((resolve) => down.listen(0, '127.0.0.1', resolve));
const downEndpoint = `http://127.0.0.1:${down.address().port}`;
await new Promise((resolve) => down.close(resolve));

const logDir = mkdtempSync(join(tmpdir(), 'mcptap-bench-otlp-'));
const subject = (name, extra) => ({ name, command: process.execPath, args: [MCPTAP, '--log-dir', logDir, ...extra, '--', process.execPath, ECHO] });
const subjects = [subject('mcptap (log only)', []), subject('mcptap --otlp-endpoint (receiver up)', ['--otlp-endpoint', endpoint]), subject('mcptap --otlp-endpoint (receiver down)', ['--otlp-endpoint', downEndpoint])];
const rounds = quick ? 1000 : 5000;

const rows = [];
for (const s of subjects) {
  const before = await received();
  const { warm: rt } = await roundTrips(s, rounds, 200);
  const st = await startup(s, quick ? 3 : 10);
  rows.push([s.name, rt.msgsPerSecond.toFixed(0), rt.p50us.toFixed(0), rt.p99us.toFixed(0), st.medianMs.toFixed(1), String((await received()) - before)]);
}
console.log(`| stdio, ${rounds} sequential tools/call | msgs/s | p50 µs | p99 µs | start-up ms | spans received |`);
console.log('|---|---|---|---|---|---|');
for (const r of rows) console.log(`| ${r.join(' | ')} |`);
receiverChild.kill();
rmSync(logDir, { recursive: true, force: true });
