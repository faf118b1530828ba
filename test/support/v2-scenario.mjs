/**
 * Clients built with the official SDK v2 (`@modelcontextprotocol/client`, MCP 2026-07-28) against
 * fixtures/v2/trip-server.mjs: what they see, without timings, so runs compare with toEqual (direct, through
 * mcptap, against `mcptap replay`). The user answers the server's confirmation with yes.
 *
 * Plain ESM so it runs as it is under Node 20.
 */
import { spawn } from 'node:child_process';
import { fileURLToPath } from 'node:url';
import { Client, StreamableHTTPClientTransport } from '@modelcontextprotocol/client';
import { StdioClientTransport } from '@modelcontextprotocol/client/stdio';

export const TRIP_SERVER = fileURLToPath(new URL('../../fixtures/v2/trip-server.mjs', import.meta.url));

/** A v2 client in the SDK's `auto` mode (a server/discover probe first), answering elicitations with yes. */
export function v2Client(name = 'trip-client') {
  const client = new Client({ name, version: '2.4.0' }, { capabilities: { elicitation: {} }, versionNegotiation: { mode: 'auto' } });
  client.setRequestHandler('elicitation/create', async () => ({ action: 'accept', content: { confirm: true } }));
  return client;
}

/** A Streamable HTTP transport to `url`. */
export const httpTransport = (url) => new StreamableHTTPClientTransport(new URL(url));

/** A stdio transport that starts `command args`. */
export const stdioTransport = (command, args) => new StdioClientTransport({ command, args, stderr: 'ignore' });

/**
 * One client's session: list the tools, ask the weather (after `delayMs` on the server), book a trip (two
 * rounds: the server asks for confirmation), read a resource.
 */
export async function runTripScenario(transport, { name = 'trip-client', city = 'Bergen', delayMs = 0 } = {}) {
  const client = v2Client(name);
  await client.connect(transport);
  try {
    const version = client.getNegotiatedProtocolVersion?.();
    const tools = (await client.listTools()).tools.map((t) => t.name);
    const weather = (await client.callTool({ name: 'get_weather', arguments: { city, delayMs } })).content;
    const booking = (await client.callTool({ name: 'book_trip', arguments: { city } })).content;
    const policy = (await client.readResource({ uri: 'trip://policy' })).contents;
    return { version, tools, weather, booking, policy };
  } finally {
    await client.close();
  }
}

/** `node trip-server.mjs http` on a free port: its URL, and a stop function. */
export async function startTripServer() {
  const child = spawn(process.execPath, [TRIP_SERVER, 'http'], { stdio: ['ignore', 'pipe', 'inherit'] });
  const url = await new Promise((resolve, reject) => {
    let out = '';
    child.stdout.on('data', (chunk) => {
      out += chunk;
      const m = /listening (\S+)/.exec(out);
      if (m) resolve(m[1]);
    });
    child.once('exit', (code) => reject(new Error(`trip-server exited (${code}) before listening`)));
  });
  return {
    url,
    stop: () =>
      new Promise((resolve) => {
        if (child.exitCode !== null || child.signalCode !== null) return resolve();
        child.once('exit', () => resolve());
        child.kill('SIGTERM');
      }),
  };
}
