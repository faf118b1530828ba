/**
 * What the HTTP tap does when things go wrong or get unusual, with real sockets on both sides: an upstream that
 * is not there, a client that gives up mid-stream, compressed bodies (forwarded as they are, decoded for the
 * log only), and WebSocket upgrades (relayed, each message decoded as JSON-RPC).
 */
import { settledRecords } from '../support/settled-records.js';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import http from 'node:http';
import zlib from 'node:zlib';
import { mkdtempSync, rmSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { WebSocket, WebSocketServer } from 'ws';
import { startHttpTap, readAllRecords, type HttpTap, type LogRecord } from '../../src/index.js';
import { freePort } from './http-mcp-scenario.js';

type Rec = LogRecord & Record<string, unknown>;

/** GET or POST through node:http, keeping the bytes exactly as they arrive (no decompression). */
function rawRequest(url: string, options: { method?: string; body?: string; headers?: Record<string, string> } = {}): Promise<{ status: number; headers: http.IncomingHttpHeaders; body: Buffer }> {
  return new Promise((resolve, reject) => {
    const req = http.request(url, { method: options.method ?? 'GET', headers: options.headers }, (res) => {
      const parts: Buffer[] = [];
      res.on('data', (c: Buffer) => parts.push(c));
      res.on('end', () => resolve({ status: res.statusCode ?? 0, headers: res.headers, body: Buffer.concat(parts) }));
      res.on('error', reject);
    });
    req.on('error', reject);
    req.end(options.body);
  });
}

async function listen(server: http.Server): Promise<string> {
  await new Promise<void>((resolve) => server.listen(0, '127.0.0.1', () => resolve()));
  const address = server.address();
  return `http://127.0.0.1:${typeof address === 'object' && address ? address.port : 0}`;
}

describe('HTTP tap failures', () => {
  let logDir: string;
  beforeAll(() => {
    logDir = mkdtempSync(join(tmpdir(), 'mcptap-http-fail-'));
  });
  afterAll(() => rmSync(logDir, { recursive: true, force: true }));

  it('answers 502 with a JSON body naming the target and the cause when the upstream is not there', async () => {
    const port = await freePort();
    const tap = await startHttpTap({ target: `http://127.0.0.1:${port}`, logDir, label: 'unreachable' });
    try {
      const res = await rawRequest(`${tap.url}/api/tags`);
      expect(res.status).toBe(502);
      const body = JSON.parse(res.body.toString('utf8')) as { error: string; target: string; cause: { code: string } };
      expect(body.target).toBe(`http://127.0.0.1:${port}`);
      expect(body.cause.code).toBe('ECONNREFUSED');
      expect(body.error).toContain('could not reach the upstream');
      // The proxy is still there for the next request.
      expect((await rawRequest(`${tap.url}/api/chat`, { method: 'POST', body: '{"model":"m","messages":[]}' })).status).toBe(502);
    } finally {
      await tap.close();
    }
    const records = (await readAllRecords([tap.logFile])) as Rec[];
    const ends = records.filter((r) => r.kind === 'http-end');
    expect(ends.map((e) => e.outcome)).toEqual(['upstream-unreachable', 'upstream-unreachable']);
    expect((ends[0]!.error as { code: string }).code).toBe('ECONNREFUSED');
    // A model call that never reached the model is an LLM error too.
    expect(records.find((r) => r.kind === 'llm-error')).toMatchObject({ channel: 'ollama', phase: 'before-stream', status: 502, error: 'mcptap could not reach the upstream (ECONNREFUSED)' });
  });

  it('aborts the upstream request when the client gives up mid-stream, and records it', async () => {
    let upstreamClosed!: () => void;
    const closed = new Promise<void>((resolve) => (upstreamClosed = resolve));
    let timer: NodeJS.Timeout | undefined;
    const upstream = http.createServer((req, res) => {
      res.writeHead(200, { 'content-type': 'application/x-ndjson' });
      let n = 0;
      timer = setInterval(() => res.write(`{"n":${n++}}\n`), 10);
      res.on('close', () => {
        clearInterval(timer);
        upstreamClosed();
      });
    });
    const upstreamUrl = await listen(upstream);
    const tap = await startHttpTap({ target: upstreamUrl, logDir, label: 'abort' });
    try {
      await new Promise<void>((resolve, reject) => {
        const req = http.get(`${tap.url}/stream`, (res) => {
          res.once('data', () => {
            req.destroy();
            resolve();
          });
        });
        req.on('error', () => {});
        setTimeout(() => reject(new Error('no data')), 5000).unref();
      });
      // The upstream sees its connection end: nothing keeps generating for a client that left.
      await closed;
    } finally {
      clearInterval(timer);
      await tap.close();
      upstream.close();
    }
    const records = (await readAllRecords([tap.logFile])) as Rec[];
    const end = records.find((r) => r.kind === 'http-end');
    expect(end?.outcome).toBe('client-aborted');
    expect(end?.status).toBe(200);
  });

  it('survives a client that gives up mid-upload and one that sends garbage', async () => {
    let upstreamSawClose = false;
    const upstream = http.createServer((req, res) => {
      req.on('close', () => (upstreamSawClose = true));
      req.resume();
      req.on('end', () => res.end('ok'));
    });
    const upstreamUrl = await listen(upstream);
    const tap = await startHttpTap({ target: upstreamUrl, logDir, label: 'upload' });
    const { port } = new URL(tap.url);
    try {
      const net = await import('node:net');
      await new Promise<void>((resolve) => {
        const socket = net.connect(Number(port), '127.0.0.1', () => {
          socket.write('POST /mcp HTTP/1.1\r\nHost: x\r\nContent-Type: application/json\r\nContent-Length: 1000\r\n\r\n{"jsonrpc":"2.0",');
          setTimeout(() => {
            socket.destroy();
            resolve();
          }, 100);
        });
      });
      const garbage = await new Promise<string>((resolve) => {
        const socket = net.connect(Number(port), '127.0.0.1', () => socket.write('\x00\x01 not http at all\r\n\r\n'));
        let answer = '';
        socket.on('data', (d) => (answer += d.toString()));
        socket.on('close', () => resolve(answer));
      });
      expect(garbage).toContain('400 Bad Request');
      // Still serving.
      expect((await rawRequest(`${tap.url}/health`)).body.toString()).toBe('ok');
      for (let i = 0; i < 20 && !upstreamSawClose; i++) await new Promise((r) => setTimeout(r, 50));
      expect(upstreamSawClose).toBe(true);
    } finally {
      await tap.close();
      upstream.close();
    }
    const records = (await readAllRecords([tap.logFile])) as Rec[];
    const aborted = records.find((r) => r.kind === 'http-end' && r.path === '/mcp');
    expect(aborted).toMatchObject({ outcome: 'client-aborted', reqBytes: 17 });
    expect(records.find((r) => r.kind === 'http-request' && r.path === '/mcp')).toMatchObject({ bodyBytes: 17, body: '{"jsonrpc":"2.0",' });
  });

  it('forwards compressed bodies byte for byte and logs them decoded', async () => {
    const json = JSON.stringify({ models: [{ name: 'qwen2.5:3b' }], note: 'x'.repeat(2000) });
    const gz = zlib.gzipSync(json);
    const events = 'data: {"jsonrpc":"2.0","id":1,"result":{"ok":true}}\n\n';
    const br = zlib.brotliCompressSync(events);
    const upstream = http.createServer((req, res) => {
      if (req.url === '/api/tags') {
        res.writeHead(200, { 'content-type': 'application/json', 'content-encoding': 'gzip' });
        // Split the compressed body so the copy is decoded across chunks.
        res.write(gz.subarray(0, 10));
        setTimeout(() => res.end(gz.subarray(10)), 5);
      } else {
        res.writeHead(200, { 'content-type': 'text/event-stream', 'content-encoding': 'br', 'mcp-session-id': 's-1' });
        res.end(br);
      }
    });
    const upstreamUrl = await listen(upstream);
    const tap = await startHttpTap({ target: upstreamUrl, logDir, label: 'compressed' });
    let tags: Buffer;
    let stream: Buffer;
    try {
      tags = (await rawRequest(`${tap.url}/api/tags`)).body;
      stream = (
        await rawRequest(`${tap.url}/mcp`, {
          method: 'POST',
          headers: { 'content-type': 'application/json', accept: 'application/json, text/event-stream', 'mcp-session-id': 's-1' },
          body: '{"jsonrpc":"2.0","id":1,"method":"ping"}',
        })
      ).body;
    } finally {
      await tap.close();
      upstream.close();
    }
    expect(tags.equals(gz)).toBe(true);
    expect(stream.equals(br)).toBe(true);
    const records = (await readAllRecords([tap.logFile])) as Rec[];
    // Decoding the copy is asynchronous, so the two ends may be written in either order: find them by path.
    const tagsEnd = records.find((r) => r.kind === 'http-end' && r.path === '/api/tags');
    const mcpEnd = records.find((r) => r.kind === 'http-end' && r.path === '/mcp');
    expect(tagsEnd!.body).toBe(json);
    expect(tagsEnd!.resBytes).toBe(gz.length);
    expect(mcpEnd!.body).toBe(events);
    const response = records.find((r) => r.kind === 'response');
    expect(response?.method).toBe('ping');
    expect(response?.channel).toBe('mcp-http');
  });
});

describe('WebSocket upgrades through the HTTP tap', () => {
  let logDir: string;
  let upstream: http.Server;
  let wss: WebSocketServer;
  let tap: HttpTap;

  beforeAll(async () => {
    logDir = mkdtempSync(join(tmpdir(), 'mcptap-http-ws-'));
    upstream = http.createServer((_req, res) => res.end('plain'));
    // Compression on, as many servers have it: the tap must inflate its copy of each message.
    wss = new WebSocketServer({ server: upstream, perMessageDeflate: { threshold: 0 } });
    wss.on('connection', (socket) => {
      socket.on('message', (data) => {
        const msg = JSON.parse(String(data)) as { id: number; method: string; params?: unknown };
        socket.send(JSON.stringify({ jsonrpc: '2.0', id: msg.id, result: { echoed: msg.params } }));
        if (msg.method === 'tools/call') socket.send(JSON.stringify({ jsonrpc: '2.0', method: 'notifications/message', params: { level: 'info', data: 'done' } }));
      });
    });
    const url = await listen(upstream);
    tap = await startHttpTap({ target: url, logDir, label: 'ws' });
  });

  afterAll(async () => {
    await tap?.close();
    wss?.close();
    upstream?.close();
    rmSync(logDir, { recursive: true, force: true });
  });

  it('relays messages both ways and logs them as MCP records', async () => {
    const client = new WebSocket(`${tap.url.replace('http', 'ws')}/ws`);
    const received: string[] = [];
    await new Promise<void>((resolve, reject) => {
      client.on('open', () => {
        client.send(JSON.stringify({ jsonrpc: '2.0', id: 1, method: 'tools/call', params: { name: 'get_weather', arguments: { city: '上海', pad: 'y'.repeat(3000) } } }));
      });
      client.on('message', (data) => {
        received.push(String(data));
        if (received.length === 2) resolve();
      });
      client.on('error', reject);
    });
    client.close();
    await new Promise((r) => client.once('close', r));
    expect(JSON.parse(received[0]!)).toMatchObject({ id: 1, result: { echoed: { name: 'get_weather' } } });
    const records = (await settledRecords([tap.logFile])) as Rec[];
    const request = records.find((r) => r.kind === 'request');
    const response = records.find((r) => r.kind === 'response');
    const note = records.find((r) => r.kind === 'notification');
    expect(request).toMatchObject({ channel: 'mcp-ws', dir: 'c2s', method: 'tools/call', tool: 'get_weather' });
    expect(response).toMatchObject({ channel: 'mcp-ws', dir: 's2c', method: 'tools/call', requestSeq: request!.seq });
    expect(note).toMatchObject({ channel: 'mcp-ws', method: 'notifications/message' });
    expect(String(request!.raw)).toContain('上海');
    const end = records.find((r) => r.kind === 'http-end');
    expect(end?.outcome).toBe('upgraded');
    expect(end?.status).toBe(101);
  });
});
