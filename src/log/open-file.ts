/**
 * Opening a log file the way every log is opened: folder 0700, file 0600, appended to. Its own small module so the
 * stdio tap can open the log on the main thread without loading the writer (start-up time matters there).
 */
import { fchmodSync, mkdirSync, openSync } from 'node:fs';
import { open } from 'node:fs/promises';
import { join } from 'node:path';

/** Open `file` for appending, creating its folder 0700; the file is 0600 even when it existed with a wider mode. */
export function openLogFile(file: string): number {
  mkdirSync(join(file, '..'), { recursive: true, mode: 0o700 });
  const fd = openSync(file, 'a', 0o600);
  // The umask may only take bits away, but a pre-existing file keeps its mode: make it owner-only.
  fchmodSync(fd, 0o600);
  return fd;
}

/**
 * Write a whole file mcptap makes from a log (an export, `view -o`, `check -o`) owner-only, 0600, as the log
 * itself is: it holds what the log holds. A file that existed with a wider mode is narrowed first.
 */
export async function writePrivateFile(file: string, text: string): Promise<void> {
  const handle = await open(file, 'w', 0o600);
  try {
    await handle.chmod(0o600);
    await handle.writeFile(text);
  } finally {
    await handle.close();
  }
}

/** What mcptap says when a log file cannot be opened. */
export function cannotOpenLogMessage(file: string, error: unknown): string {
  return `cannot write the log ${file} (${describeError(error)}); the traffic goes on without a log. Choose another folder with --log-dir or MCPTAP_LOG_DIR.`;
}

export function describeError(error: unknown): string {
  const e = error as NodeJS.ErrnoException;
  return e?.code ? `${e.code}: ${e.message}` : String(e?.message ?? error);
}
