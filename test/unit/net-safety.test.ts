import { describe, expect, it } from 'vitest';
import { checkHostHeader, isLoopbackHost, nonLoopbackWarning } from '../../src/net-safety.js';

describe('isLoopbackHost', () => {
  it('knows loopback names and addresses', () => {
    for (const h of ['localhost', 'LOCALHOST', 'app.localhost', '127.0.0.1', '127.1.2.3', '::1', '[::1]', '0:0:0:0:0:0:0:1', '::ffff:127.0.0.1']) expect(isLoopbackHost(h), h).toBe(true);
  });
  it('everything else is not', () => {
    for (const h of ['0.0.0.0', '::', '', '192.168.1.5', '10.0.0.1', 'example.com', 'localhost.evil.com', '128.0.0.1', '::2']) expect(isLoopbackHost(h), h).toBe(false);
  });
});

describe('nonLoopbackWarning', () => {
  it('warns for a public bind and not for loopback', () => {
    expect(nonLoopbackWarning('127.0.0.1', 8080)).toBeUndefined();
    expect(nonLoopbackWarning('0.0.0.0', 8080)).toMatch(/every network interface .*port 8080/);
    expect(nonLoopbackWarning('192.168.1.5', 8080)).toContain('192.168.1.5');
  });
});

describe('checkHostHeader (DNS rebinding)', () => {
  const port = 8123;
  it('accepts this listener by loopback name or address, with or without a same-site Origin', () => {
    for (const host of ['127.0.0.1:8123', 'localhost:8123', '[::1]:8123']) expect(checkHostHeader({ host }, { port })).toEqual({ ok: true });
    expect(checkHostHeader({ host: 'localhost:8123', origin: 'http://localhost:8123' }, { port })).toEqual({ ok: true });
    expect(checkHostHeader({ host: 'localhost:8123', origin: 'http://127.0.0.1:8123' }, { port })).toEqual({ ok: true });
  });
  it('refuses a rebinding name, a wrong port, a foreign Origin, a null Origin, no Host', () => {
    const refused = [
      { host: 'evil.example:8123' },
      { host: 'localhost:9999' },
      { host: 'localhost' },
      { host: 'localhost:8123', origin: 'http://evil.example' },
      { host: 'localhost:8123', origin: 'http://localhost:9999' },
      { host: 'localhost:8123', origin: 'null' },
      { host: 'localhost:8123', origin: 'file://' },
      {},
      { host: 'local host:8123' },
    ];
    for (const headers of refused) {
      const verdict = checkHostHeader(headers, { port });
      expect(verdict.ok, JSON.stringify(headers)).toBe(false);
      if (!verdict.ok) expect(verdict.reason).toMatch(/\.$/);
    }
  });
  it('accepts names the user listed (a non-loopback --listen host)', () => {
    expect(checkHostHeader({ host: '192.168.1.5:8123', origin: 'http://192.168.1.5:8123' }, { port, allowedHosts: ['192.168.1.5'] })).toEqual({ ok: true });
    expect(checkHostHeader({ host: '192.168.1.6:8123' }, { port, allowedHosts: ['192.168.1.5'] }).ok).toBe(false);
    expect(checkHostHeader({ host: 'localhost' }, { port: 80 })).toEqual({ ok: true });
  });
});
