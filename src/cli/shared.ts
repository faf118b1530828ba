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

/** Print a failure as one plain sentence and exit. Only the CLI exits; the library throws McptapError. */
export function fail(error: unknown, exitCode = 1): never {
  const message = error instanceof McptapError ? error.message : `unexpected error: ${(error as Error)?.stack ?? String(error)}`;
  process.stderr.write(`mcptap: ${message}\n`);
  process.exit(exitCode);
}

/** Colour on when stdout is a terminal and NO_COLOR is unset, unless a flag says otherwise. */
export function wantColor(flag: boolean | undefined): boolean {
  if (flag !== undefined) return flag;
  return Boolean(process.stdout.isTTY) && !process.env.NO_COLOR;
}
