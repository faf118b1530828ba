/**
 * `view --format json`: the linked trace as NDJSON, one object per line (sessions, turns, tool round trips,
 * diagnostics; the shapes are in link.ts and docs/log-format.md, "Trace lines").
 */
import { traceLines, type Trace } from './link.js';

/** One JSON text per trace line, without newlines. */
export function formatTraceJson(trace: Trace): string[] {
  return traceLines(trace).map((line) => JSON.stringify(line));
}
