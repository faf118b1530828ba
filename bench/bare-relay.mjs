// The floor for any Node.js stdio wrapper: spawn the command and pipe bytes both ways, parsing nothing.
// With `--tee FILE` it also writes every byte it relays, both ways, to FILE: the floor for a relay that logs.
import { spawn } from 'node:child_process';
import { createWriteStream } from 'node:fs';

const separator = process.argv.indexOf('--');
// Without `--` the slice would start at node itself, and the relay would spawn itself without end.
if (separator === -1 || separator === process.argv.length - 1) {
  process.stderr.write('usage: node bench/bare-relay.mjs [--tee FILE] -- COMMAND [ARGS...]\n');
  process.exit(2);
}
const teeAt = process.argv.indexOf('--tee');
const tee = teeAt !== -1 && teeAt < separator ? createWriteStream(process.argv[teeAt + 1]) : undefined;
const [command, ...args] = process.argv.slice(separator + 1);
const child = spawn(command, args, { stdio: ['pipe', 'pipe', 'inherit'] });
process.stdin.pipe(child.stdin);
child.stdout.pipe(process.stdout);
// After the pipes' listeners, as mcptap's copies are: each chunk is handed on before it is written.
if (tee) {
  process.stdin.on('data', (chunk) => tee.write(chunk));
  child.stdout.on('data', (chunk) => tee.write(chunk));
}
child.stdin.on('error', () => {});
// 'close', not 'exit': 'exit' may come before the last of the child's output has been read and written on.
child.on('close', (code) => {
  const exit = () => process.stdout.write('', () => process.exit(code ?? 1));
  if (tee) tee.end(exit);
  else exit();
});
