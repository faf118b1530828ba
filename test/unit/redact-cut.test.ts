/**
 * Redact before you cut: a preview, a capped frame, a capped stderr line or an SSE event of a stream mcptap does
 * not read as an LLM must not keep the head of a key the cut or the event boundary split.
 */
import { describe, expect, it } from 'vitest';
import { cutClean, danglingSecretAt, Redactor, shorten } from '../../src/log/redact.js';
import { preview, previewJson } from '../../src/protocols/mcp.js';

// Credential-shaped test values, built at run time so no scanner mistakes this file for a leak.
const GITHUB = `ghp_${'AbCdEfGhIjKlMnOpQrStUvWxYz0123456789'}`;
const JWT = ['eyJhbGciOiJIUzI1NiJ9', 'eyJzdWIiOiIxMjM0NTY3ODkwIn0', 'dozjgNryP4J3jVmNHl0w5N_XgL0n3I9PlFUP0THsR8U'].join('.');

/** Fails when any 8-character piece of `secret` past its first `open` characters is in `text`. */
function expectNoPiece(secret: string, text: string, open = 4): void {
  for (let i = open; i + 8 <= secret.length; i++) expect(text, `holds ${secret.slice(i, i + 8)}`).not.toContain(secret.slice(i, i + 8));
}

/** What the log holds of a text: the writer redacts every record whole. */
const logged = (text: string): string => new Redactor().redactText(text);

function run(redactor: Redactor, record: Record<string, unknown>): Record<string, unknown> {
  return JSON.parse(redactor.redactJson(record, JSON.stringify(record))) as Record<string, unknown>;
}

describe('cutClean', () => {
  it('drops the word a cut lands in, and keeps whole words', () => {
    expect(cutClean('the weather in Sacramento', 18)).toBe('the weather in ');
    expect(cutClean('the weather in Sacramento', 15)).toBe('the weather in ');
    expect(cutClean('short', 80)).toBe('short');
  });

  it('keeps the head of a long blob unless it begins like a credential', () => {
    const blob = 'A'.repeat(5000);
    expect(cutClean(`x ${blob}`, 1000)).toBe(`x ${'A'.repeat(998)}`);
    expect(cutClean(`x eyJ${blob}`, 1000)).toBe('x ');
  });

  it('drops a URL password the cut runs into, and a bearer token', () => {
    expect(cutClean('postgres://app:hunter!2xyz@db/app', 22)).toBe('postgres://app:');
    expect(cutClean('Authorization: Bearer abcdefgh12345678 and more', 30)).toBe('Authorization: ');
    expect(danglingSecretAt('plain words')).toBe(-1);
  });

  it('at every cut length, no 8-character piece of the key is left', () => {
    const text = `${'a'.repeat(74)} ${GITHUB} then ${JWT} end`;
    for (let n = 0; n <= text.length; n++) {
      const head = logged(cutClean(text, n));
      expectNoPiece(GITHUB, head);
      expectNoPiece(JWT, head, 3);
    }
  });
});

describe('previews and summaries are redacted before they are cut', () => {
  it('the issue\u2019s repro: a tools/call argument preview cut inside a key', () => {
    const args = { q: `${'a'.repeat(74)} ${GITHUB}` };
    for (const max of [20, 60, 80, 100, 120]) {
      expectNoPiece(GITHUB, logged(previewJson(args, max)));
      expectNoPiece(GITHUB, logged(preview(`${'a '.repeat(30)}${GITHUB} more`, max)));
    }
  });

  it('a JWT in a model answer, at every preview length', () => {
    for (let max = 10; max < 140; max++) expectNoPiece(JWT, logged(preview(`The token is ${JWT}, keep it safe.`, max)), 3);
  });

  it('shorten: a stderr line or a prompt', () => {
    const line = `${'x'.repeat(190)} ${GITHUB}`;
    expectNoPiece(GITHUB, logged(shorten(line, 200)));
    expect(shorten('short line', 200)).toBe('short line');
  });
});

describe('the log\u2019s redactor', () => {
  it('a capped frame whose head ends inside a key keeps none of it', () => {
    const r = new Redactor();
    const raw = `{"jsonrpc":"2.0","id":1,"method":"tools/call","params":{"arguments":{"q":"${GITHUB.slice(0, 20)}`;
    const out = run(r, { time: 0, kind: 'request', raw, truncated: true, msg: 'Client calls tool s.' });
    expectNoPiece(GITHUB.slice(0, 20), out.raw as string);
    expect(out.redacted).toBe(true);
    const stderr = run(r, { time: 0, kind: 'stderr', text: `db at postgres://app:${'Zq9!'.repeat(5)}`, truncated: true, msg: 'Server stderr: db' });
    expect(stderr.text).toBe('db at postgres://app:');
    // A head that ends in plain text is kept as it is.
    const plain = { time: 0, kind: 'request', raw: '{"q":"the weather in Sac', truncated: true, msg: 'm' };
    expect(run(r, plain)).toEqual(plain);
  });

  it('a key split across the events of an SSE stream of an unknown dialect, cut at every byte', () => {
    const secret = ['sk', 'proj', 'Sup3rSecretPw99abcdefgh'].join('-');
    const text = `here is the key ${secret} for you`;
    for (let at = 1; at < text.length; at++) {
      const r = new Redactor();
      const datas = [text.slice(0, at), text.slice(at)].map((t, i) => {
        const data = JSON.stringify({ type: 'content_block_delta', index: 0, delta: { type: 'text_delta', text: t } });
        return run(r, { time: i, kind: 'sse', session: 's', exchange: 'x1', event: 'content_block_delta', data, msg: `Server sends an SSE event: data ${JSON.stringify(preview(data, 80))}.` });
      });
      const logged = JSON.stringify(datas);
      expectNoPiece(secret, logged, 8);
    }
  });

  it('an SSE stream whose data is not JSON', () => {
    const secret = `AKIA${'IOSFODNN7EXAMPLE'}`;
    const r = new Redactor();
    const out = ['key AKIAIOSF', 'ODNN7EXAMPLE done'].map((data, i) => run(r, { time: i, kind: 'sse', session: 's', exchange: 'x2', data, msg: 'm' }));
    expectNoPiece(secret, JSON.stringify(out), 4);
  });

  it('1,100 streams open at once: a forgotten stream\u2019s next piece is judged conservatively', () => {
    const secret = ['sk', 'proj', 'Sup3rSecretPw99abcdefgh'].join('-');
    const r = new Redactor();
    const chunk = (exchange: string, delta: string): Record<string, unknown> =>
      run(r, { time: 0, kind: 'llm-chunk', session: 's', exchange, raw: JSON.stringify({ message: { content: delta } }), delta, msg: `Model streams ${JSON.stringify(delta)}.` });
    for (let i = 0; i < 1100; i++) chunk(`e${i}`, 'the key is sk-proj-');
    const later = [];
    for (let i = 0; i < 1100; i++) later.push(chunk(`e${i}`, 'Sup3rSecretPw99abcdefgh, done'));
    expectNoPiece(secret, JSON.stringify(later), 8);
    // A stream that was not forgotten goes on as before.
    expect(chunk('e1099', ' and more').delta).toBe(' and more');
  });
});
