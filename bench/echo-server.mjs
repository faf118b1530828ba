// A minimal line-echo "MCP server" for benchmarks: answers each JSON-RPC request line with a response carrying
// the same id, and echoes any other line back as is. No SDK, so the numbers measure the relay, not the server.
import { createInterface } from 'node:readline';

const lines = createInterface({ input: process.stdin, crlfDelay: Infinity });
const out = [];
let scheduled = false;
const flush = () => {
  scheduled = false;
  process.stdout.write(out.join(''));
  out.length = 0;
};
lines.on('line', (line) => {
  // Requests get a small result; big frames (the throughput case) are echoed whole.
  if (line.length < 512 && line.includes('"method"')) {
    const id = JSON.parse(line).id;
    out.push(`{"jsonrpc":"2.0","id":${JSON.stringify(id)},"result":{"content":[{"type":"text","text":"ok"}]}}\n`);
  } else {
    out.push(`${line}\n`);
  }
  if (!scheduled) {
    scheduled = true;
    setImmediate(flush);
  }
});
// Exit once the last answers are written: process.exit() right after a write to a pipe can cut it short.
lines.on('close', () => {
  const rest = out.join('');
  out.length = 0;
  process.stdout.write(rest, () => process.exit(0));
});
