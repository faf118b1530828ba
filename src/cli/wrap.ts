/**
 * `mcptap [options] <command> [args...]` (also with `--` before the command, and as `mcptap stdio …`): wrap a
 * stdio MCP server.
 * A thin layer over startStdioTap: flags in, exit code out.
 *
 * This command starts with every MCP server a host launches, so it has a fast path (entry.ts → runWrap) that
 * reads its flags by hand and loads neither yargs nor the rest of the library. Anything the fast path
 * does not recognise (help, a typo, another command) goes through yargs as usual.
 */
import { dirname } from 'node:path';
import type { Argv } from 'yargs';
import { startStdioTap, DEFAULT_MAX_BODY } from '../capture/stdio.js';
import { McptapError } from '../types.js';
import { fail, type CliContext, type RegisterCommand } from './shared.js';
import type { LiveSpanExporter } from '../export/otlp-live.js';
import { logSafetyFromArgv, logSafetyOptions, NO_REDACT_WARNING } from './log-options.js';
import { FORWARDED_SIGNALS, type WrapFlags } from './wrap-flags.js';
import type { SpawnedServer } from '../capture/spawn-server.js';

/**
 * Start the tap, forward signals, and exit with the server's code. Without --otlp-endpoint this runs to the
 * spawn without awaiting anything; the span exporter (and the trace linker it joins spans with) is loaded only
 * when asked for, since every server start pays for what this path imports. `server` is the wrapped command
 * when entry.ts has already spawned it, and `heldSignals` the signals that came while the tap was loading.
 */
export async function runWrap(flags: WrapFlags, wrapped: readonly string[], server?: SpawnedServer, heldSignals: readonly NodeJS.Signals[] = []): Promise<void> {
  const [command, ...args] = wrapped;
  if (!command) {
    fail(new McptapError('NO_COMMAND', 'nothing to wrap. Put the MCP server\u2019s command after mcptap\u2019s options, for example: mcptap --log-dir logs python weather.py'), 2);
  }
  let live: LiveSpanExporter | undefined;
  try {
    if (flags.otlpEndpoint !== undefined) live = (await import('../export/otlp-live.js')).startLiveSpanExporter({ endpoint: flags.otlpEndpoint });
  } catch (error) {
    fail(error, 2);
  }
  const tap = startStdioTap({
    command,
    args,
    ...(flags.logDir !== undefined ? { logDir: flags.logDir } : {}),
    ...(flags.name !== undefined ? { label: flags.name } : {}),
    maxBody: flags.maxBody ?? DEFAULT_MAX_BODY,
    ...flags.safety,
    ...(live ? { onRecord: live.observe } : {}),
  }, server);
  // Live tools/call spans join the model call that asked for them, found in the LLM proxy's log in the same folder.
  live?.joinLogsIn(dirname(tap.logFile), tap.logFile);
  if (flags.safety?.redact === false) process.stderr.write(`mcptap: ${NO_REDACT_WARNING}\n`);
  for (const signal of FORWARDED_SIGNALS) process.on(signal, () => tap.signal(signal));
  for (const signal of heldSignals) tap.signal(signal);
  void tap.exited.then(async ({ exitCode }) => {
    // Spans still queued get a short, bounded chance to go out; a receiver that is down cannot hold the exit.
    await live?.close(1000);
    // Let what the child wrote reach the client before leaving; stdin may still be open, so exit explicitly.
    process.stdout.write('', () => process.exit(exitCode));
  });
}

export function wrapOptions(y: Argv): Argv {
  return logSafetyOptions(y)
    .option('log-dir', { type: 'string', describe: 'Folder for the log (default: $MCPTAP_LOG_DIR, else ./logs, else a per-user folder)' })
    .option('name', { type: 'string', describe: 'Label for the log file and records (default: the command or script name)' })
    .option('max-body', { type: 'number', default: DEFAULT_MAX_BODY, describe: 'Keep at most this many bytes of one frame in the log (traffic is never cut)' })
    .option('otlp-endpoint', { type: 'string', describe: 'Also stream OpenTelemetry spans to this OTLP/HTTP receiver, e.g. http://127.0.0.1:4318 (best-effort, never slows the traffic)' })
    .example('$0 python weather.py', 'Wrap a Python MCP server; the log goes to ./logs')
    .example('$0 --name weather --log-dir /tmp/mcp npx -y @modelcontextprotocol/server-everything', 'Wrap an npx server with a label and a log folder')
    .example('"args": ["-y", "mcptap", "--", "python", "weather.py"]', 'In an mcpServers entry: command "npx" with these args (-- is optional)');
}

async function runFromYargs(argv: Record<string, unknown>, context: CliContext): Promise<void> {
  const maxBody = argv['max-body'] as number;
  if (!Number.isInteger(maxBody) || maxBody < 0) {
    fail(new McptapError('BAD_FLAG', `--max-body must be a whole number of bytes (0 or more), not ${String(argv['max-body'])}.`), 2);
  }
  const flags: WrapFlags = { maxBody };
  try {
    flags.safety = logSafetyFromArgv(argv);
  } catch (error) {
    fail(error, 2);
  }
  if (typeof argv['log-dir'] === 'string') flags.logDir = argv['log-dir'];
  if (typeof argv.name === 'string') flags.name = argv.name;
  if (typeof argv['otlp-endpoint'] === 'string') flags.otlpEndpoint = argv['otlp-endpoint'];
  await runWrap(flags, context.wrapped);
}

export const registerWrap: RegisterCommand = (cli, context) =>
  cli
    .command('$0', 'Wrap a stdio MCP server: mcptap [options] <command> [args...]', wrapOptions, (argv) => runFromYargs(argv, context))
    .command('stdio', 'Same as the default command: wrap a stdio MCP server', wrapOptions, (argv) => runFromYargs(argv, context));
