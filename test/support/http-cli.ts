/**
 * `mcptap http …` as a real child process, for tests: resolves once it says where it listens; `stop()` sends
 * SIGTERM (as a user's Ctrl-C would) and resolves with its exit code once it has flushed its log and gone.
 */
import { spawn, type ChildProcess } from 'node:child_process';
import { fileURLToPath } from 'node:url';

const BIN = fileURLToPath(new URL('../../bin/mcptap.js', import.meta.url));

export interface HttpCli {
  url: string;
  child: ChildProcess;
  stop(): Promise<number | null>;
}

export async function startHttpCli(args: string[]): Promise<HttpCli> {
  const child = spawn(process.execPath, [BIN, 'http', ...args], { stdio: ['ignore', 'ignore', 'pipe'] });
  let err = '';
  const url = await new Promise<string>((resolve, reject) => {
    child.stderr!.on('data', (chunk: Buffer) => {
      err += chunk.toString('utf8');
      const m = /listening on (http:\/\/\S+),/.exec(err);
      if (m) resolve(m[1]!);
    });
    child.once('exit', (code) => reject(new Error(`mcptap http exited (${code}) before listening: ${err}`)));
  });
  const exited = new Promise<number | null>((resolve) => child.once('exit', (code) => resolve(code)));
  return {
    url,
    child,
    async stop() {
      child.kill('SIGTERM');
      return exited;
    },
  };
}
