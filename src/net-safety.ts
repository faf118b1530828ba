/**
 * Network safety helpers for everything mcptap listens on: the HTTP tap, its live view, replay servers.
 *
 * - Listeners bind 127.0.0.1 unless told otherwise; `isLoopbackHost` decides whether a requested address needs
 *   the warning `nonLoopbackWarning` gives (anyone who can reach it can read the traffic and use the upstream's
 *   credentials through the proxy).
 * - DNS rebinding: a web page can make a browser send requests to 127.0.0.1 under a name the attacker controls
 *   (`evil.example` resolving to 127.0.0.1). Such requests carry `Host: evil.example:PORT` and an `Origin` of
 *   that page. `checkHostHeader` accepts a request only when Host (and Origin, when sent) name this listener:
 *   a loopback name or address, or a name the user listed, on the listening port. mcptap's own pages always
 *   apply it; proxied requests only with --strict-host (the proxy is otherwise transparent, so the upstream's
 *   own checks see Host and Origin as the client sent them).
 *
 * Pure functions, no sockets.
 */
import { isIP } from 'node:net';

/** True for names and addresses that only this machine can reach: localhost, 127.0.0.0/8, ::1. */
export function isLoopbackHost(host: string): boolean {
  let h = host.trim().toLowerCase();
  if (h.startsWith('[') && h.endsWith(']')) h = h.slice(1, -1);
  if (h === 'localhost' || h.endsWith('.localhost')) return true;
  if (h.startsWith('::ffff:')) h = h.slice('::ffff:'.length);
  if (isIP(h) === 4) return h.split('.')[0] === '127';
  if (isIP(h) === 6) return /^(?:0{0,4}:){2,7}0{0,3}1$|^::1$/.test(h);
  return false;
}

/** The warning for a listener on a non-loopback address, or undefined when the address is loopback. */
export function nonLoopbackWarning(host: string, port: number | string): string | undefined {
  if (isLoopbackHost(host)) return undefined;
  const what = host === '0.0.0.0' || host === '::' || host === '' ? 'every network interface' : host;
  return `listening on ${what} (port ${port}), not only this machine: anyone who can reach it can read the traffic in the log's view and send requests through to the upstream with its credentials. Use --listen ${port} (127.0.0.1) unless you mean it.`;
}

export interface HostCheckOptions {
  /** The port the listener is bound to. */
  port: number;
  /** Names or addresses besides loopback ones that refer to this listener (e.g. the --listen host). */
  allowedHosts?: readonly string[];
}

/** The verdict on a request's Host and Origin. */
export type HostCheck = { ok: true } | { ok: false; reason: string };

/**
 * Accept a request only when its Host header, and its Origin header when there is one, name this listener.
 * Returns a reason, a plain sentence, when refusing (answer 403 with it).
 */
export function checkHostHeader(headers: { host?: string | undefined; origin?: string | undefined }, options: HostCheckOptions): HostCheck {
  const allowed = new Set((options.allowedHosts ?? []).map((h) => stripBrackets(h.toLowerCase())));
  const names = (host: string): boolean => isLoopbackHost(host) || allowed.has(stripBrackets(host.toLowerCase()));
  const host = headers.host;
  if (!host) return { ok: false, reason: 'the request has no Host header, so mcptap cannot tell which site sent it.' };
  const parsed = splitHostPort(host);
  if (!parsed) return { ok: false, reason: `the Host header ${JSON.stringify(host)} is not a host name.` };
  if (!names(parsed.host) || (parsed.port ?? 80) !== options.port) {
    return { ok: false, reason: `the Host header ${JSON.stringify(host)} does not name this mcptap (127.0.0.1:${options.port}); a web page may be trying to reach it through DNS rebinding.` };
  }
  const origin = headers.origin;
  if (origin !== undefined) {
    let url: URL;
    try {
      url = new URL(origin);
    } catch {
      return { ok: false, reason: `the request comes from the origin ${JSON.stringify(origin)}, not from a page of this mcptap.` };
    }
    const port = url.port ? Number(url.port) : url.protocol === 'https:' ? 443 : 80;
    if ((url.protocol !== 'http:' && url.protocol !== 'https:') || !names(url.hostname) || port !== options.port) {
      return { ok: false, reason: `the request comes from the web page ${origin}, not from a page of this mcptap; cross-site requests are refused.` };
    }
  }
  return { ok: true };
}

function stripBrackets(h: string): string {
  return h.startsWith('[') && h.endsWith(']') ? h.slice(1, -1) : h;
}

/** `name`, `name:port`, `[v6]`, `[v6]:port` → parts; undefined when malformed. */
function splitHostPort(value: string): { host: string; port?: number } | undefined {
  const v = value.trim();
  const m = /^(\[[0-9a-fA-F:.]+\]|[^:[\]\s/]+)(?::(\d{1,5}))?$/.exec(v);
  if (!m) return undefined;
  return m[2] === undefined ? { host: m[1]! } : { host: m[1]!, port: Number(m[2]) };
}
