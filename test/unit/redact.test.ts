import { describe, expect, it } from 'vitest';
import fc from 'fast-check';
import { REDACTED, Redactor, compilePattern, isSecretKey, redactHeaders } from '../../src/log/redact.js';
import { McptapError } from '../../src/types.js';
import { RAW_PARSED } from '../../src/log/schema.js';
import { recordJson } from '../../src/log/record-json.js';

// Credential-shaped test values, built at run time so no scanner mistakes this file for a leak.
const OPENAI = ['sk', 'proj', 'Abcdefghij0123456789KLMNOPqrstuv'].join('-');
const GROQ = `gsk_${'a1B2c3D4e5F6g7H8i9J0kLmNoP'}`;
const GITHUB = `ghp_${'0123456789abcdefghijABCDEFGHIJklmn'}`;
const GITHUB_PAT = `github_pat_${'11AAAAAAA0123456789_abcdefghijklmnop'}`;
const SLACK = `xoxb-${'123456789012-abcdefghijkl'}`;
const AWS = `AKIA${'IOSFODNN7EXAMPLE'}`;
const JWT = ['eyJhbGciOiJIUzI1NiJ9', 'eyJzdWIiOiIxMjM0NTY3ODkwIn0', 'dozjgNryP4J3jVmNHl0w5N_XgL0n3I9PlFUP0THsR8U'].join('.');

const r = new Redactor();

/** A record as LogWriter hands it to the redactor, and its line. */
function run(redactor: Redactor, record: Record<string, unknown>): Record<string, unknown> {
  return redactor.redactRecord(record, JSON.stringify(record));
}

describe('isSecretKey', () => {
  it('knows secret names in any spelling', () => {
    for (const k of ['password', 'Password', 'db_password', 'client_secret', 'token', 'access_token', 'GITHUB_TOKEN', 'OPENAI_API_KEY', 'api_key', 'apiKey', 'apikey', 'x-api-key', 'Authorization', 'cookie', 'private_key', 'AWS_SECRET_ACCESS_KEY', 'pwd']) {
      expect(isSecretKey(k), k).toBe(true);
    }
  });
  it('leaves look-alikes alone', () => {
    for (const k of ['progressToken', 'nextPageToken', 'maxTokens', 'promptTokens', 'max_tokens', 'tokens', 'monkey', 'keyboard', 'passenger', 'description', 'name']) {
      expect(isSecretKey(k), k).toBe(false);
    }
  });
});

describe('redactText: credential-shaped values', () => {
  it.each([
    ['OpenAI project key', OPENAI],
    ['Groq key', GROQ],
    ['GitHub token', GITHUB],
    ['GitHub fine-grained token', GITHUB_PAT],
    ['Slack token', SLACK],
    ['AWS access key id', AWS],
    ['JWT', JWT],
  ])('%s', (_name, secret) => {
    const out = r.redactText(`use ${secret} now`);
    expect(out).toBe(`use ${REDACTED} now`);
  });

  it('keeps the scheme of a bearer token and the user of a URL', () => {
    expect(r.redactText('Authorization: Bearer abcd1234efgh5678')).toBe('Authorization: Bearer [redacted]');
    expect(r.redactText('postgres://app:hunter2@db.local:5432/app')).toBe('postgres://app:[redacted]@db.local:5432/app');
  });

  it('does not touch ordinary text that only looks a little like a key', () => {
    const texts = ['task-list-abcdefghijklmnopqrstuv', 'the bearer of bad news', 'bearer tokens are short-lived', 'desk-lamp', 'max_tokens=4096 is plenty', 'progressToken: 3'];
    // A path's last part is no key: the message of `mcptap -- /etc/passwd` says what went wrong.
    texts.push('mcptap could not start /etc/passwd: permission denied', 'open ./secrets/api_key: no such file');
    for (const text of texts) {
      expect(r.redactText(text), text).toBe(text);
    }
  });

  it('hides key=value, key: value and --flag value secrets in free text', () => {
    expect(r.redactText('connecting with password=hunter2 to db')).toBe('connecting with password=[redacted] to db');
    expect(r.redactText('API_KEY: abc123 loaded')).toBe('API_KEY: [redacted] loaded');
    expect(r.redactText('started with --api-key abc123')).toBe('started with --api-key [redacted]');
    expect(r.redactText('the token is valid')).toBe('the token is valid');
    expect(r.redactText('/srv/app --password=hunter2')).toBe('/srv/app --password=[redacted]');
    expect(r.redactText('GET /login?password=hunter2')).toBe('GET /login?password=[redacted]');
  });

  it('hides secret keys inside JSON text that does not parse (a frame cut at --max-body)', () => {
    const head = '{"jsonrpc":"2.0","id":1,"method":"tools/call","params":{"arguments":{"password":"hunter2","city":"Par';
    const out = r.redactText(head);
    expect(out).toContain('"password":"[redacted]"');
    expect(out).toContain('"city":"Par');
    expect(out).not.toContain('hunter2');
    // One level of escaping: JSON text inside a JSON string.
    const escaped = '{"text":"{\\"api_key\\": \\"abc123\\", \\"n\\": 1}"';
    expect(r.redactText(escaped)).toBe('{"text":"{\\"api_key\\": \\"[redacted]\\", \\"n\\": 1}"');
  });
});

describe('redactValue: JSON at any depth', () => {
  it('replaces values under secret keys and leaves the rest, without modifying the input', () => {
    const input = { a: { b: [{ password: 'p1', keep: 'x' }], token: 42, apiKey: '' }, auth: { type: 'oauth' } };
    const frozen = JSON.stringify(input);
    const out = r.redactValue(input) as typeof input;
    expect(out).toEqual({ a: { b: [{ password: REDACTED, keep: 'x' }], token: REDACTED, apiKey: '' }, auth: { type: 'oauth' } });
    expect(JSON.stringify(input)).toBe(frozen);
  });
  it('walks into objects under secret keys (a JSON schema describing an api_key property is no secret)', () => {
    const schema = { properties: { api_key: { type: 'string', description: 'your key' } }, required: ['api_key'] };
    expect(r.redactValue(schema)).toBe(schema);
  });
  it('returns the same reference when nothing is secret', () => {
    const clean = { city: 'Paris', days: [1, 2, 3], nested: { ok: true } };
    expect(r.redactValue(clean)).toBe(clean);
  });
  it('finds JSON secrets inside tool-result text', () => {
    const result = { content: [{ type: 'text', text: `{"token": "abc123", "user": "ann"} and ${GITHUB}` }] };
    const out = r.redactValue(result) as typeof result;
    expect(out.content[0]!.text).toBe('{"token": "[redacted]", "user": "ann"} and [redacted]');
  });
});

describe('redactRecord', () => {
  const request = {
    level: 30, v: 1, time: 1, seq: 3, session: 's', channel: 'stdio', label: 'x', kind: 'request', dir: 'c2s', id: 1, method: 'tools/call', tool: 'login',
    bytes: 0,
    raw: JSON.stringify({ jsonrpc: '2.0', id: 1, method: 'tools/call', params: { name: 'login', arguments: { user: 'ann', password: 'hunter2', note: `key ${OPENAI}` } } }),
    msg: 'Client calls tool login.',
  };

  it('redacts raw deeply, keeps it parseable, and marks the record', () => {
    const out = run(r, request);
    expect(out).not.toBe(request);
    expect(out.redacted).toBe(true);
    const raw = JSON.parse(out.raw as string);
    expect(raw.params.arguments).toEqual({ user: 'ann', password: REDACTED, note: `key ${REDACTED}` });
    expect(out.raw).not.toContain('hunter2');
    expect(out.raw).not.toContain(OPENAI);
    // bytes and the rest describe the original frame and are left alone.
    expect(out.bytes).toBe(0);
    expect(out.id).toBe(1);
  });

  it('hands back the very same record when there is nothing to hide', () => {
    const clean = { ...request, raw: '{"jsonrpc":"2.0","id":1,"method":"tools/call","params":{"name":"weather","arguments":{"city":"Paris"},"_meta":{"progressToken":7}}}', progressToken: 7 };
    expect(run(r, clean)).toBe(clean);
  });

  it('leaves base64 frames alone (not text; nothing to match)', () => {
    const b64 = { ...request, raw: Buffer.from(`password=${OPENAI}`).toString('base64'), rawEncoding: 'base64' };
    expect(run(r, b64).raw).toBe(b64.raw);
  });

  it('redacts the wrapped command line of a start record, flag values included', () => {
    const start = { v: 1, time: 1, seq: 0, session: 's', channel: 'stdio', label: 'x', kind: 'lifecycle', event: 'start', command: 'node', args: ['server.js', '--token', 'abc123', `--key=${GROQ}`, '--api-key=xyz', '--verbose'], msg: `mcptap starts node server.js --token abc123 --key=${GROQ} --api-key=xyz --verbose` };
    const out = run(r, start);
    expect(out.args).toEqual(['server.js', '--token', REDACTED, `--key=${REDACTED}`, `--api-key=${REDACTED}`, '--verbose']);
    expect(out.msg).toBe('mcptap starts node server.js --token [redacted] --key=[redacted] --api-key=[redacted] --verbose');
    expect(out.redacted).toBe(true);
  });

  it('redacts environment values recorded with a record, by name and by shape', () => {
    const start = { v: 1, time: 1, seq: 0, kind: 'lifecycle', event: 'start', env: { GITHUB_PERSONAL_ACCESS_TOKEN: 'abc', OPENAI_API_KEY: 'xyz', HOME: '/home/ann', SOMETHING: SLACK } };
    const out = run(r, start);
    expect(out.env).toEqual({ GITHUB_PERSONAL_ACCESS_TOKEN: REDACTED, OPENAI_API_KEY: REDACTED, HOME: '/home/ann', SOMETHING: REDACTED });
  });

  it('redacts headers: secret names whole, credential shapes in any header', () => {
    const rec = { v: 1, time: 1, seq: 0, kind: 'http-request', exchange: 'e1', headers: { authorization: 'Bearer abcdef1234567890', cookie: 'sid=abc; theme=dark', 'x-forwarded-for': '1.2.3.4', 'x-custom': `k ${OPENAI}` } };
    const out = run(r, rec);
    expect(out.headers).toEqual({ authorization: REDACTED, cookie: REDACTED, 'x-forwarded-for': '1.2.3.4', 'x-custom': 'k [redacted]' });
  });

  it('redacts an HTTP body that is JSON, and one that is not', () => {
    const json = { v: 1, time: 1, seq: 0, kind: 'http-request', exchange: 'e1', body: '{"model":"m","api_key":"abc"}', bodyBytes: 29 };
    expect(JSON.parse(run(r, json).body as string)).toEqual({ model: 'm', api_key: REDACTED });
    const form = { ...json, body: 'grant_type=password&password=hunter2&client_secret=s3cr3t' };
    expect(run(r, form).body).toBe('grant_type=password&password=[redacted]&client_secret=[redacted]');
  });

  it('redacts the reassembled LLM reply: content, and tool-call arguments by key', () => {
    const rec = { v: 1, time: 1, seq: 9, kind: 'llm-response', exchange: 'e1', content: `Your key is ${OPENAI}.`, toolCalls: [{ id: 'c1', name: 'login', arguments: { user: 'a', password: 'p' } }] };
    const out = run(r, rec) as { content: string; toolCalls: { arguments: unknown }[] };
    expect(out.content).toBe('Your key is [redacted].');
    expect(out.toolCalls[0]!.arguments).toEqual({ user: 'a', password: REDACTED });
  });
});

// Once as a tap hands chunks over, with the line it parsed (RAW_PARSED), and once with the raw text alone.
describe.each([true, false])('llm-chunk: a secret split across stream chunks (parsed line handed over: %s)', (handParsed) => {
  function chunk(redactor: Redactor, exchange: string, content: string): { delta: string; raw: string; redacted?: boolean } {
    const json = { choices: [{ index: 0, delta: { content } }] };
    const rec = {
      v: 1, time: 1, seq: 0, session: 's', kind: 'llm-chunk', dir: 's2c', exchange, sinceMs: 1,
      raw: JSON.stringify(json),
      delta: content,
      msg: 'chunk',
      ...(handParsed ? { [RAW_PARSED]: json } : {}),
    };
    return run(redactor, rec) as never;
  }
  const contentOf = (c: { raw: string }): string => JSON.parse(c.raw).choices[0].delta.content;

  it('no piece of the key survives in any chunk, in delta or raw', () => {
    const redactor = new Redactor();
    const text = `Here is the key: ${OPENAI} — keep it safe.`;
    // Cut the reply in many places, including inside the key.
    const cuts = [5, 17, 20, 23, 30, 40, 49, text.length];
    let at = 0;
    const outs = [];
    for (const cut of cuts) {
      outs.push(chunk(redactor, 'e1', text.slice(at, cut)));
      at = cut;
    }
    const joinedDelta = outs.map((o) => o.delta).join('');
    const joinedRaw = outs.map(contentOf).join('');
    for (const joined of [joinedDelta, joinedRaw]) {
      expect(joined).toContain('Here is the key: ');
      expect(joined).toContain(' — keep it safe.');
      // No run of 6+ characters of the key is left anywhere.
      for (let i = 0; i + 6 <= OPENAI.length; i++) expect(joined, OPENAI.slice(i, i + 6)).not.toContain(OPENAI.slice(i, i + 6));
    }
    expect(outs[0]!.redacted).toBeUndefined();
    expect(outs.some((o) => o.redacted)).toBe(true);
  });

  it('a key streamed a character at a time, after a long reply, is still caught', () => {
    // The stream's remembered text is trimmed as it grows, and the edge where a literal may straddle two pieces
    // is kept apart from it: both must hold up over many pieces, and over pieces shorter than any literal.
    const redactor = new Redactor();
    const prose = 'The forecast for the week ahead is mild. '.repeat(20);
    for (let at = 0; at < prose.length; at += 7) expect(chunk(redactor, 'e4', prose.slice(at, at + 7)).delta).toBe(prose.slice(at, at + 7));
    const outs = [...`key ${OPENAI} done`].map((c) => chunk(redactor, 'e4', c));
    const joined = outs.map((o) => o.delta).join('');
    for (let i = 0; i + 6 <= OPENAI.length; i++) expect(joined, OPENAI.slice(i, i + 6)).not.toContain(OPENAI.slice(i, i + 6));
    expect(joined.startsWith('key s')).toBe(true);
  });

  it('a secret JSON key streamed in tool-call argument fragments', () => {
    const redactor = new Redactor();
    const pieces = ['{"user":"ann","pass', 'word":"hun', 'ter2', '"}'];
    const outs = pieces.map((p) => chunk(redactor, 'e2', p));
    const joined = outs.map((o) => o.delta).join('');
    expect(joined).not.toContain('hun');
    expect(joined).not.toContain('ter2');
    expect(joined).toContain('"user":"ann"');
  });

  it('streams are kept apart by exchange, and forgotten when the reply ends', () => {
    const redactor = new Redactor();
    chunk(redactor, 'a', 'key: sk-');
    expect(chunk(redactor, 'b', 'proj-and-more-words-here-plain').delta).toBe('proj-and-more-words-here-plain');
    expect(redactor.streamCount).toBe(2);
    run(redactor, { v: 1, time: 1, seq: 1, session: 's', kind: 'llm-response', exchange: 'a', content: '' });
    expect(redactor.streamCount).toBe(1);
  });

  it('ordinary chunks pass unchanged', () => {
    const redactor = new Redactor();
    for (const piece of ['The weather ', 'in Paris is ', 'sunny, 21°C.']) {
      const out = chunk(redactor, 'e3', piece);
      expect(out.delta).toBe(piece);
      expect(out.redacted).toBeUndefined();
    }
  });
});

describe('a big frame whose line escapes its other fields (recordJson)', () => {
  // A field outside a 64 KiB ASCII raw puts a no-break space after "Bearer": the line writes it as \u00a0, which
  // the screen's `\s` does not match, so the screen must read the exact JSON. (The raw here does not hold the
  // same text, as a raw usually would, so that only the escaped field can give the secret away.)
  const token = 'abcdefghij0123456789KLMNOP';
  const raw = JSON.stringify({ jsonrpc: '2.0', id: 1, error: { code: -32000, message: 'upstream refused' }, padding: 'x'.repeat(65536) });
  const draft = { time: 1, kind: 'response', dir: 's2c', id: 1, error: { code: -32000, message: `upstream refused Bearer\u00a0${token}` }, raw, [RAW_PARSED]: JSON.parse(raw) as unknown, msg: 'Error -32000 …' };

  it('still finds the secret the escapes hide from a regex', () => {
    const { text, exact } = recordJson(draft);
    expect(text).not.toBe(exact);
    expect(text).toContain('\\u00a0');
    const out = JSON.parse(r.redactJson(draft, text, exact)) as { redacted?: boolean; error: { message: string }; raw: string };
    expect(out.redacted).toBe(true);
    expect(out.error.message).toBe(`upstream refused Bearer\u00a0${REDACTED}`);
  });

  it('gets the verdict the exact line alone gets, wherever the literals and the escaped characters are', () => {
    // The screen searches the one-byte line for literals before it reads the exact one (see Redactor.screen).
    const piece = fc.constantFrom('', 'token', 'Bearer\u00a0abcdefghij0123456789', '…', 'é', 'api_key=sk-proj-0123456789abcdefghijkl', '"password":"x"', 'key');
    fc.assert(
      fc.property(fc.array(piece, { maxLength: 4 }), fc.array(piece, { maxLength: 4 }), (inMsg, inRaw) => {
        const big = JSON.stringify({ jsonrpc: '2.0', id: 1, result: { text: `${'x'.repeat(4096)}${inRaw.join(' ')}` } });
        const { text, exact } = recordJson({ time: 1, kind: 'response', dir: 's2c', id: 1, msg: `Response … ${inMsg.join(' ')}`, raw: big, [RAW_PARSED]: JSON.parse(big) as unknown });
        expect(text).not.toBe(exact);
        expect(new Redactor().screen(text, exact)).toBe(new Redactor().screen(exact));
      }),
      { numRuns: 300 },
    );
  });
});

describe('streamed bodies (http-end keeps the whole SSE or NDJSON body)', () => {
  it('a key cut across NDJSON lines does not survive in the body, which stays line-for-line JSON', () => {
    const cut = 9;
    const lines = [`Key: ${OPENAI.slice(0, cut)}`, OPENAI.slice(cut, 20), `${OPENAI.slice(20)} ok`].map((content, i) => JSON.stringify({ model: 'm', message: { role: 'assistant', content }, done: i === 2 }));
    const body = `${lines.join('\n')}\n`;
    const out = run(r, { v: 1, time: 1, seq: 0, kind: 'http-end', exchange: 'x', body }) as { body: string; redacted?: boolean };
    expect(out.redacted).toBe(true);
    for (let i = 0; i + 6 <= OPENAI.length; i++) expect(out.body).not.toContain(OPENAI.slice(i, i + 6));
    const parsed = out.body.trim().split('\n').map((l) => JSON.parse(l) as { message: { content: string } });
    expect(parsed.map((p) => p.message.content).join('')).toMatch(/^Key: .*\[redacted\].* ok$/);
  });
  it('an SSE body without secrets is left as it is', () => {
    const body = 'data: {"choices":[{"delta":{"content":"Hello"}}]}\n\ndata: [DONE]\n\n';
    const rec = { v: 1, time: 1, seq: 0, kind: 'http-end', exchange: 'x', body };
    expect(run(r, rec)).toBe(rec);
  });
  // An NDJSON body its chunks do not carry (log format v3's bodyInChunks) is written whole, and redacted line by line.
  describe('a streamed body written beside its llm-chunks', () => {
    const line = (content: string, done = false) => JSON.stringify({ model: 'm', message: { role: 'assistant', content }, done });
    const chunk = (raw: string) => ({ v: 1, time: 1, seq: 0, session: 's', kind: 'llm-chunk', exchange: 'j', raw, delta: (JSON.parse(raw) as { message: { content: string } }).message.content });
    const end = (body: string) => ({ v: 1, time: 1, seq: 0, session: 's', kind: 'http-end', exchange: 'j', body });

    it('is passed through when no line holds a secret', () => {
      const redactor = new Redactor();
      const lines = [line('Hello'), line(' there'), line('', true)];
      for (const raw of lines) run(redactor, chunk(raw));
      const rec = end(`${lines.join('\n')}\n`);
      expect(run(redactor, rec)).toBe(rec);
    });

    it('is redacted line by line when it holds a line no chunk showed', () => {
      const redactor = new Redactor();
      const lines = [line('Hello'), line('', true)];
      for (const raw of lines) run(redactor, chunk(raw));
      const out = run(redactor, end(`${lines[0]}\n${line(`key ${OPENAI}`)}\n${lines[1]}\n`)) as { body: string };
      expect(out.body).not.toContain(OPENAI.slice(3, 12));
    });

    it('is redacted line by line when a chunk held a secret cut across chunks', () => {
      const redactor = new Redactor();
      const lines = [line(`Key: ${OPENAI.slice(0, 9)}`), line(OPENAI.slice(9)), line('', true)];
      for (const raw of lines) run(redactor, chunk(raw));
      const out = run(redactor, end(`${lines.join('\n')}\n`)) as { body: string };
      for (let i = 0; i + 6 <= OPENAI.length; i++) expect(out.body).not.toContain(OPENAI.slice(i, i + 6));
    });
  });

  it("a chunk's summary sentence loses what its delta lost", () => {
    const redactor = new Redactor();
    const mk = (content: string) => ({ v: 1, time: 1, seq: 0, session: 's', kind: 'llm-chunk', exchange: 'q', raw: JSON.stringify({ message: { content } }), delta: content, msg: `Model streams ${JSON.stringify(content)}.` });
    run(redactor, mk('token: sk-'));
    const out = run(redactor, mk(OPENAI.slice(3, 12))) as { msg: string; delta: string };
    expect(out.delta).toBe(REDACTED);
    expect(out.msg).toBe(`Model streams "${REDACTED}".`);
  });
});

describe('extra rules', () => {
  it('--redact-key and --redact-pattern add to the defaults', () => {
    const custom = new Redactor({ keys: ['tenant-code'], patterns: ['corp_[A-Za-z0-9]{8}'] });
    const rec = { v: 1, time: 1, seq: 0, kind: 'request', raw: '{"tenant_code":"T-1","city":"corp_ABCDEFGH","password":"x"}' };
    expect(JSON.parse(run(custom, rec).raw as string)).toEqual({ tenant_code: REDACTED, city: REDACTED, password: REDACTED });
    // The default redactor does not know them.
    expect(JSON.parse(run(r, rec).raw as string)).toEqual({ tenant_code: 'T-1', city: 'corp_ABCDEFGH', password: REDACTED });
  });
  it('a bad pattern is a plain sentence', () => {
    expect(() => compilePattern('([a-z')).toThrow(McptapError);
    expect(() => compilePattern('x*')).toThrow(/empty string/);
    expect(compilePattern('/abc/i').flags).toBe('gi');
  });
});

describe('redactHeaders', () => {
  it('lower-cases names, redacts secret ones, and with false keeps values', () => {
    const h = { Authorization: 'Bearer x', 'X-Api-Key': 'k', Accept: 'text/event-stream', 'Set-Cookie': ['a=1', 'b=2'], n: 3, u: undefined };
    expect(redactHeaders(h)).toEqual({ authorization: REDACTED, 'x-api-key': REDACTED, accept: 'text/event-stream', 'set-cookie': [REDACTED, REDACTED], n: '3' });
    expect(redactHeaders(h, false)).toEqual({ authorization: 'Bearer x', 'x-api-key': 'k', accept: 'text/event-stream', 'set-cookie': ['a=1', 'b=2'], n: '3' });
    expect(redactHeaders({ 'X-Tenant': 'abc' }, new Redactor({ keys: ['x-tenant'] }))).toEqual({ 'x-tenant': REDACTED });
  });
});
