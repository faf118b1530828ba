// The floor for any http-proxy based tap: http-proxy forwarding to --target, inspecting nothing.
// Usage: node bench/bare-http-proxy.mjs TARGET_URL; prints its port on stdout once listening.
import http from 'node:http';
import httpProxy from 'http-proxy';

const proxy = httpProxy.createProxyServer({ target: process.argv[2] });
proxy.on('error', (_error, _req, res) => res.end?.());
const server = http.createServer((req, res) => proxy.web(req, res));
server.listen(0, '127.0.0.1', () => console.log(server.address().port));
