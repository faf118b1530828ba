/**
 * recordJson is JSON.stringify, made faster for long raw JSON text: its line must read back as the same value
 * for every draft, whichever path it takes, and `exact` must be JSON.stringify's own text.
 */
import { describe, expect, it } from 'vitest';
import fc from 'fast-check';
import { quoteJsonText, recordJson } from '../../src/log/record-json.js';
import { RAW_PARSED } from '../../src/log/schema.js';

/** JSON text long enough for the quick path: a value padded with a long string of `filler`. */
const longJsonText = (value: unknown, filler: string, spaced: boolean): string =>
  JSON.stringify({ value, padding: filler.repeat(Math.ceil(5000 / Math.max(1, filler.length))) }, null, spaced ? '\t' : undefined);

const isAscii = (text: string): boolean => /^[\u0000-\u007f]*$/.test(text);

describe('recordJson', () => {
  it('gives what JSON.stringify gives, for drafts with long raw JSON text of any content', () => {
    const filler = fc.oneof(fc.constant('x'), fc.constant('iVBORw0KGgo+/='), fc.string({ minLength: 1, maxLength: 8 }), fc.string({ unit: 'binary', minLength: 1, maxLength: 4 }), fc.constant('"\\'));
    const msg = fc.oneof(fc.string({ maxLength: 20 }), fc.string({ unit: 'binary', maxLength: 20 }), fc.constant('Server log (info): xxxx…'));
    fc.assert(
      fc.property(fc.jsonValue(), filler, fc.boolean(), msg, fc.boolean(), (value, fill, spaced, msg, parsed) => {
        const raw = longJsonText(value, fill, spaced);
        const draft = { time: 1, kind: 'notification', raw, msg, ...(parsed ? { [RAW_PARSED]: JSON.parse(raw) as unknown } : {}) };
        const { text, exact } = recordJson(draft);
        const stringified = JSON.stringify(draft);
        expect(exact).toBe(stringified);
        expect(JSON.parse(text)).toEqual(JSON.parse(stringified));
        // Escapes only where they keep the line one byte per character: outside the raw, and only when needed.
        if (isAscii(msg)) expect(text).toBe(stringified);
        if (isAscii(raw)) expect(isAscii(text)).toBe(true);
      }),
      { numRuns: 500 },
    );
  });

  it('keeps the line of a big ASCII frame in ASCII when its summary holds an ellipsis', () => {
    const raw = `{"jsonrpc":"2.0","method":"notifications/message","params":{"data":"${'x'.repeat(65000)}"}}`;
    const { text } = recordJson({ time: 1, kind: 'notification', raw, msg: 'Server log (info): xxxx…', [RAW_PARSED]: JSON.parse(raw) as unknown });
    expect(isAscii(text)).toBe(true);
    expect(text.endsWith('"msg":"Server log (info): xxxx\\u2026"}')).toBe(true);
  });

  it('takes the quick path for a big frame of plain text or base64, and not for JSON inside JSON', () => {
    expect(quoteJsonText(`{"data":"${'x'.repeat(5000)}"}`)).toBe(JSON.stringify(`{"data":"${'x'.repeat(5000)}"}`));
    expect(quoteJsonText(`{"text":"${'{\\"a\\":1}'.repeat(100)}"}`)).toBeUndefined();
    expect(quoteJsonText('{\t"a": 1}')).toBeUndefined();
    expect(quoteJsonText('{"a":"\ud800"}')).toBeUndefined();
  });

  it('serializes a long raw that is not JSON (control characters, lone surrogates) as JSON.stringify does', () => {
    const draft = { time: 1, kind: 'invalid', raw: `not json \u0001\t\ud800 ${'x'.repeat(5000)}`, msg: 'The server’s line…' };
    const { text, exact } = recordJson(draft);
    expect(exact).toBe(JSON.stringify(draft));
    expect(JSON.parse(text)).toEqual(JSON.parse(exact));
    expect(isAscii(text)).toBe(true);
  });

  it('leaves a short record to JSON.stringify, whatever its fields hold', () => {
    const draft = { time: 1, kind: 'invalid', raw: 'not json \u0001', msg: 'The server’s line…' };
    expect(recordJson(draft)).toEqual({ text: JSON.stringify(draft), exact: JSON.stringify(draft) });
  });
});
