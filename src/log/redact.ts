/**
 * Keeping secrets out of logs. The traffic itself is never changed: only the copy that is written to the log.
 *
 * Pure functions, and one class, Redactor, which holds the compiled rules for one log. LogWriter runs every
 * record through it (so every tap is covered); a tap only calls redactHeaders to shape headers for a record.
 */
import { RAW_PARSED, type LoggedHeaders } from './schema.js';
import { McptapError } from '../types.js';
import { escapeRegExp } from './escape-regexp.js';
import { createLiteralScanner, type LiteralScanner } from './literal-scan.js';
import { recordJson } from './record-json.js';

/** What a secret value is replaced with in the log. */
export const REDACTED = '[redacted]';

/** Header names whose values are always secret. */
const SECRET_HEADERS = new Set(['authorization', 'proxy-authorization', 'cookie', 'set-cookie', 'x-api-key', 'api-key']);
/** Any header whose name says token, secret or key carries a credential (x-goog-api-key, x-auth-token, …). */
const SECRET_NAME = /token|secret|key/i;

/** True when the log must not hold this header's value. */
export function isSecretHeader(name: string): boolean {
  const lower = name.toLowerCase();
  return SECRET_HEADERS.has(lower) || SECRET_NAME.test(lower);
}

/**
 * Headers as they go into the log: lower-case names, secret values replaced by "[redacted]" (one per value, so
 * the log still shows how many cookies were set), undefined values dropped. Pass the log's Redactor to apply
 * the user's extra rules too, or `false` when redaction is off (LogWriter exposes both as `writer.redactor`).
 */
export function redactHeaders(headers: Record<string, string | string[] | number | undefined>, redactor?: Redactor | false): LoggedHeaders {
  const out: LoggedHeaders = {};
  for (const [name, value] of Object.entries(headers)) {
    if (value === undefined) continue;
    const lower = name.toLowerCase();
    // `redactor === false` (--no-redact): names are still lower-cased, values kept as sent.
    const secret = redactor !== false && isSecretHeader(lower);
    if (Array.isArray(value)) out[lower] = secret ? value.map(() => REDACTED) : [...value];
    else out[lower] = secret ? REDACTED : String(value);
  }
  // A Redactor adds the user's --redact-key names and credential-shaped values in any header.
  return redactor ? redactor.redactHeaderValues(out) : out;
}

/**
 * A request path as it goes into the log: the values of query parameters that carry a credential (`?key=` of
 * the Gemini API, `access_token`, `api_key`, …) replaced by "[redacted]", the rest as sent. `redactor === false`
 * (--no-redact) keeps the path as it is.
 */
export function redactPathQuery(path: string, redactor?: Redactor | false): string {
  const q = path.indexOf('?');
  if (q === -1 || redactor === false) return path;
  const query = path.slice(q + 1).replace(/(^|&)([^=&]*)=([^&#]*)/g, (whole, sep: string, name: string, value: string) => {
    let decoded = name;
    try {
      decoded = decodeURIComponent(name);
    } catch {
      // a malformed escape: judge the name as written
    }
    const secret = decoded.toLowerCase() === 'key' || (redactor ? redactor.isSecretKey(decoded) : isSecretKey(decoded));
    return secret && value !== '' ? `${sep}${name}=${REDACTED}` : whole;
  });
  return `${path.slice(0, q + 1)}${query}`;
}

// ---------------------------------------------------------------------------------------------------------------
// Body, argument and stream rules. Everything a record carries passes through LogWriter, which calls
// `Redactor.redactLine` once per record; see there for how the common case stays cheap.
// ---------------------------------------------------------------------------------------------------------------

/** Extra rules from the command line (`--redact-key`, `--redact-pattern`). */
export interface RedactRules {
  /** More key names whose values are secret (compared without case, `-` or `_`: `X-Tenant-Key` = `x_tenant_key`). */
  keys?: readonly string[];
  /** More value patterns: RegExp objects or regular-expression source text. Matches are replaced by "[redacted]". */
  patterns?: readonly (string | RegExp)[];
}

/**
 * Key names (lower-cased, `-`/`_` and other punctuation removed) whose values are secret when the name ends with
 * one of these: `password`, `db_password`, `client_secret`, `GITHUB_TOKEN`, `OPENAI_API_KEY`, `x-api-key`, …
 */
const SECRET_KEY_ENDINGS = [
  'password',
  'passwd',
  'passphrase',
  'secret',
  'token',
  'apikey',
  'authorization',
  'cookie',
  'privatekey',
  'secretkey',
  'accesskey',
  'credential',
  'credentials',
];
/** Whole key names that are secret although their ending is too common to use (`pass`, `pwd`). */
const SECRET_KEYS_EXACT = new Set(['pass', 'pwd', 'auth']);
/** Names that end like a secret but are not one; redacting them would only break correlation and paging. */
const NOT_SECRET_KEYS = new Set(['progresstoken', 'pagetoken', 'nextpagetoken', 'nexttoken', 'cursortoken', 'maxtoken']);

function normalizeKey(name: string): string {
  // `api%5Fkey` (URL-encoded) and `api\u005fkey` (JSON-escaped) are `api_key`.
  const plain = name.includes('%') || name.includes('\\') ? name.replace(/%([0-9a-f]{2})|\\+u00([0-9a-f]{2})/gi, (_m, a?: string, b?: string) => String.fromCharCode(parseInt(a ?? b ?? '', 16))) : name;
  return plain.toLowerCase().replace(/[^a-z0-9]/g, '');
}

/** True when a JSON key, environment variable or flag of this name holds a secret by the default rules. */
export function isSecretKey(name: string): boolean {
  const key = normalizeKey(name);
  if (key === '' || NOT_SECRET_KEYS.has(key)) return false;
  if (SECRET_KEYS_EXACT.has(key)) return true;
  for (const ending of SECRET_KEY_ENDINGS) if (key.endsWith(ending)) return true;
  return false;
}

/**
 * Credential-shaped values, each with what of it stays visible. Case-sensitive; the look-behinds keep
 * `task-…` from reading as `sk-…`.
 */
const VALUE_PATTERNS: readonly { re: RegExp; keep?: (match: string, ...groups: string[]) => string }[] = [
  // OpenAI (sk-, sk-proj-, sk-svcacct-, sk-admin-), Anthropic (sk-ant-), DeepSeek and most "sk-" keys.
  { re: /(?<![A-Za-z0-9_-])sk-[A-Za-z0-9_-]{16,}/g },
  { re: /(?<![A-Za-z0-9_])gsk_[A-Za-z0-9]{16,}/g },
  { re: /(?<![A-Za-z0-9_])gh[pousr]_[A-Za-z0-9]{16,}/g },
  { re: /(?<![A-Za-z0-9_])github_pat_[A-Za-z0-9_]{16,}/g },
  { re: /(?<![A-Za-z0-9])xox[abposre]-[A-Za-z0-9-]{8,}/g },
  { re: /(?<![A-Za-z0-9])(?:AKIA|ASIA)[0-9A-Z]{16}(?![0-9A-Z])/g },
  { re: /(?<![A-Za-z0-9_-])AIza[0-9A-Za-z_-]{30,}/g },
  { re: /(?<![A-Za-z0-9])[rs]k_live_[0-9A-Za-z]{16,}/g },
  // JWT: base64url of '{"' starts both the header and the payload.
  { re: /(?<![A-Za-z0-9_-])eyJ[A-Za-z0-9_-]{5,}\.eyJ[A-Za-z0-9_-]{5,}\.[A-Za-z0-9_-]*/g },
  // "Bearer <token>" keeps its scheme. A token is 20+ characters, or 8+ with a digit, so prose ("bearer tokens
  // are …") stays readable.
  {
    re: /\b([Bb]earer|BEARER|[Bb]asic|BASIC)(\s+)(?!\[redacted\])(?:(?=[A-Za-z0-9._~+/=-]{0,200}\d)[A-Za-z0-9._~+/=-]{8,}|[A-Za-z0-9._~+/=-]{20,})/g,
    keep: (_m, scheme, space) => `${scheme}${space}${REDACTED}`,
  },
  // Passwords in URLs: postgres://user:pw@host keeps the user and host; redis://:pw@host has no user; JSON
  // may write the slashes escaped (https:\/\/), and a query string may carry a URL encoded (%3A%2F%2F).
  { re: /\b([a-z][a-z0-9+.-]{1,20}:\\?\/\\?\/[^/\s:@"'\\]{0,100}:)(?!\[redacted\])[^@\s"'\\/]{1,200}@/g, keep: (_m, head) => `${head}${REDACTED}@` },
  { re: /\b([a-z][a-z0-9+.-]{1,20}%3a%2f%2f[^/\s:@"'\\%&]{0,100}%3a)(?!\[redacted\])[^@\s"'\\/&]{1,200}?%40/gi, keep: (_m, head) => `${head}${REDACTED}%40` },
];

/** The same credential shapes as a prefix that a stream may complete in its next chunk. */
const DANGLING_PREFIX =
  /(?:(?<![A-Za-z0-9_-])(?:sk-|eyJ)|(?<![A-Za-z0-9_])(?:gsk_|gh[pousr]_|github_pat_)|(?<![A-Za-z0-9])(?:xox[abposre]-|AKIA|ASIA|[rs]k_live_)|(?<![A-Za-z0-9_-])AIza|\b(?:[Bb]earer|BEARER|[Bb]asic|BASIC)\s+)[A-Za-z0-9._~+/=-]*$/;
/** A URL's password still arriving (`postgres://app:hunt`): group 1 is what stays. Plain or URL-encoded. */
const DANGLING_URL_PASSWORD = /((?::|%3a)(?:\\?\/|%2f){2}[^/\s:@"'\\%]{0,100}(?::|%3a))(?:(?!%40)[^@\s"'\\/])*$/i;

// ---------------------------------------------------------------------------------------------------------------
// Cutting text short. A preview, a capped frame or a capped stderr line keeps a head; when the cut lands inside
// a key, the head keeps the key's first part, which no rule recognises any more. So a cut drops the word it
// lands in, and a credential that may go on past it (the same test a stream's piece gets, DANGLING_PREFIX).
// ---------------------------------------------------------------------------------------------------------------

/** Longest word a cut drops; of a longer one (a base64 blob) the head is kept unless it starts like a credential. */
const MAX_CUT_WORD = 128;
/** How far back from a cut a credential that runs into it is looked for. */
const DANGLING_REACH = 4096;
/** A URL's scheme, user and password, at most (DANGLING_URL_PASSWORD). */
const URL_REACH = 340;

/** Letters, digits and the punctuation keys, tokens and their encodings are made of. */
function isWordChar(code: number): boolean {
  return (
    (code >= 48 && code <= 57) || (code >= 65 && code <= 90) || (code >= 97 && code <= 122) ||
    code === 95 || code === 45 || code === 43 || code === 47 || code === 61 || code === 46 || code === 126 || code === 37
  );
}

/**
 * The first `end` characters of `text`, less what of a secret the cut would leave: the word the cut lands in
 * (when it is short enough to be a key) and any credential that may run on past the cut. `text` itself when it
 * is no longer than `end`.
 */
export function cutClean(text: string, end: number): string {
  if (end >= text.length) return text;
  let at = Math.max(0, end);
  if (at > 0 && isWordChar(text.charCodeAt(at)) && isWordChar(text.charCodeAt(at - 1))) {
    let start = at - 1;
    while (start > 0 && at - start <= MAX_CUT_WORD && isWordChar(text.charCodeAt(start - 1))) start--;
    let stop = at + 1;
    while (stop < text.length && stop - start <= MAX_CUT_WORD && isWordChar(text.charCodeAt(stop))) stop++;
    if (stop - start <= MAX_CUT_WORD) at = start;
  }
  return dropDanglingSecret(text.slice(0, at));
}

/**
 * `text` cut to at most `max` characters (an ellipsis ends a cut one), redacted by the default rules before the
 * cut: for summaries that quote a text (a stderr line, a prompt, an error body).
 */
export function shorten(text: string, max: number): string {
  if (text.length <= max) return text;
  // A secret that the cut could split lies within DANGLING_REACH of it: the rest need not be redacted here.
  const redacted = redactDefaults(cutClean(text, max + DANGLING_REACH));
  return redacted.length <= max ? redacted : `${cutClean(redacted, max - 1)}…`;
}

/**
 * A head whose text went on past its end (a capped frame, body or stderr line) without any credential that may
 * continue past that end: the same judgement a stream's piece gets when the next piece has not come yet.
 */
export function dropDanglingSecret(head: string): string {
  const at = danglingSecretAt(head);
  return at === -1 ? head : head.slice(0, at);
}

/** Where a credential that may go on past the end of `head` begins (what of it may stay kept), or -1. */
export function danglingSecretAt(head: string): number {
  // The credential runs into the end, so it lies in the last word and the few characters before (`Bearer `).
  let start = head.length;
  while (start > 0 && head.length - start < DANGLING_REACH && isWordChar(head.charCodeAt(start - 1))) start--;
  const from = Math.max(0, start - 16);
  const near = head.slice(from);
  const prefix = DANGLING_PREFIX.exec(near);
  let at = prefix ? from + prefix.index : -1;
  // A URL password may hold characters no key does (`!`, `#`): look from the last `://` (or `%3A%2F%2F`).
  const urlFrom = Math.max(0, head.length - URL_REACH);
  const last = head.slice(urlFrom);
  const url = last.includes(':/') || last.includes(':\\/') || last.includes('%') ? DANGLING_URL_PASSWORD.exec(last) : null;
  if (url) {
    const keep = urlFrom + url.index + url[1]!.length;
    if (keep < head.length && (at === -1 || keep < at)) at = keep;
  }
  return at;
}

/** Words that make the screen look closer (a secret key name followed by `:`, `=`, `,` or a flag's `--`). */
/** What may join the words of a key name: `-`, `_` or a space, also URL-encoded (`%5F`) or JSON-escaped (`\u005f`). */
const JOIN = String.raw`(?:[-_ ]|%5f|%2d|\\+u00(?:5f|2d))`;
const KEY_WORDS = String.raw`passw(?:or)?d|passphrase|secret|(?<!progress|page|next)token|api${JOIN}?key|authorization|cookie|private${JOIN}?key|access${JOIN}?key|credential`;
/** A flag or variable name that ends in a key word: `--api-key`, `-x-auth-token`. */
const FLAG_SCREEN = String.raw`--?[\w-]{0,40}(?:${KEY_WORDS})`;
/**
 * FLAG_SCREEN read from its key word on, the dashes before it checked by a look-behind once the key word is
 * there: it finds a match in the same texts, but the match begins at the key word, within SCREEN_REACH
 * characters of one of PRESCREEN_LITERALS.
 */
const FLAG_SCREEN_FROM_KEY_WORD = String.raw`(?:${KEY_WORDS})(?<=--?[\w-]{0,40}(?:${KEY_WORDS}))`;
/** Cheap look at any text: could it hold a secret? False means certainly not (by the default rules). */
export const SCREEN_SOURCE = [
  String.raw`(?:${KEY_WORDS})s?(?:\\*["']?\s*[:=,])`,
  FLAG_SCREEN,
  String.raw`"(?:pass|pwd|auth)\\*"`,
  String.raw`(?<![A-Za-z0-9_-])(?:sk-|gsk_|gh[pousr]_|github_pat_|xox[abposre]-|AKIA|ASIA|AIza|[rs]k_live_|eyJ)`,
  String.raw`\b(?:bearer|basic)\s`,
  String.raw`:\/\/[^/\s:@"'\\]{0,100}:[^@\s"'\\/]{1,200}@`,
  String.raw`:\\+\/\\+\/[^/\s:@"'\\]{0,100}:[^@\s"'\\/]{1,200}@`,
  String.raw`%3a%2f%2f[^/\s:@"'\\%]{0,100}%3a[^@\s"'\\/]{1,200}?%40`,
  // Secret header names appear as JSON keys in `headers`.
  String.raw`(?:x-api-key|api-key)\\*"`,
].join('|');

/**
 * Literals at least one of which every SCREEN_SOURCE alternative contains (case-insensitive): a text without
 * any of them cannot pass the screen. Keep them in step with SCREEN_SOURCE and KEY_WORDS, and PRESCREEN_GROUPS
 * with them (a test checks that they find the same).
 *
 * They come in the scanner's eight buckets (literal-scan.ts). A bucket lets any mix of its literals' bytes through
 * to the regex that checks a candidate, so they are grouped to make few candidates that are none, in what the
 * prescreen reads most: records. The punctuation-first literals have two buckets of their own (mixed with
 * letters, they let JSON's `","` and `":"` through); a local search over the lines of fixtures/captures/ and
 * docs/ placed the rest (candidates per 1000 characters of records: 32.6 → 4.2; of docs: 13.3 → 7.7).
 */
export const PRESCREEN_BUCKETS: readonly (readonly string[])[] = [
  ['ghp_', 'gho_', 'ghs_', 'ghu_', 'ghr_', 'github_pat_', 'aiza'],
  ['token', 'sk-', 'xox'],
  ['pass', 'sk_', 'basic'],
  ['secret', 'cookie', 'credential'],
  ['key', 'akia', 'asia', 'auth', 'bearer'],
  ['pwd', 'k_live_', 'eyj', 'u005f', 'u002d'],
  ['://', '\\/\\'],
  ['%2f', '%5f', '%2d'],
];
export const PRESCREEN_LITERAL_LIST: readonly string[] = PRESCREEN_BUCKETS.flat();
/** PRESCREEN_LITERAL_LIST as regular-expression source. */
export const PRESCREEN_LITERALS = PRESCREEN_LITERAL_LIST.map(escapeRegExp).join('|');

/**
 * PRESCREEN_LITERALS as six regexes of a few literals each: the prescreen of long texts where there is no scanner
 * (literal-scan.ts), and how screenNearLiterals finds every place a literal begins. One regex of all the literals
 * tries each of them at every character; a regex of a few can skip ahead between the places where one of its
 * literals could start, and six of them together cost less (docs/benchmarks.md, "Redaction cost per record").
 */
const PRESCREEN_GROUPS = [
  /pass|pwd|token/i,
  /secret|sk[-_]|cookie/i,
  /k(?:ey|_live_)|credential/i,
  /a(?:uth|kia|sia|iza)/i,
  /gh[pousr]_|github_pat_|xox/i,
  /eyj|b(?:earer|asic)|:\/\//i,
  /\\\/\\|%(?:2f|5f|2d)|u00(?:5f|2d)/i,
];

/**
 * PRESCREEN_LITERALS as one regex, for short texts: a streamed piece and its edge, a few dozen characters, where
 * calling six regexes, or copying the text for the scanner, costs more than reading it.
 */
const PRESCREEN_AT_ONCE = new RegExp(PRESCREEN_LITERALS, 'i');
/** Texts up to this long are screened with PRESCREEN_AT_ONCE (where it and the scanner measured about the same). */
const SHORT_TEXT_CHARS = 64;

/**
 * The search for PRESCREEN_LITERALS sixteen characters at a time (literal-scan.ts), made on first use: about five
 * times as fast as PRESCREEN_GROUPS on long texts. Null where WebAssembly SIMD is not available.
 */
let scanner: LiteralScanner | null | undefined;
function prescreenScanner(): LiteralScanner | null {
  scanner ??= createLiteralScanner(PRESCREEN_BUCKETS) ?? null;
  return scanner;
}

/** True when `text` holds any of PRESCREEN_LITERALS: it might hold a secret. False is certain. */
export function holdsPrescreenLiteral(text: string): boolean {
  if (text.length <= SHORT_TEXT_CHARS) return PRESCREEN_AT_ONCE.test(text);
  return prescreenScanner()?.holdsAny(text) ?? holdsPrescreenLiteralByGroups(text);
}

/** holdsPrescreenLiteral where there is no scanner: PRESCREEN_GROUPS in turn. */
export function holdsPrescreenLiteralByGroups(text: string): boolean {
  for (const group of PRESCREEN_GROUPS) if (group.test(text)) return true;
  return false;
}

/** The longest of PRESCREEN_LITERALS (`github_pat_`). */
export const PRESCREEN_LONGEST = 11;

/**
 * The screen for long texts, tried only where a match could begin (screenNearLiterals): SCREEN_SOURCE with
 * FLAG_SCREEN read from its key word, so that every match begins at most SCREEN_REACH characters before one of
 * PRESCREEN_LITERALS (the `key` of `private_key`, 8 in). A test checks that it finds what SCREEN_SOURCE finds.
 */
const SCREEN_AT = new RegExp(SCREEN_SOURCE.replace(FLAG_SCREEN, FLAG_SCREEN_FROM_KEY_WORD), 'iy');
const SCREEN_REACH = 8;
/** SCREEN_SOURCE as one regex over a whole text: what screenNearLiterals falls back to for a dense text. */
const SCREEN_ANYWHERE = new RegExp(SCREEN_SOURCE, 'i');
/** PRESCREEN_GROUPS, to find every place a literal begins where there is no scanner. */
const PRESCREEN_GROUPS_EVERYWHERE = PRESCREEN_GROUPS.map((group) => new RegExp(group.source, 'gi'));
/** Texts this long that hold a literal are screened near their literals (screenNearLiterals). */
export const SCREEN_NEAR_LITERALS_CHARS = 2048;
/**
 * A try costs about what the one regex costs over a dozen characters or more: a text that needs more than one
 * try in DENSE_CHARS_PER_TRY (documentation about keys and tokens, say) is screened by the one regex instead,
 * as soon as that shows: once a run of places has had MIN_TRIES_TO_JUDGE tries, or once all tries together
 * come to more than one per DENSE_CHARS_PER_TRY characters of the whole text.
 */
const DENSE_CHARS_PER_TRY = 16;
const MIN_TRIES_TO_JUDGE = 128;

/**
 * The default rules' screen (SCREEN_SOURCE) over a long text, tried only where a match could begin: up to
 * SCREEN_REACH characters before each place one of PRESCREEN_LITERALS begins (a text without any is clean after
 * the one search for them, as the prescreen would have it). The one regex tries its look-behinds at every
 * character whatever the text; this costs a search for the literals and up to nine tries per literal. The
 * scanner finds the places, where it can (figures in docs/benchmarks.md, "Redaction cost per record").
 */
export function screenNearLiterals(text: string): boolean {
  const scanner = prescreenScanner();
  if (!scanner) return screenNearLiteralsByGroups(text);
  const tries = new ScreenTries(text);
  let verdict = false;
  scanner.eachLiteral(text, (at) => {
    const outcome = tries.near(at);
    if (outcome === 'go on') return false;
    verdict = outcome === 'found' || SCREEN_ANYWHERE.test(text);
    return true;
  });
  return verdict;
}

/** screenNearLiterals where there is no scanner: the places found by each of PRESCREEN_GROUPS in turn. */
export function screenNearLiteralsByGroups(text: string): boolean {
  const tries = new ScreenTries(text);
  for (const group of PRESCREEN_GROUPS_EVERYWHERE) {
    group.lastIndex = 0;
    tries.restart();
    for (let literal = group.exec(text); literal !== null; literal = group.exec(text)) {
      const outcome = tries.near(literal.index);
      if (outcome === 'found') return true;
      if (outcome === 'dense') return SCREEN_ANYWHERE.test(text);
      // The next search starts right after this literal's first character: a literal overlapping it is found too.
      group.lastIndex = literal.index + 1;
    }
  }
  return false;
}

/** SCREEN_AT tried near the places literals begin, given in order, and whether the text proves dense with them. */
class ScreenTries {
  private readonly maxTries: number;
  /** Tries so far, in all. */
  private tries = 0;
  /** Tries since the last restart, and the position tried up to (each place is tried once in a run). */
  private runTries = 0;
  private tried = 0;

  constructor(private readonly text: string) {
    this.maxTries = text.length / DENSE_CHARS_PER_TRY;
  }

  /** A new run of places from the start of the text (the next group's). */
  restart(): void {
    this.runTries = 0;
    this.tried = 0;
  }

  /** Try SCREEN_AT up to SCREEN_REACH characters before the literal at `at`. */
  near(at: number): 'found' | 'dense' | 'go on' {
    const text = this.text;
    for (let start = Math.max(this.tried, at - SCREEN_REACH); start <= at; start++) {
      this.tries++;
      this.runTries++;
      SCREEN_AT.lastIndex = start;
      if (SCREEN_AT.test(text)) return 'found';
    }
    this.tried = at + 1;
    const dense = this.tries > this.maxTries || (this.runTries > MIN_TRIES_TO_JUDGE && this.runTries * DENSE_CHARS_PER_TRY > this.tried);
    return dense ? 'dense' : 'go on';
  }
}

/**
 * The recent text of one streamed field (at least its last STREAM_TAIL_CHARS characters, at most twice that),
 * and whether it holds any of PRESCREEN_LITERALS. Updated in place, chunk after chunk.
 */
interface StreamTail {
  text: string;
  /** The last PRESCREEN_LONGEST - 1 characters of the text (kept apart: slicing `text` would flatten it). */
  edge: string;
  hinted: boolean;
}

/** `"key": "value"` (or a number/boolean value) in JSON-like text, including a string cut off at the end. */
const JSON_PAIR = /"((?:[^"\\\n]|\\u00[0-9a-fA-F]{2}){1,100})"(\s*:\s*)("(?:[^"\\]|\\.)*(?:"|$)|-?\d[\d.eE+-]*|true|false)/g;
/** The same one level down: JSON text inside a JSON string, where quotes are escaped (`\"key\":\"value\"`). */
const ESCAPED_JSON_PAIR = /\\"([^"\\\n]{1,100})\\"(\s*:\s*)(\\"(?:[^"\\]|\\\\)*(?:\\"|$)|-?\d[\d.eE+-]*|true|false)/g;
/**
 * `key=value`, `key: value` and `--key value` in free text (stderr lines, command lines, prose); built per Redactor.
 * A key name right after a `/` is the last part of a path (`cannot start /etc/passwd: …`), not a key.
 */
function textPairRe(extraKeySource: string): RegExp {
  const words = `${KEY_WORDS}|pass|pwd|auth${extraKeySource ? `|${extraKeySource}` : ''}`;
  return new RegExp(String.raw`(?<![\w/-])(--?)?([\w.%-]{0,40}(?:${words})[\w.%-]{0,20})(\s*[=:]\s*|\s+)(?!\[redacted\])([^\s"',;&]+)`, 'gi');
}

/** Keys of streamed text whose pieces arrive split across chunks. */
const STREAMED_KEYS = new Set(['content', 'text', 'arguments', 'thinking', 'response', 'reasoning_content', 'reasoning', 'refusal', 'delta', 'partial_json']);
/** How much of each stream's recent text is remembered to catch a secret split across chunks. */
const STREAM_TAIL_CHARS = 256;
/** How many key names' verdicts a Redactor remembers before starting over. */
const MAX_KEY_VERDICTS = 4096;
/** At most this many LLM streams are followed at once; the oldest is forgotten first. */
const MAX_STREAMS = 1024;
/** At most this many streams are remembered as forgotten while open (see Redactor.tailsOf). */
const MAX_FORGOTTEN_STREAMS = 65536;

type Mutable = Record<string, unknown>;

/**
 * The redaction rules in force for one log, compiled once. Pure apart from the per-stream tails it keeps for
 * `llm-chunk` records (bounded).
 */
export class Redactor {
  private readonly screenRe: RegExp;
  private readonly extraKeys: Set<string>;
  private readonly extraPatterns: RegExp[];
  private readonly textPair: RegExp;
  /** Per LLM exchange: per streamed field, the last characters seen (unredacted, in memory only). */
  private readonly streams = new Map<string, Map<string, StreamTail>>();

  constructor(rules: RedactRules = {}) {
    this.extraKeys = new Set((rules.keys ?? []).map(normalizeKey).filter((k) => k !== ''));
    this.extraPatterns = (rules.patterns ?? []).map((p) => compilePattern(p));
    const extraKeySource = [...(rules.keys ?? [])].map(escapeRegExp).join('|');
    this.textPair = textPairRe(extraKeySource);
    const sources = [SCREEN_SOURCE];
    if (extraKeySource) sources.push(String.raw`(?:${extraKeySource})\\*["']?\s*[:=,]`, String.raw`--?(?:${extraKeySource})`);
    // User patterns join the one screen regex unless they use back-references, which would change meaning there.
    for (const p of this.extraPatterns) if (!/\\[1-9]|\\k</.test(p.source)) sources.push(`(?:${p.source})`);
    this.screenRe = new RegExp(sources.join('|'), 'i');
    this.hasExtraRules = this.extraKeys.size > 0 || this.extraPatterns.length > 0;
    this.screenExtra = this.extraPatterns.filter((p) => /\\[1-9]|\\k</.test(p.source)).map((p) => new RegExp(p.source, p.flags.replace('g', '')));
  }

  private readonly screenExtra: RegExp[];
  private readonly hasExtraRules: boolean;

  /**
   * True when the text might hold a secret. One regex test; false is certain. `exactText`: the same text where
   * `text` has `\u` escapes (see redactRecord).
   */
  screen(text: string, exactText = text): boolean {
    // A long text is screened near its literals (screenPastPrescreen), and that search says "no" at once where
    // it holds none: a long text with no escapes needs no prescreen before it.
    if (text === exactText && this.screenedNearLiterals(text)) return screenNearLiterals(text);
    // Otherwise the prescreen reads `text`. Most text holds none of the default rules' literals, and the
    // literal-only prescreen says so about twice as fast as the screen, whose look-behinds and repeats are slow
    // on long frames (user rules skip it). Where the two texts differ, `text` is also the cheaper one to search:
    // exactText holds a character outside ASCII, most often one outside Latin-1 as well (the `…` of a big
    // frame's summary), and then V8 keeps all of it at two bytes a character, which the scanner copies flat and
    // narrows again, several times the cost of the one-byte text. Every literal of
    // exactText is in text: the escapes only replace characters outside ASCII, which no literal holds.
    return !this.passesPrescreen(text) && this.screenPastPrescreen(exactText);
  }

  /** The screen's own regexes, for a text the prescreen did not let through. */
  private screenPastPrescreen(text: string): boolean {
    if (this.screenedNearLiterals(text)) return screenNearLiterals(text);
    if (this.screenRe.test(text)) return true;
    for (const re of this.screenExtra) if (re.test(text)) return true;
    return false;
  }

  /** A long text under the default rules alone is screened only near its literals (screenNearLiterals). */
  private screenedNearLiterals(text: string): boolean {
    return !this.hasExtraRules && text.length >= SCREEN_NEAR_LITERALS_CHARS;
  }

  /** True when the log must not hold the value of a JSON key, variable or flag of this name. */
  isSecretKey(name: string): boolean {
    // The same few keys (model, role, content, done…) come with every chunk of every stream: remember verdicts.
    let verdict = this.keyVerdicts.get(name);
    if (verdict === undefined) {
      verdict = isSecretKey(name) || (this.extraKeys.size > 0 && this.extraKeys.has(normalizeKey(name)));
      if (this.keyVerdicts.size >= MAX_KEY_VERDICTS) this.keyVerdicts.clear();
      this.keyVerdicts.set(name, verdict);
    }
    return verdict;
  }

  /** Verdicts of isSecretKey by key name (bounded: cleared when full). */
  private readonly keyVerdicts = new Map<string, boolean>();

  /** Redact credential shapes and `key=value` secrets in free text (or JSON text that does not parse). */
  redactText(text: string): string {
    if (!this.screen(text)) return text;
    let out = text;
    for (const { re, keep } of VALUE_PATTERNS) {
      re.lastIndex = 0;
      out = keep ? out.replace(re, (m: string, ...g: string[]) => keep(m, ...g)) : out.replace(re, REDACTED);
    }
    for (const re of this.extraPatterns) out = out.replace(re, REDACTED);
    out = out.replace(JSON_PAIR, (m, key: string, sep: string, value: string) =>
      this.isSecretKey(key) && value !== '""' && value !== `"${REDACTED}"` ? `"${key}"${sep}"${REDACTED}"` : m,
    );
    out = out.replace(ESCAPED_JSON_PAIR, (m, key: string, sep: string, value: string) =>
      this.isSecretKey(key) && value !== '\\"\\"' && value !== `\\"${REDACTED}\\"` ? `\\"${key}\\"${sep}\\"${REDACTED}\\"` : m,
    );
    out = out.replace(this.textPair, (m, dashes: string | undefined, key: string, sep: string, value: string) => {
      // "--token abc" is a flag and its value; "token abc" in prose is not.
      if (!dashes && !/[=:]/.test(sep)) return m;
      if (!this.isSecretKey(key) || /^(?:bearer|basic)$/i.test(value)) return m;
      return `${dashes ?? ''}${key}${sep}${REDACTED}`;
    });
    return out;
  }

  /**
   * Redact any JSON value: secret keys at any depth, credential-shaped strings anywhere. Returns the same
   * reference when nothing changed (so callers can tell), a copy otherwise; the input is never modified.
   */
  redactValue(value: unknown, secretKey = false): unknown {
    if (typeof value === 'string') {
      if (secretKey) return value === '' || value === REDACTED ? value : REDACTED;
      return this.redactText(value);
    }
    if (typeof value === 'number') return secretKey ? REDACTED : value;
    if (value === null || typeof value !== 'object') return value;
    if (Array.isArray(value)) {
      let copy: unknown[] | undefined;
      for (let i = 0; i < value.length; i++) {
        const item = value[i];
        // Under a secret key, an array of strings is a list of secrets; objects are walked (a JSON schema
        // that describes an `api_key` property is not a secret).
        const next = this.redactValue(item, secretKey && (typeof item !== 'object' || item === null));
        if (next !== item) (copy ??= value.slice())[i] = next;
      }
      return copy ?? value;
    }
    let copy: Mutable | undefined;
    for (const [key, item] of Object.entries(value as Mutable)) {
      const next = key === 'headers' && isHeaderMap(item) ? this.redactHeaderValues(item) : this.redactValue(item, this.isSecretKey(key));
      if (next !== item) (copy ??= { ...(value as Mutable) })[key] = next;
    }
    return copy ?? value;
  }

  /** Text that may be JSON (a frame, a body): parsed and redacted deeply so it stays parseable; else as text. */
  redactJsonText(text: string): string {
    if (!this.screen(text)) return text;
    let parsed: unknown;
    try {
      parsed = JSON.parse(text);
    } catch {
      return this.redactText(text);
    }
    const next = this.redactValue(parsed);
    return next === parsed ? text : JSON.stringify(next);
  }

  /** A command line: `--token abc` hides `abc`, `--token=abc` hides what follows `=`, credential shapes anywhere. */
  redactArgs(args: readonly string[]): string[] {
    const out = args.map((a) => this.redactText(a));
    for (let i = 0; i < args.length - 1; i++) {
      const flag = /^--?([A-Za-z][\w.-]*)$/.exec(args[i]!);
      if (flag && this.isSecretKey(flag[1]!) && !args[i + 1]!.startsWith('-')) out[i + 1] = REDACTED;
    }
    return out;
  }

  /** Header values by this redactor's rules: the secret-header names, extra keys, and credential shapes. */
  redactHeaderValues(headers: LoggedHeaders): LoggedHeaders {
    let copy: LoggedHeaders | undefined;
    for (const [name, value] of Object.entries(headers)) {
      const secret = isSecretHeader(name) || this.isSecretKey(name);
      // Same as redactHeaders: a secret header's value goes whole (one "[redacted]" per value).
      const redactOne = (v: string): string => (secret ? REDACTED : this.redactText(v));
      const next = Array.isArray(value) ? value.map(redactOne) : redactOne(value);
      const changed = Array.isArray(value) ? (next as string[]).some((v, i) => v !== value[i]) : next !== value;
      if (changed) (copy ??= { ...headers })[name] = next;
    }
    return copy ?? headers;
  }

  /**
   * Redact one whole record, as LogWriter hands it over. Returns the record itself when nothing needed hiding,
   * else a redacted copy marked `redacted: true`. `line` is the record already serialized: when the screen
   * finds nothing there (the common case) no field is looked at one by one. `exactLine` is the same JSON as
   * JSON.stringify writes it, when `line` writes some characters as `\u` escapes (see recordJson): the
   * prescreen's ASCII literals read the same in both, but the screen's regexes must see the characters
   * themselves (`\s` matches a no-break space, `\u00a0` does not).
   */
  redactRecord<T extends Mutable>(record: T, line: string, exactLine = line): T {
    const chunk = record.kind === 'llm-chunk';
    // Any other stream's events are pieces of one text too (see redactSse).
    const sse = record.kind === 'sse' && typeof record.data === 'string';
    // A streamed body (SSE or NDJSON) may hold a secret split across its events, which no single regex over the
    // line can see: such bodies are always read event by event.
    const streamBody =
      typeof record.body === 'string' && record.bodyEncoding !== 'base64' && (looksLikeStream(record.body) || (record.channel === 'gemini' && looksLikeJsonArrayStream(record.body)));
    // A field cut short whose end may be the head of a credential (no rule would know it for one any more).
    const cut = chunk ? undefined : cutFieldOf(record);
    if (!chunk) {
      if (record.kind === 'llm-response' || record.kind === 'llm-error' || record.kind === 'http-end') this.endStream(record);
      if (!streamBody && !sse && cut === undefined && !this.screen(line, exactLine)) return record;
    }
    let copy: Mutable | undefined;
    const set = (key: string, value: unknown): void => {
      if (value !== record[key]) (copy ??= { ...record })[key] = value;
    };
    // A chunk's own fields other than raw and delta (msg, mostly) only need a look when the line holds a hint.
    // A line without any prescreen literal has none in its raw either (escaping leaves the literals' characters
    // as they are): the chunk then needs no second prescreen of its raw.
    const literal = chunk && !this.passesPrescreen(line);
    const look = chunk ? literal && this.screenPastPrescreen(exactLine) : !sse || cut !== undefined || this.screen(line, exactLine);
    const fields = look ? Object.entries(record) : [];
    for (const entry of fields) {
      const key = entry[0];
      let value = entry[1];
      if (key === cut) {
        value = dropDanglingSecret(value as string);
        set(key, value);
      }
      if (sse && key === 'data') continue;
      if (key === 'raw' || key === 'body' || key === 'data') {
        const encoded = key === 'raw' ? record.rawEncoding : key === 'body' ? record.bodyEncoding : undefined;
        if (typeof value === 'string' && encoded !== 'base64' && !chunk) {
          if (key === 'body' && streamBody) set(key, this.redactStreamBody(value));
          else set(key, this.redactJsonText(value));
        }
      } else if (key === 'args' && Array.isArray(value) && value.every((a) => typeof a === 'string')) {
        const next = this.redactArgs(value as string[]);
        if (next.some((a, i) => a !== value[i])) set(key, next);
      } else if (key === 'headers' && isHeaderMap(value)) {
        set(key, this.redactHeaderValues(value));
      } else if (!chunk || (key !== 'delta' && key !== 'raw')) {
        set(key, this.redactValue(value, this.isSecretKey(key)));
      }
    }
    if (chunk) this.redactChunk(record, set, literal);
    if (sse) this.redactSse(record, set);
    if (!copy) return record;
    (copy as Mutable).redacted = true;
    return copy as T;
  }

  /**
   * For LogWriter, which serializes each draft once: `json` is its fields as the line writes them (recordJson;
   * the writer may leave out the opening brace), and `exactJson` the same with every character as it is (see
   * redactRecord; it may hold the writer's stamp before them, which can only make the screen look closer). Returns `json` itself when nothing needs hiding (the common case costs one screen of it), else
   * the JSON of a redacted copy. Never throws: should redaction itself fail, the record is written without its
   * content rather than with it.
   */
  redactJson(draft: object, json: string, exactJson = json): string {
    try {
      const out = this.redactRecord(draft as Mutable, json, exactJson);
      // The copy keeps RAW_PARSED: a raw redacted from JSON text is JSON.stringify's, JSON text all the same.
      return out === draft ? json : recordJson(out).text;
    } catch (error) {
      const d = draft as Mutable;
      const kept: Mutable = { time: d.time, kind: d.kind };
      for (const k of ['session', 'channel', 'level', 'dir', 'exchange', 'id', 'method', 'event']) if (d[k] !== undefined) kept[k] = d[k];
      kept.msg = `mcptap could not redact this record (${(error as Error)?.message ?? String(error)}), so its content is left out of the log.`;
      kept.redacted = true;
      return JSON.stringify(kept);
    }
  }

  /** Number of LLM streams being followed (bounded by MAX_STREAMS). */
  get streamCount(): number {
    return this.streams.size;
  }

  /**
   * An `llm-chunk`: its text is one piece of a longer stream, so a key may arrive as `sk-pro` + `j-abc…`. Half a
   * key is still a leak (the other half sits in the next record), so each piece is judged together with the
   * stream's recent text: a credential that ends in this chunk, or one that starts here and may go on, is hidden
   * in the part this chunk holds.
   */
  private redactChunk(record: Mutable, set: (key: string, value: unknown) => void, lineHoldsLiteral: boolean): void {
    const streamKey = this.streamKeyOf(record);
    const tails = this.tailsOf(streamKey);
    if (typeof record.delta === 'string') {
      const delta = this.redactPiece(tails, '#delta', record.delta);
      set('delta', delta);
      // The one-line summary quotes the chunk's text: it must not keep what the delta lost.
      if (delta !== record.delta && typeof record.msg === 'string') {
        const msg = this.redactText(record.msg);
        set('msg', record.delta !== '' && msg.includes(record.delta) ? msg.split(record.delta).join(delta) : 'A streamed chunk; its text holds part of a secret and is redacted.');
      }
    }
    if (typeof record.raw !== 'string') return;
    // The tap parsed most chunks already (RAW_PARSED): a second parse of each would cost as much again.
    let parsed: unknown = (record as Record<PropertyKey, unknown>)[RAW_PARSED];
    if (parsed === undefined) {
      try {
        parsed = JSON.parse(record.raw);
      } catch {
        set('raw', this.redactPiece(tails, '#raw', record.raw));
        return;
      }
    }
    const clean = !lineHoldsLiteral || this.passesPrescreen(record.raw);
    const next = this.redactStreamed(tails, parsed, '', clean);
    if (next !== parsed) set('raw', JSON.stringify(next));
  }

  /**
   * An `sse` record of a stream mcptap does not read as an LLM (any dialect): its data is one piece of a longer
   * stream, as an llm-chunk's is, but which fields stream is unknown, so every string in it is judged with the
   * tail of the same field in the events before.
   */
  private redactSse(record: Mutable, set: (key: string, value: unknown) => void): void {
    const sent = record.data;
    if (typeof sent !== 'string' || sent === '') return;
    // A capped event's data ends where the cap cut it.
    const data = record.truncated === true ? dropDanglingSecret(sent) : sent;
    const tails = this.tailsOf(this.streamKeyOf(record));
    let next = data;
    let parsed: unknown;
    if (/^\s*[{[]/.test(data)) {
      try {
        parsed = JSON.parse(data);
      } catch {
        parsed = undefined;
      }
    }
    if (parsed !== undefined && typeof parsed === 'object' && parsed !== null) {
      const redacted = this.redactStreamed(tails, parsed, '', this.passesPrescreen(data), true);
      if (redacted !== parsed) next = JSON.stringify(redacted);
    } else {
      next = this.redactPiece(tails, '#data', data);
    }
    if (next === sent) return;
    set('data', next);
    // The summary quotes the data: it must not keep what the data lost.
    set('msg', `Server sends ${typeof record.event === 'string' ? `"${this.redactText(record.event)}" ` : ''}an SSE event; its data holds a secret or part of one, and is redacted.`);
  }

  /**
   * The tails of one stream's fields, made on its first piece. At most MAX_STREAMS streams are followed; the
   * oldest is forgotten first, and a forgotten stream that goes on is marked resumed: the first piece of each of
   * its fields is then judged as if a credential ran into it (resumeConservatively).
   */
  private tailsOf(streamKey: string): Map<string, StreamTail> {
    let tails = this.streams.get(streamKey);
    if (tails) return tails;
    if (this.streams.size >= MAX_STREAMS) {
      const oldest = this.streams.keys().next().value as string;
      this.streams.delete(oldest);
      if (this.forgotten.size >= MAX_FORGOTTEN_STREAMS) this.forgottenOverflowed = true;
      else this.forgotten.add(oldest);
    }
    tails = new Map();
    if (this.forgottenOverflowed || this.forgotten.delete(streamKey)) this.resumed.add(tails);
    this.streams.set(streamKey, tails);
    return tails;
  }

  /** Streams forgotten while still open (bounded; past the bound every unknown stream counts as resumed). */
  private readonly forgotten = new Set<string>();
  private forgottenOverflowed = false;
  /** The tails of streams that were forgotten and went on. */
  private readonly resumed = new WeakSet<Map<string, StreamTail>>();

  /** The last stream key made, by its session and exchange: a stream's chunks come one after another. */
  private lastStream = { session: undefined as unknown, exchange: undefined as unknown, key: '' };

  /** The key of the stream a record belongs to: its session and exchange. */
  private streamKeyOf(record: Mutable): string {
    const last = this.lastStream;
    if (record.session === last.session && record.exchange === last.exchange && last.key !== '') return last.key;
    const key = `${String(record.session ?? '')}\u0000${String(record.exchange ?? '')}`;
    this.lastStream = { session: record.session, exchange: record.exchange, key };
    return key;
  }

  /**
   * A whole streamed body (SSE `data:` events or NDJSON lines, as an http-end record keeps it): each event is
   * redacted like an llm-chunk, with the stream's tails carried from event to event, so a key cut across events
   * does not survive in the body either.
   */
  redactStreamBody(body: string): string {
    const tails = new Map<string, StreamTail>();
    if (looksLikeJsonArrayStream(body)) {
      const array = this.redactJsonArrayStream(tails, body);
      if (array !== undefined) return array;
    }
    const lines = body.split(/(?<=\n)/);
    let changed = false;
    const out = lines.map((line) => {
      const eol = /\r?\n$/.exec(line)?.[0] ?? '';
      const content = line.slice(0, line.length - eol.length);
      const data = /^data: ?/.exec(content);
      const payload = data ? content.slice(data[0].length) : content;
      let next = payload;
      if (/^\s*[{[]/.test(payload)) {
        try {
          const parsed: unknown = JSON.parse(payload);
          // Whatever the dialect: every string of each event is a streamed field (as in redactSse).
          const redacted = this.redactStreamed(tails, parsed, '', this.passesPrescreen(payload), true);
          if (redacted !== parsed) next = JSON.stringify(redacted);
        } catch {
          next = this.redactText(payload);
        }
      } else {
        next = this.redactText(payload);
      }
      if (next === payload) return line;
      changed = true;
      return `${data ? data[0] : ''}${next}${eol}`;
    });
    return changed ? out.join('') : body;
  }

  /**
   * A stream sent as one JSON array (Gemini without alt=sse): each element is an event of the stream, judged
   * with the tails carried from element to element. Undefined when the body is not a whole JSON array (cut at
   * --max-body): it is then read line by line like any stream body.
   */
  private redactJsonArrayStream(tails: Map<string, StreamTail>, body: string): string | undefined {
    let parsed: unknown;
    try {
      parsed = JSON.parse(body);
    } catch {
      return undefined;
    }
    if (!Array.isArray(parsed)) return undefined;
    let changed = false;
    const out = parsed.map((element) => {
      const next = this.redactStreamed(tails, element, '', false);
      if (next !== element) changed = true;
      return next;
    });
    return changed ? JSON.stringify(out) : body;
  }

  /**
   * True when `text` holds no literal any default rule starts from: then none of its own values can be a secret
   * (the same judgement redactRecord makes of a whole record with one screen), and only a secret split across
   * pieces, which the streamed fields' tails catch, is left to look for.
   */
  private passesPrescreen(text: string): boolean {
    return !this.hasExtraRules && !holdsPrescreenLiteral(text);
  }

  /**
   * Walk a parsed chunk: streamed text fields are judged with their stream's tail, everything else as usual.
   * `clean`: the chunk's text passed the prescreen (passesPrescreen), so values other than streamed text need
   * no look; a token stream's every chunk then costs one prescreen plus its streamed fields.
   */
  private redactStreamed(tails: Map<string, StreamTail>, value: unknown, path: string, clean: boolean, everyString = false): unknown {
    if (value === null || typeof value !== 'object') return value;
    // Keys, not entries: a token stream walks a few small objects per chunk, and entries cost an array per field.
    const array = Array.isArray(value);
    const keys: readonly (string | number)[] = array ? (value as unknown[]).map((_, i) => i) : Object.keys(value);
    let copy: Mutable | unknown[] | undefined;
    for (const key of keys) {
      const item = (value as Record<string | number, unknown>)[key];
      let next: unknown;
      if (typeof item === 'string' && (everyString ? !this.isSecretKey(String(key)) : typeof key === 'string' && STREAMED_KEYS.has(key))) next = this.redactPiece(tails, `${path}/${key}`, item);
      else if (typeof item === 'object' && item !== null) next = this.redactStreamed(tails, item, `${path}/${key}`, clean, everyString);
      else if (clean) continue;
      else next = this.redactValue(item, typeof key === 'string' && this.isSecretKey(key));
      if (next !== item) {
        copy ??= array ? (value as unknown[]).slice() : { ...(value as Mutable) };
        (copy as Record<string | number, unknown>)[key] = next;
      }
    }
    return copy ?? value;
  }

  /** One piece of a stream: hide whatever part of it belongs to a credential seen across the piece boundary. */
  private redactPiece(tails: Map<string, StreamTail>, field: string, piece: string): string {
    let state = tails.get(field);
    if (!state) {
      if (tails.size >= 64) tails.delete(tails.keys().next().value as string);
      state = { text: '', edge: '', hinted: false };
      tails.set(field, state);
      // The stream was forgotten, so this piece may go on with a credential the forgotten tail began.
      if (this.resumed.has(tails)) piece = resumeConservatively(piece);
    }
    const tail = state.text;
    const combined = tail + piece;
    // Trimmed only once it is twice as long as it must be: trimming flattens the text, a copy of it every chunk.
    state.text = combined.length > 2 * STREAM_TAIL_CHARS ? combined.slice(-STREAM_TAIL_CHARS) : combined;
    if (this.hasExtraRules) {
      state.hinted = true;
    } else {
      // Every chunk of a stream would re-screen the whole tail to look at a few new characters. A literal the
      // prescreen looks for lies either wholly in the tail (remembered as `hinted`) or within its last
      // PRESCREEN_LONGEST - 1 characters and the piece: screen only that.
      const edged = state.edge + piece;
      state.edge = edged.slice(1 - PRESCREEN_LONGEST);
      const fresh = holdsPrescreenLiteral(edged);
      const hinted = state.hinted || fresh;
      state.hinted = hinted && holdsPrescreenLiteral(state.text);
      if (!hinted) return piece;
    }
    // A credential that may go on in the next piece (a URL's password before its `@`) passes no screen yet.
    const dangling = danglingSecretAt(combined);
    if (dangling === -1 && !this.screen(combined)) return piece;
    const ranges: [number, number][] = [];
    const collect = (re: RegExp): void => {
      re.lastIndex = 0;
      for (const m of combined.matchAll(re)) ranges.push([m.index, m.index + m[0].length]);
    };
    for (const { re } of VALUE_PATTERNS) collect(re);
    for (const re of this.extraPatterns) collect(re);
    if (dangling !== -1) ranges.push([dangling, combined.length]);
    // `password=…` whose key came in an earlier piece.
    this.textPair.lastIndex = 0;
    for (const m of combined.matchAll(this.textPair)) {
      const [whole, dashes, key, sep, value] = m as unknown as [string, string | undefined, string, string, string];
      if ((!dashes && !/[=:]/.test(sep)) || !this.isSecretKey(key) || /^(?:bearer|basic)$/i.test(value)) continue;
      const end = m.index + whole.length;
      ranges.push([end - value.length, end]);
    }
    // A secret JSON key whose value is still arriving (tool-call arguments stream as JSON text).
    for (const m of combined.matchAll(/"([^"\\\n]{1,100})"\s*:\s*"((?:[^"\\]|\\.)*)("|$)/g)) {
      if (this.isSecretKey(m[1]!) && m[2] !== '') {
        const start = m.index + m[0].length - m[2]!.length - m[3]!.length;
        ranges.push([start, start + m[2]!.length]);
      }
    }
    // The part of each range that lies in this piece is hidden; what lay in the tail was judged before.
    const offset = tail.length;
    const mine = ranges
      .map(([s, e]) => [Math.max(s, offset) - offset, e - offset] as [number, number])
      .filter(([s, e]) => e > s)
      .sort((a, b) => a[0] - b[0]);
    if (mine.length === 0) return this.redactText(piece);
    let out = '';
    let at = 0;
    for (const [s, e] of mine) {
      if (e <= at) continue;
      out += piece.slice(at, Math.max(s, at)) + (s >= at ? REDACTED : '');
      at = e;
    }
    return this.redactText(out + piece.slice(at));
  }

  private endStream(record: Mutable): void {
    if (this.streams.size === 0 && this.forgotten.size === 0) return;
    const key = `${String(record.session ?? '')}\u0000${String(record.exchange ?? '')}`;
    this.streams.delete(key);
    this.forgotten.delete(key);
  }
}

/** The default rules, for text redacted before it is cut (preview): compiled once, on first use. */
let defaults: Redactor | undefined;
/** `text` with what the default rules hide replaced by "[redacted]" (the log's own rules run again on the record). */
export function redactDefaults(text: string): string {
  defaults ??= new Redactor();
  return defaults.redactText(text);
}

/** A piece that may begin with the rest of a credential: its first word hidden (up to white space or a quote). */
function resumeConservatively(piece: string): string {
  return piece.replace(/^[^\s"']+/, REDACTED);
}

/**
 * The field of a record cut short (`truncated`, `bodyTruncated`) when its end may be the head of a credential
 * that went on past the cut (danglingSecretAt), else undefined.
 */
function cutFieldOf(record: Mutable): string | undefined {
  let key: string | undefined;
  if (record.bodyTruncated === true && record.bodyEncoding !== 'base64') key = 'body';
  else if (record.truncated === true) key = ['raw', 'text', 'content', 'data'].find((k) => typeof record[k] === 'string');
  if (key === undefined || (key === 'raw' && record.rawEncoding === 'base64')) return undefined;
  const value = record[key];
  return typeof value === 'string' && danglingSecretAt(value) !== -1 ? key : undefined;
}

/** SSE (`data:` lines) or NDJSON (several JSON lines): a body whose events are pieces of one stream. */
function looksLikeStream(body: string): boolean {
  const firstBreak = body.indexOf('\n');
  if (firstBreak === -1 || firstBreak === body.length - 1) return false;
  return /^(?:data:|event:|id:|:)/m.test(body.slice(0, 200)) || (/^\s*\{/.test(body) && /\n\s*\{/.test(body));
}

/** A JSON array of objects over several lines: a stream of chunks sent as one array (Gemini without alt=sse). */
function looksLikeJsonArrayStream(body: string): boolean {
  return /^\s*\[\s*\{/.test(body) && /\}\s*,\s*\{/.test(body);
}

function isHeaderMap(value: unknown): value is LoggedHeaders {
  if (value === null || typeof value !== 'object' || Array.isArray(value)) return false;
  for (const v of Object.values(value)) if (typeof v !== 'string' && !(Array.isArray(v) && v.every((x) => typeof x === 'string'))) return false;
  return true;
}

/** A user pattern: a RegExp, `/source/flags`, or bare source. Always global. Throws McptapError when invalid. */
export function compilePattern(pattern: string | RegExp): RegExp {
  if (pattern instanceof RegExp) return new RegExp(pattern.source, pattern.flags.includes('g') ? pattern.flags : `${pattern.flags}g`);
  const slashed = /^\/(.+)\/([a-z]*)$/s.exec(pattern);
  const source = slashed ? slashed[1]! : pattern;
  const flags = slashed ? slashed[2]! : '';
  try {
    const re = new RegExp(source, flags.includes('g') ? flags : `${flags}g`);
    if (re.test('')) throw new Error('it matches the empty string');
    return re;
  } catch (error) {
    throw new McptapError('BAD_REDACT_PATTERN', `--redact-pattern ${JSON.stringify(pattern)} is not a usable regular expression (${(error as Error).message}). Give JavaScript regex source, e.g. --redact-pattern 'corp_[A-Za-z0-9]{20}'.`);
  }
}
