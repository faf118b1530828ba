/** `mcptap prune`: old logs go, only with --yes, and nothing but mcptap's own logs is ever touched. */
import { spawnSync } from 'node:child_process';
import { existsSync, symlinkSync, utimesSync, writeFileSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join, resolve } from 'node:path';
import { describe, expect, it } from 'vitest';
import { findOldLogs, parseDuration } from '../../src/prune.js';
import { McptapError } from '../../src/types.js';
import { tempDir } from '../support/temp-dir.js';

const BIN = resolve(import.meta.dirname, '../../bin/mcptap.js');
const DAY = 86_400_000;

function folder(): { dir: string; old: string[]; keep: string[] } {
  const dir = tempDir('mcptap-prune-');
  const outside = tempDir('mcptap-prune-outside-');
  const at = (name: string, ageDays: number, text = '{}\n'): string => {
    const file = join(dir, name);
    writeFileSync(file, text);
    const t = (Date.now() - ageDays * DAY) / 1000;
    utimesSync(file, t, t);
    return file;
  };
  const old = [at('weather-20261101T000000Z-1.ndjson', 20, 'x'.repeat(2048)), at('weather-20261101T000000Z-1.part002.ndjson', 19)];
  const keep = [at('fresh-20261129T000000Z-2.ndjson', 1), at('notes.txt', 30)];
  // A link to an old file elsewhere: prune must not follow it, nor delete the link's target.
  const target = join(outside, 'precious.ndjson');
  writeFileSync(target, 'keep me');
  utimesSync(target, (Date.now() - 40 * DAY) / 1000, (Date.now() - 40 * DAY) / 1000);
  symlinkSync(target, join(dir, 'link.ndjson'));
  keep.push(target);
  return { dir, old, keep };
}

const run = (...args: string[]) => spawnSync(process.execPath, [BIN, 'prune', ...args], { encoding: 'utf8' });

describe('parseDuration', () => {
  it('reads s, m, h, d, w', () => {
    expect(parseDuration('90s')).toBe(90_000);
    expect(parseDuration('30m')).toBe(1_800_000);
    expect(parseDuration('12h')).toBe(43_200_000);
    expect(parseDuration('7d')).toBe(7 * DAY);
    expect(parseDuration('2w')).toBe(14 * DAY);
  });
  it('refuses anything else with a sentence', () => {
    for (const bad of ['7', 'week', '-1d', '0d', '7 days']) expect(() => parseDuration(bad), bad).toThrow(McptapError);
  });
});

describe('findOldLogs', () => {
  it('finds only *.ndjson regular files older than the age, oldest first', async () => {
    const { dir, old } = folder();
    expect((await findOldLogs(dir, 7 * DAY)).map((l) => l.file)).toEqual(old);
  });
  it('a missing folder is a sentence', async () => {
    await expect(findOldLogs('/nonexistent/mcptap-logs', DAY)).rejects.toThrow(/no log folder/);
  });
});

describe('mcptap prune', () => {
  it('is a dry run by default', () => {
    const { dir, old, keep } = folder();
    const r = run('--older-than', '7d', '--log-dir', dir);
    expect(r.status).toBe(0);
    expect(r.stdout).toContain('2 logs older than 7d');
    expect(r.stdout).toContain('Nothing was deleted. Run again with --yes');
    for (const f of [...old, ...keep]) expect(existsSync(f), f).toBe(true);
  });

  it('deletes with --yes, and only the old logs', () => {
    const { dir, old, keep } = folder();
    const r = run('--older-than', '7d', '--log-dir', dir, '--yes');
    expect(r.status).toBe(0);
    expect(r.stdout).toMatch(/^Deleted 2 logs older than 7d/);
    for (const f of old) expect(existsSync(f), f).toBe(false);
    for (const f of keep) expect(existsSync(f), f).toBe(true);
    expect(existsSync(join(dir, 'link.ndjson'))).toBe(true);
  });

  it('says plainly when the age is not a duration', () => {
    const r = run('--older-than', 'soon', '--log-dir', tmpdir());
    expect(r.status).toBe(2);
    expect(r.stderr).toContain('"soon" is not a duration');
  });
});
