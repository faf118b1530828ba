/**
 * The mcptap command line. Each command lives in its own file and is a thin client of the library; this file
 * only splits off the wrapped command (wrap-flags.ts: from the first word that is not an option, or after `--`)
 * and hands the rest to yargs, whose complaints become one sentence each (usage-errors.ts), exit code 2.
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
import { COMMAND_NAMES, commandsFor } from './commands.js';
import { usageSentence, type KnownOptions } from './usage-errors.js';
import { splitCommandLine } from './wrap-flags.js';
import { skipHelpCache } from './help-cache.js';

const { own, wrapped } = splitCommandLine(hideBin(process.argv));
// The server's words are untouched by yargs (its `-y` is not ours).
const context: CliContext = { wrapped: wrapped ?? [] };
const command = own[0] !== undefined && COMMAND_NAMES.includes(own[0]) ? own[0] : '';
// The options of the command yargs settled on, for naming the nearest one to a mistyped option.
let known: KnownOptions | undefined;

let cli = yargs(own)
  .scriptName('mcptap')
  .usage('mcptap: see what your agent, your LLM and your MCP servers say to each other.\n\nUsage: $0 [options] <command> [args...]   wrap a stdio MCP server (also: -- <command>)\n       $0 view|check|http|… [options]      the commands below')
  .version(MCPTAP_VERSION)
  .strict()
  .help()
  .alias('h', 'help')
  .wrap(Math.min(110, process.stdout.columns || 100))
  // yargs hands a middleware the command's own instance as a second argument (its types leave it out).
  .middleware(((_argv: unknown, y: { getOptions(): KnownOptions }) => {
    known = y.getOptions();
  }) as never, true)
  .fail((message, error) => {
    if (error) throw error;
    process.stderr.write(`mcptap: ${usageSentence(message, own, command, known)}\n`);
    process.exit(2);
  });
for (const register of await commandsFor(own)) cli = register(cli, context);
skipHelpCache(cli);
await cli.parseAsync();
