/**
 * Follows a log folder: every `*.ndjson` file in it and its subfolders (log/walk.ts, as every reader finds them;
 * `mcptap demo` writes into logs/demo-<time>/), those there at the start (read whole: the backfill) and
 * those that appear later, each read from where the last look stopped. Lines are parsed by the log reader
 * (`parseRecordLine`), so records come out migrated like every other reader's; a line still being written (no
 * newline yet) waits for the next look.
 *
 * Polling rather than fs.watch: watch events are coalesced, platform-specific and lost on some file systems
 * (network mounts, containers), while a stat per file every few hundred milliseconds is cheap and certain. A file
 * that shrinks (truncated, replaced) is read again from the start.
 */
import { open, stat } from 'node:fs/promises';
import type { LogRecord } from '../log/schema.js';
import { parseRecordLine, type LogProblem } from '../log/reader.js';
import { findLogFiles } from '../log/walk.js';

/** Most bytes read from one file per look, so a huge backlog is taken in steps and the server stays responsive. */
const MAX_READ = 4 * 1024 * 1024;

interface FileState {
  offset: number;
  /** Lines read so far (undefined when following from the end, where the count is not known). */
  lines?: number;
  /** Bytes after the last newline, waiting for the rest of their line. */
  partial: Buffer;
}

export interface LogTailOptions {
  /** Skip what the files hold at the first look (follow only what is written from now on). */
  fromEnd?: boolean;
  /** Only lines this accepts are parsed (a cheap text test saves parsing records nobody wants). */
  accept?: (line: string) => boolean;
  /** A file to leave out (the caller's own log). */
  skip?: string;
  /** Called for each whole line that is not a record (not for those skipped by `accept`). */
  onProblem?: (problem: LogProblem) => void;
}

/** Reads new records from a log folder each time `poll` is called. */
export class LogTail {
  private readonly files = new Map<string, FileState>();
  private first = true;

  constructor(
    readonly dir: string,
    private readonly options: LogTailOptions = {},
  ) {}

  /** Records written since the last call (all of them on the first), in file order per file. */
  async poll(): Promise<LogRecord[]> {
    let files: string[];
    try {
      // The walk every reader uses: subfolders too, bounded, and never a named pipe (opening one blocks).
      files = await findLogFiles(this.dir, { followLinks: true });
    } catch {
      // The folder does not exist yet (no tap has written to it): nothing to show so far.
      return [];
    }
    const out: LogRecord[] = [];
    const first = this.first;
    this.first = false;
    for (const file of files) {
      if (file === this.options.skip) continue;
      let state = this.files.get(file);
      if (!state) {
        state = { offset: 0, lines: 0, partial: Buffer.alloc(0) };
        this.files.set(file, state);
        if (first && this.options.fromEnd) {
          delete state.lines;
          try {
            state.offset = (await stat(file)).size;
          } catch {
            // gone already
          }
          continue;
        }
      }
      try {
        await this.readNew(file, state, out);
      } catch {
        // Removed or unreadable between readdir and open (pruned, rotated): try again next time.
      }
    }
    return out;
  }

  private async readNew(file: string, state: FileState, out: LogRecord[]): Promise<void> {
    const info = await stat(file);
    if (info.size < state.offset) {
      state.offset = 0;
      state.lines = 0;
      state.partial = Buffer.alloc(0);
    }
    if (info.size === state.offset) return;
    const handle = await open(file, 'r');
    try {
      const length = Math.min(info.size - state.offset, MAX_READ);
      const buffer = Buffer.alloc(length);
      const { bytesRead } = await handle.read(buffer, 0, length, state.offset);
      state.offset += bytesRead;
      const data = state.partial.length > 0 ? Buffer.concat([state.partial, buffer.subarray(0, bytesRead)]) : buffer.subarray(0, bytesRead);
      const end = data.lastIndexOf(0x0a);
      if (end === -1) {
        state.partial = Buffer.from(data);
        return;
      }
      state.partial = Buffer.from(data.subarray(end + 1));
      const accept = this.options.accept;
      for (const line of data.subarray(0, end).toString('utf8').split('\n')) {
        if (state.lines !== undefined) state.lines++;
        if (accept && !accept(line)) continue;
        const parsed = parseRecordLine(line);
        if (parsed && 'record' in parsed) out.push(parsed.record);
        else if (parsed && state.lines !== undefined) this.options.onProblem?.({ file, line: state.lines, message: parsed.problem });
      }
    } finally {
      await handle.close();
    }
  }
}
