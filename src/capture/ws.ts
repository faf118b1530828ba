/**
 * WebSocket upgrades through the HTTP tap. http-proxy relays the raw socket bytes both ways, untouched; the tap
 * decodes a copy of each direction with ws's own frame parser (Receiver, with permessage-deflate when the
 * handshake agreed on it) and hands each message to an McpSession (channel `mcp-ws`), one per connection.
 */
import type http from 'node:http';
import type { Duplex } from 'node:stream';
import { performance } from 'node:perf_hooks';
import type httpProxy from 'http-proxy';
import * as wsModule from 'ws';
import type { HttpExchange, HttpObserver, McpSessionEntry } from '../session/http-exchange.js';
import { LEVEL } from '../log/schema.js';

// ws exports its frame parser and extension helpers at run time, but its type declarations leave them out.
interface ReceiverLike {
  write(chunk: Buffer): boolean;
  on(event: 'message', listener: (data: Buffer | Buffer[], isBinary: boolean) => void): unknown;
  on(event: 'error', listener: (error: Error) => void): unknown;
}
const ws = wsModule as unknown as {
  Receiver: new (options: Record<string, unknown>) => ReceiverLike;
  PerMessageDeflate: (new (options: Record<string, unknown>) => { accept(offers: unknown[]): unknown }) & { extensionName: string };
  extension: { parse(header: string): Record<string, unknown[]> };
};

export interface WebSocketTapContext {
  proxy: httpProxy;
  req: http.IncomingMessage;
  socket: Duplex;
  head: Buffer;
  exchange: HttpExchange;
  observer: HttpObserver;
  /** Runs work after the current chunk has been forwarded, shielding the traffic from logging errors. */
  later: (work: () => void) => void;
  tracked: { settled: boolean };
  maxBody: number;
}

/** Proxy one upgrade request and tap the messages of the connection it opens. */
export function tapWebSocket(ctx: WebSocketTapContext): void {
  const { proxy, req, socket, head, exchange, observer, later, tracked } = ctx;
  const now = (): [number, number] => [Date.now(), performance.now()];
  {
    const [t, m] = now();
    later(() => exchange.requestEnd(t, m));
  }
  // http-proxy creates the upstream request synchronously inside ws(): catch it to watch its answer.
  const onProxyReq = (proxyReq: http.ClientRequest, r: http.IncomingMessage): void => {
    if (r !== req) return;
    proxyReq.on('response', (res: http.IncomingMessage) => {
      // The upstream refused the upgrade: http-proxy relays its answer as a plain response.
      const [t, m] = now();
      later(() => exchange.responseHead(res.statusCode ?? 0, res.headers, t, m));
      res.on('data', (chunk: Buffer) => {
        const [at, am] = now();
        later(() => exchange.responseData(chunk, at, am));
      });
      res.on('end', () => {
        const [at, am] = now();
        tracked.settled = true;
        later(() => exchange.responseEnd(at, am));
      });
      res.on('error', () => {});
    });
    // Registered before http-proxy's own listener: the data listeners below are in place before its pipes, and
    // each chunk is still observed later (the tap queue), after the pipe has written it on.
    proxyReq.on('upgrade', (proxyRes: http.IncomingMessage, proxySocket: Duplex) => {
      const [t, m] = now();
      tracked.settled = true;
      later(() => {
        exchange.responseHead(101, proxyRes.headers, t, m);
        exchange.fail('upgraded', undefined, t, m);
      });
      const entry = observer.open('mcp-ws');
      const extensions = proxyRes.headers['sec-websocket-extensions'];
      const c2s = messageTap(entry, exchange.id, 'c2s', extensions, later, observer);
      const s2c = messageTap(entry, exchange.id, 's2c', extensions, later, observer);
      socket.on('data', (chunk: Buffer) => later(() => c2s.write(chunk)));
      proxySocket.on('data', (chunk: Buffer) => later(() => s2c.write(chunk)));
      let ended = false;
      const end = (): void => {
        if (ended) return;
        ended = true;
        const [at, am] = now();
        later(() => observer.endSession(entry, at, am));
      };
      socket.on('close', end);
      proxySocket.on('close', end);
      proxySocket.on('error', () => {});
    });
  };
  proxy.on('proxyReqWs', onProxyReq);
  try {
    proxy.ws(req, socket, head, {}, (error: Error) => {
      const e = error as NodeJS.ErrnoException;
      if (tracked.settled) return;
      tracked.settled = true;
      const [t, m] = now();
      later(() => exchange.fail('upstream-unreachable', { name: e.name, message: e.message, ...(e.code ? { code: e.code } : {}) }, t, m));
      if (socket.writable) socket.end('HTTP/1.1 502 Bad Gateway\r\nContent-Type: text/plain\r\nConnection: close\r\n\r\nmcptap could not reach the upstream.\r\n');
    });
  } finally {
    proxy.off('proxyReqWs', onProxyReq);
  }
}

interface MessageTap {
  write(chunk: Buffer): void;
}

/** Decode one direction's frames into messages for the session. Gives up quietly (one warning) on a bad frame. */
function messageTap(
  entry: McpSessionEntry,
  exchangeId: string,
  dir: 'c2s' | 's2c',
  extensionsHeader: string | string[] | undefined,
  later: (work: () => void) => void,
  observer: HttpObserver,
): MessageTap {
  // Client frames are masked and parsed as a server would; server frames as a client would.
  const isServer = dir === 'c2s';
  const extensions: Record<string, unknown> = {};
  const header = Array.isArray(extensionsHeader) ? extensionsHeader.join(', ') : extensionsHeader;
  let broken = false;
  try {
    if (header) {
      const offers = ws.extension.parse(header);
      if (offers['permessage-deflate']) {
        const pmd = new ws.PerMessageDeflate({ isServer, maxPayload: 0 });
        pmd.accept(offers['permessage-deflate']);
        extensions[ws.PerMessageDeflate.extensionName] = pmd;
      }
    }
  } catch {
    broken = true;
  }
  const receiver = new ws.Receiver({ isServer, extensions, binaryType: 'nodebuffer', maxPayload: 0, skipUTF8Validation: true });
  receiver.on('message', (data: Buffer | Buffer[], isBinary: boolean) => {
    const bytes = Array.isArray(data) ? Buffer.concat(data) : Buffer.from(data);
    const time = Date.now();
    const mono = performance.now();
    later(() => {
      if (isBinary) {
        observer.sink.write({
          time,
          channel: 'mcp-ws',
          session: entry.session,
          kind: 'invalid',
          dir,
          reason: 'a binary WebSocket message',
          bytes: bytes.length,
          raw: bytes.subarray(0, 4096).toString('base64'),
          rawEncoding: 'base64',
          exchange: exchangeId,
          ...(bytes.length > 4096 ? { truncated: true } : {}),
          msg: `${dir === 'c2s' ? 'Client' : 'Server'} sends a binary WebSocket message of ${bytes.length} bytes (MCP messages are text).`,
        });
        return;
      }
      entry.mcp.observe({ dir, bytes, size: bytes.length, truncated: false, time, mono }, { exchange: exchangeId });
    });
  });
  receiver.on('error', (error: Error) => {
    if (broken) return;
    broken = true;
    later(() =>
      observer.sink.write({
        time: Date.now(),
        channel: 'mcp-ws',
        session: entry.session,
        kind: 'lifecycle',
        event: 'warning',
        level: LEVEL.warn,
        msg: `mcptap could not decode the ${dir === 'c2s' ? "client's" : "server's"} WebSocket frames (${error.message}); the traffic passes through unchanged but its messages are no longer logged.`,
      }),
    );
  });
  return {
    write(chunk) {
      if (broken) return;
      receiver.write(chunk);
    },
  };
}
