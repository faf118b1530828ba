/**
 * `mcptap [options] -- <command> [args...]` (also `mcptap stdio ... -- <command>`): wrap a stdio MCP server.
 * A thin layer over startStdioTap: flags in, exit code out.
 */
import type { Argv } from 'yargs';
import { startStdioTap, DEFAULT_MAX_BODY } from '../index.js';
import { fail, type CliContext, type RegisterCommand } from './shared.js';
import { McptapError } from '../types.js';

const FORWARDED_SIGNALS: NodeJS.Signals[] = ['SIGINT', 'SIGTERM', 'SIGHUP'];

function wrapOptions(y: Argv): Argv {
  return y
    .option('log-dir', { type: 'string', describe: 'Folder for the log (default: $MCPTAP_LOG_DIR, else ./logs, else a per-user folder)' })
    .option('name', { type: 'string', describe: 'Label for the log file and records (default: the command or script name)' })
    .option('max-body', { type: 'number', default: DEFAULT_MAX_BODY, describe: 'Keep at most this many bytes of one frame in the log (traffic is never cut)' })
    .example('$0 -- python weather.py', 'Wrap a Python MCP server; the log goes to ./logs')
    .example('$0 --name weather --log-dir /tmp/mcp -- npx -y @modelcontextprotocol/server-everything', 'Wrap an npx server with a label and a log folder')
    .example('"args": ["-y", "mcptap", "--", "python", "weather.py"]', 'In an mcpServers entry: command "npx" with these args');
}

function run(argv: Record<string, unknown>, context: CliContext): void {
  const [command, ...args] = context.wrapped;
  if (!command) {
    fail(new McptapError('NO_COMMAND', 'nothing to wrap. Put the MCP server\u2019s command after --, for example: mcptap -- python weather.py'), 2);
  }
  const maxBody = argv['max-body'] as number;
  if (!Number.isFinite(maxBody) || maxBody < 0) {
    fail(new McptapError('BAD_FLAG', `--max-body must be a number of bytes (0 or more), not ${String(argv['max-body'])}.`), 2);
  }
  const tap = startStdioTap({
    command,
    args,
    ...(typeof argv['log-dir'] === 'string' ? { logDir: argv['log-dir'] } : {}),
    ...(typeof argv.name === 'string' ? { label: argv.name } : {}),
    maxBody,
  });
  for (const signal of FORWARDED_SIGNALS) process.on(signal, () => tap.signal(signal));
  void tap.exited.then(({ exitCode }) => {
    // Let what the child wrote reach the client before leaving; stdin may still be open, so exit explicitly.
    process.stdout.write('', () => process.exit(exitCode));
  });
}

export const registerWrap: RegisterCommand = (cli, context) =>
  cli
    .command('$0', 'Wrap a stdio MCP server: mcptap [options] -- <command> [args...]', wrapOptions, (argv) => run(argv, context))
    .command('stdio', 'Same as the default command: wrap a stdio MCP server', wrapOptions, (argv) => run(argv, context));
