/**
 * The mcptap command line. Each command lives in its own file and is a thin client of the library; this file
 * only splits off the wrapped command (everything after `--`) and hands the rest to yargs.
 *
 * Command files import the library modules they use rather than src/index.ts: a host starts `mcptap replay` and
 * `mcptap http` the way it starts a server, and loading the whole library (OpenTelemetry included) for every
 * command cost ~0.5 s before anything ran. For the same reason a command line loads only its own command's file
 * when its first word names one (commands.ts).
 */
import yargs from 'yargs';
import { hideBin } from 'yargs/helpers';
import { MCPTAP_VERSION } from '../version.js';
import type { CliContext } from './shared.js';
import { commandsFor } from './commands.js';
import { skipHelpCache } from './help-cache.js';

const argv = hideBin(process.argv);
const separator = argv.indexOf('--');
// Everything after `--` belongs to the wrapped server, untouched by yargs (its `-y` is not ours).
const context: CliContext = { wrapped: separator === -1 ? [] : argv.slice(separator + 1) };
const own = separator === -1 ? argv : argv.slice(0, separator);

let cli = yargs(own)
  .scriptName('mcptap')
  .usage('mcptap: see what your agent, your LLM and your MCP servers say to each other.\n\nUsage: $0 [options] -- <command> [args...]\n       $0 <command> [options]')
  .version(MCPTAP_VERSION)
  .strict()
  .help()
  .alias('h', 'help')
  .wrap(Math.min(110, process.stdout.columns || 100))
  .fail((message, error) => {
    if (error) throw error;
    process.stderr.write(`mcptap: ${message}\nRun mcptap --help for the commands and their options.\n`);
    process.exit(2);
  });
for (const register of await commandsFor(own)) cli = register(cli, context);
skipHelpCache(cli);
await cli.parseAsync();
