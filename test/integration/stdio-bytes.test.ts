/**
 * Bytes through mcptap come out identical (same sha256) in both directions, whatever they are: text that is not
 * JSON, CRLF line endings, invalid UTF-8, a 20 MB line, a last line without a newline. And the log records
 * each as the schema says.
 *
 * Spawns bin/mcptap.js, which runs the built CLI: build first (`npx tsc -p .`, or `npm test`).
 */
import { spawn } from 'node:child_process';
import { createHash } from 'node:crypto';
import { writeFileSync } from 'node:fs';
import { join } from 'node:path';
import { beforeAll, describe, expect, test } from 'vitest';
import { readAllRecords } from '../../src/log/reader.js';
import type { LogRecord } from '../../src/log/schema.js';
import { tempDir } from '../support/temp-dir.js';

type Rec = LogRecord & Record<string, unknown>;
const sha = (b: Buffer | string) => createHash('sha256').update(b).digest('hex');

const root = tempDir('mcptap-bytes-');

/**
 * Run mcptap with these words, feed it `input`, collect what comes out.
 *
 * By default stdin stays open until `expectBytes` of output have arrived (with `expectBytes` 0, until the server
 * exits on its own), so the test reads everything before EOF reaches the server; `endAtOnce` ends it at once.
 */
function mcptap(words: string[], input: Buffer, expectBytes = input.length, endAtOnce = false): Promise<{ stdout: Buffer; stderr: string; code: number | null }> {
  return new Promise((resolve, reject) => {
    const child = spawn(process.execPath, ['bin/mcptap.js', ...words], { stdio: ['pipe', 'pipe', 'pipe'] });
    const out: Buffer[] = [];
    let received = 0;
    let stderr = '';
    child.stdout.on('data', (c: Buffer) => {
      out.push(c);
      received += c.length;
      if (!endAtOnce && expectBytes > 0 && received >= expectBytes) child.stdin.end();
    });
    child.stderr.on('data', (c: Buffer) => (stderr += c.toString()));
    child.on('error', reject);
    child.on('close', (code) => resolve({ stdout: Buffer.concat(out), stderr, code }));
    child.stdin.on('error', () => {});
    if (endAtOnce || expectBytes === 0 && input.length > 0) child.stdin.end(input);
    else child.stdin.write(input);
  });
}

// The payload: every awkward kind of line, in one stream.
const banner = Buffer.from('Weather server v1.2 ready (not JSON-RPC)\n');
const crlfLine = '{"jsonrpc":"2.0","id":1,"method":"ping"}';
const crlf = Buffer.from(`${crlfLine}\r\n`);
const badUtf8 = Buffer.from([0x7b, 0x22, 0x61, 0x22, 0x3a, 0x22, 0xff, 0xfe, 0xc3, 0x28, 0x22, 0x7d]); // {"a":"<bad>"}
const bigLine = Buffer.from(`{"jsonrpc":"2.0","id":2,"method":"tools/call","params":{"name":"echo","arguments":{"m":"${'x'.repeat(20 * 1024 * 1024)}"}}}`);
const lastLine = Buffer.from('{"jsonrpc":"2.0","method":"notifications/cancelled"');
const payload = Buffer.concat([banner, crlf, badUtf8, Buffer.from('\n'), bigLine, Buffer.from('\n'), lastLine]);

/** The checks every direction's records must pass. */
function checkRecords(records: Rec[], dir: 'c2s' | 's2c') {
  const frames = records.filter((r) => r.dir === dir && 'raw' in r);
  expect(frames.map((r) => r.kind)).toEqual(['invalid', 'request', 'invalid', 'request', 'invalid']);
  const [text, ping, binary, big, partial] = frames;
  expect(text).toMatchObject({ reason: 'plain text, not JSON', raw: banner.toString().trimEnd(), bytes: banner.length - 1, level: 40 });
  expect(ping).toMatchObject({ method: 'ping', id: 1, crlf: true, raw: crlfLine, bytes: crlfLine.length });
  expect(binary).toMatchObject({ rawEncoding: 'base64', raw: badUtf8.toString('base64'), bytes: badUtf8.length });
  expect(big).toMatchObject({ method: 'tools/call', tool: 'echo', id: 2, truncated: true, bytes: bigLine.length, sha256: sha(bigLine) });
  expect(Buffer.byteLength(big!.raw as string)).toBe(1024 * 1024);
  expect(bigLine.subarray(0, 1024 * 1024).toString()).toBe(big!.raw);
  expect(partial).toMatchObject({ partial: true, raw: lastLine.toString(), bytes: lastLine.length, reason: 'a partial line at the end of the stream' });
  // Nobody answered the two requests (cat only echoes): they end as pending.
  expect(records.filter((r) => r.kind === 'pending' && r.dir === dir).map((r) => [r.id, r.requestSeq])).toEqual([
    [1, ping!.seq],
    [2, big!.seq],
  ]);
}

describe('client → server → client through cat', () => {
  let result: Awaited<ReturnType<typeof mcptap>>;
  let records: Rec[];
  const logDir = join(root, 'cat');
  beforeAll(async () => {
    result = await mcptap(['--log-dir', logDir, '--', 'cat'], payload);
    records = (await readAllRecords([logDir])) as Rec[];
  });

  test('the bytes come back identical', () => {
    expect(result.code).toBe(0);
    expect(result.stdout.length).toBe(payload.length);
    expect(sha(result.stdout)).toBe(sha(payload));
  });

  test('c2s records', () => checkRecords(records, 'c2s'));
  test('s2c records, the stdout pollution said plainly', () => {
    checkRecords(records, 's2c');
    const text = records.find((r) => r.dir === 's2c' && r.kind === 'invalid')!;
    expect(text.msg).toMatch(/^The server wrote a line that is not JSON-RPC to stdout \(plain text, not JSON\); MCP clients will fail on it/);
  });
});

describe('client → server, checked by the server itself', () => {
  test('a node child hashes what it receives on stdin: the same sha256 as what the client sent', async () => {
    const script = "const h=require('crypto').createHash('sha256');process.stdin.on('data',c=>h.update(c)).on('end',()=>process.stderr.write('SHA '+h.digest('hex')+'\\n'))";
    // The child needs EOF to print its hash: stdin ends right after the payload.
    const result = await mcptap(['--log-dir', join(root, 'hash'), '--', process.execPath, '-e', script], payload, 0, true);
    expect(result.code).toBe(0);
    expect(result.stdout.length).toBe(0);
    expect(result.stderr).toContain(`SHA ${sha(payload)}\n`);
  });
});

describe('server → client from a node child writing a fixed payload', () => {
  test('the bytes arrive identical and are logged s2c', async () => {
    const file = join(root, 'payload.bin');
    writeFileSync(file, payload);
    const logDir = join(root, 'node');
    const script = `process.stdout.write(require('fs').readFileSync(${JSON.stringify(file)}))`;
    // stdin stays open: the child exits on its own once it has written everything.
    const result = await mcptap(['--log-dir', logDir, '--', process.execPath, '-e', script], Buffer.alloc(0), 0);
    expect(result.code).toBe(0);
    expect(sha(result.stdout)).toBe(sha(payload));
    const records = (await readAllRecords([logDir])) as Rec[];
    checkRecords(records, 's2c');
    expect(records.filter((r) => r.dir === 'c2s')).toEqual([]);
  });
});

describe('nothing is held back waiting for a newline', () => {
  test('half a line reaches the server, and comes back, before the rest is written', async () => {
    const child = spawn(process.execPath, ['bin/mcptap.js', '--log-dir', join(root, 'half'), '--', 'cat'], { stdio: ['pipe', 'pipe', 'pipe'] });
    let out = '';
    const arrived = (text: string) =>
      new Promise<void>((resolve, reject) => {
        const timer = setTimeout(() => reject(new Error(`only ${JSON.stringify(out)} arrived`)), 5000);
        const check = () => {
          if (out === text) {
            clearTimeout(timer);
            child.stdout.off('data', onData);
            resolve();
          }
        };
        const onData = (c: Buffer) => {
          out += c.toString();
          check();
        };
        child.stdout.on('data', onData);
        check();
      });
    child.stdin.write('{"jsonrpc":"2.0",');
    await arrived('{"jsonrpc":"2.0",');
    child.stdin.write('"method":"notifications/initialized"}\n');
    await arrived('{"jsonrpc":"2.0","method":"notifications/initialized"}\n');
    child.stdin.end();
    expect(await new Promise((resolve) => child.on('close', resolve))).toBe(0);
    const records = (await readAllRecords([join(root, 'half')])) as Rec[];
    expect(records.filter((r) => r.kind === 'notification').map((r) => r.dir)).toEqual(['c2s', 's2c']);
  });
});

describe('a client writing without a final newline, and lone CRs', () => {
  test('bytes unchanged, lone \\r kept inside the line', async () => {
    const input = Buffer.from('{"jsonrpc":"2.0","id":"a\\r","method":"x"}\r\r\n\r\n\n\rtail');
    const logDir = join(root, 'cr');
    // The partial last line only shows once stdin ends, so end at once (a few bytes echo well within 2 s).
    const result = await mcptap(['--log-dir', logDir, '--', 'cat'], input, 0, true);
    expect(sha(result.stdout)).toBe(sha(input));
    const c2s = ((await readAllRecords([logDir])) as Rec[]).filter((r) => r.dir === 'c2s' && 'raw' in r);
    // The first line ends in \r\r\n: one \r belongs to the line (JSON allows it as trailing white space).
    expect(c2s[0]!.raw).toBe('{"jsonrpc":"2.0","id":"a\\r","method":"x"}\r');
    expect(c2s.map((r) => [r.kind, r.bytes, r.crlf ?? false, r.partial ?? false])).toEqual([
      ['request', 42, true, false],
      ['invalid', 0, true, false],
      ['invalid', 0, false, false],
      ['invalid', 5, false, true],
    ]);
  });
});

describe('a burst of 64 KiB frames once the inspection thread runs', () => {
  const KIB_64 = 64 * 1024;
  test('every frame comes back and is logged whole, both ways, copied through the channel\u2019s ring', async () => {
    const logDir = join(root, 'burst');
    const child = spawn(process.execPath, ['bin/mcptap.js', '--log-dir', logDir, '--', 'cat'], { stdio: ['pipe', 'pipe', 'pipe'] });
    let received = 0;
    let echoed: () => void = () => {};
    let expected = 0;
    child.stdout.on('data', (c: Buffer) => {
      received += c.length;
      if (received >= expected) echoed();
    });
    const sendAndWait = (data: Buffer) =>
      new Promise<void>((resolve) => {
        expected += data.length;
        echoed = resolve;
        child.stdin.write(data);
      });
    // First a ping, until its record is in the log: the thread has started.
    await sendAndWait(Buffer.from('{"jsonrpc":"2.0","id":0,"method":"ping"}\n'));
    for (let tries = 0; tries < 50 && !(await readAllRecords([logDir])).some((r) => (r as Rec).method === 'ping'); tries++) await new Promise((r) => setTimeout(r, 100));
    const frames = Array.from({ length: 96 }, (_, i) => {
      const head = `{"jsonrpc":"2.0","method":"notifications/message","params":{"level":"info","data":"frame ${i} `;
      const tail = '"}}';
      return `${head}${String.fromCharCode(97 + (i % 26)).repeat(KIB_64 - head.length - tail.length - 1)}${tail}`;
    });
    await sendAndWait(Buffer.from(frames.map((frame) => `${frame}\n`).join('')));
    child.stdin.end();
    expect(await new Promise((resolve) => child.on('close', resolve))).toBe(0);
    const records = (await readAllRecords([logDir])) as Rec[];
    for (const dir of ['c2s', 's2c']) {
      const logged = records.filter((r) => r.dir === dir && r.kind === 'notification').map((r) => r.raw);
      expect(logged.length, dir).toBe(frames.length);
      logged.forEach((raw, i) => expect(raw === frames[i], `${dir} frame ${i}`).toBe(true));
    }
    expect(records.filter((r) => /fell behind/.test(String(r.msg)))).toEqual([]);
  });
});
