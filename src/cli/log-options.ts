/**
 * The log-safety flags every tapping command shares (wrap and http): redaction and the size cap.
 *
 *   --no-redact              write secrets to the log as they are (a warning says so)
 *   --redact-key NAME        also hide the value of this JSON key / header / variable / flag (repeatable)
 *   --redact-pattern REGEX   also hide text matching this regular expression (repeatable)
 *   --max-log-mb N           start a new part of the log when a file reaches N MB
 *   --max-log-files K        with --max-log-mb: keep only the newest K parts
 */
import type { Argv } from 'yargs';
import { compilePattern, type RedactRules } from '../log/redact.js';
import { McptapError } from '../types.js';

/** The parsed flags, in the shape the taps take. */
export interface LogSafetyFlags {
  redact?: RedactRules | false;
  maxLogBytes?: number;
  maxLogFiles?: number;
}

/** Add the flags to a command's yargs. */
export function logSafetyOptions(y: Argv): Argv {
  return y
    .option('redact', { type: 'boolean', default: true, describe: 'Hide secrets (keys, tokens, passwords) in the log; --no-redact writes them as they are' })
    .option('redact-key', { type: 'string', array: true, describe: 'Also hide the value of this key, header, variable or flag (repeatable)' })
    .option('redact-pattern', { type: 'string', array: true, describe: 'Also hide text matching this regular expression (repeatable)' })
    .option('max-log-mb', { type: 'number', describe: 'Start a new part of the log when a file reaches this many MB' })
    .option('max-log-files', { type: 'number', describe: 'With --max-log-mb: keep only the newest this-many parts' });
}

/** Read and check the flags. Throws McptapError with a sentence for a bad value. */
export function logSafetyFromArgv(argv: Record<string, unknown>): LogSafetyFlags {
  const flags: LogSafetyFlags = {};
  const keys = strings(argv['redact-key']);
  const patterns = strings(argv['redact-pattern']);
  for (const p of patterns) compilePattern(p);
  if (argv.redact === false) {
    if (keys.length > 0 || patterns.length > 0) throw new McptapError('BAD_FLAG', '--no-redact turns redaction off, so --redact-key and --redact-pattern would do nothing. Use one or the other.');
    flags.redact = false;
  } else if (keys.length > 0 || patterns.length > 0) {
    flags.redact = { keys, patterns };
  }
  const mb = argv['max-log-mb'];
  if (mb !== undefined) {
    if (typeof mb !== 'number' || !Number.isFinite(mb) || mb <= 0) throw new McptapError('BAD_FLAG', `--max-log-mb must be a number of megabytes above 0 (for example 50), not ${String(mb)}.`);
    flags.maxLogBytes = Math.round(mb * 1024 * 1024);
  }
  const files = argv['max-log-files'];
  if (files !== undefined) {
    if (typeof files !== 'number' || !Number.isInteger(files) || files < 1) throw new McptapError('BAD_FLAG', `--max-log-files must be a whole number of files, 1 or more, not ${String(files)}.`);
    if (flags.maxLogBytes === undefined) throw new McptapError('BAD_FLAG', '--max-log-files only applies with --max-log-mb, which sets the size of each file.');
    flags.maxLogFiles = files;
  }
  return flags;
}

/** The sentence printed on stderr when redaction is off. */
export const NO_REDACT_WARNING =
  'redaction is off (--no-redact): API keys, tokens, passwords and cookies go into the log as sent. Keep the log private and delete it when done.';

function strings(value: unknown): string[] {
  if (value === undefined) return [];
  return (Array.isArray(value) ? value : [value]).map(String);
}
