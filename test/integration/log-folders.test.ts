/**
 * Folders of logs as people have them: the demo's `logs/demo-<time>/`, folders of their own, a symbolic link
 * back up the tree, a named pipe with a log's name, an empty folder. Every reading command walks them the same
 * way (src/log/walk.ts); prune walks them without following links.
 */
import { execFile, execFileSync } from 'node:child_process';
import { copyFileSync, mkdirSync, symlinkSync, utimesSync, writeFileSync } from 'node:fs';
import { join, resolve } from 'node:path';
import { promisify } from 'node:util';
import { describe, expect, it } from 'vitest';
import { listLogFiles } from '../../src/log/reader.js';
import { MAX_DEPTH } from '../../src/log/walk.js';
import { findOldLogs } from '../../src/prune.js';
import { tempDir } from '../support/temp-dir.js';

const BIN = resolve(import.meta.dirname, '../../bin/mcptap.js');
const ROUNDTRIP = resolve(import.meta.dirname, '../../fixtures/captures/roundtrip');
const exec = promisify(execFile);

async function cli(...args: string[]): Promise<{ code: number; stdout: string; stderr: string }> {
  try {
    return { code: 0, ...(await exec(process.execPath, [BIN, ...args], { timeout: 20_000 })) };
  } catch (error) {
    const e = error as { code: number; stdout: string; stderr: string };
    return { code: e.code, stdout: e.stdout, stderr: e.stderr };
  }
}

/** logs/ as after `mcptap demo` and a wrapped server: demo-<time>/{ollama,weather}.ndjson, one log at the top. */
function demoLayout(): { logs: string; demo: string } {
  const logs = join(tempDir('mcptap-folders-'), 'logs');
  const demo = join(logs, 'demo-20261201T101010Z');
  mkdirSync(demo, { recursive: true });
  copyFileSync(join(ROUNDTRIP, 'ollama.ndjson'), join(demo, 'ollama-20261201T101010Z-1.ndjson'));
  copyFileSync(join(ROUNDTRIP, 'weather.ndjson'), join(demo, 'weather-20261201T101010Z-2.ndjson'));
  writeFileSync(join(logs, 'notes.txt'), 'not a log');
  return { logs, demo };
}

describe('reading a folder reads its subfolders', () => {
  it('view logs/ shows the demo in logs/demo-<time>/, linked', async () => {
    const { logs } = demoLayout();
    const r = await cli('view', '--format', 'timeline', logs);
    expect(r.stderr).toBe('');
    expect(r.code).toBe(0);
    expect(r.stdout).toMatch(/Host \/ client → weather\s+tools\/call get_weather/);
    expect(r.stdout).toMatch(/tool result fed back: get_weather/);
  });

  it('export har of a folder of folders has the records, check and diff read it too', async () => {
    const { logs } = demoLayout();
    const out = join(tempDir('mcptap-har-'), 'x.har');
    const har = await cli('export', '--format', 'har', '-o', out, logs);
    expect(har.code).toBe(0);
    expect(har.stderr).toMatch(/^mcptap: wrote har of [1-9]\d* records/);
    expect((await cli('check', logs)).stdout).not.toContain('no records');
    expect((await cli('diff', logs, logs)).code).toBe(0);
  });

  it('nested folders: files in a folder before its subfolders, each sorted', async () => {
    const root = tempDir('mcptap-nested-');
    for (const dir of ['b', 'a/deep/er']) mkdirSync(join(root, dir), { recursive: true });
    for (const file of ['z.ndjson', 'b/y.ndjson', 'a/x.ndjson', 'a/deep/er/w.ndjson', 'a/deep/readme.md']) writeFileSync(join(root, file), '');
    expect(await listLogFiles([root])).toEqual(['z.ndjson', 'a/x.ndjson', 'a/deep/er/w.ndjson', 'b/y.ndjson'].map((f) => join(root, f)));
  });

  it('a symbolic link back up the tree is skipped with a note, and every log is read once', async () => {
    const { logs, demo } = demoLayout();
    symlinkSync(logs, join(demo, 'up'));
    const notes: string[] = [];
    const files = await listLogFiles([logs], { onNote: (n) => notes.push(n) });
    expect(files).toHaveLength(2);
    expect(notes).toEqual([`skipped ${join(demo, 'up')}: a link back to a folder already read (a symbolic-link loop).`]);
    const r = await cli('view', logs);
    expect(r.code).toBe(0);
    expect(r.stderr).toBe(`mcptap: skipped ${join(demo, 'up')}: a link back to a folder already read (a symbolic-link loop).\n`);
  });

  it(`stops ${MAX_DEPTH} folders down, saying so`, async () => {
    const root = tempDir('mcptap-deep-');
    const deepest = join(root, ...Array.from({ length: MAX_DEPTH + 1 }, (_, i) => `d${i}`));
    mkdirSync(deepest, { recursive: true });
    writeFileSync(join(deepest, 'far.ndjson'), '');
    writeFileSync(join(root, 'near.ndjson'), '');
    const notes: string[] = [];
    expect(await listLogFiles([root], { onNote: (n) => notes.push(n) })).toEqual([join(root, 'near.ndjson')]);
    expect(notes).toEqual([`skipped ${deepest}: more than ${MAX_DEPTH} folders deep.`]);
  });
});

describe('what is not a folder of logs gets a sentence, never a hang', () => {
  it('an empty folder, and one with no logs, exit 2', async () => {
    const empty = tempDir('mcptap-empty-');
    for (const command of ['view', 'check', 'export --format har']) {
      const r = await cli(...command.split(' '), empty);
      expect(r, command).toEqual({ code: 2, stdout: '', stderr: `mcptap: There are no logs in ${empty}: no *.ndjson file in it or its subfolders. Give the folder mcptap wrote to (./logs by default) or a log file.\n` });
    }
    writeFileSync(join(empty, 'notes.txt'), 'x');
    expect((await cli('view', empty)).code).toBe(2);
  });

  it('a named pipe: given, a sentence and exit 2; in a folder, skipped with a note', async () => {
    const dir = tempDir('mcptap-fifo-');
    const fifo = join(dir, 'live.ndjson');
    execFileSync('mkfifo', [fifo]);
    expect(await cli('view', fifo)).toEqual({ code: 2, stdout: '', stderr: `mcptap: ${fifo} is a named pipe (FIFO), not a log file. Give a log file or a folder of logs.\n` });
    copyFileSync(join(ROUNDTRIP, 'weather.ndjson'), join(dir, 'weather.ndjson'));
    const r = await cli('view', dir);
    expect(r.code).toBe(0);
    expect(r.stderr).toBe(`mcptap: skipped ${fifo}: a named pipe (FIFO), not a log file.\n`);
    expect(await cli('view', '/dev/null')).toMatchObject({ code: 2, stderr: 'mcptap: /dev/null is a device, not a log file. Give a log file or a folder of logs.\n' });
  });
});

describe('prune walks subfolders, never through links', () => {
  it('finds old logs in demo-<time>/, not behind a link to another folder', async () => {
    const { logs, demo } = demoLayout();
    const outside = tempDir('mcptap-outside-');
    writeFileSync(join(outside, 'precious.ndjson'), 'keep');
    symlinkSync(outside, join(logs, 'linked'));
    const old = (Date.now() - 30 * 86_400_000) / 1000;
    for (const f of ['ollama-20261201T101010Z-1.ndjson', 'weather-20261201T101010Z-2.ndjson']) utimesSync(join(demo, f), old, old);
    utimesSync(join(outside, 'precious.ndjson'), old, old);
    expect((await findOldLogs(logs, 7 * 86_400_000)).map((l) => l.file).sort()).toEqual([join(demo, 'ollama-20261201T101010Z-1.ndjson'), join(demo, 'weather-20261201T101010Z-2.ndjson')]);
    const r = await cli('prune', '--older-than', '7d', logs);
    expect(r.code).toBe(0);
    expect(r.stdout).toContain(`2 logs older than 7d in ${logs}`);
  });
});
