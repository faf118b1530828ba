/**
 * Helpers for the stdio process tests: spawn the CLI, wait for what it says, check that processes are gone.
 */
import { spawn, type ChildProcessWithoutNullStreams } from 'node:child_process';
import { readFileSync } from 'node:fs';
import { join } from 'node:path';
import { readAllRecords } from '../../src/log/reader.js';
import type { LogRecord } from '../../src/log/schema.js';
import { tempDir } from '../support/temp-dir.js';

export type Rec = LogRecord & Record<string, unknown>;

/** A fresh log folder under a temporary root that is removed after the file's tests. */
export function logDirs(prefix: string): { root: string; freshDir: () => string } {
  const root = tempDir(prefix);
  let dirs = 0;
  return { root, freshDir: () => join(root, `logs-${++dirs}`) };
}

export interface Run {
  child: ChildProcessWithoutNullStreams;
  stdout: () => string;
  stderr: () => string;
  done: Promise<{ code: number | null; signal: NodeJS.Signals | null }>;
  /** Resolves once stderr matches. */
  waitFor: (pattern: RegExp) => Promise<RegExpMatchArray>;
}

/** Start `node bin/mcptap.js ...words` with pipes on all three streams. */
export function start(words: string[], env: NodeJS.ProcessEnv = process.env): Run {
  const child = spawn(process.execPath, ['bin/mcptap.js', ...words], { stdio: ['pipe', 'pipe', 'pipe'], env });
  let stdout = '';
  let stderr = '';
  const waiters: { pattern: RegExp; resolve: (m: RegExpMatchArray) => void }[] = [];
  child.stdout.on('data', (c: Buffer) => (stdout += c.toString()));
  child.stderr.on('data', (c: Buffer) => {
    stderr += c.toString();
    for (const w of [...waiters]) {
      const m = stderr.match(w.pattern);
      if (m) {
        waiters.splice(waiters.indexOf(w), 1);
        w.resolve(m);
      }
    }
  });
  child.stdin.on('error', () => {});
  const done = new Promise<{ code: number | null; signal: NodeJS.Signals | null }>((resolve) => child.on('close', (code, signal) => resolve({ code, signal })));
  return {
    child,
    stdout: () => stdout,
    stderr: () => stderr,
    done,
    waitFor: (pattern) => {
      const m = stderr.match(pattern);
      if (m) return Promise.resolve(m);
      return new Promise((resolve, reject) => {
        // Say what did come, rather than hang until the test times out.
        const timer = setTimeout(() => reject(new Error(`stderr never matched ${String(pattern)}; it was: ${stderr}`)), 10_000);
        waiters.push({ pattern, resolve: (found) => (clearTimeout(timer), resolve(found)) });
      });
    },
  };
}

/** Alive means: the pid exists and is not a zombie (a container's pid 1 may never reap orphans). */
export function alive(pid: number): boolean {
  try {
    const stat = readFileSync(`/proc/${pid}/stat`, 'utf8');
    return stat.slice(stat.lastIndexOf(')') + 2)[0] !== 'Z';
  } catch {
    try {
      process.kill(pid, 0);
      return true;
    } catch {
      return false;
    }
  }
}

export async function until(check: () => boolean, ms = 3000): Promise<boolean> {
  const end = Date.now() + ms;
  while (Date.now() < end) {
    if (check()) return true;
    await new Promise((r) => setTimeout(r, 20));
  }
  return check();
}

export const records = async (dir: string) => (await readAllRecords([dir])) as Rec[];

