/**
 * Finding the logs in a folder: every `*.ndjson` file in it and its subfolders (`mcptap demo` writes into
 * `logs/demo-<time>/`, people sort logs into folders of their own).
 *
 * The walk is bounded (MAX_DEPTH levels, MAX_FOLDERS folders) so that `mcptap view ~` ends; a symbolic link to a
 * folder already on the walk (a loop, or a second way into the same folder) is skipped with a note; anything that
 * is not a regular file — a named pipe, a socket, a device — is never opened, since reading one can block forever.
 */
import { lstat, readdir, stat } from 'node:fs/promises';
import type { Stats } from 'node:fs';
import { join } from 'node:path';
import { McptapError } from '../types.js';

/** How deep below the folder given the walk looks. */
export const MAX_DEPTH = 16;
/** How many folders one walk reads at most. */
export const MAX_FOLDERS = 10_000;

export interface WalkOptions {
  /** Follow symbolic links to files and folders (readers do; prune does not, so it deletes only what is there). */
  followLinks: boolean;
  /** What the walk skipped and why, one sentence each. */
  onNote?: (note: string) => void;
}

/** Every `*.ndjson` regular file under `dir`, sorted by path (a folder's files before its subfolders'). */
export async function findLogFiles(dir: string, options: WalkOptions): Promise<string[]> {
  const files: string[] = [];
  const seen = new Set<string>();
  let folders = 0;
  const note = options.onNote ?? (() => {});
  const visit = async (folder: string, info: Stats, depth: number): Promise<void> => {
    const id = `${info.dev}:${info.ino}`;
    if (seen.has(id)) return note(`skipped ${folder}: a link back to a folder already read (a symbolic-link loop).`);
    seen.add(id);
    if (++folders > MAX_FOLDERS) {
      if (folders === MAX_FOLDERS + 1) note(`stopped after reading ${MAX_FOLDERS} folders under ${dir}; give a smaller folder to see the rest.`);
      return;
    }
    const names = await readdir(folder).catch((error: NodeJS.ErrnoException) => {
      note(`skipped ${folder}: cannot read it (${error.code ?? error.message}).`);
      return [] as string[];
    });
    const subfolders: [string, Stats][] = [];
    for (const name of names.sort()) {
      const path = join(folder, name);
      const entry = await entryInfo(path, options.followLinks);
      if (!entry) continue;
      if (entry.isDirectory()) subfolders.push([path, entry]);
      else if (!name.endsWith('.ndjson')) continue;
      else if (entry.isFile()) files.push(path);
      else note(`skipped ${path}: ${kindOf(entry)}, not a log file.`);
    }
    for (const [path, entry] of subfolders) {
      if (depth + 1 > MAX_DEPTH) note(`skipped ${path}: more than ${MAX_DEPTH} folders deep.`);
      else await visit(path, entry, depth + 1);
    }
  };
  await visit(dir, await stat(dir), 0);
  return files;
}

/** What an entry is, links followed or not; undefined for a dangling link, an unfollowed link, or one gone meanwhile. */
async function entryInfo(path: string, followLinks: boolean): Promise<Stats | undefined> {
  try {
    const info = await lstat(path);
    if (!info.isSymbolicLink()) return info;
    return followLinks ? await stat(path) : undefined;
  } catch {
    return undefined;
  }
}

/** "a named pipe (FIFO)", "a socket", "a device": what a path that is not a file or folder is. */
export function kindOf(info: Stats): string {
  if (info.isFIFO()) return 'a named pipe (FIFO)';
  if (info.isSocket()) return 'a socket';
  if (info.isCharacterDevice() || info.isBlockDevice()) return 'a device';
  return 'not a regular file';
}

/** Throw the sentence for a path given as a log that is no file or folder (reading it could block forever). */
export function refuseSpecialFile(path: string, info: Stats): void {
  if (info.isFile() || info.isDirectory()) return;
  throw new McptapError('NOT_A_LOG', `${path} is ${kindOf(info)}, not a log file. Give a log file or a folder of logs.`);
}
