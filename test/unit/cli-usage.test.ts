/**
 * The command line as people type it: mcptap's options up to the first word that is not one, the server's
 * command after it (wrap-flags.ts), and one sentence for each mistake (usage-errors.ts, wrap.ts).
 */
import yargs from 'yargs';
import { describe, expect, it } from 'vitest';
import { isOnPath, mistypedCommand, notFoundSentence, splitCommandLine, WRAP_VALUE_OPTIONS } from '../../src/cli/wrap-flags.js';
import { usageSentence, type KnownOptions } from '../../src/cli/usage-errors.js';
import { wrapOptions } from '../../src/cli/wrap.js';

describe('splitCommandLine', () => {
  it('takes options up to the first word that is not one, and the rest as the server', () => {
    expect(splitCommandLine(['--log-dir', 'D', 'node', 'server.js', '--port', '3'])).toEqual({ own: ['--log-dir', 'D'], wrapped: ['node', 'server.js', '--port', '3'] });
    expect(splitCommandLine(['python', 'weather.py'])).toEqual({ own: [], wrapped: ['python', 'weather.py'] });
    expect(splitCommandLine(['--no-redact', '--name=w', 'npx', '-y', 'pkg', '--', 'x'])).toEqual({ own: ['--no-redact', '--name=w'], wrapped: ['npx', '-y', 'pkg', '--', 'x'] });
    expect(splitCommandLine(['stdio', '--max-body', '10', 'cat'])).toEqual({ own: ['stdio', '--max-body', '10'], wrapped: ['cat'] });
  });

  it('still ends the options at --, so a server may be called view', () => {
    expect(splitCommandLine(['--log-dir', 'D', '--', 'node', 'server.js'])).toEqual({ own: ['--log-dir', 'D'], wrapped: ['node', 'server.js'] });
    expect(splitCommandLine(['--', 'view', 'x'])).toEqual({ own: [], wrapped: ['view', 'x'] });
  });

  it('leaves the words of mcptap commands to them', () => {
    expect(splitCommandLine(['view', '--format', 'json', 'logs/'])).toEqual({ own: ['view', '--format', 'json', 'logs/'] });
    expect(splitCommandLine(['replay', 'x.ndjson', '--', 'y'])).toEqual({ own: ['replay', 'x.ndjson'], wrapped: ['y'] });
    expect(splitCommandLine(['--help'])).toEqual({ own: ['--help'], wrapped: [] });
  });

  it('knows every wrap option that takes a value', () => {
    const options = (wrapOptions(yargs([])) as unknown as { getOptions(): { string: string[]; number: string[] } }).getOptions();
    const valued = [...options.string, ...options.number].filter((k) => k.includes('-') || k === 'name').map((k) => `--${k}`);
    expect(new Set(valued)).toEqual(WRAP_VALUE_OPTIONS);
  });

  it('finds programs on PATH, and leaves paths to the spawn', () => {
    expect(isOnPath('node', { PATH: `/nowhere:${process.execPath.replace(/\/[^/]+$/, '')}` })).toBe(true);
    expect(isOnPath('frobnicate', { PATH: '/usr/bin:/bin' })).toBe(false);
    expect(isOnPath('./server.sh', { PATH: '' })).toBe(true);
  });
});

describe('usage sentences', () => {
  const wrap: KnownOptions = { key: { help: true, version: true, 'log-dir': true, logDir: true, name: true, redact: true }, alias: { h: ['help'] }, boolean: ['help', 'version', 'redact'] };
  const view: KnownOptions = { key: { help: true, logs: true, format: true, out: true }, alias: { f: ['format'], o: ['out'] }, boolean: ['help'] };

  it('names an unknown option and the one meant, or lists the options', () => {
    expect(usageSentence('Unknown arguments: logdir', ['--logdir', 'D'], '', wrap)).toBe('unknown option --logdir; did you mean --log-dir?');
    expect(usageSentence('Unknown arguments: bogus-flag, bogusFlag', ['--bogus-flag'], '', wrap)).toBe(
      'unknown option --bogus-flag; mcptap takes --log-dir, --name, --redact (mcptap --help says what each does).',
    );
    expect(usageSentence('Unknown argument: bogus', ['view', '--bogus', 'logs/'], 'view', view)).toBe('unknown option --bogus; mcptap view takes --format, --out (mcptap view --help says what each does).');
    expect(usageSentence('Unknown argument: fromat', ['view', '--fromat=json'], 'view', view)).toBe('unknown option --fromat; did you mean --format?');
  });

  it('knows --no-x of a switch, aliases and short flags', () => {
    expect(usageSentence('x', ['--no-redact', '-h'], '', wrap)).toBe('x; see mcptap --help.');
    expect(usageSentence('Unknown argument: z', ['view', '-z', 'logs/'], 'view', view)).toMatch(/^unknown option -z; mcptap view takes/);
  });

  it('says the values a choice takes, what a command needs, what it does not take', () => {
    expect(usageSentence('Invalid values:\n  Argument: format, Given: "nope", Choices: "pretty", "json"', ['view'], 'view', view)).toBe('--format must be one of pretty, json, not "nope".');
    expect(usageSentence('Missing required argument: older-than\nfor example --older-than 7d', ['prune'], 'prune', undefined)).toBe('prune needs --older-than, for example --older-than 7d.');
    expect(usageSentence('Unknown argument: extra', ['demo', 'extra'], 'demo', { key: { help: true }, alias: {}, boolean: [] })).toBe('demo does not take "extra"; see mcptap demo --help for what it takes.');
    expect(usageSentence('Not enough arguments following: name', ['--name'], '', undefined)).toBe('--name needs a value after it; see mcptap --help.');
  });

  it('a word that is neither a command nor a program gets the commands and the nearest one', () => {
    expect(notFoundSentence('frobnicate')).toBe(
      "frobnicate is neither an mcptap command nor a program on PATH; the commands are stdio, view, replay, check, diff, http, demo, prune, export, ui, and mcptap [options] <program> [args...] wraps a server (give the program's full path if PATH lacks it).",
    );
    expect(notFoundSentence('veiw')).toMatch(/^veiw is neither an mcptap command nor a program on PATH \(did you mean mcptap view\?\); the commands are/);
    expect(notFoundSentence('exprot')).toContain('(did you mean mcptap export?)');
  });

  it('only a first word can be a mistyped command: after an option or --, it is a server that failed to start', () => {
    const env = { PATH: '/usr/bin:/bin' };
    expect(mistypedCommand(['frobnicate'], env)).toMatch(/^frobnicate is neither/);
    expect(mistypedCommand(['--log-dir', 'D', 'frobnicate'], env)).toBeUndefined();
    expect(mistypedCommand(['--', 'frobnicate'], env)).toBeUndefined();
    expect(mistypedCommand(['view', 'x'], env)).toBeUndefined();
    expect(mistypedCommand(['./frobnicate'], env)).toBeUndefined();
  });
});
