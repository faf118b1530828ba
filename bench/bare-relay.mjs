// The floor for any Node.js stdio wrapper: spawn the command and pipe bytes both ways, parsing nothing.
import { spawn } from 'node:child_process';

const separator = process.argv.indexOf('--');
// Without `--` the slice would start at node itself, and the relay would spawn itself without end.
if (separator === -1 || separator === process.argv.length - 1) {
  process.stderr.write('usage: node bench/bare-relay.mjs -- COMMAND [ARGS...]\n');
  process.exit(2);
}
const [command, ...args] = process.argv.slice(separator + 1);
const child = spawn(command, args, { stdio: ['pipe', 'pipe', 'inherit'] });
process.stdin.pipe(child.stdin);
child.stdout.pipe(process.stdout);
child.stdin.on('error', () => {});
// 'close', not 'exit': 'exit' may come before the last of the child's output has been read and written on.
child.on('close', (code) => process.stdout.write('', () => process.exit(code ?? 1)));
