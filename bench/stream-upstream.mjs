// An upstream for the HTTP benchmarks, run as its own process: streams NDJSON shaped like Ollama's chat chunks,
// at Ollama's path so a tap sees an Ollama chat turn (request body is read and ignored), and SSE shaped like
// OpenAI's at OpenAI's. Each chunk carries one short word, as a model's tokens do (a word like "token" or "key"
// in every chunk would send every chunk down redaction's slow path, which real text does only now and then).
//   POST /api/chat?mode=stream&n=2000     n chunks written back to back (throughput)
//   POST /v1/chat/completions?mode=stream&n=2000   the same as OpenAI's SSE events, then `data: [DONE]`
//   POST /api/chat?mode=paced&n=50&ms=5   n chunks, one every ms milliseconds (time to first byte, gaps);
//                                         with &stamp=1 each chunk says when it was written (`sent`, ms of the
//                                         machine's monotonic clock, which every process reads alike)
//   POST /api/chat?mode=big&mb=1024       about mb megabytes of chunks, written with backpressure (memory)
//   POST /mcp                             an MCP server (the SDK's, stateless): tools/call read_doc answers
//                                         with a JSON document quoted in its text, on an SSE stream (90 KB)
// Prints its port on stdout once listening.
import http from 'node:http';
import { McpServer } from '@modelcontextprotocol/sdk/server/mcp.js';
import { StreamableHTTPServerTransport } from '@modelcontextprotocol/sdk/server/streamableHttp.js';

/** CLOCK_MONOTONIC, the same in every process (performance.timeOrigin is each process's own reading of the wall clock). */
const monotonicMs = () => Number(process.hrtime.bigint()) / 1e6;

const chunk = (i, sent) => `${JSON.stringify({ model: 'bench', created_at: '2026-11-29T00:00:00Z', message: { role: 'assistant', content: ` word${i}` }, done: false, ...(sent ? { sent } : {}) })}\n`;
const last = `${JSON.stringify({ model: 'bench', created_at: '2026-11-29T00:00:00Z', message: { role: 'assistant', content: '' }, done: true, done_reason: 'stop', eval_count: 1, eval_duration: 1000 })}\n`;

const event = (i, finish) => `data: ${JSON.stringify({ id: 'chatcmpl-bench', object: 'chat.completion.chunk', created: 1764547200, model: 'bench', choices: [{ index: 0, delta: finish ? {} : { content: ` word${i}` }, finish_reason: finish ? 'stop' : null }] })}\n\n`;

async function streamEvents(res, n) {
  res.writeHead(200, { 'content-type': 'text/event-stream' });
  for (let i = 0; i < n; i++) if (!res.write(event(i, false))) await new Promise((r) => res.once('drain', r));
  res.end(`${event(n, true)}data: [DONE]\n\n`);
}

const doc = JSON.stringify(Array.from({ length: 1150 }, (_, i) => ({ row: i, name: `item "${i}"`, note: 'a line of a document' })));

/** The SDK's stateless pattern: a fresh server and transport for each request. */
async function answerMcp(req, res, body) {
  const mcp = new McpServer({ name: 'bench-docs', version: '1.0.0' });
  mcp.registerTool('read_doc', { description: 'A JSON document' }, async () => ({ content: [{ type: 'text', text: doc }] }));
  const transport = new StreamableHTTPServerTransport({ sessionIdGenerator: undefined });
  res.on('close', () => void transport.close());
  await mcp.connect(transport);
  await transport.handleRequest(req, res, JSON.parse(body));
}

const server = http.createServer(async (req, res) => {
  const url = new URL(req.url, 'http://x');
  const mode = url.searchParams.get('mode');
  const n = Number(url.searchParams.get('n') ?? 50);
  let body = '';
  for await (const piece of req) body += piece;
  if (url.pathname === '/mcp') return answerMcp(req, res, body);
  if (url.pathname === '/v1/chat/completions') return streamEvents(res, n);
  res.writeHead(200, { 'content-type': 'application/x-ndjson' });
  if (mode === 'stream') {
    for (let i = 0; i < n; i++) if (!res.write(chunk(i))) await new Promise((r) => res.once('drain', r));
    res.end(last);
  } else if (mode === 'paced') {
    const ms = Number(url.searchParams.get('ms') ?? 5);
    const stamp = url.searchParams.has('stamp');
    for (let i = 0; i < n; i++) {
      res.write(chunk(i, stamp ? monotonicMs() : undefined));
      await new Promise((r) => setTimeout(r, ms));
    }
    res.end(last);
  } else if (mode === 'big') {
    const total = Number(url.searchParams.get('mb') ?? 1024) * 1024 * 1024;
    const block = Array.from({ length: 512 }, (_, i) => chunk(i)).join('');
    for (let sent = 0; sent < total; sent += block.length) if (!res.write(block)) await new Promise((r) => res.once('drain', r));
    res.end(last);
  } else {
    res.end(last);
  }
});
server.listen(0, '127.0.0.1', () => console.log(server.address().port));
