/**
 * A record's JSON text, built field by field: every frame pays for it, and JSON.stringify of the whole draft
 * cost several times what writing its few known kinds of value does (see docs/benchmarks.md, issue 28).
 *
 * The text is JSON.stringify's, field for field, with two differences. `raw` comes last; and a raw that is JSON
 * text on one line, an object or an array, is written as that JSON rather than as a string of it (log format
 * v2): escaping a frame's every quote becomes a copy, and the reader takes the frame's exact text back out of
 * the line (reader.ts, rawOfLine). Two further costs are avoided for a record whose `raw` is long and not
 * written as JSON (a big frame of plain text, or cut at --max-body), and for the fields before a long raw:
 *
 * - **Quoting the raw.** JSON.stringify escapes a string by looking at each of its characters. A raw text the
 *   tap has parsed as JSON (the draft carries RAW_PARSED) can hold no character JSON.stringify would escape other
 *   than `"`, `\` and the whitespace between its tokens: when those are few (a frame of base64, of plain text),
 *   they are found with a search for each instead.
 * - **A long line of two-byte characters.** V8 keeps a string of only Latin-1 characters at one byte each, and
 *   any other character makes the whole string two bytes each. One `…` in a big frame's summary (`msg`) did
 *   that to its whole record, and each later step over the line (the redaction prescreen, encoding it) slowed
 *   down. So when `raw` is long, the fields before it write such characters as `\u` escapes, which every JSON
 *   reader reads back as the same text.
 */
import { RAW_PARSED } from './schema.js';

/** Shorter raw texts gain nothing worth a second path. */
const LONG_RAW_CHARS = 4096;

/** More `"` and `\` than this (a frame of JSON in JSON), and JSON.stringify is the faster. */
const MAX_QUOTED_ESCAPES = 64;

/** A character JSON.stringify writes otherwise than as itself: `"`, `\`, a control character, a surrogate. */
const NEEDS_ESCAPE = /["\\\u0000-\u001f\ud800-\udfff]/;

/** A character outside ASCII (the fields before a long raw are short, so these searches are cheap). */
const NON_ASCII = /[^\u0000-\u007f]/;
const EVERY_NON_ASCII = /[^\u0000-\u007f]/g;

/** A record serialized by recordJson. */
export interface RecordJson {
  /** The line to write: the record's JSON. */
  text: string;
  /**
   * The same JSON with every character as it is: `text` itself, unless `text` escapes characters outside the
   * raw. Redaction reads this one wherever a regex must see the characters as they are (`\s` matches a no-break
   * space, `\u00a0` does not); built without copying, it costs nothing until it is read.
   */
  exact: string;
}

/**
 * The JSON of a record draft (see the module comment). `start` and `end` stand for the object's braces: the
 * writer starts the text with its stamp (`{"v":2,"seq":…,`) and ends it with `}` and the line's `\n`, so that
 * the line is built as one string.
 */
export function recordJson(draft: object, start = '{', end = '}'): RecordJson {
  const fields = draft as Record<string, unknown>;
  let head = start;
  let first = true;
  // A plain string's closing quote waits to come with the next key (`","key":`): one string fewer per field.
  let open = false;
  let raw: string | undefined;
  const slots = slotsOf(fields.kind);
  let at = 0;
  for (const key in fields) {
    const value = fields[key];
    if (key === 'raw' && typeof value === 'string') {
      raw = value;
      continue;
    }
    // Each `+=` is one more string for V8 to make and later flatten: so a plain string's opening quote comes
    // with its key, the key with its comma, and the key with its value (V8 copies a short sum into one string).
    if (typeof value === 'string') {
      const plain = isPlain(value);
      const json = slotJson(slots, at++, key, first, open);
      head += plain ? json.openString + value : json.name + JSON.stringify(value);
      open = plain;
    } else {
      const json = valueJson(value);
      if (json === undefined) continue;
      head += slotJson(slots, at++, key, first, open).name + json;
      open = false;
    }
    first = false;
  }
  if (raw === undefined) {
    const text = `${head}${open ? `"${end}` : end}`;
    return { text, exact: text };
  }
  head += first ? '"raw":' : open ? '","raw":' : ',"raw":';
  // Undefined when the tap did not parse the raw (the session's drafts carry the key either way).
  const parsed = (draft as Record<PropertyKey, unknown>)[RAW_PARSED] !== undefined;
  let rawJson: string;
  if (parsed && isOneLineJsonStructure(raw)) rawJson = raw;
  else if (raw.length < LONG_RAW_CHARS) rawJson = quote(raw);
  else rawJson = (parsed ? quoteJsonText(raw) : undefined) ?? JSON.stringify(raw);
  const exact = `${head}${rawJson}${end}`;
  if (raw.length < LONG_RAW_CHARS || !NON_ASCII.test(head)) return { text: exact, exact };
  return { text: `${asciiJson(head)}${rawJson}${end}`, exact };
}

/**
 * True when JSON text (the tap parsed it) may be written into the line as it is: an object or an array, on one
 * line. (A `\r` would end the line for a reader that splits lines at it, as Node's readline does.)
 */
function isOneLineJsonStructure(json: string): boolean {
  let first = json.charCodeAt(0);
  if (first === 0x20 || first === 0x09) first = json.trimStart().charCodeAt(0);
  if (first !== 0x7b && first !== 0x5b) return false;
  let last = json.charCodeAt(json.length - 1);
  if (last === 0x20 || last === 0x09) last = json.trimEnd().charCodeAt(json.trimEnd().length - 1);
  return (last === 0x7d || last === 0x5d) && !json.includes('\n') && !json.includes('\r');
}

/** `JSON.stringify(value)` for a field's value: undefined where JSON.stringify leaves the field out. */
function valueJson(value: unknown): string | undefined {
  switch (typeof value) {
    case 'string':
      return quote(value);
    case 'number':
      return Number.isFinite(value) ? `${value}` : 'null';
    case 'boolean':
      return value ? 'true' : 'false';
    case 'undefined':
    case 'function':
    case 'symbol':
      return undefined;
    default:
      return value === null ? 'null' : (JSON.stringify(value) as string | undefined);
  }
}

/**
 * Short strings already found to need no escape: most of a record's strings are a few dozen such values (kind,
 * dir, method, tool), and a lookup costs less than the regex's call.
 */
const PLAIN_SHORT = new Set<string>();
const SHORT_CHARS = 24;

function isPlain(value: string): boolean {
  // A summary that previews JSON holds a `"` (most requests' do): includes() finds it for less than the regex
  // costs, and such a string goes to JSON.stringify without the regex.
  if (value.length > SHORT_CHARS) return !value.includes('"') && !NEEDS_ESCAPE.test(value);
  if (PLAIN_SHORT.has(value)) return true;
  if (NEEDS_ESCAPE.test(value)) return false;
  if (PLAIN_SHORT.size < MAX_KEYS) PLAIN_SHORT.add(value);
  return true;
}

/** `JSON.stringify(text)`: most strings of a record need no escape, and a regex says so faster. */
export function quote(text: string): string {
  return NEEDS_ESCAPE.test(text) ? JSON.stringify(text) : `"${text}"`;
}

/** A key as a line writes it: `"key":`, and `"key":"` before a string that needs no escape. */
interface KeyJson {
  name: string;
  openString: string;
}

/**
 * By key name: as the first field, as a later one (with its comma), and after a plain string (with its closing
 * quote too); the names are the schema's, a few dozen.
 */
const FIRST_KEY_JSON = new Map<string, KeyJson>();
const NEXT_KEY_JSON = new Map<string, KeyJson>();
const AFTER_STRING_KEY_JSON = new Map<string, KeyJson>();
const MAX_KEYS = 1024;
/** The schema has a few dozen kinds. */
const MAX_KINDS = 64;

/**
 * The keys the last record of each kind wrote, by position, with their JSON: a kind mostly repeats its fields
 * in the same order, and comparing a key with the one before costs less than a lookup by name.
 */
interface KeySlot {
  key: string;
  first: boolean;
  afterString: boolean;
  json: KeyJson;
}
const SLOTS_BY_KIND = new Map<unknown, KeySlot[]>();
const NO_SLOTS: KeySlot[] = [];

function slotsOf(kind: unknown): KeySlot[] {
  let slots = SLOTS_BY_KIND.get(kind);
  if (slots === undefined) {
    if (typeof kind !== 'string' || SLOTS_BY_KIND.size >= MAX_KINDS) return NO_SLOTS;
    slots = [];
    SLOTS_BY_KIND.set(kind, slots);
  }
  return slots;
}

function slotJson(slots: KeySlot[], at: number, key: string, first: boolean, afterString: boolean): KeyJson {
  const slot = slots[at];
  if (slot !== undefined && slot.key === key && slot.first === first && slot.afterString === afterString) return slot.json;
  const json = keyJson(key, first, afterString);
  if (slots !== NO_SLOTS && at < MAX_KEYS) slots[at] = { key, first, afterString, json };
  return json;
}

function keyJson(key: string, first: boolean, afterString: boolean): KeyJson {
  const known = first ? FIRST_KEY_JSON : afterString ? AFTER_STRING_KEY_JSON : NEXT_KEY_JSON;
  let json = known.get(key);
  if (json === undefined) {
    const name = `${first ? '' : afterString ? '",' : ','}${quote(key)}:`;
    json = { name, openString: `${name}"` };
    if (known.size < MAX_KEYS) known.set(key, json);
  }
  return json;
}

/**
 * JSON text with every character outside ASCII written as a `\u` escape: the same JSON value, in a string V8
 * keeps at one byte per character. (String.replace keeps its subject's two bytes per character, and so does
 * any long slice of it; text decoded as latin1 is always one byte per character.)
 */
function asciiJson(json: string): string {
  const escaped = json.replace(EVERY_NON_ASCII, (c) => `\\u${c.charCodeAt(0).toString(16).padStart(4, '0')}`);
  return Buffer.from(escaped, 'latin1').toString('latin1');
}

/**
 * `JSON.stringify(text)` for JSON text (whose only control characters can be its whitespace) with few `"` and
 * `\`; undefined when the text is not of that kind and JSON.stringify should do it.
 */
export function quoteJsonText(text: string): string | undefined {
  // Counted first: a frame of JSON in JSON, the usual big frame, is turned away after a few hundred characters,
  // before the searches below read it whole.
  let escapes = 0;
  for (const special of ['"', '\\']) {
    for (let at = text.indexOf(special); at !== -1; at = text.indexOf(special, at + 1)) if (++escapes > MAX_QUOTED_ESCAPES) return undefined;
  }
  // JSON.stringify also escapes control characters (here only `\t`, `\n`, `\r` can be) and lone surrogates.
  if (text.includes('\n') || text.includes('\r') || text.includes('\t') || !text.isWellFormed()) return undefined;
  if (escapes === 0) return `"${text}"`;
  return `"${text.replaceAll('\\', '\\\\').replaceAll('"', '\\"')}"`;
}
