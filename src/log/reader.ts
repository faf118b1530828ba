/**
 * Reads logs back: the only way anything in mcptap (view, trace, replay, check, diff, export) reads a log.
 *
 * Accepts files and folders (every `*.ndjson` inside), merges many logs into one stream ordered by time (ties
 * broken by file order, then `seq`), and migrates records of older format versions to the current one. A line
 * that is not a record is reported through `onProblem` with its file and line number, never thrown.
 */
import { createReadStream } from 'node:fs';
import { readdir, stat } from 'node:fs/promises';
import { join } from 'node:path';
import { createInterface } from 'node:readline';
import { McptapError } from '../types.js';
import { LOG_FORMAT_VERSION, type LogRecord } from './schema.js';

/** Something wrong with one line of a log, said plainly. */
export interface LogProblem {
  file: string;
  line: number;
  message: string;
}

export interface ReadLogsOptions {
  /** Called for each line that is not a valid record. Defaults to ignoring them. */
  onProblem?: (problem: LogProblem) => void;
}

/** A record and where it came from. */
export interface SourcedRecord {
  record: LogRecord;
  file: string;
  line: number;
}

/** The log files a list of paths names: files as given, folders expanded to their `*.ndjson` (sorted). */
export async function listLogFiles(paths: readonly string[]): Promise<string[]> {
  const files: string[] = [];
  for (const path of paths) {
    let info;
    try {
      info = await stat(path);
    } catch {
      throw new McptapError('LOG_NOT_FOUND', `There is no log at ${path}. Give a log file or a folder of logs (mcptap writes them to ./logs by default).`);
    }
    if (info.isDirectory()) {
      const names = (await readdir(path)).filter((n) => n.endsWith('.ndjson')).sort();
      files.push(...names.map((n) => join(path, n)));
    } else {
      files.push(path);
    }
  }
  return files;
}

/** Parse one line of a log into a record (migrated to the current version), or say why it is not one. */
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
  return { record: migrate(o) };
}

/**
 * Bring a record of any known version to the current shape. Version 1 is the first; when the format changes,
 * add the step from the old version here (as mitmproxy's io/compat does) and keep the old fixtures.
 */
export function migrate(o: Record<string, unknown>): LogRecord {
  // Records newer than this reader are passed on as they are: new fields are optional by rule.
  if ((o.v as number) > LOG_FORMAT_VERSION) return o as unknown as LogRecord;
  return o as unknown as LogRecord;
}

/** Every record of one log file, in file order. */
export async function* readLogFile(file: string, options: ReadLogsOptions = {}): AsyncGenerator<SourcedRecord> {
  const lines = createInterface({ input: createReadStream(file), crlfDelay: Infinity });
  let n = 0;
  for await (const line of lines) {
    n++;
    const parsed = parseRecordLine(line);
    if (!parsed) continue;
    if ('problem' in parsed) options.onProblem?.({ file, line: n, message: parsed.problem });
    else yield { record: parsed.record, file, line: n };
  }
}

/** Records of many logs merged into one stream ordered by time (a k-way merge: memory stays one record per file). */
export async function* readLogs(paths: readonly string[], options: ReadLogsOptions = {}): AsyncGenerator<SourcedRecord> {
  const files = await listLogFiles(paths);
  const heads: { iterator: AsyncGenerator<SourcedRecord>; current: SourcedRecord; order: number }[] = [];
  for (const [order, file] of files.entries()) {
    const iterator = readLogFile(file, options);
    const first = await iterator.next();
    if (!first.done) heads.push({ iterator, current: first.value, order });
  }
  while (heads.length > 0) {
    let best = 0;
    for (let i = 1; i < heads.length; i++) if (before(heads[i]!, heads[best]!)) best = i;
    const head = heads[best]!;
    yield head.current;
    const next = await head.iterator.next();
    if (next.done) heads.splice(best, 1);
    else head.current = next.value;
  }
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
