/**
 * The log is pino-shaped (level, time, msg), so pino's own tools read it: pino-pretty turns a real record into
 * its usual line, with the level by name and the sentence.
 */
import { describe, expect, it } from 'vitest';
import { mkdtempSync, readFileSync, rmSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { prettyFactory } from 'pino-pretty';
import { LogWriter } from '../../src/log/writer.js';
import { LEVEL } from '../../src/log/schema.js';

describe('pino compatibility', () => {
  it('pino-pretty reads the records LogWriter writes', async () => {
    const dir = mkdtempSync(join(tmpdir(), 'mcptap-pino-'));
    try {
      const file = join(dir, 'x.ndjson');
      const writer = new LogWriter({ file, session: 's1', channel: 'stdio', label: 'weather' });
      writer.write({ time: Date.UTC(2026, 10, 29, 14, 10, 26), kind: 'request', dir: 'c2s', id: 1, method: 'ping', bytes: 2, raw: '{}', msg: 'Client pings the server to check it is alive.' });
      writer.write({ time: Date.UTC(2026, 10, 29, 14, 10, 27), kind: 'invalid', dir: 's2c', reason: 'plain text, not JSON', bytes: 5, raw: 'hello', level: LEVEL.warn, msg: 'The server wrote a line that is not JSON-RPC to stdout.' });
      await writer.close();
      const pretty = prettyFactory({ colorize: false, translateTime: 'UTC:HH:MM:ss' });
      const lines = readFileSync(file, 'utf8').trim().split('\n').map((line) => pretty(line));
      expect(lines[0]).toMatch(/^\[14:10:26\] INFO: Client pings the server to check it is alive\./);
      expect(lines[1]).toMatch(/^\[14:10:27\] WARN: The server wrote a line that is not JSON-RPC to stdout\./);
    } finally {
      rmSync(dir, { recursive: true, force: true });
    }
  });
});
