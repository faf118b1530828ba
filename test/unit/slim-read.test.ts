/**
 * The slim read (ReadLogsOptions.slim) leaves out only frames nothing reads again: view's lines, the trace and
 * check's verdicts are the same as from the whole records, on the captured agent sessions.
 */
import { join } from 'node:path';
import { describe, expect, it } from 'vitest';
import { readAllRecords } from '../../src/log/reader.js';
import { linkTrace, traceLines } from '../../src/trace/link.js';
import { formatPretty } from '../../src/trace/pretty.js';
import { formatRoundTripSummary } from '../../src/trace/summary.js';
import { buildTimeline, formatTimeline } from '../../src/trace/timeline.js';
import { checkRecords } from '../../src/check/check.js';

const CAPTURES = join(import.meta.dirname, '../../fixtures/captures');

describe.each(['roundtrip', 'ollama', 'openai', 'mcp-http', 'broken-roundtrip'])('a slim read of captures/%s', (name) => {
  it('drops chunk frames and response bodies, and changes no line, link or verdict', async () => {
    const whole = await readAllRecords([join(CAPTURES, name)]);
    const slim = await readAllRecords([join(CAPTURES, name)], { slim: true });
    expect(slim.some((r) => r.kind === 'llm-chunk' && 'raw' in r)).toBe(false);
    expect(slim.some((r) => r.kind === 'http-end' && 'body' in r)).toBe(false);
    // The HTTP captures keep response bodies, so the line above can fail.
    if (name !== 'roundtrip' && name !== 'broken-roundtrip') expect(whole.some((r) => r.kind === 'http-end' && 'body' in r)).toBe(true);
    const views = (records: typeof whole) => {
      const trace = linkTrace(records);
      return {
        pretty: formatPretty(records, { color: false }),
        timeline: formatTimeline(buildTimeline(records, trace), { color: false }),
        summary: formatRoundTripSummary(trace, { color: false }),
        json: JSON.stringify(traceLines(trace)),
        check: JSON.stringify(checkRecords(records)),
      };
    };
    expect(views(slim)).toEqual(views(whole));
  });
});
