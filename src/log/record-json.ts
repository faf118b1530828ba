/**
 * A record's JSON text, made faster for a record that carries a long `raw` (a big frame's): the same JSON value
 * JSON.stringify gives, and the same text unless the rest of the record holds a character outside ASCII.
 *
 * Two costs are avoided:
 *
 * - **Quoting the raw.** JSON.stringify escapes a string by looking at each of its characters: a 64 KiB frame
 *   took it 290 µs on 2 cores, about a quarter of all the inspection of that frame. But a raw text the tap has
 *   parsed as JSON (the draft carries RAW_PARSED) can hold no character JSON.stringify would escape other than
 *   `"`, `\` and the whitespace between its tokens: when those are few (a frame of base64, of plain text), they
 *   are found with a search for each instead, and the frame is quoted in 8–16 µs.
 * - **A long line of two-byte characters.** V8 keeps a string of only Latin-1 characters at one byte each, and
 *   any other character makes the whole string two bytes each. One `…` in a big frame's summary (`msg`) did
 *   that to its whole record, and each later step over the line (the redaction prescreen, counting its UTF-8
 *   bytes, encoding them) slowed down: in a profile of 64 KiB frames, flattening the line for the prescreen
 *   and counting its bytes took about 400 µs per record. So the fields other than `raw` write such characters
 *   as `\u` escapes, which every JSON reader reads back as the same text, and the line stays one byte per
 *   character whenever the frame itself is ASCII. (Measured: the inspection thread's CPU per echoed 64 KiB
 *   frame, two records, fell from 1348–1777 µs to 1113–1133 µs.)
 */
import { RAW_PARSED } from './schema.js';

/** Shorter raw texts gain nothing worth a second path. */
const LONG_RAW_CHARS = 4096;

/** More `"` and `\` than this (a frame of JSON in JSON), and JSON.stringify is the faster. */
const MAX_QUOTED_ESCAPES = 64;

/**
 * Stands in for `raw` while the rest of the record is serialized. Random (about 100 bits), so traffic cannot
 * hold it; not from node:crypto, which costs the inspection thread milliseconds to load while the server starts.
 */
const RAW_STAND_IN = `\u0000mcptap-raw-${Math.random().toString(36).slice(2)}${Math.random().toString(36).slice(2)}\u0000`;
const RAW_STAND_IN_JSON = JSON.stringify(RAW_STAND_IN);

/** A character outside ASCII (the rest of a record is short, so these searches are cheap). */
const NON_ASCII = /[^\u0000-\u007f]/;
const EVERY_NON_ASCII = /[^\u0000-\u007f]/g;

/** A record serialized by recordJson. */
export interface RecordJson {
  /** The line to write: the record's JSON. */
  text: string;
  /**
   * `JSON.stringify(draft)`'s own text: `text` itself, unless `text` escapes characters outside the raw.
   * Redaction reads this one wherever a regex must see the characters as they are (`\s` matches a no-break
   * space, `\u00a0` does not); built without copying, it costs nothing until it is read.
   */
  exact: string;
}

/** The JSON of a record draft (see the module comment). */
export function recordJson(draft: object): RecordJson {
  const raw = (draft as { raw?: unknown }).raw;
  if (typeof raw !== 'string' || raw.length < LONG_RAW_CHARS) {
    const text = JSON.stringify(draft);
    return { text, exact: text };
  }
  const quoted = (RAW_PARSED in draft ? quoteJsonText(raw) : undefined) ?? JSON.stringify(raw);
  const rest = JSON.stringify({ ...draft, raw: RAW_STAND_IN });
  const exact = spliceRaw(rest, quoted);
  if (!NON_ASCII.test(rest)) return { text: exact, exact };
  return { text: spliceRaw(asciiJson(rest), quoted), exact };
}

/** The record's JSON with the quoted raw in place of its stand-in. */
function spliceRaw(rest: string, quoted: string): string {
  const at = rest.indexOf(RAW_STAND_IN_JSON);
  return `${rest.slice(0, at)}${quoted}${rest.slice(at + RAW_STAND_IN_JSON.length)}`;
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
