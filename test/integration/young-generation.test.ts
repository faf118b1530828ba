/**
 * The CLI keeps V8's young generation small on both of its threads (src/inspect/young-generation.ts): under a
 * fast stream a grown one let tens of MB of chunk buffers pile up before each collection.
 *
 * V8 undoes the setting whenever it sets up a worker's heap, so this runs the real CLI with a real inspection
 * thread and reads the young generation's size from inside each thread (a preload that watches it).
 */
import { writeFileSync } from 'node:fs';
import { join } from 'node:path';
import { expect, test } from 'vitest';
import { logDirs, start } from './stdio-helpers.js';

const { root, freshDir } = logDirs('mcptap-young-');

/** Loaded into every thread (NODE_OPTIONS): the largest young generation seen, written out as the thread ends. */
const WATCH_YOUNG_GENERATION = `
const { getHeapSpaceStatistics } = require('node:v8');
const { isMainThread } = require('node:worker_threads');
const { writeSync } = require('node:fs');
let largest = 0;
const look = () => { largest = Math.max(largest, getHeapSpaceStatistics().find((s) => s.space_name === 'new_space').space_size); };
setInterval(look, 2).unref();
process.on('exit', () => { look(); writeSync(2, 'young generation: ' + (isMainThread ? 'main' : 'thread') + ' ' + largest + '\\n'); });
`;

test('under 40 MB of 100 KiB frames, neither the relay nor the inspection thread grows its young generation past 4 MB', async () => {
  const preload = join(root, 'watch-young-generation.cjs');
  writeFileSync(preload, WATCH_YOUNG_GENERATION);
  const run = start(['--log-dir', freshDir(), '--', 'cat'], { ...process.env, NODE_OPTIONS: `--require ${preload}` });
  const line = `{"jsonrpc":"2.0","method":"notifications/message","params":{"data":"${'x'.repeat(100 * 1024)}"}}\n`;
  for (let i = 0; i < 400; i++) {
    if (!run.child.stdin.write(line)) await new Promise((resolve) => run.child.stdin.once('drain', resolve));
  }
  run.child.stdin.end();
  expect(await run.done).toEqual({ code: 0, signal: null });
  expect(run.stdout().length).toBe(line.length * 400);
  const sizes = Object.fromEntries([...run.stderr().matchAll(/young generation: (main|thread) (\d+)/g)].map((m) => [m[1], Number(m[2])]));
  expect(Object.keys(sizes).sort()).toEqual(['main', 'thread']);
  // V8 starts each young generation at 1 MB per half; as V8 has it, the relay's grew to 16 MB and more here.
  expect(sizes.main).toBeLessThanOrEqual(4 * 1024 * 1024);
  expect(sizes.thread).toBeLessThanOrEqual(4 * 1024 * 1024);
});
