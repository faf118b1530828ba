/**
 * The same secrets written differently: escaped by a JSON encoder (`\/`, `\u005f`), URL-encoded in a query
 * string, a URL without a user, an upper-case scheme; and the OTLP spans built from a log.
 */
import { describe, expect, it } from 'vitest';
import { Redactor, SCREEN_SOURCE, holdsPrescreenLiteral } from '../../src/log/redact.js';
import { serializeOtlpJson } from '../../src/export/otlp.js';
import type { SpanData } from '../../src/export/otlp-spans.js';

const PW = 'Hunter2Hunter2xyz';
const GITHUB = `ghp_${'AbCdEfGhIjKlMnOpQrStUvWxYz0123456789'}`;

/** What the log line of a record holds once the writer has redacted it. */
function line(record: Record<string, unknown>): string {
  const r = new Redactor();
  return r.redactJson(record, JSON.stringify(record));
}

describe('escaped, encoded and other spellings', () => {
  const raws = [
    `{"jsonrpc":"2.0","id":1,"method":"tools/call","params":{"name":"s","arguments":{"url":"https:\\/\\/bob:${PW}@db.local\\/x"}}}`,
    `{"jsonrpc":"2.0","id":1,"method":"tools/call","params":{"name":"s","arguments":{"api\\u005fkey":"${PW}"}}}`,
    `{"jsonrpc":"2.0","id":1,"method":"tools/call","params":{"name":"s","arguments":{"u":"https://h/cb?api%5Fkey=${PW}&x=1"}}}`,
    `{"jsonrpc":"2.0","id":1,"method":"tools/call","params":{"name":"s","arguments":{"u":"https://h/cb?next=https%3A%2F%2Fu%3A${PW}%40h2%2F"}}}`,
    `{"jsonrpc":"2.0","id":1,"method":"tools/call","params":{"name":"s","arguments":{"u":"redis://:${PW}@cache:6379"}}}`,
  ];
  it.each(raws)('a frame: %s', (raw) => {
    const out = line({ time: 0, kind: 'request', raw, msg: 'Client calls tool s.' });
    expect(out).not.toContain(PW);
    expect(out).toContain('"redacted":true');
  });

  it.each(raws)('a frame cut short, which does not parse: %s', (raw) => {
    const head = raw.slice(0, raw.length - 4);
    expect(line({ time: 0, kind: 'request', raw: head, truncated: true, msg: 'm' })).not.toContain(PW.slice(0, 8));
  });

  it('stderr: an empty-user URL and an upper-case bearer', () => {
    expect(line({ time: 0, kind: 'stderr', text: `connecting to redis://:${PW}@cache:6379`, msg: 'm' })).not.toContain(PW);
    expect(line({ time: 0, kind: 'stderr', text: `AUTHORIZATION: BEARER ${PW}`, msg: 'm' })).not.toContain(PW);
  });

  it('the prescreen lets every escaped form through to the screen', () => {
    const screen = new RegExp(SCREEN_SOURCE, 'i');
    for (const text of ['https:\\/\\/bob:pw@h', '"api\\u005fkey":"x"', '?api%5Fkey=x', 'https%3A%2F%2Fu%3Apw%40h', 'redis://:pw@h']) {
      expect(screen.test(text), text).toBe(true);
      expect(holdsPrescreenLiteral(text), text).toBe(true);
      // As the writer sees them: inside a JSON string of the record's line.
      expect(screen.test(JSON.stringify(text)), text).toBe(true);
    }
  });
});

describe('OTLP spans', () => {
  it('every text attribute, name and status message is redacted', () => {
    const span: SpanData = {
      traceId: '0'.repeat(31) + '1',
      spanId: '0'.repeat(15) + '1',
      name: `resources/read https://bob:${PW}@h/x`,
      kind: 'client',
      startTime: 0,
      endTime: 1,
      status: { code: 'error', message: `failed with token=${PW}` },
      attributes: { 'mcp.resource.uri': `https://bob:${PW}@h/x?api_key=${PW}`, 'mcp.other': `https://h/${GITHUB}/x`, list: [`?token=${PW}`] },
      events: [{ name: 'e', time: 0, attributes: { 'mcp.notification.message': `key ${GITHUB}` } }],
      links: [],
      resource: { label: 'l', session: 's', channel: 'mcp-http' },
    } as unknown as SpanData;
    const json = serializeOtlpJson([span]);
    expect(json).not.toContain(PW);
    expect(json).not.toContain(GITHUB.slice(4, 12));
    expect(json).toContain('https://bob:[redacted]@h/x');
  });
});
