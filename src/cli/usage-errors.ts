/**
 * yargs' complaints about a command line, turned into one sentence that names the mistake and the fix
 * ("Unknown arguments: bogus-flag, bogusFlag" → "unknown option --bogus-flag; did you mean --log-dir?").
 * Pure: the complaint, the words typed and the options the command knows in, the sentence out.
 */

/** What a command accepts, as yargs' getOptions() describes it. */
export interface KnownOptions {
  key: Record<string, unknown>;
  alias: Record<string, string[]>;
  boolean: string[];
}

/** The sentence for a usage mistake. `command` is the command's name as typed (`view`), or '' for the wrap. */
export function usageSentence(message: string, words: readonly string[], command: string, known: KnownOptions | undefined): string {
  const where = command === '' ? 'mcptap' : `mcptap ${command}`;
  const name = command === '' ? 'mcptap' : command;
  if (known) {
    const unknown = firstUnknownOption(words, known);
    if (unknown) return unknownOptionSentence(unknown, known, where);
  }
  const choices = /Argument: (\S+), Given: "(.*)", Choices: (.*)/.exec(message);
  if (choices) return `--${choices[1]} must be one of ${choices[3]!.replace(/"/g, '')}, not "${choices[2]}".`;
  const missing = /^Missing required argument: (\S+)\n?(.*)/s.exec(message);
  if (missing) return missing[2] ? `${name} needs --${missing[1]}, ${missing[2].replace(/\.?$/, '.')}` : `${name} needs --${missing[1]}; see ${where} --help.`;
  const bare = /^Not enough arguments following: (\S+)/.exec(message);
  if (bare) return `--${bare[1]} needs a value after it; see ${where} --help.`;
  const extra = /^Unknown arguments?: ([^,\s]+)/.exec(message);
  if (extra) return `${name} does not take "${extra[1]}"; see ${where} --help for what it takes.`;
  return `${message.replace(/\n+/g, ' ')}; see ${where} --help.`;
}

/** The first word that looks like an option (`--x`, `--x=1`, `-x`) and that the command does not know. */
export function firstUnknownOption(words: readonly string[], known: KnownOptions): string | undefined {
  const names = knownNames(known);
  for (const word of words) {
    if (word === '--') break;
    if (!word.startsWith('-') || word === '-' || /^-\d/.test(word)) continue;
    const name = word.replace(/^--?/, '').replace(/=.*$/s, '');
    if (word.startsWith('--') ? !names.has(name) && !(name.startsWith('no-') && known.boolean.includes(name.slice(3))) : ![...name].every((c) => names.has(c))) {
      return word.replace(/=.*$/s, '');
    }
  }
  return undefined;
}

/** Words yargs lists among the options that are not worth suggesting: the commands' positionals, help and version. */
const NOT_LISTED = new Set(['help', 'version', 'logs', 'logDir', 'a', 'b']);

function unknownOptionSentence(option: string, known: KnownOptions, where: string): string {
  const typed = option.replace(/^--?/, '');
  const options = Object.keys(known.key).filter((k) => k.length > 1 && !/[A-Z]/.test(k) && !NOT_LISTED.has(k));
  const near = nearest(typed, options);
  if (near !== undefined) return `unknown option ${option}; did you mean --${near}?`;
  return `unknown option ${option}; ${where} takes ${options.map((o) => `--${o}`).join(', ')} (${where} --help says what each does).`;
}

function knownNames(known: KnownOptions): Set<string> {
  const names = new Set(Object.keys(known.key));
  for (const [key, aliases] of Object.entries(known.alias)) {
    names.add(key);
    for (const a of aliases) names.add(a);
  }
  return names;
}

/** The option closest to what was typed, when it is close enough to be a slip (at most a third of it differs). */
function nearest(typed: string, options: readonly string[]): string | undefined {
  let best: string | undefined;
  let bestDistance = Infinity;
  for (const option of options) {
    const d = editDistance(typed.toLowerCase(), option);
    if (d < bestDistance) [best, bestDistance] = [option, d];
  }
  return best !== undefined && (bestDistance <= Math.max(1, Math.floor(best.length / 3)) || best.startsWith(typed) || typed.startsWith(best)) ? best : undefined;
}

function editDistance(a: string, b: string): number {
  let previous = Array.from({ length: b.length + 1 }, (_, j) => j);
  for (let i = 1; i <= a.length; i++) {
    const row = [i];
    for (let j = 1; j <= b.length; j++) row.push(Math.min(previous[j]! + 1, row[j - 1]! + 1, previous[j - 1]! + (a[i - 1] === b[j - 1] ? 0 : 1)));
    previous = row;
  }
  return previous[b.length]!;
}
