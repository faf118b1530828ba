// The floor for any Node.js stdio wrapper: spawn the command and pipe bytes both ways, parsing nothing.
import { spawn } from 'node:child_process';

const separator = process.argv.indexOf('--');
const [command, ...args] = process.argv.slice(separator + 1);
const child = spawn(command, args, { stdio: ['pipe', 'pipe', 'inherit'] });
process.stdin.pipe(child.stdin);
child.stdout.pipe(process.stdout);
child.stdin.on('error', () => {});
child.on('exit', (code) => process.stdout.write('', () => process.exit(code ?? 1)));
