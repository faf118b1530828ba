/**
 * What every command shares: how it is registered, and how it reports a failure to the user.
 */
import type { Argv } from 'yargs';
import { McptapError } from '../types.js';

/** What main.ts hands each command: the words after `--` (the command to wrap), if any. */
export interface CliContext {
  wrapped: string[];
}

/** Each command file exports one of these; main.ts calls them in turn. */
export type RegisterCommand = (cli: Argv, context: CliContext) => Argv;

/** Failures that mean the command line asked for something impossible, or the logs could not be read: exit 2. */
const EXIT_2 = new Set([
  'LOG_NOT_FOUND',
  'NO_LOGS',
  'NOT_A_LOG',
  'EMPTY_LOG',
  'NO_MCP_SESSION',
  'NO_SUCH_SESSION',
  'NO_HTTP_EXCHANGES',
  'LOG_DIR_NOT_FOUND',
  'LOG_DIR_UNREADABLE',
  'NO_COMMAND',
  'NO_SUCH_COMMAND',
]);

/**
 * Print a failure as one plain sentence and exit. Only the CLI exits; the library throws McptapError. Without an
 * exit code: 2 for a bad flag or value (`BAD_…`) and for logs that cannot be read, else 1.
 */
export function fail(error: unknown, exitCode?: number): never {
  // The reader of the output went away (`| head`): what it wanted it has; nothing to say.
  if (error instanceof McptapError && error.code === 'OUTPUT_CLOSED') process.exit(0);
  // A bug of mcptap's own is still one sentence; the stack is for a bug report, on request.
  const stack = process.env.MCPTAP_DEBUG ? `\n${(error as Error)?.stack ?? ''}` : ' (this is a bug in mcptap: run again with MCPTAP_DEBUG=1 for the details to report)';
  const message = error instanceof McptapError ? error.message : `unexpected error: ${(error as Error)?.message ?? String(error)}${stack}`;
  process.stderr.write(`mcptap: ${message}\n`);
  process.exit(exitCode ?? (error instanceof McptapError && (error.code.startsWith('BAD_') || EXIT_2.has(error.code)) ? 2 : 1));
}

/** The log files and folders a reading command was given, or the sentence saying it needs some (exit 2). */
export function logPaths(argv: Record<string, unknown>, command: string, name = 'logs'): string[] {
  const paths = ([] as unknown[]).concat(argv[name] ?? []).map(String);
  if (paths.length === 0) fail(new McptapError('BAD_USAGE', `${command} needs a log file or a folder of logs, for example: mcptap ${command} logs/`));
  return paths;
}

/** Print a note of the folder walk (a link loop skipped, a pipe refused) on stderr. */
export function printNote(note: string): void {
  process.stderr.write(`mcptap: ${note}\n`);
}

/** Colour on when stdout is a terminal and NO_COLOR is unset, unless a flag says otherwise. */
export function wantColor(flag: boolean | undefined): boolean {
  if (flag !== undefined) return flag;
  return Boolean(process.stdout.isTTY) && !process.env.NO_COLOR;
}
