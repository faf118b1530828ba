/**
 * Where the HTTP tap listens and whom it serves: a port alone binds loopback, any other address is said out
 * loud, and --strict-host applies mcptap's DNS-rebinding rule to proxied requests (off by default, so the
 * upstream sees Host and Origin as the client sent them).
 */
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import http from 'node:http';
import { mkdtempSync, rmSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { readAllRecords, startHttpTap } from '../../src/index.js';

function get(url: string, headers: Record<string, string> = {}): Promise<{ status: number; body: string; seenHost?: string }> {
  return new Promise((resolve, reject) => {
    http
      .get(url, { headers, agent: false }, (res) => {
        let body = '';
        res.setEncoding('utf8');
        res.on('data', (d: string) => (body += d));
        res.on('end', () => resolve({ status: res.statusCode ?? 0, body }));
      })
      .on('error', reject);
  });
}

describe('HTTP tap listening safety', () => {
  let logDir: string;
  let upstream: http.Server;
  let target: string;
  beforeAll(async () => {
    logDir = mkdtempSync(join(tmpdir(), 'mcptap-listen-'));
    // The upstream echoes the Host it was sent, so the test sees that the proxy passes it on untouched.
    upstream = http.createServer((req, res) => res.end(JSON.stringify({ host: req.headers.host ?? null })));
    await new Promise<void>((resolve) => upstream.listen(0, '127.0.0.1', () => resolve()));
    const address = upstream.address();
    target = `http://127.0.0.1:${typeof address === 'object' && address ? address.port : 0}`;
  });
  afterAll(async () => {
    await new Promise<void>((resolve) => upstream.close(() => resolve()));
    rmSync(logDir, { recursive: true, force: true });
  });

  it('binds 127.0.0.1 for a port alone, and warns for every other address', async () => {
    const warnings: string[] = [];
    const local = await startHttpTap({ target, listen: 0, logDir, warn: (m) => warnings.push(m) });
    expect(local.host).toBe('127.0.0.1');
    expect(warnings).toEqual([]);
    await local.close();

    const open = await startHttpTap({ target, listen: '0.0.0.0:0', logDir, warn: (m) => warnings.push(m) });
    expect(warnings.join('\n')).toMatch(/every network interface .*anyone who can reach it/);
    await open.close();
  });

  it('passes a foreign Host through by default, and refuses it with --strict-host', async () => {
    const transparent = await startHttpTap({ target, listen: 0, logDir });
    const passed = await get(`${transparent.url}/x`, { host: 'evil.example' });
    expect(passed.status).toBe(200);
    expect(JSON.parse(passed.body).host).toBe('evil.example');
    await transparent.close();

    const strict = await startHttpTap({ target, listen: 0, logDir, strictHost: true });
    const refused = await get(`${strict.url}/x`, { host: `evil.example:${strict.port}` });
    expect(refused.status).toBe(403);
    expect(JSON.parse(refused.body).error).toMatch(/DNS rebinding/);
    const fromPage = await get(`${strict.url}/x`, { origin: 'http://evil.example' });
    expect(fromPage.status).toBe(403);
    const own = await get(`${strict.url}/x`);
    expect(own.status).toBe(200);
    await strict.close();

    const records = await readAllRecords([strict.logFile]);
    const refusals = records.filter((r) => r.kind === 'lifecycle' && r.msg.startsWith('Refused'));
    expect(refusals).toHaveLength(2);
    expect(refusals[0]!.msg).toContain('--strict-host');
  });
});
