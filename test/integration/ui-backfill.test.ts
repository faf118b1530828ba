/**
 * `mcptap ui` on a folder that already holds many records: the backfill reads them (up to 4 MiB of each file in
 * one look), keeps the newest DEFAULT_UI_MAX_RECORDS, and starts. It once spread one look's records into a
 * single call, which overflows the stack past about a hundred thousand records, and the server never started.
 */
import { mkdtempSync, rmSync, writeFileSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { afterEach, describe, expect, it } from 'vitest';
import { DEFAULT_UI_MAX_RECORDS, startUiServer, type UiServer } from '../../src/ui/server.js';

let ui: UiServer | undefined;
let dir: string | undefined;
afterEach(async () => {
  await ui?.close();
  if (dir) rmSync(dir, { recursive: true, force: true });
});

describe('mcptap ui backfill', () => {
  it('starts on six logs of 25,000 records each, read in one look, and keeps the newest it may', async () => {
    dir = mkdtempSync(join(tmpdir(), 'mcptap-ui-long-'));
    for (let file = 0; file < 6; file++) {
      const lines: string[] = [];
      for (let i = 0; i < 25_000; i++) {
        const seq = file * 25_000 + i;
        lines.push(JSON.stringify({ v: 1, seq, time: 1_780_000_000_000 + seq, session: `s${file}`, channel: 'stdio', label: 'x', kind: 'stderr', dir: 's2c', text: `line ${seq}`, bytes: 6, msg: 'm' }));
      }
      writeFileSync(join(dir, `part-${file}.ndjson`), `${lines.join('\n')}\n`);
    }
    ui = await startUiServer({ logDir: dir, listen: 0, warn: () => {} });
    expect(ui.records).toBe(DEFAULT_UI_MAX_RECORDS);
  });
});
