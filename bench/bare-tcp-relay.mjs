// The floor for any relay at all: bytes piped between the client's connection and one of its own to the target,
// no HTTP parsed, nothing inspected (a new upstream connection for each client connection).
// Usage: node bench/bare-tcp-relay.mjs TARGET_URL; prints its port on stdout once listening.
import net from 'node:net';

const target = new URL(process.argv[2]);
const server = net.createServer((client) => {
  const upstream = net.connect(Number(target.port), target.hostname);
  for (const socket of [client, upstream]) socket.setNoDelay(true);
  client.pipe(upstream);
  upstream.pipe(client);
  // Either side's error ends both, as a closed connection would.
  client.on('error', () => upstream.destroy());
  upstream.on('error', () => client.destroy());
});
server.listen(0, '127.0.0.1', () => console.log(server.address().port));
