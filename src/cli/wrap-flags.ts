/**
 * What the wrap's fast path needs before the tap is loaded: where mcptap's own words end and the server's command
 * begins, its flags read by hand (so that entry.ts can recognise a plain `mcptap [flags] server …` and spawn the
 * server before it loads anything else), and the signals it forwards to the server.
 */
import { accessSync, constants } from 'node:fs';
import { delimiter, join } from 'node:path';
import type { LogSafetyFlags } from './log-options.js';
import { COMMAND_NAMES } from './commands.js';

/** The wrap's options that take a value (the others are switches): the word after one is its value, not the server. */
export const WRAP_VALUE_OPTIONS: ReadonlySet<string> = new Set(['--log-dir', '--name', '--max-body', '--otlp-endpoint', '--redact-key', '--redact-pattern', '--max-log-mb', '--max-log-files']);

/**
 * The sentence for a command line whose first word is neither a command of mcptap nor a program PATH has
 * (`mcptap veiw logs/`, `mcptap frobnicate`), else undefined. Only a first word: after an option or `--` the word
 * is plainly a server's command, and a server that cannot start is logged and exits 127 like a shell's.
 */
export function mistypedCommand(argv: readonly string[], env: NodeJS.ProcessEnv = process.env): string | undefined {
  const first = argv[0];
  if (first === undefined || first.startsWith('-') || COMMAND_NAMES.includes(first) || isOnPath(first, env)) return undefined;
  return notFoundSentence(first);
}

/** mcptap's own words and, for a wrap, the server's command line (undefined when the words name another command). */
export interface SplitCommandLine {
  own: string[];
  wrapped?: string[];
}

/**
 * Split a command line as `env`, `nice` and `npx` do: mcptap's options up to the first word that is not an option,
 * and from that word on, the server's command, untouched (`mcptap --log-dir D node server.js --port 3`). `--` still
 * ends mcptap's options (`mcptap -- node server.js`). A first word naming a command of mcptap (`view`, `http`, …)
 * is that command, with only `--` marking words that are not its own.
 */
export function splitCommandLine(argv: readonly string[]): SplitCommandLine {
  const separator = argv.indexOf('--');
  const first = argv[0];
  if (first !== undefined && first !== 'stdio' && COMMAND_NAMES.includes(first)) {
    return separator === -1 ? { own: [...argv] } : { own: argv.slice(0, separator), wrapped: argv.slice(separator + 1) };
  }
  let i = first === 'stdio' ? 1 : 0;
  while (i < argv.length) {
    const word = argv[i]!;
    if (word === '--') return { own: argv.slice(0, i), wrapped: argv.slice(i + 1) };
    if (!word.startsWith('-') || word === '-') return { own: argv.slice(0, i), wrapped: argv.slice(i) };
    i += WRAP_VALUE_OPTIONS.has(word) ? 2 : 1;
  }
  return { own: [...argv], wrapped: [] };
}

/**
 * Whether spawning `command` can find it: a path is left to the spawn to judge; a bare name must be a file in a
 * PATH folder (with a PATHEXT ending on Windows).
 */
export function isOnPath(command: string, env: NodeJS.ProcessEnv = process.env): boolean {
  if (command.includes('/') || command.includes('\\')) return true;
  const endings = process.platform === 'win32' ? ['', ...(env.PATHEXT ?? '.EXE;.CMD;.BAT;.COM').split(';')] : [''];
  for (const folder of (env.PATH ?? env.Path ?? '').split(delimiter)) {
    if (folder === '') continue;
    for (const ending of endings) {
      try {
        accessSync(join(folder, command + ending), constants.F_OK);
        return true;
      } catch {
        // not in this folder
      }
    }
  }
  return false;
}

/** Signals mcptap passes on to the wrapped server (and its process group). */
export const FORWARDED_SIGNALS: readonly NodeJS.Signals[] = ['SIGINT', 'SIGTERM', 'SIGHUP'];

/** The wrap command's flags, parsed. */
export interface WrapFlags {
  logDir?: string;
  name?: string;
  maxBody?: number;
  /** OTLP/HTTP receiver to stream spans to while running (--otlp-endpoint). */
  otlpEndpoint?: string;
  /** Redaction and size-cap flags (only through yargs; see log-options.ts). */
  safety?: LogSafetyFlags;
}

/** For a first word that is neither a command of mcptap nor a program: the commands, the nearest one, the wrap form. */
export function notFoundSentence(word: string): string {
  const near = COMMAND_NAMES.find((name) => sameLettersNearly(word.toLowerCase(), name));
  const guess = near !== undefined ? ` (did you mean mcptap ${near}?)` : '';
  return `${word} is neither an mcptap command nor a program on PATH${guess}; the commands are ${COMMAND_NAMES.join(', ')}, and mcptap [options] <program> [args...] wraps a server (give the program's full path if PATH lacks it).`;
}

/** A slip: the same length give or take one, and at most two letters different or swapped. */
function sameLettersNearly(a: string, b: string): boolean {
  if (Math.abs(a.length - b.length) > 1) return false;
  const sorted = (s: string): string => [...s].sort().join('');
  if (a.length === b.length && sorted(a) === sorted(b)) return true;
  let i = 0;
  while (i < a.length && a[i] === b[i]) i++;
  let j = 0;
  while (j < a.length - i && a[a.length - 1 - j] === b[b.length - 1 - j]) j++;
  return Math.max(a.length, b.length) - i - j <= 2;
}

/**
 * Read the wrap flags from mcptap's own words when they are exactly what the fast path knows
 * (`[stdio] [--log-dir D] [--name N] [--max-body B] [--otlp-endpoint URL]`, also as `--flag=value`); otherwise undefined.
 */
export function parseWrapFlags(words: readonly string[]): WrapFlags | undefined {
  const flags: WrapFlags = {};
  let i = words[0] === 'stdio' ? 1 : 0;
  while (i < words.length) {
    const word = words[i]!;
    const eq = word.indexOf('=');
    const name = eq === -1 ? word : word.slice(0, eq);
    const value = eq === -1 ? words[i + 1] : word.slice(eq + 1);
    if (value === undefined) return undefined;
    if (name === '--log-dir') flags.logDir = value;
    else if (name === '--name') flags.name = value;
    else if (name === '--max-body' && /^\d+$/.test(value)) flags.maxBody = Number(value);
    else if (name === '--otlp-endpoint') flags.otlpEndpoint = value;
    else return undefined;
    i += eq === -1 ? 2 : 1;
  }
  return flags;
}
