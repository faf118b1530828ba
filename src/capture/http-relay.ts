/**
 * One request forwarded as a wire would: header names as written (rawHeaders), in their order, trailers both
 * ways, heads up to MAX_HEADER_BYTES, nothing added (no Date, no X-Forwarded-*, no Connection of Node's own
 * towards the client; Connection and Keep-Alive pass as the peers wrote them). http-proxy, used before,
 * lower-cased names, dropped trailers and kept Node's 16 KiB limit. An Upgrade in a plain request (h2c) is not
 * passed on: mcptap speaks HTTP/1.1.
 */
import http from 'node:http';
import https from 'node:https';
import { isIP } from 'node:net';

/**
 * The largest request or response head mcptap relays (Node's own default is 16 KiB; browsers, proxies and most
 * servers take 32–64 KiB; a bigger head gets 431 from mcptap, or 502 from the upstream's side).
 */
export const MAX_HEADER_BYTES = 256 * 1024;


export interface RelayTarget {
  url: URL;
  agent: http.Agent;
  /** Send the upstream's own host name as Host (a remote API behind a virtual host), not the client's. */
  changeOrigin: boolean;
}

export interface RelayHooks {
  /** The upstream request is made (before any byte of the body is written on). */
  request(proxyReq: http.ClientRequest): void;
  /** The response head arrived; the body is already being forwarded (listeners added here see chunks after). */
  response(proxyRes: http.IncomingMessage): void;
  /** Connecting to the upstream failed, or its connection broke. */
  error(error: NodeJS.ErrnoException): void;
}

/** Forward `req` to the target and its answer to `res`. */
export function relayRequest(req: http.IncomingMessage, res: http.ServerResponse, target: RelayTarget, hooks: RelayHooks): void {
  const { url } = target;
  const base = url.pathname.replace(/\/$/, '');
  const headers = forwardedHeaders(req.rawHeaders, target.changeOrigin ? url.host : undefined);
  const options: https.RequestOptions = {
    protocol: url.protocol,
    hostname: url.hostname.replace(/^\[|\]$/g, ''),
    port: url.port || (url.protocol === 'https:' ? 443 : 80),
    method: req.method ?? 'GET',
    path: `${base}${req.url ?? '/'}`,
    headers: headers as unknown as http.OutgoingHttpHeaders,
    agent: target.agent,
    maxHeaderSize: MAX_HEADER_BYTES,
  };
  // TLS names the server it expects by the target's host, whatever Host the client sent.
  if (url.protocol === 'https:' && isIP(options.hostname as string) === 0) options.servername = options.hostname as string;
  let proxyReq: http.ClientRequest;
  try {
    proxyReq = (url.protocol === 'https:' ? https : http).request(options);
  } catch (error) {
    // A header Node's parser let in but its client will not send (a character it refuses): a 502, not a crash.
    hooks.error(error as NodeJS.ErrnoException);
    req.resume();
    return;
  }
  hooks.request(proxyReq);
  proxyReq.on('error', (error: NodeJS.ErrnoException) => hooks.error(error));
  proxyReq.on('response', (proxyRes) => {
    // A wire adds nothing: Node would put a Date of its own on every response.
    res.sendDate = false;
    res.removeHeader('connection');
    try {
      res.writeHead(proxyRes.statusCode ?? 502, proxyRes.statusMessage, proxyRes.rawHeaders as unknown as http.OutgoingHttpHeaders);
    } catch (error) {
      proxyRes.resume();
      hooks.error(error as NodeJS.ErrnoException);
      return;
    }
    proxyRes.pipe(res, { end: false });
    proxyRes.on('end', () => {
      if (proxyRes.rawTrailers.length > 0) res.addTrailers(pairs(proxyRes.rawTrailers));
      res.end();
    });
    hooks.response(proxyRes);
  });
  req.pipe(proxyReq, { end: false });
  req.on('end', () => {
    if (req.rawTrailers.length > 0) proxyReq.addTrailers(pairs(req.rawTrailers));
    proxyReq.end();
  });
}

/** The client's headers as it wrote them (a flat raw list); Host replaced when asked, an h2c Upgrade left out. */
function forwardedHeaders(raw: readonly string[], host: string | undefined): string[] {
  const upgrade = raw.some((name, i) => i % 2 === 0 && name.toLowerCase() === 'connection' && /\bupgrade\b/i.test(raw[i + 1]!));
  const out: string[] = [];
  for (let i = 0; i < raw.length; i += 2) {
    const name = raw[i]!.toLowerCase();
    if (upgrade && (name === 'upgrade' || name === 'connection' || name === 'http2-settings')) continue;
    out.push(raw[i]!, host !== undefined && name === 'host' ? host : raw[i + 1]!);
  }
  return out;
}

/** A flat raw list as the [name, value] pairs addTrailers takes. */
function pairs(raw: readonly string[]): [string, string][] {
  const out: [string, string][] = [];
  for (let i = 0; i < raw.length; i += 2) out.push([raw[i]!, raw[i + 1]!]);
  return out;
}
