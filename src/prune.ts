/**
 * `mcptap prune`: delete old logs. Logs hold whatever the traffic held; keeping them bounded in time is part of
 * keeping them private. Looks only at `*.ndjson` files in the log folder and its subfolders (rotated parts and
 * `mcptap demo`'s `demo-<time>/` folders included) and never follows symbolic links: it deletes only log files
 * that are in that folder, never what a link points at.
 */
import { lstat, stat, unlink } from 'node:fs/promises';
import { findLogFiles } from './log/walk.js';
import { McptapError } from './types.js';

const UNITS: Record<string, number> = { s: 1000, m: 60_000, h: 3_600_000, d: 86_400_000, w: 7 * 86_400_000 };

/** `90s`, `30m`, `12h`, `7d`, `2w` → milliseconds. Throws McptapError with a sentence for anything else. */
export function parseDuration(text: string): number {
  const m = /^\s*(\d+(?:\.\d+)?)\s*([smhdw])\s*$/i.exec(text);
  if (!m) throw new McptapError('BAD_DURATION', `"${text}" is not a duration. Use a number and a unit: 30m, 12h, 7d or 2w.`);
  const ms = Number(m[1]) * UNITS[m[2]!.toLowerCase()]!;
  if (!(ms > 0)) throw new McptapError('BAD_DURATION', `--older-than must be more than zero (for example 7d), not "${text}".`);
  return ms;
}

/** A log file old enough to go. */
export interface OldLog {
  file: string;
  bytes: number;
  /** Last modification, epoch ms: a log still being written is never old. */
  mtimeMs: number;
}

/** The logs in `dir` last written more than `olderThanMs` ago, oldest first. */
export async function findOldLogs(dir: string, olderThanMs: number, now: number = Date.now()): Promise<OldLog[]> {
  let files: string[];
  try {
    const info = await stat(dir);
    if (!info.isDirectory()) throw Object.assign(new Error('not a folder'), { code: 'ENOTDIR' });
    files = await findLogFiles(dir, { followLinks: false });
  } catch (error) {
    const code = (error as NodeJS.ErrnoException).code;
    if (code === 'ENOENT') throw new McptapError('LOG_DIR_NOT_FOUND', `There is no log folder at ${dir}. Give the folder of logs (mcptap writes to ./logs by default).`);
    if (code === 'ENOTDIR') throw new McptapError('LOG_DIR_NOT_FOUND', `${dir} is a file, not a folder of logs. Give the folder of logs.`);
    throw new McptapError('LOG_DIR_UNREADABLE', `Cannot read the log folder ${dir} (${code ?? (error as Error).message}).`);
  }
  const cutoff = now - olderThanMs;
  const old: OldLog[] = [];
  for (const file of files) {
    try {
      const info = await lstat(file);
      if (info.isFile() && info.mtimeMs < cutoff) old.push({ file, bytes: info.size, mtimeMs: info.mtimeMs });
    } catch {
      // Gone meanwhile: nothing to prune.
    }
  }
  return old.sort((a, b) => a.mtimeMs - b.mtimeMs);
}

/** Delete the given logs; what could not be deleted is reported, not thrown. */
export async function deleteLogs(logs: readonly OldLog[]): Promise<{ deleted: OldLog[]; failed: { file: string; message: string }[] }> {
  const deleted: OldLog[] = [];
  const failed: { file: string; message: string }[] = [];
  for (const log of logs) {
    try {
      await unlink(log.file);
      deleted.push(log);
    } catch (error) {
      failed.push({ file: log.file, message: (error as NodeJS.ErrnoException).code ?? (error as Error).message });
    }
  }
  return { deleted, failed };
}
