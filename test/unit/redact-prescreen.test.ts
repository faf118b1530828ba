/**
 * The prescreen in front of the redaction screen may only ever say "certainly no secret" when the screen would
 * say the same: a text the screen catches must contain one of the prescreen's literals. Checked on the shapes
 * the screen is built for and on random mixtures of its words, separators and noise. The screen of long texts,
 * tried only near those literals, must find exactly what the one regex finds.
 */
import { describe, expect, it } from 'vitest';
import fc from 'fast-check';
import { holdsPrescreenLiteral, PRESCREEN_LITERALS, PRESCREEN_LONGEST, Redactor, SCREEN_NEAR_LITERALS_CHARS, SCREEN_SOURCE, screenNearLiterals, screenNearLiteralsByGroups } from '../../src/log/redact.js';
import { cutIntoLengths } from '../support/chunks.js';

const screen = new RegExp(SCREEN_SOURCE, 'i');
const pieces = [
  'password', 'PASSWD', 'passphrase', 'Secret', 'token', 'progressToken', 'api_key', 'api-key', 'API KEY', 'Authorization',
  'cookie', 'private_key', 'accessKey', 'credential', 'pass', 'pwd', 'auth', 'sk-', 'gsk_', 'ghp_', 'github_pat_', 'xoxb-',
  'AKIA', 'ASIA', 'AIza', 'rk_live_', 'sk_live_', 'eyJ', 'Bearer ', 'basic ', 'https://', 'user:', 'pw@', 'x-api-key',
  '"', '\\"', ':', '=', ',', ' ', '--', '-', '_', '@', '/', 'abc', 'XYZ', '0123456789abcdef',
];

describe('redaction prescreen', () => {
  it('passes every text the screen catches (random mixtures of the screen\u2019s words)', () => {
    fc.assert(
      fc.property(fc.array(fc.oneof(fc.constantFrom(...pieces), fc.string({ maxLength: 6 })), { maxLength: 14 }), (parts) => {
        const text = parts.join('');
        if (screen.test(text)) expect(holdsPrescreenLiteral(text)).toBe(true);
      }),
      { numRuns: 20_000 },
    );
  });

  it('passes the shapes the screen exists for, and lets plain text through without the screen', () => {
    for (const text of ['{"password":"x"}', '--token abc', 'Authorization: Bearer abcdefgh12', 'sk-proj-abcdefghijklmnop', 'postgres://u:pw@h/db', '{"x-api-key":"v"}', '"pwd":1']) {
      expect(screen.test(text)).toBe(true);
      expect(holdsPrescreenLiteral(text)).toBe(true);
    }
    expect(holdsPrescreenLiteral('{"jsonrpc":"2.0","id":1,"result":{"content":[{"type":"text","text":"It is raining in Sacramento"}]}}')).toBe(false);
  });

  it('its regexes find a literal exactly where one regex of all the literals does, in any case, in short texts and long ones', () => {
    const all = new RegExp(PRESCREEN_LITERALS, 'i');
    const bits = ['pa', 'ss', 'pw', 'd', 'se', 'cr', 'et', 'to', 'ken', 'k', 'ey', 'au', 'th', 'coo', 'kie', 'cred', 'ential', 'sk', '-', '_', 'gh', 'p', 'o', 'u', 's', 'r', 'github', 'pat', 'x', 'ak', 'ia', 'as', 'ai', 'za', 'live', 'j', 'bear', 'er', 'ba', 'sic', ':', '/', ' ', 'q'];
    const literals = PRESCREEN_LITERALS.replace('gh[pousr]_', 'ghp_|gho_|ghu_|ghs_|ghr_').replace(/\\/g, '').split('|');
    const anyCase = fc.tuple(fc.constantFrom(...bits, ...literals), fc.boolean()).map(([bit, upper]) => (upper ? bit.toUpperCase() : bit));
    fc.assert(
      fc.property(fc.array(fc.oneof(anyCase, fc.string({ maxLength: 3 })), { maxLength: 12 }), (parts) => {
        const text = parts.join('');
        expect(holdsPrescreenLiteral(text)).toBe(all.test(text));
        // Short texts are screened with one regex, longer ones with the scanner: `q` starts no literal.
        const long = `${'q'.repeat(80)}${text}`;
        expect(holdsPrescreenLiteral(long)).toBe(all.test(long));
      }),
      { numRuns: 20_000 },
    );
  });

  it('the screen of long texts, tried only near their literals (found by the scanner or the groups), finds what the one regex finds anywhere', () => {
    // Padding that starts no literal keeps the texts long (as screenNearLiterals is used) and the literals few
    // (a text dense with them goes to the one regex).
    const padding = 'q'.repeat(4 * SCREEN_NEAR_LITERALS_CHARS);
    const word = fc.constantFrom('a', 'Z', '0', '_', '-');
    const flag = fc.tuple(fc.constantFrom('-', '--'), fc.array(word, { maxLength: 44 }), fc.constantFrom('token', 'private_key', 'API-KEY', 'passwd')).map(([dash, w, key]) => `${dash}${w.join('')}${key}`);
    fc.assert(
      fc.property(fc.array(fc.oneof(fc.constantFrom(...pieces, '\\\\', '   ', 'progress', 'page'), fc.string({ maxLength: 6 }), flag), { maxLength: 16 }), fc.nat(padding.length), (parts, split) => {
        const text = `${padding.slice(0, split)}${parts.join('')}${padding.slice(split)}`;
        expect(screenNearLiterals(text)).toBe(screen.test(text));
        expect(screenNearLiteralsByGroups(text)).toBe(screen.test(text));
      }),
      { numRuns: 5000 },
    );
  });

  it('reaches as far back from a key word as a flag can: forty word characters after the dashes', () => {
    const long = (middle: string): string => `${'q'.repeat(SCREEN_NEAR_LITERALS_CHARS)} ${middle} ${'q'.repeat(100)}`;
    for (const [middle, found] of [[`--${'a'.repeat(40)}token`, true], [`--${'a'.repeat(41)}token`, false], [`-${'b-'.repeat(20)}private_key`, true]] as const) {
      expect(screen.test(long(middle))).toBe(found);
      expect(screenNearLiterals(long(middle))).toBe(found);
      expect(screenNearLiteralsByGroups(long(middle))).toBe(found);
      expect(new Redactor().screen(long(middle))).toBe(found);
    }
  });

  it('a long text dense with key words goes to the one regex, and still finds what it holds', () => {
    const dense = 'Pass the API token in a header; the key rotates. '.repeat(200);
    for (const [text, found] of [[dense, false], [`${dense}{"password":"x"}`, true], [`--token ${dense}`, true]] as const) {
      expect(screen.test(text)).toBe(found);
      expect(screenNearLiterals(text)).toBe(found);
      expect(screenNearLiteralsByGroups(text)).toBe(found);
    }
  });

  it('PRESCREEN_LONGEST is the length of its longest literal (streamed pieces are screened with that much tail)', () => {
    const lengths = PRESCREEN_LITERALS.split('|').map((alt) => alt.replace(/\[[^\]]+\]/g, 'x').replace(/\\/g, '').length);
    expect(Math.max(...lengths)).toBe(PRESCREEN_LONGEST);
  });

  it('a streamed secret is caught however the stream is cut, with the tail kept between pieces', () => {
    const redactor = new Redactor();
    fc.assert(
      fc.property(fc.string({ maxLength: 300 }), fc.string({ maxLength: 40 }), fc.array(fc.integer({ min: 1, max: 30 }), { minLength: 1, maxLength: 40 }), (before, after, cuts) => {
        const text = `${before} sk-proj-${'a1B2c3D4'.repeat(4)} ${after}`;
        const pieces = cutIntoLengths(text, cuts);
        const exchange = `x${Math.random()}`;
        const out = pieces.map((delta, index) => {
          const record = { time: 0, kind: 'llm-chunk', session: 's', exchange, index, delta, msg: 'chunk' };
          return (JSON.parse(redactor.redactJson(record, JSON.stringify(record))) as { delta: string }).delta;
        });
        expect(out.join('')).not.toContain('a1B2c3D4a1B2c3D4');
      }),
      { numRuns: 2000 },
    );
  });
});
