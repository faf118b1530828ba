/**
 * Addresses as the user writes them: where mcptap listens (`--listen`, the HTTP tap, `ui`) and the upstream it
 * forwards to (`--target`). Pure: a bad one is a McptapError whose message says what to write instead.
 */
import { McptapError } from './types.js';
import { redactDefaults } from './log/redact.js';

/** Parse `--listen`: `8080`, `:8080`, `0.0.0.0:8080`, `[::1]:8080`. A port alone binds 127.0.0.1. */
export function parseListenAddress(listen: string | number | { host?: string; port: number } | undefined): { host: string; port: number } {
  if (listen === undefined) return { host: '127.0.0.1', port: 0 };
  if (typeof listen === 'object') return { host: listen.host ?? '127.0.0.1', port: checkPort(listen.port, String(listen.port)) };
  const text = String(listen).trim();
  const m = /^(?:\[([^\]]+)\]|([^:]*)):(\d+)$/.exec(text);
  if (m) return { host: m[1] ?? (m[2] || '127.0.0.1'), port: checkPort(Number(m[3]), text) };
  if (/^\d+$/.test(text)) return { host: '127.0.0.1', port: checkPort(Number(text), text) };
  throw new McptapError('BAD_LISTEN', `--listen must be a port or HOST:PORT (for example 11434 or 127.0.0.1:11434), not "${text}".`);
}

function checkPort(port: number, text: string): number {
  if (!Number.isInteger(port) || port < 0 || port > 65535) {
    throw new McptapError('BAD_LISTEN', `--listen needs a port between 0 and 65535, not "${text}".`);
  }
  return port;
}

/**
 * Parse and check the upstream URL. Without a scheme only HOST:PORT is taken (`127.0.0.1:11435`): a bare word
 * (`notaurl`) is a mistake that would otherwise fail on every request, long after start-up.
 */
export function parseTarget(target: string): URL {
  const bad = new McptapError('BAD_TARGET', `--target must be a URL such as http://127.0.0.1:11434, not "${redactDefaults(target)}".`);
  const schemed = /^[a-z][a-z0-9+.-]*:\/\//i.test(target);
  let url: URL;
  try {
    url = new URL(schemed ? target : `http://${target}`);
  } catch {
    throw bad;
  }
  if (!schemed && url.port === '') throw bad;
  if (url.protocol !== 'http:' && url.protocol !== 'https:') {
    throw new McptapError('BAD_TARGET', `--target must be an http:// or https:// URL, not "${redactDefaults(target)}" (for WebSocket servers give the http:// URL; upgrades pass through).`);
  }
  return url;
}
