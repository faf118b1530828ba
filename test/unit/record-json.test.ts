/**
 * recordJson builds a record's line field by field: it must read back as the same value JSON.stringify gives
 * for every draft, whichever path it takes; a raw the tap parsed as JSON is written as JSON (format v2) and the
 * reader takes its exact text back out of the line; `exact` holds every character as it is.
 */
import { describe, expect, it } from 'vitest';
import fc from 'fast-check';
import { quote, quoteJsonText, recordJson } from '../../src/log/record-json.js';
import { parseRecordLine } from '../../src/log/reader.js';
import { RAW_PARSED } from '../../src/log/schema.js';

/** JSON text long enough for the quick path: a value padded with a long string of `filler`. */
const longJsonText = (value: unknown, filler: string, spaced: boolean): string =>
  JSON.stringify({ value, padding: filler.repeat(Math.ceil(5000 / Math.max(1, filler.length))) }, null, spaced ? '\t' : undefined);

const isAscii = (text: string): boolean => /^[\u0000-\u007f]*$/.test(text);

/** A draft as McpSession makes one for a frame of JSON text. */
const frameDraft = (raw: string, fields: Record<string, unknown> = {}) => ({
  time: 1796169762277,
  bytes: Buffer.byteLength(raw),
  raw,
  kind: 'request',
  dir: 'c2s',
  msg: 'Client sends request x.',
  ...fields,
  [RAW_PARSED]: JSON.parse(raw) as unknown,
});

/** The line the writer makes of a draft (its stamp, then the record's fields), read back by the reader. */
function readBack(text: string): Record<string, unknown> {
  const line = `{"v":2,"seq":0,"level":30,"session":"s","channel":"stdio","label":"l",${text.slice(1)}`;
  const parsed = parseRecordLine(line);
  if (!parsed || !('record' in parsed)) throw new Error(`not read back: ${JSON.stringify(parsed)}`);
  return parsed.record as unknown as Record<string, unknown>;
}

/** Frames with every kind of string JSON can hold, as literal text. */
const ODD_FRAMES = [
  '{"jsonrpc":"2.0","id":1,"method":"tools/call","params":{"name":"say","arguments":{"text":"a \\"quoted\\" word, a \\\\ backslash"}}}',
  '{"jsonrpc":"2.0","id":2,"method":"x","params":{"ctl":"\\u0000\\u0001\\b\\f\\n\\r\\t\\u001f","raw":"not the field","x":{"raw":[1]}}}',
  '{"jsonrpc":"2.0","id":3,"method":"x","params":{"lone":"\\ud800 and \\udfff","pair":"😀","sep":"\u2028\u2029"}}',
  '{"jsonrpc":"2.0","id":4,"result":{"content":[{"type":"text","text":"Grüße, 東京, naïve — “quotes”"}]}}',
  '{"jsonrpc":"2.0","id":123456789012345678901234567890,"result":{}}',
  '{"jsonrpc":"2.0","id":1e400,"result":{}}',
  '{"jsonrpc":"2.0","id":null,"error":{"code":-32700,"message":"Parse error","data":{"raw":"{\\"a\\":"}}}',
  '[{"jsonrpc":"2.0","id":1,"method":"ping"},{"jsonrpc":"2.0","method":"notifications/initialized"}]',
  '  {"jsonrpc":"2.0","id":"s","method":"ping"}\t',
  '{ "jsonrpc" : "2.0" , "id" : 5 , "method" : "ping" }',
];

describe('recordJson', () => {
  it('writes the value JSON.stringify writes, with raw last, for any fields', () => {
    const field = fc.oneof(fc.string(), fc.string({ unit: 'binary' }), fc.double(), fc.integer(), fc.boolean(), fc.constant(null), fc.constant(undefined), fc.jsonValue());
    fc.assert(
      fc.property(fc.dictionary(fc.string({ unit: 'binary', maxLength: 6 }), field, { maxKeys: 8 }), fc.option(fc.string({ unit: 'binary' })), (fields, raw) => {
        const draft: Record<string, unknown> = { time: 1, kind: 'stderr', ...fields };
        if (raw !== null) draft.raw = raw;
        const { text, exact } = recordJson(draft);
        expect(exact).toBe(text);
        expect(JSON.parse(text)).toEqual(JSON.parse(JSON.stringify(draft)));
        const keys = Object.keys(JSON.parse(text) as object);
        if (typeof draft.raw === 'string') expect(keys.at(-1)).toBe('raw');
      }),
      { numRuns: 1000 },
    );
  });

  it('writes a frame of one-line JSON as JSON, and the reader gives back its exact text', () => {
    for (const raw of ODD_FRAMES) {
      const { text } = recordJson(frameDraft(raw, { id: 1, method: 'x', error: { code: 1, message: 'm', data: { raw: '"raw":{' } } }));
      expect(text.endsWith(`,"raw":${raw}}`)).toBe(true);
      const back = readBack(text);
      expect(back.raw).toBe(raw);
      expect(back.error).toEqual({ code: 1, message: 'm', data: { raw: '"raw":{' } });
    }
  });

  it('writes the odd strings of a record exactly as JSON.stringify does', () => {
    const odd = ['"', '\\', '\\"', '\u0000\u001f\u007f', '\ud800', 'x\udc00', '😀', '\u2028\u2029', 'Grüße…', ''];
    for (const msg of odd) {
      const draft = { time: 1, kind: 'stderr', dir: 's2c', text: msg, bytes: 1, msg, raw: msg };
      const { text } = recordJson(draft);
      expect(text).toBe(JSON.stringify({ time: 1, kind: 'stderr', dir: 's2c', text: msg, bytes: 1, msg, raw: msg }));
    }
  });

  it('closes a plain string wherever it falls: before a number, an escaped string, raw, or the end', () => {
    const drafts = [
      { kind: 'request', bytes: 2, msg: 'a "quoted" word', tool: 'echo' },
      { kind: 'request', msg: '', dir: 'c2s', raw: 'x' },
      { msg: 'first', skipped: undefined, id: null, method: 'tools/call' },
    ];
    for (const draft of drafts) {
      expect(recordJson(draft).text).toBe(JSON.stringify(draft));
      expect(recordJson(draft, '{"v":2,', '}\n').text).toBe(`{"v":2,${JSON.stringify(draft).slice(1)}\n`);
    }
  });

  it('writes ids and numbers as JSON.stringify does: huge, fractional, null, not finite', () => {
    for (const id of [0, -0, 1e21, 2 ** 53 + 1, 0.1, -1.5e-7, Number.MAX_VALUE, null, 'id', Infinity, NaN]) {
      const draft = { time: 1, kind: 'response', dir: 's2c', id, latencyMs: 0.25, msg: 'm' };
      expect(recordJson(draft).text).toBe(JSON.stringify(draft));
    }
  });

  it('leaves a raw that is not one-line JSON as a string: plain text, a cut head, several lines, a JSON string', () => {
    for (const raw of ['not json', '{"jsonrpc":"2.0","id":1,"method":"x","params":{"a":"b', '{\n"a": 1\r\n}', '{"a":1}\r{"b":2}', '"a string"', '42']) {
      const draft: Record<string | symbol, unknown> = { time: 1, kind: 'invalid', dir: 's2c', reason: 'r', bytes: 1, raw, msg: 'm' };
      try {
        draft[RAW_PARSED] = JSON.parse(raw);
      } catch {
        // not JSON: no RAW_PARSED, as the session leaves it
      }
      const { text } = recordJson(draft);
      expect(text.endsWith(`,"raw":${JSON.stringify(raw)}}`)).toBe(true);
      expect(readBack(text).raw).toBe(raw);
    }
  });

  it('gives JSON.stringify’s value for drafts with long raw JSON text of any content', () => {
    const filler = fc.oneof(fc.constant('x'), fc.constant('iVBORw0KGgo+/='), fc.string({ minLength: 1, maxLength: 8 }), fc.string({ unit: 'binary', minLength: 1, maxLength: 4 }), fc.constant('"\\'));
    const msg = fc.oneof(fc.string({ maxLength: 20 }), fc.string({ unit: 'binary', maxLength: 20 }), fc.constant('Server log (info): xxxx…'));
    fc.assert(
      fc.property(fc.jsonValue(), filler, fc.boolean(), msg, fc.boolean(), (value, fill, spaced, msg, parsed) => {
        const raw = longJsonText(value, fill, spaced);
        const draft = { time: 1, kind: 'notification', dir: 's2c', method: 'm', bytes: 1, raw, msg, ...(parsed ? { [RAW_PARSED]: JSON.parse(raw) as unknown } : {}) };
        const { text, exact } = recordJson(draft);
        expect(JSON.parse(text)).toEqual(JSON.parse(exact));
        // Read back, the record is the draft, its raw the exact text (written as JSON or as a string).
        expect(readBack(text)).toMatchObject(JSON.parse(JSON.stringify(draft)) as object);
        // Escapes only where they keep the line one byte per character: outside the raw, and only when needed.
        if (isAscii(msg)) expect(text).toBe(exact);
        if (isAscii(raw)) expect(isAscii(text)).toBe(true);
        // `exact` holds every character as it is.
        if (!/["\\\u0000-\u001f\ud800-\udfff]/.test(msg)) expect(exact).toContain(`"msg":"${msg}"`);
      }),
      { numRuns: 500 },
    );
  });

  it('keeps the line of a big ASCII frame in ASCII when its summary holds an ellipsis', () => {
    const raw = `{"jsonrpc":"2.0","method":"notifications/message","params":{"data":"${'x'.repeat(65000)}"}}`;
    const { text } = recordJson({ time: 1, kind: 'notification', raw, msg: 'Server log (info): xxxx…', [RAW_PARSED]: JSON.parse(raw) as unknown });
    expect(isAscii(text)).toBe(true);
    expect(text.endsWith(`"msg":"Server log (info): xxxx\\u2026","raw":${raw}}`)).toBe(true);
  });

  it('quotes any string as JSON.stringify does: none, a few or many quotes, with other escapes or without', () => {
    const strings = ['', 'plain', '"', '""', 'a "b" c', '"start', 'end"', 'with {"text":"hello 1"} inside', '"'.repeat(16), '"'.repeat(17), `${'a"'.repeat(40)}`, 'a "q" and a \\ backslash', 'a "q" and a\nnew line', 'a "q" \ud800 lone', 'paired "😀" surrogates', 'tab\t', 'Grüße "東京"', '\u2028 "line separator"'];
    for (const text of strings) expect(quote(text)).toBe(JSON.stringify(text));
  });

  it('quotes a big frame of plain text or base64 by searching, and not JSON inside JSON', () => {
    expect(quoteJsonText(`{"data":"${'x'.repeat(5000)}"}`)).toBe(JSON.stringify(`{"data":"${'x'.repeat(5000)}"}`));
    expect(quoteJsonText(`{"text":"${'{\\"a\\":1}'.repeat(100)}"}`)).toBeUndefined();
    expect(quoteJsonText('{\t"a": 1}')).toBeUndefined();
    expect(quoteJsonText('{"a":"\ud800"}')).toBeUndefined();
  });

  it('serializes a long raw that is not JSON (control characters, lone surrogates) as JSON.stringify does', () => {
    const draft = { time: 1, kind: 'invalid', msg: 'The server’s line…', raw: `not json \u0001\t\ud800 ${'x'.repeat(5000)}` };
    const { text, exact } = recordJson(draft);
    expect(exact).toBe(JSON.stringify(draft));
    expect(JSON.parse(text)).toEqual(JSON.parse(exact));
    expect(isAscii(text)).toBe(true);
  });
});

describe('reading a v2 line', () => {
  it('reads a v1 line, whose raw is a string, as it always did', () => {
    const raw = '{"jsonrpc":"2.0","id":1,"method":"ping"}';
    const line = JSON.stringify({ v: 1, seq: 0, level: 30, session: 's', channel: 'stdio', label: 'l', time: 1, bytes: raw.length, raw, kind: 'request', dir: 'c2s', id: 1, method: 'ping', msg: 'm' });
    const parsed = parseRecordLine(line);
    expect(parsed && 'record' in parsed && parsed.record).toMatchObject({ v: 1, raw, id: 1 });
  });

  it('takes a frame from the record’s own raw key, not from one inside an earlier field or inside the frame', () => {
    const raw = '{"jsonrpc":"2.0","id":1,"method":"x","params":{"raw":{"raw":"}"}}}';
    const line = `{"v":2,"seq":0,"level":30,"session":"s","channel":"stdio","label":"l","time":1,"bytes":1,"kind":"request","dir":"c2s","id":1,"method":"x","msg":"a \\"raw\\":{ here","client":{"raw":{"a":"\\\\"}},"raw":${raw}}`;
    const parsed = parseRecordLine(line);
    expect(parsed && 'record' in parsed && parsed.record).toMatchObject({ raw, client: { raw: { a: '\\' } } });
  });
});
