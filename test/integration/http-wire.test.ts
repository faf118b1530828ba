/**
 * The HTTP proxy as a wire: what the upstream receives through mcptap is byte for byte what it receives from
 * the client directly, and so is what the client gets back: header names as written, big heads (15, 30 and
 * 60 KB each way), trailers both ways. Beyond what mcptap relays, a plain 431 and a record. Raw sockets on both
 * ends, so nothing in between normalizes what is compared.
 */
import net from 'node:net';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { startHttpTap, type HttpTap } from '../../src/index.js';
import { MAX_HEADER_BYTES } from '../../src/capture/http-relay.js';
import { settledRecords } from '../support/settled-records.js';
import { tempDir } from '../support/temp-dir.js';

/** An upstream that keeps the bytes of each request it gets and answers with `response(request)`. */
function rawUpstream(response: (request: string) => string): Promise<{ port: number; received: string[]; close: () => void }> {
  const received: string[] = [];
  const server = net.createServer((socket) => {
    let buf = '';
    socket.on('data', (d: Buffer) => {
      buf += d.toString('latin1');
      const head = buf.indexOf('\r\n\r\n');
      if (head === -1) return;
      // A chunked request is complete once its last chunk and trailers have come.
      if (/transfer-encoding: chunked/i.test(buf.slice(0, head)) && !/\r\n0\r\n(?:[^\r\n]+\r\n)*\r\n$/.test(buf)) return;
      received.push(buf);
      socket.end(response(buf), 'latin1');
      buf = '';
    });
    socket.on('error', () => {});
  });
  return new Promise((resolve) => server.listen(0, '127.0.0.1', () => resolve({ port: (server.address() as net.AddressInfo).port, received, close: () => server.close() })));
}

/** Send raw request bytes and collect everything until the server closes. */
function exchange(port: number, request: string): Promise<string> {
  return new Promise((resolve, reject) => {
    const socket = net.connect(port, '127.0.0.1', () => socket.write(request, 'latin1'));
    let out = '';
    socket.on('data', (d: Buffer) => (out += d.toString('latin1')));
    socket.on('end', () => resolve(out));
    socket.on('error', reject);
  });
}

const big = (kb: number): string => 'b'.repeat(kb * 1000);
const request = (kb: number, host: string): string =>
  `POST /Wire/Path?q=1 HTTP/1.1\r\nHost: ${host}\r\nX-Mixed-Case: Yes\r\nx-lower: v\r\nX-BIG-REQUEST: ${big(kb)}\r\nConnection: keep-alive\r\nTE: trailers\r\n` +
  `Transfer-Encoding: chunked\r\nTrailer: X-Req-Sum\r\n\r\n5\r\nhello\r\n0\r\nX-Req-Sum: 42\r\n\r\n`;
const response = (kb: number): string =>
  `HTTP/1.1 200 OK\r\nX-Mixed-Case: A\r\nX-BIG-RESPONSE: ${big(kb)}\r\nContent-Type: text/plain\r\nTransfer-Encoding: chunked\r\nTrailer: X-Checksum\r\n` +
  `Connection: close\r\n\r\n3\r\nabc\r\n0\r\nX-Checksum: abc\r\n\r\n`;

describe('the HTTP proxy is a wire', () => {
  let upstream: Awaited<ReturnType<typeof rawUpstream>>;
  let tap: HttpTap;

  beforeAll(async () => {
    // The answer's big header is as big as the request's.
    upstream = await rawUpstream((req) => response(/X-BIG-REQUEST: (b*)/.exec(req)![1]!.length / 1000));
    tap = await startHttpTap({ target: `http://127.0.0.1:${upstream.port}`, logDir: tempDir('mcptap-wire-'), label: 'wire' });
  });
  afterAll(async () => {
    await tap?.close();
    upstream?.close();
  });

  it.each([15, 30, 60])('%i KB heads both ways, header case and trailers: direct and through mcptap alike', async (kb) => {
    const host = `127.0.0.1:${upstream.port}`;
    const direct = await exchange(upstream.port, request(kb, host));
    const directReceived = upstream.received.at(-1);
    const through = await exchange(tap.port, request(kb, host));
    const throughReceived = upstream.received.at(-1);
    expect(through.length).toBe(direct.length);
    expect(through === direct).toBe(true);
    expect(throughReceived === directReceived).toBe(true);
    expect(through).toContain('\r\n0\r\nX-Checksum: abc\r\n\r\n');
    expect(throughReceived).toContain('X-Mixed-Case: Yes\r\nx-lower: v\r\n');
    expect(throughReceived).toContain('\r\n0\r\nX-Req-Sum: 42\r\n\r\n');
  });

  it('logs the trailers of both sides', async () => {
    const records = await settledRecords([tap.logFile]);
    const requests = records.filter((r) => r.kind === 'http-request');
    const ends = records.filter((r) => r.kind === 'http-end');
    expect(requests.length).toBeGreaterThanOrEqual(3);
    for (const r of requests) expect(r.trailers).toEqual({ 'x-req-sum': '42' });
    for (const e of ends) expect(e).toMatchObject({ outcome: 'complete', trailers: { 'x-checksum': 'abc' } });
  });

  it('a head beyond what mcptap relays gets a plain 431, and a record says so', async () => {
    const answer = await exchange(tap.port, request(MAX_HEADER_BYTES / 1000 + 10, `127.0.0.1:${upstream.port}`));
    expect(answer).toMatch(/^HTTP\/1\.1 431 Request Header Fields Too Large\r\n/);
    expect(answer).toContain('larger than it relays');
    const records = await settledRecords([tap.logFile]);
    expect(records.some((r) => r.kind === 'lifecycle' && /431/.test(r.msg))).toBe(true);
  });
});
