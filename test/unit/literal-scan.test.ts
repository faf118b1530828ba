/**
 * The literal scanner (WebAssembly SIMD) must say exactly what one case-insensitive regex of the literals says,
 * wherever a literal falls: at any of the sixteen positions of a load, at a text's very end, across the windows a
 * long text is scanned in, and with whatever an earlier, longer text left in the module's memory. Its bytes must
 * be what literal-scan.wat compiles to.
 */
import { describe, expect, it } from 'vitest';
import fc from 'fast-check';
import { readFileSync } from 'node:fs';
import { createLiteralScanner, WINDOW_CHARS } from '../../src/log/literal-scan.js';
import { LITERAL_SCAN_WASM } from '../../src/log/literal-scan-wasm.js';
import { holdsPrescreenLiteral, holdsPrescreenLiteralByGroups, PRESCREEN_BUCKETS, PRESCREEN_LITERAL_LIST, PRESCREEN_LITERALS } from '../../src/log/redact.js';
// @ts-expect-error: a plain script, without type declarations
import { compileLiteralScan, literalScanModuleText } from '../../scripts/build-literal-scan.mjs';

const scanner = createLiteralScanner(PRESCREEN_BUCKETS)!;
const oneRegex = new RegExp(PRESCREEN_LITERALS, 'i');

describe('literal scanner', () => {
  it('is available here (Node 20 on this machine has WebAssembly SIMD)', () => {
    expect(scanner).toBeDefined();
  });

  it('its bytes are what literal-scan.wat compiles to (run scripts/build-literal-scan.mjs after changing it)', async () => {
    const base64 = (await compileLiteralScan()) as string;
    expect(LITERAL_SCAN_WASM).toBe(base64);
    expect(readFileSync(new URL('../../src/log/literal-scan-wasm.ts', import.meta.url), 'utf8')).toBe(literalScanModuleText(base64));
  });

  it('finds each literal, in any case, at every position of a load and at the end of the text', () => {
    for (const literal of PRESCREEN_LITERAL_LIST) {
      for (const cased of [literal, literal.toUpperCase(), literal.replace(/^./, (c) => c.toUpperCase())]) {
        for (let before = 0; before < 40; before++) {
          for (const after of [0, 1, 2, 17]) {
            const text = `${'q'.repeat(before)}${cased}${'q'.repeat(after)}`;
            expect(scanner.holdsAny(text), text).toBe(true);
          }
        }
      }
    }
  });

  it('finds no literal in a text without one, however long, and none that is cut short at the end', () => {
    for (let length = 0; length < 300; length++) expect(scanner.holdsAny('q'.repeat(length))).toBe(false);
    for (const literal of PRESCREEN_LITERAL_LIST) {
      for (let before = 0; before < 40; before++) expect(scanner.holdsAny(`${'q'.repeat(before)}${literal.slice(0, -1)}`)).toBe(false);
    }
  });

  it('says what one regex of the literals says, on random mixtures of their pieces, other cases and other scripts', () => {
    const bits = ['pa', 'ss', 'pw', 'd', 'se', 'cr', 'et', 'to', 'ken', 'k', 'ey', 'au', 'th', 'coo', 'cred', 'sk', '-', '_', 'gh', 'p', 'o', 'u', 'r', 'git', 'x', 'ak', 'ia', 'as', 'ai', 'za', 'live', 'j', 'bear', 'ba', 'sic', ':', '/', ' ', 'q', '\r', '\x7f'];
    // Characters whose Latin-1 byte is not themselves (the scanner keeps a UTF-16 unit's low byte) or that fold to
    // an ASCII letter only with the `u` flag: KELVIN SIGN, LONG S, š (low byte `a`), Ű (low byte `p`), 你, é.
    const others = ['\u212a', '\u017f', '\u0161', '\u0170', '\u4f60', '\u00e9', '\u{1f600}'];
    const piece = fc.tuple(fc.constantFrom(...bits, ...PRESCREEN_LITERAL_LIST, ...others), fc.boolean()).map(([bit, upper]) => (upper ? bit.toUpperCase() : bit));
    fc.assert(
      fc.property(fc.array(fc.oneof(piece, fc.string({ maxLength: 3 })), { maxLength: 40 }), fc.nat(70), (parts, padding) => {
        const text = `${'q'.repeat(padding)}${parts.join('')}`;
        expect(scanner.holdsAny(text)).toBe(oneRegex.test(text));
      }),
      { numRuns: 20_000 },
    );
  });

  it('does not take what an earlier, longer text left in its memory for part of a literal', () => {
    expect(scanner.holdsAny(`${'q'.repeat(100_000)}password`)).toBe(true);
    // The same bytes up to `pa` are still there, followed by `ssword` from before.
    expect(scanner.holdsAny(`${'q'.repeat(100_000)}pa`)).toBe(false);
    expect(scanner.holdsAny(`${'q'.repeat(100_000)}p`)).toBe(false);
  });

  it('scans a text longer than a window in windows, and finds a literal across the edge between two', () => {
    const long = 'q'.repeat(2 * WINDOW_CHARS + 100);
    expect(scanner.holdsAny(long)).toBe(false);
    for (const at of [WINDOW_CHARS - 3, WINDOW_CHARS - 2, WINDOW_CHARS - 1, WINDOW_CHARS, 2 * WINDOW_CHARS - 1, long.length - 3]) {
      const text = `${long.slice(0, at)}xox${long.slice(at + 3)}`;
      expect(text.length).toBe(long.length);
      expect(scanner.holdsAny(text), `xox at ${at}`).toBe(true);
    }
  });

  it('reports every place a literal begins, in order, overlapping ones too, across windows, until told to stop', () => {
    const places = (text: string): number[] => {
      const found: number[] = [];
      scanner.eachLiteral(text, (at) => {
        found.push(at);
        return false;
      });
      return found;
    };
    const literalAt = new RegExp(PRESCREEN_LITERALS, 'iy');
    const everywhere = (text: string): number[] => [...text].flatMap((_, at) => ((literalAt.lastIndex = at), literalAt.test(text) ? [at] : []));
    fc.assert(
      fc.property(fc.array(fc.constantFrom(...PRESCREEN_LITERAL_LIST, 'q', 'XOX', 'o', 'ox', 'Key', ' '), { maxLength: 40 }), (parts) => {
        const text = parts.join('');
        expect(places(text)).toEqual(everywhere(text));
      }),
      { numRuns: 2000 },
    );
    expect(places('xoxoxox-token')).toEqual([0, 2, 4, 8]);
    const long = `${'q'.repeat(WINDOW_CHARS - 2)}xox${'q'.repeat(WINDOW_CHARS)}Bearer`;
    expect(places(long)).toEqual([WINDOW_CHARS - 2, 2 * WINDOW_CHARS + 1]);
    let calls = 0;
    expect(scanner.eachLiteral('pass pwd key', () => ++calls === 2)).toBe(true);
    expect(calls).toBe(2);
  });

  it('takes up to eight buckets of ASCII literals of three characters or more', () => {
    expect(() => createLiteralScanner([['ab']])).toThrow(/three characters/);
    expect(() => createLiteralScanner([['pässe']])).toThrow(/ASCII/);
    expect(() => createLiteralScanner(Array.from({ length: 9 }, () => ['abc']))).toThrow(/9 buckets/);
    // Any grouping finds the same: one bucket for all is slower, never wrong.
    const oneBucket = createLiteralScanner([PRESCREEN_LITERAL_LIST])!;
    for (const text of ['q'.repeat(100), `${'q'.repeat(100)}GitHub_PAT_`, 'the weather in Paris is mild today, with light rain', 'acid aces']) {
      expect(oneBucket.holdsAny(text)).toBe(oneRegex.test(text));
    }
  });
});

describe('the prescreen with and without the scanner', () => {
  it('says the same with the scanner as with its regexes (where WebAssembly SIMD is missing), short texts and long', () => {
    const words = fc.constantFrom(...PRESCREEN_LITERAL_LIST, 'The weather in Sacramento', '{"type":"text"}', ' ', 'x', '\u0160', 'A', 'K');
    fc.assert(
      fc.property(fc.array(fc.oneof(words, fc.string({ maxLength: 4 })), { maxLength: 30 }), (parts) => {
        const text = parts.join('');
        expect(holdsPrescreenLiteral(text)).toBe(oneRegex.test(text));
        expect(holdsPrescreenLiteralByGroups(text)).toBe(oneRegex.test(text));
      }),
      { numRuns: 10_000 },
    );
  });
});
