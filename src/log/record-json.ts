/**
 * A record's JSON text: the same text JSON.stringify gives, made faster for a record that carries a long `raw`
 * of JSON text, a big frame's.
 *
 * JSON.stringify escapes a string by looking at each of its characters: a 64 KiB frame took it 290 µs on 2
 * cores, about a quarter of all the inspection of that frame. But a raw text the tap has parsed
 * as JSON (the draft carries RAW_PARSED) can hold no character JSON.stringify would escape other than `"`, `\`
 * and the whitespace between its tokens: when those are few (a frame of base64, of plain text), they are found
 * with a search for each instead, and the frame is quoted in 8–16 µs. Anything else takes JSON.stringify.
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

/** `JSON.stringify(draft)`. */
export function recordJson(draft: object): string {
  const raw = (draft as { raw?: unknown }).raw;
  if (typeof raw !== 'string' || raw.length < LONG_RAW_CHARS || !(RAW_PARSED in draft)) return JSON.stringify(draft);
  const quoted = quoteJsonText(raw);
  if (quoted === undefined) return JSON.stringify(draft);
  const json = JSON.stringify({ ...draft, raw: RAW_STAND_IN });
  const at = json.indexOf(RAW_STAND_IN_JSON);
  return `${json.slice(0, at)}${quoted}${json.slice(at + RAW_STAND_IN_JSON.length)}`;
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
