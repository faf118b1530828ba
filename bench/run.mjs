// npm run bench: every benchmark in one go, side by side, printed as markdown tables.
// `npm run bench -- --write` also replaces docs/benchmarks.md with this run's tables; `--quick` for a smoke run.
import { cpus, totalmem } from 'node:os';
import { existsSync, readFileSync, writeFileSync } from 'node:fs';
import { dirname, join } from 'node:path';
import { fileURLToPath } from 'node:url';
import { runStdioBenchmarks } from './stdio.mjs';
import { runHttpBenchmarks } from './http.mjs';
import { runInspectBench } from './inspect.mjs';
import { runBareInspectBench } from './bare-inspect.mjs';
import { runClientsBenchmark } from './clients.mjs';

const quick = process.argv.includes('--quick');
const write = process.argv.includes('--write');
const here = dirname(fileURLToPath(import.meta.url));
const START = '<!-- npm run bench: start -->';
const END = '<!-- npm run bench: end -->';

const fmt = (n, digits = 1) => (n === undefined || Number.isNaN(n) ? '–' : Number(n).toFixed(digits));
const ratio = (a, b) => (a === undefined || b === undefined ? '–' : `${(a / b).toFixed(2)}×`);

function table(header, rows) {
  return [`| ${header.join(' | ')} |`, `|${header.map(() => '---').join('|')}|`, ...rows.map((r) => `| ${r.join(' | ')} |`)].join('\n');
}

const started = new Date();
const loadAverage = () => (process.platform === 'linux' ? readFileSync('/proc/loadavg', 'utf8').split(' ').slice(0, 3).join(' ') : 'n/a');
const loadAtStart = loadAverage();
process.stderr.write('inspection alone…\n');
// Inspection alone, on one core: three runs each, the median counting (figures per CPU second, not wall time).
const threeRuns = async (run, kind) => [await run({ kind }), await run({ kind }), await run({ kind })].sort((a, b) => a.framesPerCpuSecond - b.framesPerCpuSecond);
const inspectKinds = ['small', 'large', 'large-json'];
const inspectRuns = {};
const bareRuns = {};
for (const kind of inspectKinds) {
  inspectRuns[kind] = await threeRuns(runInspectBench, kind);
  bareRuns[kind] = await threeRuns(runBareInspectBench, kind);
}
process.stderr.write('stdio benchmarks…\n');
const stdio = await runStdioBenchmarks({ quick });
process.stderr.write('http benchmarks…\n');
const httpResult = await runHttpBenchmarks({ quick });
process.stderr.write('many clients…\n');
// Rounds of both relays in turn; per relay, the round with the median chunk lag p99 counts.
const clientRounds = [];
for (let round = 0; round < (quick ? 1 : 3); round++) clientRounds.push(await runClientsBenchmark(quick ? { clients: 20, seconds: 3 } : { clients: 100, seconds: 15 }));
const clientRows = clientRounds[0].map((row, i) => {
  const runs = clientRounds.map((r) => r[i]).sort((a, b) => a.lagP99Ms - b.lagP99Ms);
  return { ...runs[Math.floor(runs.length / 2)], spread: `${fmt(runs[0].lagP99Ms)}–${fmt(runs.at(-1).lagP99Ms)}` };
});

const bare = stdio.find((r) => r.subject === 'bare relay');
const direct = stdio.find((r) => r.subject === 'direct');
// With NODE_EXTRA_CA_CERTS set, start-up is measured twice: as this environment has it, and without it.
const withoutExtraCa = direct.medianMsWithoutExtraCa !== undefined;
const added = (r, key) => (r.subject === 'direct' ? '–' : `+${fmt(r[key] - direct[key])}`);
/** The rate columns of one stdio window (see bench/stdio.mjs), against the bare relay's in the same window. */
const RATE_HEADINGS = ['round trips msgs/s', 'vs bare relay', 'p50 µs', 'p99 µs', '64 KiB frames MB/s', 'vs bare relay'];
const rateCells = (rates, bareRates) => [
  fmt(rates.msgsPerSecond, 0),
  ratio(rates.msgsPerSecond, bareRates.msgsPerSecond),
  fmt(rates.p50us, 0),
  fmt(rates.p99us, 0),
  fmt(rates.mbPerSecond),
  ratio(rates.mbPerSecond, bareRates.mbPerSecond),
];
const stdioTable = table(
  [
    'stdio', ...RATE_HEADINGS, 'start-up ms', 'added vs direct',
    ...(withoutExtraCa ? ['start-up ms, no NODE_EXTRA_CA_CERTS', 'added vs direct'] : []),
    `peak RSS, one ${quick ? 20 : 100} MB frame`,
  ],
  stdio.map((r) => [
    r.subject,
    ...rateCells(r.warm, bare.warm),
    fmt(r.medianMs),
    added(r, 'medianMs'),
    ...(withoutExtraCa ? [fmt(r.medianMsWithoutExtraCa), added(r, 'medianMsWithoutExtraCa')] : []),
    `${fmt(r.peakRssMb)} MB`,
  ]),
);

const spread = (runs, key, digits) => `${fmt(runs[0][key], digits)}–${fmt(runs.at(-1)[key], digits)}`;
const inspectNames = { small: '200,000 small frames (≈100 B)', large: '2,000 frames of 64 KiB', 'large-json': '2,000 frames of 64 KiB, JSON quoted inside' };
const inspectTable = table(
  ['inspection alone (one process, one core)', 'frames per CPU second', 'spread of 3', 'CPU ns per byte', 'spread of 3', 'bare inspection (the floor): frames per CPU second', 'CPU ns per byte', 'mcptap vs the floor'],
  inspectKinds.map((kind) => {
    const [runs, bare] = [inspectRuns[kind], bareRuns[kind]];
    const digits = kind === 'small' ? 1 : 2;
    return [inspectNames[kind], fmt(runs[1].framesPerCpuSecond, 0), spread(runs, 'framesPerCpuSecond', 0), fmt(runs[1].nsPerByte, digits), spread(runs, 'nsPerByte', digits), fmt(bare[1].framesPerCpuSecond, 0), fmt(bare[1].nsPerByte, digits), ratio(runs[1].framesPerCpuSecond, bare[1].framesPerCpuSecond)];
  }),
);

/** `lowest–highest` of the runs' figures. */
const spreadOf = (values, digits = 1) => `${fmt(Math.min(...values), digits)}–${fmt(Math.max(...values), digits)}`;
const floodTable = table(
  ['stdio through cat', `64 KiB frames, sustained (${quick ? 300 : 1500}): MB/s`, 'spread', 'vs bare relay', `frames logged (fewest of the runs; of ${(quick ? 300 : 1500) * 4})`, 'peak RSS (highest of the runs)', `flood of ${quick ? '20,000' : '200,000'} requests: last byte back, ms`, 'exit after the last byte, ms', 'spread', 'done, ms from its start', 'frames logged', 'peak RSS'],
  stdio.map((r) => [
    r.subject,
    fmt(r.sustainedMbPerSecond),
    spreadOf(r.sustainedRuns.map((run) => run.mbPerSecond)),
    ratio(r.sustainedMbPerSecond, bare.sustainedMbPerSecond),
    // A log is complete only if every run's is: the run that logged fewest counts.
    r.sustainedRuns[0].framesLogged === undefined ? '–' : String(Math.min(...r.sustainedRuns.map((run) => run.framesLogged))),
    `${fmt(Math.max(...r.sustainedRuns.map((run) => run.peakRssMb)))} MB`,
    fmt(r.floodLastByteMs, 0),
    fmt(r.floodExitAfterMs, 0),
    spreadOf(r.floodRuns.map((run) => run.floodExitAfterMs), 0),
    fmt(r.floodTotalMs, 0),
    r.floodFramesLogged === undefined ? '–' : String(r.floodFramesLogged),
    `${fmt(r.floodPeakRssMb)} MB`,
  ]),
);

// What each process's threads spent on the median rounds (warmed-up round trips, sustained frames), until idle again.
const cpuTable = table(
  ['stdio, CPU of the process (warmed up)', 'main thread µs per round trip', 'all its threads µs per round trip', 'main thread ms per 100 MB of 64 KiB frames, sustained', 'all its threads ms per 100 MB'],
  stdio.map((r) => [r.subject === 'direct' ? 'direct (the server alone)' : r.subject, fmt(r.warm.rtMainUs), fmt(r.warm.rtAllUs), fmt(r.sustainedMainMs, 0), fmt(r.sustainedAllMs, 0)]),
);

// The same rates while each process was fresh: the first windows, before the second.
const freshTable = table(['stdio, fresh process', ...RATE_HEADINGS], stdio.map((r) => [r.subject, ...rateCells(r.fresh, bare.fresh)]));

const rows = httpResult.rows;
const bareProxy = rows.find((r) => r.subject === 'bare http-proxy');
const directHttp = rows.find((r) => r.subject === 'direct');
const httpTable = table(
  ['http', '2000-chunk streams, back to back: ms', 'vs bare http-proxy', 'one stream, from idle: ms', 'vs bare http-proxy', '2000-event SSE streams, back to back: ms', 'vs bare http-proxy', 'MCP tool calls, 90 KB SSE answers, back to back: ms', 'vs bare http-proxy', `${httpResult.sustainedN} streams back to back: not inspected whole`, 'paced: first byte ms', 'vs direct', 'paced: largest gap ms', 'chunks seen (of 51)', `${httpResult.bigStreamMb} MiB stream MB/s`, 'peak RSS'],
  rows.map((r) => [
    r.subject,
    fmt(r.streamMs),
    ratio(r.streamMs, bareProxy.streamMs),
    fmt(r.aloneStreamMs),
    ratio(r.aloneStreamMs, bareProxy.aloneStreamMs),
    fmt(r.sseStreamMs),
    ratio(r.sseStreamMs, bareProxy.sseStreamMs),
    fmt(r.mcpCallMs, 2),
    ratio(r.mcpCallMs, bareProxy.mcpCallMs),
    r.sustainedCut === undefined ? '–' : String(r.sustainedCut),
    fmt(r.pacedTtfbMs, 2),
    r.subject === 'direct' ? '–' : `+${fmt(r.pacedTtfbMs - directHttp.pacedTtfbMs, 2)}`,
    fmt(r.pacedMaxGapMs, 2),
    String(r.pacedChunksSeen),
    r.bigStreamMBps === undefined ? '–' : fmt(r.bigStreamMBps, 0),
    r.bigStreamPeakRssMb === undefined ? '–' : `${fmt(r.bigStreamPeakRssMb)} MB`,
  ]),
);

const bareClients = clientRows[0];
const clientsTable = table(
  [`${bareClients.clients} streaming clients, ${bareClients.seconds} s`, 'turns', 'errors', 'chunk lag p50 ms', 'chunk lag p99 ms', 'vs bare', 'p99 spread', 'first byte p99 ms', 'peak RSS'],
  clientRows.map((r) => [r.subject, String(r.turns), String(r.errors), fmt(r.lagP50Ms, 2), fmt(r.lagP99Ms, 2), r === bareClients ? '–' : `+${fmt(r.lagP99Ms - bareClients.lagP99Ms, 2)}`, r.spread, fmt(r.ttfbP99Ms), `${fmt(r.peakRssMb)} MB`]),
);

const machine = `${cpus().length} × ${cpus()[0]?.model ?? 'unknown CPU'}, ${(totalmem() / 2 ** 30).toFixed(0)} GiB, Node ${process.version}, ${process.platform}`;
const report = `Run ${started.toISOString()} on ${machine}${quick ? ' (--quick: smaller sizes)' : ''}, load average ${loadAtStart} at the start and ${loadAverage()} at the end.\n\n${inspectTable}\n\n${stdioTable}\n\n${cpuTable}\n\n${freshTable}\n\n${floodTable}\n\n${httpTable}\n\n${clientsTable}\n`;
process.stdout.write(`${report}\n`);

if (write) {
  // Only the side-by-side section is replaced; other sections of the document (load, redaction) stay.
  const path = join(here, '..', 'docs', 'benchmarks.md');
  const section = `${START}
## Side by side: \`npm run bench\`

\`npm run bench\` runs every figure in this section in one go, side by side, on the same machine and in the same
run (\`npm run bench -- --write\` replaces this section). These are benchmarks, not tests: CI does not gate on them.

- **inspection alone** (bench/inspect.mjs): literal frames fed to the stdio inspector in one process, as the
  channel's thread feeds it, records written to a log file: 200,000 small tools/call requests and answers,
  2,000 frames of 64 KiB of plain text, and 2,000 of 64 KiB whose text is JSON quoted inside a JSON string (a
  tool result quoting a document: every other character an escape). CPU time of the process (its fs writes
  included), not wall time: the figure holds on a busy machine better than the others. Three runs, the median
  counting. Beside it, the same frames through a bare inspection (bench/bare-inspect.mjs, the floor for any
  inspector written in JavaScript here): split lines, JSON.parse, pair each answer with its request, one line
  per frame with the frame as JSON, written in 1 MiB blocks; no annotation, no redaction.
- **stdio**: a minimal line-echo server (bench/echo-server.mjs) spawned directly; behind a bare Node pipe relay
  that parses nothing (bench/bare-relay.mjs, the floor for any Node wrapper); behind the same relay also
  writing every byte it relays, both ways, to a file (\`--tee\`, the floor for a relay that logs); behind
  \`mcptap --\` with full logging (redaction on). Round trips are sequential request → response; throughput pipelines 64 KiB frames
  echoed back; both in three rounds that take turns, the median round counting. Each process is measured
  twice, one window after the other: warmed up (the first table: 5000 round trips after 5500, 512 frames after
  512, once the relay has gone idle) and fresh (the second: 5000 round trips after 500, the first 512
  frames). A fresh Node process runs slowly while V8 compiles its hot code on helper threads that share the
  cores, and mcptap has much more code to compile than a bare relay. Start-up is spawn → answer to the first
  request; memory is the relay's peak RSS while one huge line passes through \`cat\`. Where
  NODE_EXTRA_CA_CERTS is set (this machine sets it for every process), start-up is measured again without it:
  Node 20 then reads the whole certificate store as it boots, about 90 ms for every Node process, the
  wrapper's and the server's alike. The CPU table (Linux) gives what each process's main thread and all its
  threads used for the warmed-up round trips and the sustained 64 KiB frames (the median rounds), until it had
  gone idle again, so mcptap's inspection counts whole: CPU time holds on a shared machine better than rates.
- **stdio through cat**: 1,500 pipelined 64 KiB frames (sustained: more than the pipes and the relay buffer,
  beside the 512-frame burst above), twice in one process, the second timed; the frame records mcptap's log
  holds for both, and the process's peak RSS (until 2026-12-06 this ran through the echo server, whose own
  parsing took a whole core); and a flood of 200,000 small requests written at once into \`cat\`
  (400,000 frames both ways): when the last byte is back, how long the process takes to exit after it (for
  mcptap: the log complete), when it is done counted from its start, the frames its log holds, its peak RSS.
  The median of three rounds (by the time it is done).
- **http**: an NDJSON upstream shaped like Ollama's /api/chat (bench/stream-upstream.mjs, one short word per
  chunk) reached directly; through a bare TCP relay that pipes bytes and parses nothing (bench/bare-tcp-relay.mjs,
  the floor for any relay: what a paced stream's first byte pays for one more hop on this machine); through a
  bare http-proxy (bench/bare-http-proxy.mjs); through \`mcptap http\` with
  full logging and a record per chunk; and through mitmdump in reverse mode recording flows, where installed.
  Each relay is first warmed up with three 2000-chunk streams and a paced one (a fresh Node process is slow until
  V8 has compiled its code, and mcptap has more code to compile); then three rounds take turns, each relay's seven
  runs starting once every process has gone idle. The figures are medians of all 21 runs. The 2000-chunk stream
  is timed twice: seven back to back, where each stream also pays for what a relay still does for the ones
  before it, and one at a time, each once every process has gone idle, as a chat turn comes. The same 2000
  chunks as OpenAI's SSE events (/v1/chat/completions, then \`data: [DONE]\`) are timed back to back too, and
  so are MCP tool calls: 70 a round POSTed to the MCP SDK's own Streamable HTTP server (stateless, at /mcp),
  each answered on an SSE stream with a JSON document quoted in its text, 90 KB in all. Last, 100 of the
  2000-chunk streams back to back through mcptap alone (26 MB of chunks, relayed faster than its inspection
  takes them): how many of them its log says it could not inspect whole (relayed in full, their http-end's
  uninspectedBytes).
- **many clients** (bench/clients.mjs): 100 clients loop over paced streams (50 chunks 10 ms apart) through a bare
  http-proxy, then through \`mcptap http\`, 15 s each after 2 s of warm-up; the upstream stamps each chunk as it
  writes it, so chunk lag is the time from that write to the client's read. Three rounds, the round with the
  median p99 counting.

Targets (issue 28), all with full logging on: inspection ≥ 250,000 small frames a second on one core and
≤ 2 ns a byte on 64 KiB frames beyond the write; the flood fully logged (400,000 frames) and mcptap done
≤ 2.5 s from its start; round trips ≥ 0.9× the bare relay; 64 KiB sustained ≥ 0.8× the bare relay; HTTP
stream ≤ 1.1× bare http-proxy; paced first byte ≤ direct + 1 ms; 100-client chunk lag p99 ≤ bare + 2 ms; RSS
≤ 150 MB for a 1 GiB stream and a 100 MB frame. The load average is part of every run's first line: the
machine these runs are made on is shared, and a figure taken at a load of 10 is not one taken idle.

### Latest run

${report}
${END}`;
  let doc = existsSync(path) ? readFileSync(path, 'utf8') : '# mcptap benchmarks\n';
  if (doc.includes(START) && doc.includes(END)) doc = doc.slice(0, doc.indexOf(START)) + section + doc.slice(doc.indexOf(END) + END.length);
  else {
    // First write: the section goes right after the title and its paragraph.
    const firstSection = doc.indexOf('\n## ');
    doc = firstSection === -1 ? `${doc.trimEnd()}\n\n${section}\n` : `${doc.slice(0, firstSection + 1)}${section}\n\n${doc.slice(firstSection + 1)}`;
  }
  writeFileSync(path, doc);
  process.stderr.write('wrote docs/benchmarks.md\n');
}
