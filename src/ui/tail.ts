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
import { ChunkBodies } from '../log/chunk-bodies.js';

/** Most bytes read from one file per look, so a huge backlog is taken in steps and the server stays responsive. */
const MAX_READ = 4 * 1024 * 1024;
/** Most bytes read from all files in one look: a folder of many long logs is taken in steps too. */
const MAX_LOOK = 16 * 1024 * 1024;
/** Most LLM streams whose chunks are held for their http-end's body (chunk-bodies.ts). */
const MAX_OPEN_STREAMS = 1024;

interface FileState {
  offset: number;
  /** Lines read so far (undefined when following from the end, where the count is not known). */
  lines?: number;
  /** Bytes after the last newline, waiting for the rest of their line. */
  partial: Buffer;
  /** Reading starts inside a line (`lastBytes`): what comes before the first newline is not a whole line. */
  midLine?: boolean;
}

export interface LogTailOptions {
  /** Skip what the files hold at the first look (follow only what is written from now on). */
  fromEnd?: boolean;
  /** Only lines this accepts are parsed (a cheap text test saves parsing records nobody wants). */
  accept?: (line: string) => boolean;
  /** A file to leave out (the caller's own log). */
  skip?: string;
  /**
   * Of each file there at the first look, read only its last this many bytes: the older lines are let go
   * unread (counted in `skippedBytes`). For a reader that holds only the newest records anyway.
   */
  lastBytes?: number;
  /** Called for each whole line that is not a record (not for those skipped by `accept`). */
  onProblem?: (problem: LogProblem) => void;
}

/** Records of one look, and the bytes of each one's line: what holding it costs, roughly. */
export interface TailRecords {
  records: LogRecord[];
  bytes: number[];
}

/** Reads new records from a log folder each time `poll` is called. */
export class LogTail {
  private readonly files = new Map<string, FileState>();
  /** An http-end that leaves its body to its chunks or frames (log format v3 to v5) gets it back, as readLogs gives it. */
  private readonly bodies = new ChunkBodies(MAX_OPEN_STREAMS);
  private first = true;
  /** Whether the last look left bytes unread (a file longer than one look takes). */
  behind = false;
  /** Bytes of the files there at the first look that were let go unread (`lastBytes`). */
  skippedBytes = 0;

  constructor(
    readonly dir: string,
    private readonly options: LogTailOptions = {},
  ) {}

  /** Records written since the last call (all of them on the first), in file order per file. */
  async poll(): Promise<LogRecord[]> {
    return (await this.pollSized()).records;
  }

  /** The same, with each record's line length. */
  async pollSized(): Promise<TailRecords> {
    const out: TailRecords = { records: [], bytes: [] };
    this.behind = false;
    let files: string[];
    try {
      // The walk every reader uses: subfolders too, bounded, and never a named pipe (opening one blocks).
      files = await findLogFiles(this.dir, { followLinks: true });
    } catch {
      // The folder does not exist yet (no tap has written to it): nothing to show so far.
      return out;
    }
    const first = this.first;
    this.first = false;
    if (first && this.options.lastBytes !== undefined) await this.startNearEnds(files, this.options.lastBytes);
    let read = 0;
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
      if (read >= MAX_LOOK) {
        this.behind = true;
        continue;
      }
      try {
        read += await this.readNew(file, state, out);
      } catch {
        // Removed or unreadable between readdir and open (pruned, rotated): try again next time.
      }
    }
    return out;
  }

  /** Each file longer than `last` bytes is read from its last `last` bytes; its line numbers are then not known. */
  private async startNearEnds(files: readonly string[], last: number): Promise<void> {
    for (const file of files) {
      if (file === this.options.skip) continue;
      let size;
      try {
        size = (await stat(file)).size;
      } catch {
        continue;
      }
      if (size <= last) continue;
      this.files.set(file, { offset: size - last, partial: Buffer.alloc(0), midLine: true });
      this.skippedBytes += size - last;
    }
  }

  /** Read what is new in one file (at most MAX_READ); returns the bytes read. */
  private async readNew(file: string, state: FileState, out: TailRecords): Promise<number> {
    const info = await stat(file);
    if (info.size < state.offset) {
      state.offset = 0;
      state.lines = 0;
      state.partial = Buffer.alloc(0);
      delete state.midLine;
    }
    if (info.size === state.offset) return 0;
    const handle = await open(file, 'r');
    let bytesRead = 0;
    try {
      const length = Math.min(info.size - state.offset, MAX_READ);
      const buffer = Buffer.alloc(length);
      ({ bytesRead } = await handle.read(buffer, 0, length, state.offset));
      state.offset += bytesRead;
      if (state.offset < info.size) this.behind = true;
      let data = state.partial.length > 0 ? Buffer.concat([state.partial, buffer.subarray(0, bytesRead)]) : buffer.subarray(0, bytesRead);
      if (state.midLine) {
        // The rest of a line whose start was let go.
        const cut = data.indexOf(0x0a);
        if (cut === -1) {
          this.skippedBytes += data.length;
          state.partial = Buffer.alloc(0);
          return bytesRead;
        }
        this.skippedBytes += cut + 1;
        data = data.subarray(cut + 1);
        delete state.midLine;
      }
      const end = data.lastIndexOf(0x0a);
      if (end === -1) {
        state.partial = Buffer.from(data);
        return bytesRead;
      }
      state.partial = Buffer.from(data.subarray(end + 1));
      const accept = this.options.accept;
      for (const line of data.subarray(0, end).toString('utf8').split('\n')) {
        if (state.lines !== undefined) state.lines++;
        if (accept && !accept(line)) continue;
        const parsed = parseRecordLine(line);
        if (parsed && 'record' in parsed) {
          this.bodies.see(parsed.record);
          out.records.push(parsed.record);
          out.bytes.push(Buffer.byteLength(line) + 1);
        } else if (parsed && state.lines !== undefined) this.options.onProblem?.({ file, line: state.lines, message: parsed.problem });
      }
    } finally {
      await handle.close();
    }
    return bytesRead;
  }
}
