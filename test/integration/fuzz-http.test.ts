/**
 * The live HTTP path under random input: random bytes, sent in random chunks to the paths where mcptap decodes
 * MCP, Ollama and OpenAI traffic, and echoed back by a real upstream in random chunks with the content types
 * those decoders act on. Whatever the decoders make of it, the bytes each side receives are the bytes the other
 * sent.
 */
import { createServer, request, type Server } from 'node:http';
import type { AddressInfo } from 'node:net';
import { readFileSync } from 'node:fs';
import { join } from 'node:path';
import fc from 'fast-check';
import { settledRecords } from '../support/settled-records.js';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { startHttpTap, type HttpTap } from '../../src/index.js';
import { tempDir } from '../support/temp-dir.js';

let upstream: Server;
let tap: HttpTap;
const warnings: string[] = [];

beforeAll(async () => {
  // Echoes the request body back, cut where the request header `x-cuts` says, with the content type asked for.
  upstream = createServer((req, res) => {
    const parts: Buffer[] = [];
    req.on('data', (c: Buffer) => parts.push(c));
    req.on('end', async () => {
      const body = Buffer.concat(parts);
      const cuts = String(req.headers['x-cuts'] ?? '').split(',').filter(Boolean).map(Number);
      res.writeHead(200, { 'content-type': String(req.headers['x-reply-type'] ?? 'application/octet-stream') });
      let at = 0;
      for (const cut of [...cuts, body.length]) {
        if (cut > at) res.write(body.subarray(at, cut));
        at = Math.max(at, cut);
        await new Promise((r) => setImmediate(r));
      }
      res.end();
    });
  });
  await new Promise<void>((r) => upstream.listen(0, '127.0.0.1', r));
  const { port } = upstream.address() as AddressInfo;
  tap = await startHttpTap({ target: `http://127.0.0.1:${port}`, logDir: tempDir('mcptap-fuzz-http-'), warn: (m) => warnings.push(m) });
});

afterAll(async () => {
  await tap?.close();
  await new Promise((r) => upstream?.close(r));
});

function send(path: string, chunks: Buffer[], requestType: string, replyType: string, replyCuts: number[]): Promise<Buffer> {
  return new Promise((resolve, reject) => {
    const req = request(`${tap.url}${path}`, { method: 'POST', headers: { 'content-type': requestType, 'x-reply-type': replyType, 'x-cuts': replyCuts.join(','), accept: 'application/json, text/event-stream' } }, (res) => {
      const got: Buffer[] = [];
      res.on('data', (c: Buffer) => got.push(c));
      res.on('end', () => resolve(Buffer.concat(got)));
      res.on('error', reject);
    });
    req.on('error', reject);
    (async () => {
      for (const c of chunks) {
        req.write(c);
        await new Promise((r) => setImmediate(r));
      }
      req.end();
    })().catch(reject);
  });
}

const byte = fc.oneof({ weight: 5, arbitrary: fc.integer({ min: 0, max: 255 }) }, { weight: 3, arbitrary: fc.constantFrom(0x0a, 0x0d, 0x3a, 0x7b, 0x7d, 0x22) });
const piece = fc.oneof(
  fc.array(byte, { maxLength: 200 }).map((a) => Buffer.from(a)),
  fc.constantFrom('data: ', 'event: message\n', '\n\n', '{"jsonrpc":"2.0","id":1,"method":"tools/call"}\n', '{"model":"m","message":{"content":"hi"},"done":false}\n', 'data: {"choices":[{"delta":{"content":"x"}}]}\n\n', 'data: [DONE]\n\n').map((s) => Buffer.from(s)),
);

describe('mcptap http under random bodies', () => {
  it('every byte arrives unchanged, both ways, on every decoding path', async () => {
    await fc.assert(
      fc.asyncProperty(
        fc.array(piece, { maxLength: 10 }),
        fc.constantFrom('/mcp', '/sse', '/messages?sessionId=x', '/api/chat', '/api/generate', '/v1/chat/completions', '/v1/responses', '/other'),
        fc.constantFrom('application/json', 'text/plain'),
        fc.constantFrom('application/json', 'text/event-stream', 'application/x-ndjson', 'application/octet-stream'),
        fc.array(fc.integer({ min: 0, max: 2000 }), { maxLength: 8 }),
        async (chunks, path, requestType, replyType, replyCuts) => {
          const sent = Buffer.concat(chunks);
          const cuts = [...new Set(replyCuts.map((c) => c % (sent.length + 1)))].sort((a, b) => a - b);
          const got = await send(path, chunks, requestType, replyType, cuts);
          expect(got.equals(sent)).toBe(true);
        },
      ),
      { numRuns: 60 },
    );
    // The tap logged it all and is still healthy (its records reach the file from the inspection thread).
    await settledRecords([tap.logFile]);
    expect(warnings).toEqual([]);
    const lines = readFileSync(tap.logFile, 'utf8').split('\n').filter(Boolean);
    for (const line of lines) JSON.parse(line);
    expect(lines.length).toBeGreaterThan(60);
  });
});
