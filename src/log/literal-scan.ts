/**
 * Whether a text holds one of a set of short ASCII literals, in any case, looked for sixteen characters at a time.
 *
 * Every record's whole text passes the redaction prescreen (redact.ts), so its speed is the speed of logging a big
 * frame: with six regexes it took about half the inspection thread's time on 64 KiB stdio frames, and this
 * search a fifth to a tenth of theirs (docs/benchmarks.md, "Redaction cost per record").
 *
 * The method is the "Teddy" search of Hyperscan and of Rust's aho-corasick crate. A literal's first three
 * characters, lower-cased, are its fingerprint, and the caller groups the literals into up to 8 buckets. For each
 * of the three places, two 16-entry tables say which buckets allow a byte there: one looked up by the byte's low
 * four bits, one by its high four. The WebAssembly module (literal-scan.wat) looks up sixteen positions at once
 * (i8x16.swizzle) and keeps the buckets all six lookups allow: a position with a bucket left is a candidate, and
 * a sticky regex of the literals says whether one really begins there. The two halves of a byte are looked up
 * apart, and a bucket allows any mix of its literals' bytes, so a candidate may begin none (`aci` passes where
 * `asi` and `aki` share a bucket); a literal is never passed over. Literals that look alike share a bucket best.
 *
 * The text is copied into the module's memory as Latin-1, one byte per UTF-16 unit, so that positions are the
 * string's indices. A character above U+00FF keeps only its low byte there: that can make a candidate, never hide
 * a literal, since a literal's characters are ASCII and a case-insensitive regex without the `u` flag takes no
 * other character for one of them (KELVIN SIGN is not `k` to it).
 *
 * Where WebAssembly's SIMD instructions are not available (V8 needs SSE4.1 for them on x64), there is no scanner
 * and redact.ts uses its regexes.
 */
import { LITERAL_SCAN_WASM } from './literal-scan-wasm.js';
import { escapeRegExp } from './escape-regexp.js';

/** Where the module's memory holds the six tables (literal-scan.wat reads them there) and the text. */
const TABLES_AT = 0;
const TEXT_AT = 128;
/** The fingerprint's length: a candidate at a position is judged by the bytes there and the two after it. */
const FINGERPRINT = 3;
const BUCKETS = 8;
/**
 * A longer text is scanned a window at a time, so the module's memory (which never shrinks) stays about this
 * size whatever passes through a long-running tap.
 */
export const WINDOW_CHARS = 1024 * 1024;
const PAGE_BYTES = 64 * 1024;

export interface LiteralScanner {
  /** True when `text` holds one of the literals, in any case. */
  holdsAny(text: string): boolean;
  /**
   * Calls `found` with every position of `text` where one of the literals begins, in order, until it returns
   * true; returns whether it did.
   */
  eachLiteral(text: string, found: (at: number) => boolean): boolean;
}

/** What literal-scan.wat exports. */
interface ScanModule {
  memory: { readonly buffer: ArrayBuffer; grow(pages: number): number };
  find(from: number, end: number): number;
}

/** The part of the WebAssembly global used here (the Node typings this project builds with leave it out). */
declare const WebAssembly: {
  Module: new (bytes: Uint8Array) => object;
  Instance: new (module: object) => { readonly exports: object };
};

/**
 * A scanner for the literals of `buckets` (up to 8 groups of ASCII literals of three characters or more), or
 * undefined where WebAssembly SIMD is not available. Each thread makes its own (the module's memory is the
 * thread's).
 */
export function createLiteralScanner(buckets: readonly (readonly string[])[]): LiteralScanner | undefined {
  if (buckets.length > BUCKETS) throw new Error(`literal-scan: ${buckets.length} buckets, where the scanner has ${BUCKETS}`);
  const literals = buckets.flat();
  for (const literal of literals) {
    if (literal.length < FINGERPRINT || !/^[\x20-\x7e]+$/.test(literal)) throw new Error(`literal-scan: ${JSON.stringify(literal)}: the scanner takes ASCII literals of three characters or more`);
  }
  let module: ScanModule;
  try {
    module = new WebAssembly.Instance(new WebAssembly.Module(Buffer.from(LITERAL_SCAN_WASM, 'base64'))).exports as unknown as ScanModule;
  } catch {
    return undefined;
  }
  fillTables(new Uint8Array(module.memory.buffer, TABLES_AT, 2 * 16 * FINGERPRINT), buckets);
  return new WasmLiteralScanner(module, new RegExp(literals.map(escapeRegExp).join('|'), 'iy'));
}

class WasmLiteralScanner implements LiteralScanner {
  /** The module's memory as a Buffer (as long as the memory), made again when the memory grows and detaches it. */
  private bytes: Buffer;

  constructor(
    private readonly module: ScanModule,
    /** The literals, tried at one position (sticky): whether a candidate is one. */
    private readonly literalAt: RegExp,
  ) {
    this.bytes = Buffer.from(module.memory.buffer);
  }

  holdsAny(text: string): boolean {
    if (text.length > WINDOW_CHARS) return this.eachLiteral(text, () => true);
    // One window, as every short record is: no callback to make, nor to call at each candidate.
    this.ensureRoom(text.length);
    this.bytes.write(text, TEXT_AT, text.length, 'latin1');
    const { find } = this.module;
    for (let at = find(0, text.length); at !== -1; at = find(at + 1, text.length)) {
      this.literalAt.lastIndex = at;
      if (this.literalAt.test(text)) return true;
    }
    return false;
  }

  eachLiteral(text: string, found: (at: number) => boolean): boolean {
    // Windows overlap by the fingerprint's tail, so that a literal across two windows is a candidate in the first.
    for (let start = 0; start < text.length; start += WINDOW_CHARS) {
      const window = text.length <= WINDOW_CHARS ? text : text.slice(start, start + WINDOW_CHARS + FINGERPRINT - 1);
      if (this.eachLiteralIn(text, start, window, Math.min(WINDOW_CHARS, text.length - start), found)) return true;
    }
    return false;
  }

  /** eachLiteral over the first `positions` characters of `window`, which starts at `start` in `text`. */
  private eachLiteralIn(text: string, start: number, window: string, positions: number, found: (at: number) => boolean): boolean {
    this.ensureRoom(window.length);
    this.bytes.write(window, TEXT_AT, window.length, 'latin1');
    const { find } = this.module;
    for (let at = find(0, positions); at !== -1; at = find(at + 1, positions)) {
      this.literalAt.lastIndex = start + at;
      if (this.literalAt.test(text) && found(start + at)) return true;
    }
    return false;
  }

  /** Room for `chars` bytes of text and what the last sixteen loads read past them. */
  private ensureRoom(chars: number): void {
    const needed = TEXT_AT + chars + 16 + FINGERPRINT - 1;
    if (needed <= this.bytes.length) return;
    const memory = this.module.memory;
    memory.grow(Math.ceil((needed - this.bytes.length) / PAGE_BYTES));
    this.bytes = Buffer.from(memory.buffer);
  }
}

/**
 * The six tables: for fingerprint place k, `tables[32k + low]` and `tables[32k + 16 + high]` have bucket b's bit
 * when a literal of bucket b has a byte there with those low and high four bits. Bytes are folded as the module
 * folds them (bit 5 set: ASCII letters lower-cased).
 */
function fillTables(tables: Uint8Array, buckets: readonly (readonly string[])[]): void {
  buckets.forEach((literals, bucket) => {
    for (const literal of literals) {
      for (let place = 0; place < FINGERPRINT; place++) {
        const byte = literal.charCodeAt(place) | 0x20;
        tables[32 * place + (byte & 0x0f)]! |= 1 << bucket;
        tables[32 * place + 16 + (byte >> 4)]! |= 1 << bucket;
      }
    }
  });
}
