/**
 * DNS rebinding: mcptap's own pages (the live view) answer only requests whose Host, and Origin when sent, name
 * them. A real server on a real socket; raw requests so the Host header can be anything a browser might send.
 */
import { request } from 'node:http';
import WebSocket from 'ws';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { startUiServer, type UiServer } from '../../src/ui/server.js';
import { tempDir } from '../support/temp-dir.js';

let ui: UiServer;
beforeAll(async () => {
  ui = await startUiServer({ logDir: tempDir('mcptap-host-'), listen: 0, warn: () => {} });
});
afterAll(() => ui?.close());

function get(headers: Record<string, string>): Promise<{ status: number; body: string }> {
  return new Promise((resolve, reject) => {
    // setHost: false so the Host header is exactly what the test says (or absent).
    const req = request({ host: '127.0.0.1', port: ui.port, path: '/', method: 'GET', headers, setHost: false }, (res) => {
      let body = '';
      res.on('data', (c: Buffer) => (body += c.toString()));
      res.on('end', () => resolve({ status: res.statusCode ?? 0, body }));
    });
    req.on('error', reject);
    req.end();
  });
}

describe('the live view refuses requests that do not name it', () => {
  it('serves its page to Host 127.0.0.1:PORT and localhost:PORT', async () => {
    expect((await get({ host: `127.0.0.1:${ui.port}` })).status).toBe(200);
    expect((await get({ host: `localhost:${ui.port}`, origin: `http://localhost:${ui.port}` })).status).toBe(200);
  });

  it.each([
    ['a rebinding name', { host: 'evil.example' }],
    ['a rebinding name with the right port', { host: 'evil.example:PORT' }],
    ['a foreign Origin', { host: '127.0.0.1:PORT', origin: 'http://evil.example' }],
    ['Origin null (a sandboxed page)', { host: '127.0.0.1:PORT', origin: 'null' }],
  ])('403 for %s, with a sentence', async (_name, headers) => {
    const concrete = Object.fromEntries(Object.entries(headers).map(([k, v]) => [k, v.replace('PORT', String(ui.port))]));
    const r = await get(concrete);
    expect(r.status).toBe(403);
    expect(r.body).toMatch(/refused this request: .+\./);
  });

  it('refuses a WebSocket from a foreign page, accepts its own', async () => {
    const open = (origin: string) =>
      new Promise<string>((resolve) => {
        const ws = new WebSocket(`ws://127.0.0.1:${ui.port}/ws`, { origin });
        ws.on('open', () => {
          ws.close();
          resolve('open');
        });
        ws.on('unexpected-response', (_req, res) => resolve(`refused ${res.statusCode}`));
        ws.on('error', () => resolve('error'));
      });
    expect(await open('http://evil.example')).toBe('refused 403');
    expect(await open(`http://127.0.0.1:${ui.port}`)).toBe('open');
  });
});
