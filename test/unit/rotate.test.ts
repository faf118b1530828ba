import { readdirSync, writeFileSync } from 'node:fs';
import { join } from 'node:path';
import { describe, expect, it } from 'vitest';
import { RotatingFile, needsNewPart, partFileName, type LogTarget } from '../../src/log/rotate.js';
import { tempDir } from '../support/temp-dir.js';

/** A part held in memory, so the rotation logic is checked without a disk. */
class MemoryTarget implements LogTarget {
  text = '';
  ended = false;
  write(text: string): void {
    if (this.ended) throw new Error('write after end');
    this.text += text;
  }
  flushSync(): void {}
  async end(): Promise<void> {
    this.ended = true;
  }
}

describe('partFileName', () => {
  it('part 1 is the file; later parts sort after it and in order', () => {
    const file = '/logs/weather-20261129T133827Z-4242.ndjson';
    expect(partFileName(file, 1)).toBe(file);
    expect(partFileName(file, 2)).toBe('/logs/weather-20261129T133827Z-4242.part002.ndjson');
    const names = [1, 2, 3, 10, 100].map((n) => partFileName(file, n));
    expect([...names].sort()).toEqual(names);
  });
});

describe('needsNewPart', () => {
  it('starts a part when the text would pass the cap, never for an empty part', () => {
    expect(needsNewPart(0, 10_000, 100)).toBe(false);
    expect(needsNewPart(90, 10, 100)).toBe(false);
    expect(needsNewPart(90, 11, 100)).toBe(true);
  });
});

describe('RotatingFile', () => {
  function make(maxBytes: number, maxFiles?: number) {
    const parts = new Map<string, MemoryTarget>();
    const rotating = new RotatingFile({
      file: '/x/log.ndjson',
      maxBytes,
      ...(maxFiles !== undefined ? { maxFiles } : {}),
      open: (file) => {
        const target = new MemoryTarget();
        parts.set(file, target);
        return target;
      },
    });
    return { rotating, parts };
  }

  it('keeps every part under the cap, whole lines only, nothing lost or reordered', async () => {
    const { rotating, parts } = make(100);
    const lines = Array.from({ length: 50 }, (_, i) => `{"seq":${i},"pad":"${'x'.repeat(i % 17)}"}\n`);
    for (const line of lines) rotating.write(line);
    await rotating.end();
    expect(parts.size).toBeGreaterThan(5);
    for (const part of parts.values()) {
      expect(part.text.length).toBeLessThanOrEqual(100);
      expect(part.text.endsWith('\n')).toBe(true);
      expect(part.ended).toBe(true);
    }
    expect([...parts.values()].map((p) => p.text).join('')).toBe(lines.join(''));
    expect(rotating.files).toEqual([...parts.keys()]);
  });

  it('a record larger than the cap gets a part of its own', () => {
    const { rotating, parts } = make(10);
    rotating.write('a\n');
    rotating.write(`${'b'.repeat(50)}\n`);
    rotating.write('c\n');
    expect([...parts.values()].map((p) => p.text)).toEqual(['a\n', `${'b'.repeat(50)}\n`, 'c\n']);
  });

  it('deletes the oldest parts beyond maxFiles', async () => {
    const dir = tempDir('mcptap-rotate-');
    const first = join(dir, 'log.ndjson');
    const rotating = new RotatingFile({
      file: first,
      maxBytes: 10,
      maxFiles: 2,
      open: (file) => {
        writeFileSync(file, '');
        return new MemoryTarget();
      },
    });
    for (let i = 0; i < 5; i++) rotating.write('0123456789\n');
    await rotating.end();
    expect(readdirSync(dir).sort()).toEqual(['log.part004.ndjson', 'log.part005.ndjson']);
    expect(rotating.files).toEqual([join(dir, 'log.part004.ndjson'), join(dir, 'log.part005.ndjson')]);
  });
});
