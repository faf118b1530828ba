// The reading commands on logs of real size: peak memory (max RSS) and wall time of `view`, `view --format
// html`, `check`, `export --format har` and `export --format otlp` on one big log and on a folder of many small
// ones, each command a fresh process.
//
//   node bench/readers.mjs [--size-mb 1024] [--logs 1000] [--flood 500000] [--keep]
//
// The logs are made from a captured round trip (fixtures/captures/roundtrip: an Ollama proxy log with its chunks
// and the weather server's stdio log), repeated with new sessions and times, so every record is one a tap wrote.
// The floods are what mcptap itself logs of that many tools/call requests in one session: piped through
// `mcptap -- cat` (nothing answered, the tap giving up on the oldest past its bound) and through a server that
// answers each (bench/echo-server.mjs).
import { spawnSync } from 'node:child_process';
import { mkdirSync, mkdtempSync, readFileSync, rmSync, statSync, writeFileSync, openSync, writeSync, closeSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { dirname, join } from 'node:path';
import { fileURLToPath } from 'node:url';

const here = dirname(fileURLToPath(import.meta.url));
const root = join(here, '..');
const bin = join(root, 'bin', 'mcptap.js');
const arg = (name, fallback) => {
  const i = process.argv.indexOf(name);
  return i === -1 ? fallback : Number(process.argv[i + 1]);
};
const sizeMb = arg('--size-mb', 1024);
const smallLogs = arg('--logs', 1000);
const floodRequests = arg('--flood', 500_000);

const trip = ['ollama', 'weather'].map((name) => readFileSync(join(root, 'fixtures', 'captures', 'roundtrip', `${name}.ndjson`), 'utf8').split('\n').filter(Boolean).map((l) => JSON.parse(l)));
const tripStart = Math.min(...trip.flat().map((r) => r.time));
const tripEnd = Math.max(...trip.flat().map((r) => r.time));

/** The round trip's records again, as copy `n`: its own sessions and exchanges, later in time. */
function copy(n) {
  const shift = n * (tripEnd - tripStart + 1000);
  return trip.map((records) =>
    records.map((r) => ({ ...r, time: r.time + shift, session: `${r.session}-${n}`, ...(r.exchange !== undefined ? { exchange: `${r.exchange}-${n}` } : {}) })),
  );
}

function bigLog(dir) {
  const file = join(dir, 'big.ndjson');
  const fd = openSync(file, 'w');
  let bytes = 0;
  for (let n = 0; bytes < sizeMb * 1024 * 1024; n++) {
    // One log holding both sides, merged by time, as a folder read back would give them.
    const text = copy(n).flat().sort((a, b) => a.time - b.time).map((r) => JSON.stringify(r)).join('\n') + '\n';
    writeSync(fd, text);
    bytes += Buffer.byteLength(text);
  }
  closeSync(fd);
  return file;
}

function manyLogs(dir) {
  const folder = join(dir, 'many');
  mkdirSync(folder);
  for (let n = 0; n < smallLogs / 2; n++) {
    copy(n).forEach((records, i) => writeFileSync(join(folder, `${i === 0 ? 'ollama' : 'weather'}-${String(n).padStart(5, '0')}.ndjson`), records.map((r) => JSON.stringify(r)).join('\n') + '\n'));
  }
  return folder;
}

function floodLog(dir, name, server) {
  const folder = join(dir, name);
  const call = (id) => JSON.stringify({ jsonrpc: '2.0', id, method: 'tools/call', params: { name: 'get_weather', arguments: { location: 'California' } } });
  const input = Array.from({ length: floodRequests }, (_, id) => call(id)).join('\n') + '\n';
  spawnSync(process.execPath, [bin, '--log-dir', folder, '--', ...server], { input, stdio: ['pipe', 'ignore', 'ignore'], maxBuffer: 1 << 30 });
  return folder;
}

/** Max RSS (MB) and wall time (s) of one command, from GNU time; its output goes nowhere. */
function measure(args) {
  // check exits 1 when a capture shows something to fail on: the figures are the same.
  const run = spawnSync('/usr/bin/time', ['-f', '%M %e', process.execPath, bin, ...args], { stdio: ['ignore', 'ignore', 'pipe'], maxBuffer: 1 << 26 });
  const [kb, seconds] = run.stderr.toString().trim().split('\n').at(-1).split(' ').map(Number);
  return { rssMb: kb / 1024, seconds };
}

const dir = mkdtempSync(join(tmpdir(), 'mcptap-bench-readers-'));
try {
  const big = bigLog(dir);
  const many = manyLogs(dir);
  const flood = floodLog(dir, 'flood', ['cat']);
  const answered = floodLog(dir, 'answered', [process.execPath, join(here, 'echo-server.mjs')]);
  const inputs = [
    [`one log of ${(statSync(big).size / 1024 / 1024).toFixed(0)} MB`, big],
    [`${smallLogs} logs of ${(trip.flat().length / 2).toFixed(0)} records`, many],
    [`a flood to cat, ${floodRequests.toLocaleString('en')} calls`, flood],
    [`a flood answered, ${floodRequests.toLocaleString('en')} calls`, answered],
  ];
  const commands = [
    ['view', (p) => ['view', '--no-color', p]],
    ['view html', (p) => ['view', '--format', 'html', '-o', join(dir, 'out.html'), p]],
    ['check', (p) => ['check', '--no-color', p]],
    ['export har', (p) => ['export', '--format', 'har', '-o', join(dir, 'out.har'), p]],
    ['export otlp', (p) => ['export', '--format', 'otlp', '-o', join(dir, 'out.json'), p]],
  ];
  const rows = [];
  for (const [what, path] of inputs) {
    for (const [name, args] of commands) {
      const result = measure(args(path));
      rows.push(`| ${what} | ${name} | ${result.rssMb.toFixed(0)} | ${result.seconds.toFixed(1)} |`);
      process.stderr.write(`${rows.at(-1)}\n`);
    }
  }
  process.stdout.write(['| logs | command | peak RSS MB | time s |', '|---|---|---|---|', ...rows].join('\n') + '\n');
} finally {
  if (!process.argv.includes('--keep')) rmSync(dir, { recursive: true, force: true });
}
