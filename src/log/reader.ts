/**
 * Reads logs back: the only way anything in mcptap (view, trace, replay, check, diff, export) reads a log.
 *
 * Accepts files and folders (every `*.ndjson` inside, subfolders too), merges many logs into one stream ordered by time (ties
 * broken by file order, then `seq`), and migrates records of older format versions to the current one. A line
 * that is not a record is reported through `onProblem` with its file and line number, never thrown.
 */
import { createReadStream } from 'node:fs';
import { stat } from 'node:fs/promises';
import { McptapError } from '../types.js';
import { LOG_FORMAT_VERSION, type LogRecord } from './schema.js';
import { findLogFiles, refuseSpecialFile } from './walk.js';
import { recordProblem } from './validate.js';
import { LongLine } from './long-line.js';
import { ChunkBodies } from './chunk-bodies.js';

/** Something wrong with one line of a log, said plainly. */
export interface LogProblem {
  file: string;
  line: number;
  message: string;
}

export interface ReadLogsOptions {
  /** Called for each line that is not a valid record. Defaults to ignoring them. */
  onProblem?: (problem: LogProblem) => void;
  /** Called for what a folder walk skipped (a symbolic-link loop, a named pipe), one sentence each. */
  onNote?: (note: string) => void;
  /** Filled in as the logs are read, for a progress line: the logs' total size and about how much is read. */
  progress?: ReadProgress;
  /**
   * Leave out the frames no summary reads again: a streamed chunk's `raw` (its text is in `delta`) and an HTTP
   * response's `body` (on its http-end; the LLM reply is in its llm-response record). Most of a long LLM log is
   * chunks, so views that print records and their trace, and check, hold a fraction of the log in memory. Not
   * for exports, which copy the frames out, nor for the html page, which shows them. A line longer than
   * LONG_LINE is read as it streams by, its frame's head kept (long-line.ts): a frame of hundreds of MB costs a
   * slim reader 1 MiB.
   */
  slim?: boolean;
}

/** How far a read has got, in bytes (UTF-16 units of the lines, close enough for a percentage). */
export interface ReadProgress {
  total: number;
  read: number;
}

/** A record and where it came from. */
export interface SourcedRecord {
  record: LogRecord;
  file: string;
  line: number;
}

/**
 * The log files a list of paths names: files as given, folders expanded to every `*.ndjson` in them and their
 * subfolders (walk.ts). A path that is missing, a folder without logs, or a pipe, socket or device is an error
 * with a sentence; what a walk skips goes to `onNote`.
 */
export async function listLogFiles(paths: readonly string[], options: Pick<ReadLogsOptions, 'onNote'> = {}): Promise<string[]> {
  const files: string[] = [];
  for (const path of paths) {
    let info;
    try {
      info = await stat(path);
    } catch {
      throw new McptapError('LOG_NOT_FOUND', `There is no log at ${path}. Give a log file or a folder of logs (mcptap writes them to ./logs by default).`);
    }
    refuseSpecialFile(path, info);
    if (!info.isDirectory()) {
      files.push(path);
      continue;
    }
    const found = await findLogFiles(path, { followLinks: true, ...(options.onNote ? { onNote: options.onNote } : {}) });
    if (found.length === 0) throw new McptapError('NO_LOGS', `There are no logs in ${path}: no *.ndjson file in it or its subfolders. Give the folder mcptap wrote to (./logs by default) or a log file.`);
    files.push(...found);
  }
  return files;
}

/**
 * Parse one line of a log into a record (migrated to the current version), or say why it is not one. One line
 * alone cannot give an http-end its body when its chunks or frames carry it (`bodyInChunks`, `bodyInEvents`,
 * `bodyInFrames`): readLogs puts it back, and so does a ChunkBodies fed every record in log order.
 */
export function parseRecordLine(line: string): { record: LogRecord } | { problem: string } | undefined {
  if (line.trim() === '') return undefined;
  let value: unknown;
  try {
    value = JSON.parse(line);
  } catch {
    return { problem: 'not JSON (a torn write, or not an mcptap log)' };
  }
  if (value === null || typeof value !== 'object' || Array.isArray(value)) return { problem: 'not a JSON object' };
  const o = value as Record<string, unknown>;
  if (typeof o.v !== 'number' || typeof o.kind !== 'string' || typeof o.time !== 'number') {
    return { problem: 'not an mcptap record (no v, kind or time)' };
  }
  // v2 writes a frame of JSON as JSON (its record's last field): the record holds its exact text, as in v1.
  if ((o.v as number) >= 2 && typeof o.raw === 'object' && o.raw !== null) o.raw = rawOfLine(line) ?? JSON.stringify(o.raw);
  // Every field a reader relies on, checked here once, so that no view or check meets a record it cannot read.
  const record = migrate(o);
  const problem = recordProblem(record as unknown as Record<string, unknown>);
  return problem === undefined ? { record } : { problem };
}

/**
 * The exact text of a raw written as JSON (format v2): what follows the `"raw":` key of the record's own object,
 * which the writer puts last, up to the record's closing brace. Undefined when the line has no such key (a line
 * not written by mcptap: the caller then writes the parsed value out again).
 */
function rawOfLine(line: string): string | undefined {
  let depth = 0;
  for (let i = 0; i < line.length; i++) {
    const c = line.charCodeAt(i);
    if (c === 0x22) {
      const start = i;
      // To the string's closing quote; a backslash escapes the character after it.
      for (i++; i < line.length && line.charCodeAt(i) !== 0x22; i++) if (line.charCodeAt(i) === 0x5c) i++;
      if (depth === 1 && i - start === 4 && line.startsWith('"raw":', start)) return line.slice(i + 2, line.lastIndexOf('}'));
    } else if (c === 0x7b || c === 0x5b) depth++;
    else if (c === 0x7d || c === 0x5d) depth--;
  }
  return undefined;
}

/**
 * Bring a record of any known version to the current shape. Version 1 is the first; when the format changes,
 * add the step from the old version here (as mitmproxy's io/compat does) and keep the old fixtures. Version 2
 * changed only how a line writes `raw` (parseRecordLine reads it back), so its records and v1's are the same.
 * Versions 3 to 5 let an http-end leave its body to its llm-chunks or MCP frames: a step across records, so
 * readLogs takes it (chunk-bodies.ts), and a record of v2 to v5 is the same here. Version 6 writes requests
 * evicted together as one `evicted` record, which each reader reads with pendingOfEvicted (log/evicted.ts); an
 * older log's `pending` records with `evicted: true` still read as they are.
 */
export function migrate(o: Record<string, unknown>): LogRecord {
  // Records newer than this reader are passed on as they are: new fields are optional by rule.
  if ((o.v as number) > LOG_FORMAT_VERSION) return o as unknown as LogRecord;
  return o as unknown as LogRecord;
}

/** Bytes of a line past which a slim reader reads it as it streams by, keeping its frame's head only. */
export const LONG_LINE = 4 * 1024 * 1024;

/** Every record of one log file, in file order. */
export async function* readLogFile(file: string, options: ReadLogsOptions = {}): AsyncGenerator<SourcedRecord> {
  const input = createReadStream(file);
  let n = 0;
  try {
    for await (const line of logLines(input, options.slim ? LONG_LINE : Infinity)) {
      n++;
      if (options.progress) options.progress.read += line.length + 1;
      const parsed = parseRecordLine(line);
      if (!parsed) continue;
      if ('problem' in parsed) options.onProblem?.({ file, line: n, message: parsed.problem });
      else yield { record: options.slim ? slimmed(parsed.record) : parsed.record, file, line: n };
    }
  } finally {
    // A reader that stops early (a peek, a consumer that breaks off) must not leave the file open.
    input.destroy();
  }
}

/**
 * The lines of a file, as readline gives them (a line ends at `\n`, `\r\n` or a lone `\r`), but from bytes: a
 * line longer than `longAt` bytes is not put together, LongLine reads it as it comes.
 */
async function* logLines(input: AsyncIterable<Buffer>, longAt: number): AsyncGenerator<string> {
  let parts: Buffer[] = [];
  let size = 0;
  let long: LongLine | undefined;
  const line = (last: Buffer): string => {
    if (long) {
      long.push(last);
      const text = long.finish();
      long = undefined;
      return text;
    }
    const text = parts.length > 0 ? Buffer.concat([...parts, last]).toString('utf8') : last.toString('utf8');
    parts = [];
    size = 0;
    return text;
  };
  for await (const chunk of input) {
    let from = 0;
    for (let nl = chunk.indexOf(0x0a); nl !== -1; nl = chunk.indexOf(0x0a, from)) {
      const text = line(chunk.subarray(from, nl));
      from = nl + 1;
      yield* crLines(text);
    }
    const rest = chunk.subarray(from);
    if (long) long.push(rest);
    else if (rest.length > 0) {
      parts.push(rest);
      size += rest.length;
      if (size > longAt) {
        long = new LongLine();
        for (const part of parts) long.push(part);
        parts = [];
        size = 0;
      }
    }
  }
  if (long || parts.length > 0) yield* crLines(line(Buffer.alloc(0)));
}

/** A line split at a lone `\r`, its `\r` before the `\n` dropped (readline's lines). */
function crLines(text: string): string[] {
  if (!text.includes('\r')) return [text];
  return (text.endsWith('\r') ? text.slice(0, -1) : text).split('\r');
}

function slimmed(record: LogRecord): LogRecord {
  const o = record as unknown as Record<string, unknown>;
  if (record.kind === 'llm-chunk') delete o.raw;
  else if (record.kind === 'http-end') delete o.body;
  return record;
}

/**
 * Records of many logs merged into one stream ordered by time: a k-way merge over a heap.
 *
 * A log folder grows one file per session, thousands over months, and most sessions do not overlap in time. So
 * each file is first peeked for its first record (then closed), and a file is opened for the merge only once the
 * merge reaches that record's time: at any moment only the files whose sessions overlap are open. The order is
 * exactly that of merging every file at once.
 */
export async function* readLogs(paths: readonly string[], options: ReadLogsOptions = {}): AsyncGenerator<SourcedRecord> {
  const files = await listLogFiles(paths, options);
  if (options.progress) for (const file of files) options.progress.total += (await stat(file)).size;
  // Files not yet opened, by the time of their first record (then list order).
  const waiting: { file: string; order: number; first: SourcedRecord }[] = [];
  for (const [order, file] of files.entries()) {
    const first = await firstRecord(file);
    if (first) waiting.push({ file, order, first });
    else for await (const _ of readLogFile(file, options)); // nothing to merge, but its problems are reported
  }
  waiting.sort((a, b) => (before({ current: a.first, order: a.order }, { current: b.first, order: b.order }) ? -1 : 1));
  const heap = new MergeHeap();
  // A slim read leaves out both the chunks' raws and the bodies they would make.
  const bodies = options.slim ? undefined : new ChunkBodies();
  let next = 0;
  const open = async (entry: (typeof waiting)[number]): Promise<void> => {
    const iterator = readLogFile(entry.file, options);
    const head = await iterator.next();
    if (head.done) return;
    heap.push({ iterator, current: head.value, order: entry.order });
  };
  for (;;) {
    // Open every waiting file whose first record could come before (or tie with) the best open one.
    while (next < waiting.length && (heap.size === 0 || !before(heap.peek()!, { current: waiting[next]!.first, order: waiting[next]!.order }))) {
      await open(waiting[next++]!);
    }
    const head = heap.peek();
    if (!head) return;
    bodies?.see(head.current.record);
    yield head.current;
    const following = await head.iterator.next();
    if (following.done) heap.pop();
    else {
      head.current = following.value;
      heap.siftDown(0);
    }
  }
}

/** The first record of a file (the file is closed again), or undefined when it has none. */
async function firstRecord(file: string): Promise<SourcedRecord | undefined> {
  const iterator = readLogFile(file);
  try {
    const first = await iterator.next();
    return first.done ? undefined : first.value;
  } finally {
    await iterator.return(undefined);
  }
}

interface MergeHead {
  iterator: AsyncGenerator<SourcedRecord>;
  current: SourcedRecord;
  order: number;
}

/** A binary min-heap of open files, by their current record (time, then list order, then seq). */
class MergeHeap {
  private readonly items: MergeHead[] = [];

  get size(): number {
    return this.items.length;
  }

  peek(): MergeHead | undefined {
    return this.items[0];
  }

  push(item: MergeHead): void {
    const items = this.items;
    items.push(item);
    let i = items.length - 1;
    while (i > 0) {
      const parent = (i - 1) >> 1;
      if (!before(items[i]!, items[parent]!)) break;
      [items[i], items[parent]] = [items[parent]!, items[i]!];
      i = parent;
    }
  }

  pop(): void {
    const items = this.items;
    const last = items.pop();
    if (items.length > 0 && last) {
      items[0] = last;
      this.siftDown(0);
    }
  }

  /** Restore the order after the item at `i` moved on to a later record. */
  siftDown(i: number): void {
    const items = this.items;
    for (;;) {
      const left = 2 * i + 1;
      const right = left + 1;
      let least = i;
      if (left < items.length && before(items[left]!, items[least]!)) least = left;
      if (right < items.length && before(items[right]!, items[least]!)) least = right;
      if (least === i) return;
      [items[i], items[least]] = [items[least]!, items[i]!];
      i = least;
    }
  }
}

/** The text every LLM call's record holds (`llm-request`, `llm-response`, `llm-error`), as the writer writes it. */
const LLM_KIND = Buffer.from('"kind":"llm-');

/**
 * Whether any of these log files holds an LLM call, found before the logs are read: a streaming reader needs to
 * know it from the first record on (the linker says an MCP call had no model call only when the logs hold LLM
 * calls). A byte search for the kind, each hit confirmed by reading its line as a record; a folder of MCP logs
 * costs a read of their bytes, not a parse.
 */
export async function holdsLlmCalls(files: readonly string[]): Promise<boolean> {
  for (const file of files) if (await fileHoldsLlmCall(file)) return true;
  return false;
}

async function fileHoldsLlmCall(file: string): Promise<boolean> {
  let hit = false;
  let tail: Buffer = Buffer.alloc(0);
  const input = createReadStream(file, { highWaterMark: 1 << 20 });
  try {
    for await (const chunk of input as AsyncIterable<Buffer>) {
      const data = tail.length > 0 ? Buffer.concat([tail, chunk]) : chunk;
      if (data.indexOf(LLM_KIND) !== -1) {
        hit = true;
        break;
      }
      tail = data.subarray(Math.max(0, data.length - LLM_KIND.length + 1));
    }
  } finally {
    input.destroy();
  }
  if (!hit) return false;
  // The text may be inside a frame's JSON: only a record of that kind counts.
  for await (const { record } of readLogFile(file)) if (record.kind === 'llm-request' || record.kind === 'llm-response' || record.kind === 'llm-error') return true;
  return false;
}

/** All records of the given logs, merged by time. For views and checks over logs that fit in memory. */
export async function readAllRecords(paths: readonly string[], options: ReadLogsOptions = {}): Promise<LogRecord[]> {
  const records: LogRecord[] = [];
  for await (const { record } of readLogs(paths, options)) records.push(record);
  return records;
}

function before(a: { current: SourcedRecord; order: number }, b: { current: SourcedRecord; order: number }): boolean {
  const ta = a.current.record.time;
  const tb = b.current.record.time;
  if (ta !== tb) return ta < tb;
  if (a.order !== b.order) return a.order < b.order;
  return a.current.record.seq < b.current.record.seq;
}

/**
 * The JSON object a frame record's `raw` text holds, or undefined when there is none (absent, not JSON, not an
 * object). Frames are parsed on demand by whatever reads them, not at read time: most readers look at a few.
 */
export function parseRawObject(raw: string | undefined): Record<string, unknown> | undefined {
  if (raw === undefined) return undefined;
  try {
    const value: unknown = JSON.parse(raw);
    return value !== null && typeof value === 'object' && !Array.isArray(value) ? (value as Record<string, unknown>) : undefined;
  } catch {
    return undefined;
  }
}
