/**
 * `mcptap …` (bin/mcptap.js, which runs the built dist/) as a child process with its stdin ended, for the tests
 * of the reading commands: resolves with the exit code and both outputs, whatever the code; a command that
 * outlives `timeoutMs` fails the test as a hang.
 */
import { execFile } from 'node:child_process';
import { fileURLToPath } from 'node:url';
import { promisify } from 'node:util';

const BIN = fileURLToPath(new URL('../../bin/mcptap.js', import.meta.url));
const exec = promisify(execFile);

export async function mcptap(args: string[], timeoutMs = 30_000): Promise<{ code: number; stdout: string; stderr: string }> {
  const run = exec(process.execPath, [BIN, ...args], { timeout: timeoutMs, maxBuffer: 64 * 1024 * 1024 });
  run.child.stdin?.end();
  try {
    return { code: 0, ...(await run) };
  } catch (error) {
    const e = error as { code: number | string; stdout: string; stderr: string; killed?: boolean };
    if (e.killed) throw new Error(`mcptap ${args.join(' ')} hung`);
    return { code: Number(e.code), stdout: e.stdout, stderr: e.stderr };
  }
}
