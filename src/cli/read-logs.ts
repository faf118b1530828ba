/**
 * How every reading command (view, check, export, diff, replay, ui) reads its logs and says what it skipped:
 * one `skipped` line on stderr per line that is not a record, naming the file, the line and why (the first
 * five of each file, then how many more), and one exit-code rule: logs in which nothing is a record could not
 * be read (EMPTY_LOG, exit 2), like a path that does not exist.
 */
import { getHeapSpaceStatistics, setFlagsFromString } from 'node:v8';
import { runInNewContext } from 'node:vm';
import { holdsLlmCalls, listLogFiles, readAllRecords, readLogs, type ReadLogsOptions } from '../log/reader.js';
import { SkippedLines } from '../log/skipped-lines.js';
import type { LogRecord } from '../log/schema.js';
import { McptapError } from '../types.js';
import { printNote } from './shared.js';

/** The records of the logs given (merged by time), after saying what was skipped; EMPTY_LOG when there are none. */
export async function readLogRecords(paths: readonly string[], options: Pick<ReadLogsOptions, 'progress' | 'slim'> = {}): Promise<LogRecord[]> {
  const skipped = new SkippedLines(printNote);
  const records = await readAllRecords(paths, { ...options, onProblem: skipped.add, onNote: printNote });
  skipped.finish();
  if (records.length === 0) throw emptyLogs(paths, skipped.total);
  return records;
}

/** The logs a reading command streams: their files, and whether they hold LLM calls (told before the first record). */
export interface LogStream {
  files: string[];
  haveLlm: boolean;
  /** Every record, merged by time; says what was skipped, and throws EMPTY_LOG at the end when there were none. */
  records: AsyncGenerator<LogRecord>;
}

/** The records of the logs given, as a stream: the reading commands print as they go and hold a window, not the logs. */
export async function streamLogRecords(paths: readonly string[], options: Pick<ReadLogsOptions, 'progress' | 'slim'> = {}): Promise<LogStream> {
  const files = await listLogFiles(paths, { onNote: printNote });
  const haveLlm = await holdsLlmCalls(files);
  return { files, haveLlm, records: recordsOf(paths, files, options) };
}

async function* recordsOf(paths: readonly string[], files: readonly string[], options: Pick<ReadLogsOptions, 'progress' | 'slim'>): AsyncGenerator<LogRecord> {
  const skipped = new SkippedLines(printNote);
  const progress = options.progress ?? { total: 0, read: 0 };
  const collect = fullCollection();
  let collected = 0;
  let looked = 0;
  let floor = oldGeneration();
  let n = 0;
  for await (const { record } of readLogs(files, { ...options, progress, onProblem: skipped.add })) {
    n++;
    if (collect && progress.read - looked >= LOOK_EVERY) {
      looked = progress.read;
      const old = oldGeneration();
      floor = Math.min(floor, old);
      if (progress.read - collected >= COLLECT_EVERY || old - floor >= COLLECT_GROWTH) {
        collect();
        collected = progress.read;
        floor = oldGeneration();
      }
    }
    yield record;
  }
  // Once more at the end, before the commands write out what they held.
  collect?.();
  skipped.finish();
  if (n === 0) throw emptyLogs(paths, skipped.total);
}

/**
 * Characters read between two full garbage collections. A streaming reader keeps little alive (the linker's
 * window, the spools' heads), but V8 lets what lived a while and died pile up in the old generation long
 * before it collects it, and that, not the log, set the peak memory (figures: docs/benchmarks.md).
 */
const COLLECT_EVERY = 16 * 1024 * 1024;
/**
 * Bytes the old generation may grow by before a full collection comes sooner: a log of many small records
 * held a while each (a flood of calls) moves several times its own size there between two of the above.
 */
const COLLECT_GROWTH = 16 * 1024 * 1024;
/** Characters read between two looks at the old generation's size. */
const LOOK_EVERY = 1024 * 1024;

/** Bytes used in V8's old generation (its old and large-object spaces). */
function oldGeneration(): number {
  let used = 0;
  for (const space of getHeapSpaceStatistics()) if (space.space_name === 'old_space' || space.space_name === 'large_object_space') used += space.space_used_size;
  return used;
}

/** V8's full collection, for the CLI's reading commands only (a library user's process is left as it is). */
function fullCollection(): (() => void) | undefined {
  try {
    setFlagsFromString('--expose-gc');
    return runInNewContext('gc') as () => void;
  } catch {
    return undefined;
  }
}

/** The sentence for logs that hold no record at all. */
export function emptyLogs(paths: readonly string[], skippedLines: number): McptapError {
  const where = paths.join(', ');
  return new McptapError(
    'EMPTY_LOG',
    skippedLines > 0
      ? `nothing in ${where} is an mcptap record (${skippedLines} line${skippedLines === 1 ? '' : 's'} skipped): give a log mcptap wrote.`
      : `${where} holds no records: the log is empty (a session that never started, or not a log mcptap wrote).`,
  );
}

export { SkippedLines };
