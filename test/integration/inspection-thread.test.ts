/**
 * The relay's side of an inspection thread (inspection-thread.ts) against a real worker that reports each batch
 * it receives (test/support/batch-report-worker.mjs): when batches are posted, and what they are packed into.
 */
import { describe, expect, test } from 'vitest';
import { BATCH_DELAY_MS, FIRST_TAP_SLOT, InspectionThread } from '../../src/capture/inspection-thread.js';
import { SPARE_USE_MIN_BYTES, SPARES_KEPT } from '../../src/capture/spare-buffers.js';

interface BatchReport {
  at: number;
  bytes: number;
  chunks: number;
  fromSpare: boolean;
}

function startThread(spares: boolean): { thread: InspectionThread; reports: BatchReport[] } {
  const reports: BatchReport[] = [];
  const thread = new InspectionThread({
    script: new URL('../support/batch-report-worker.mjs', import.meta.url),
    config: {},
    sharedSlots: FIRST_TAP_SLOT,
    holdBackBytes: 1024 * 1024,
    spares,
    notice: (message) => reports.push(JSON.parse(message) as BatchReport),
  });
  return { thread, reports };
}

const until = async (condition: () => boolean, what: string): Promise<void> => {
  for (let waited = 0; !condition(); waited += 10) {
    if (waited > 10_000) throw new Error(`timed out waiting for ${what}`);
    await new Promise((resolve) => setTimeout(resolve, 10));
  }
};

const sleep = (ms: number) => new Promise((resolve) => setTimeout(resolve, ms));
const frame = Buffer.alloc(64 * 1024, 0x78);

describe('batches on their way to the inspection thread', () => {
  test('a burst of 64 KiB chunks goes in batches of 1 MiB, packed into spares the thread sends once the first comes', async () => {
    const { thread, reports } = startThread(true);
    await until(() => thread.started, 'the thread');
    // Small messages: no spares, and none held.
    thread.postChunk(0, 1, Buffer.from('{"jsonrpc":"2.0","id":1,"method":"ping"}\n'), Date.now(), 0);
    thread.flush();
    await until(() => reports.length === 1, 'the first batch');
    await sleep(50);
    expect(thread.sparesReady).toBe(0);
    // The first batch of 1 MiB has no spare to go in; the thread answers it with SPARES_KEPT of them.
    for (let i = 0; i < 16; i++) thread.postChunk(0, 1, frame, Date.now(), 0);
    await until(() => thread.sparesReady === SPARES_KEPT, 'the spares');
    // 80 chunks in one go, as a burst of pipe reads: five batches of 16, each posted once it holds 1 MiB.
    for (let i = 0; i < 80; i++) thread.postChunk(0, 1, frame, Date.now(), 0);
    await thread.finish(['close']);
    const bursts = reports.filter((report) => report.chunks === 16);
    expect(bursts).toHaveLength(6);
    expect(bursts[0]!.fromSpare).toBe(false);
    expect(bursts.every((report) => report.bytes >= SPARE_USE_MIN_BYTES)).toBe(true);
    // The spares were there for the burst's first batches; the thread answers each of those with another.
    expect(bursts.slice(1).filter((report) => report.fromSpare).length).toBeGreaterThanOrEqual(SPARES_KEPT);
  });

  test('after a batch posted by size, the next one still gathers for the whole delay', async () => {
    const { thread, reports } = startThread(false);
    await until(() => thread.started, 'the thread');
    // Sixteen chunks: the batch is posted as the last one takes it to 1 MiB.
    for (let i = 0; i < 16; i++) thread.postChunk(0, 1, frame, Date.now(), 0);
    // Part of a delay after the first batch began, the next call starts a batch of its own.
    await sleep(BATCH_DELAY_MS * 0.4);
    const queued = Date.now();
    thread.post(['a call']);
    await until(() => reports.length === 2, 'the second batch');
    expect(reports[1]!.at - queued).toBeGreaterThanOrEqual(BATCH_DELAY_MS - 2);
    await thread.finish(['close']);
  });
});
