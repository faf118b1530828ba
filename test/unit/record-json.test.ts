/**
 * recordJson is JSON.stringify, made faster for long raw JSON text: its output must be the same text for every
 * draft, whichever path it takes.
 */
import { describe, expect, it } from 'vitest';
import fc from 'fast-check';
import { quoteJsonText, recordJson } from '../../src/log/record-json.js';
import { RAW_PARSED } from '../../src/log/schema.js';

/** JSON text long enough for the quick path: a value padded with a long string of `filler`. */
const longJsonText = (value: unknown, filler: string, spaced: boolean): string =>
  JSON.stringify({ value, padding: filler.repeat(Math.ceil(5000 / Math.max(1, filler.length))) }, null, spaced ? '\t' : undefined);

describe('recordJson', () => {
  it('gives exactly what JSON.stringify gives, for drafts with long raw JSON text of any content', () => {
    const filler = fc.oneof(fc.constant('x'), fc.constant('iVBORw0KGgo+/='), fc.string({ maxLength: 8 }), fc.string({ unit: 'binary', maxLength: 4 }), fc.constant('"\\'));
    fc.assert(
      fc.property(fc.jsonValue(), filler, fc.boolean(), fc.string({ maxLength: 20 }), (value, fill, spaced, msg) => {
        const raw = longJsonText(value, fill, spaced);
        const draft = { time: 1, kind: 'notification', raw, msg, [RAW_PARSED]: JSON.parse(raw) as unknown };
        expect(recordJson(draft)).toBe(JSON.stringify(draft));
      }),
      { numRuns: 500 },
    );
  });

  it('takes the quick path for a big frame of plain text or base64, and not for JSON inside JSON', () => {
    expect(quoteJsonText(`{"data":"${'x'.repeat(5000)}"}`)).toBe(JSON.stringify(`{"data":"${'x'.repeat(5000)}"}`));
    expect(quoteJsonText(`{"text":"${'{\\"a\\":1}'.repeat(100)}"}`)).toBeUndefined();
    expect(quoteJsonText('{\t"a": 1}')).toBeUndefined();
    expect(quoteJsonText('{"a":"\ud800"}')).toBeUndefined();
  });

  it('leaves a draft without a parsed raw to JSON.stringify, whatever its raw holds', () => {
    const raw = `not json \u0001 ${'x'.repeat(5000)}`;
    const draft = { time: 1, kind: 'invalid', raw };
    expect(recordJson(draft)).toBe(JSON.stringify(draft));
  });
});
