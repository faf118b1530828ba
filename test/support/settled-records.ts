/**
 * The records of a log that is still being written (a tap still running): read until the count has stopped
 * growing for a moment. Records reach the file from the inspection thread, coalesced, so "give the writer
 * 100 ms" was a guess; this waits for what is actually there, up to `timeoutMs`. Every tap writes a first record
 * (start, listen) at once, so a log still empty is not settled.
 */
import { readAllRecords } from '../../src/log/reader.js';
import type { LogRecord } from '../../src/log/schema.js';

export async function settledRecords(
  paths: string[],
  timeoutMs = 5000,
  /** What the caller waits for: on a busy machine the thread may hold its writes back longer than one look apart. */
  ready: (records: (LogRecord & Record<string, unknown>)[]) => boolean = () => true,
): Promise<(LogRecord & Record<string, unknown>)[]> {
  const until = Date.now() + timeoutMs;
  let last = -1;
  for (;;) {
    await new Promise((r) => setTimeout(r, 150));
    const records = (await readAllRecords(paths)) as (LogRecord & Record<string, unknown>)[];
    // An empty log has not settled: a running tap has written at least its start record once the thread writes.
    if ((records.length > 0 && records.length === last && ready(records)) || Date.now() > until) return records;
    last = records.length;
  }
}
