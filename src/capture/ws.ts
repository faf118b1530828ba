/**
 * WebSocket upgrades through the HTTP tap. http-proxy relays the raw socket bytes both ways, untouched; the tap
 * hands a copy of each direction to the inspection (session/ws-session.ts decodes the frames into MCP messages,
 * one McpSession per connection, channel `mcp-ws`).
 */
import type http from 'node:http';
import type { Duplex } from 'node:stream';
import { performance } from 'node:perf_hooks';
import type httpProxy from 'http-proxy';
import { now, type HttpCalls } from './http-calls.js';

export interface WebSocketTapContext {
  proxy: httpProxy;
  req: http.IncomingMessage;
  socket: Duplex;
  head: Buffer;
  /** The upgrade request's exchange number in the inspection calls. */
  x: number;
  inspection: HttpCalls;
  tracked: { settled: boolean };
}

/** Proxy one upgrade request and tap the messages of the connection it opens. */
export function tapWebSocket(ctx: WebSocketTapContext): void {
  const { proxy, req, socket, head, x, inspection, tracked } = ctx;
  inspection.requestEnd(x, ...now());
  // http-proxy creates the upstream request synchronously inside ws(): catch it to watch its answer.
  const onProxyReq = (proxyReq: http.ClientRequest, r: http.IncomingMessage): void => {
    if (r !== req) return;
    proxyReq.on('response', (res: http.IncomingMessage) => {
      // The upstream refused the upgrade: http-proxy relays its answer as a plain response.
      inspection.responseHead(x, res.statusCode ?? 0, res.headers, ...now());
      res.on('data', (chunk: Buffer) => inspection.responseData(x, chunk, Date.now(), performance.now()));
      res.on('end', () => {
        tracked.settled = true;
        inspection.responseEnd(x, ...now());
      });
      res.on('error', () => {});
    });
    // Registered before http-proxy's own listener: the data listeners below are in place before its pipes, and
    // each chunk still reaches the inspection after the pipe has written it on (calls go out in a later turn).
    proxyReq.on('upgrade', (proxyRes: http.IncomingMessage, proxySocket: Duplex) => {
      tracked.settled = true;
      inspection.wsOpen(x, proxyRes.headers, ...now());
      socket.on('data', (chunk: Buffer) => inspection.wsData(x, 'c2s', chunk, Date.now(), performance.now()));
      proxySocket.on('data', (chunk: Buffer) => inspection.wsData(x, 's2c', chunk, Date.now(), performance.now()));
      let ended = false;
      const end = (): void => {
        if (ended) return;
        ended = true;
        inspection.wsEnd(x, ...now());
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
      inspection.fail(x, 'upstream-unreachable', { name: e.name, message: e.message, ...(e.code ? { code: e.code } : {}) }, ...now());
      if (socket.writable) socket.end('HTTP/1.1 502 Bad Gateway\r\nContent-Type: text/plain\r\nConnection: close\r\n\r\nmcptap could not reach the upstream.\r\n');
    });
  } finally {
    proxy.off('proxyReqWs', onProxyReq);
  }
}
