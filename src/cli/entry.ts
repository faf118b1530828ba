/**
 * The process entry (bin/mcptap.js imports this). Wrapping a server is the hot start — it happens every time a
 * host launches an MCP server — so when mcptap's own words (those before the server's command) are plain wrap
 * flags, the server is spawned at once and only then is the stdio tap loaded: the server boots while mcptap
 * loads. Every other command line goes to the full CLI in main.ts.
 */
import { FORWARDED_SIGNALS, mistypedCommand, parseWrapFlags, splitCommandLine } from './wrap-flags.js';
import { spawnServer } from '../capture/spawn-server.js';
import { keepYoungGenerationSmall } from '../inspect/young-generation.js';

// Every command that relays runs through here: its inspection threads keep young generations small.
keepYoungGenerationSmall();

const argv = process.argv.slice(2);
const { own, wrapped } = splitCommandLine(argv);
const flags = wrapped === undefined || wrapped.length === 0 ? undefined : parseWrapFlags(own);
const mistyped = mistypedCommand(argv);
if (mistyped !== undefined) {
  process.stderr.write(`mcptap: ${mistyped}\n`);
  process.exit(2);
} else if (flags && wrapped) {
  const [command, ...args] = wrapped;
  // Not early with --otlp-endpoint: a bad endpoint ends mcptap before any server should start.
  const early = command !== undefined && flags.otlpEndpoint === undefined;
  // A signal while the tap loads would end mcptap at once and leave the server running: from just before the
  // spawn, signals are held for the tap.
  const held: NodeJS.Signals[] = [];
  const hold = (signal: NodeJS.Signals): void => void held.push(signal);
  if (early) for (const signal of FORWARDED_SIGNALS) process.on(signal, hold);
  const server = early ? spawnServer(command, args) : undefined;
  const { runWrap } = await import('./wrap.js');
  for (const signal of FORWARDED_SIGNALS) process.off(signal, hold);
  await runWrap(flags, wrapped, server, held);
} else {
  await import('./main.js');
}
