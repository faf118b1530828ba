/**
 * The live round-trip join finds the model's call through the host's renaming of the tool, as the trace does:
 * `weather_get_weather` for this server's get_weather, `wx__get_weather` under a prefix it does not know, and
 * not `check_weather` for a tool named weather.
 */
import { execFileSync } from 'node:child_process';
import { appendFileSync, mkdirSync, writeFileSync } from 'node:fs';
import { join } from 'node:path';
import { describe, expect, it } from 'vitest';
import { LiveToolCallIndex } from '../../src/export/live-join.js';
import { tempDir } from '../support/temp-dir.js';

const T = 1_790_000_000_000;
const reply = (name: string, exchange: string): string =>
  `${JSON.stringify({ v: 1, seq: 1, session: 'llm-1', channel: 'openai', label: 'llm', kind: 'llm-response', time: T, dir: 's2c', exchange, endpoint: '/v1/chat/completions', status: 200, content: '', toolCalls: [{ name, arguments: { city: 'Paris' } }], durationMs: 5, msg: 'm' })}\n`;

describe('LiveToolCallIndex', () => {
  it('joins a tools/call to the model call under the name the host gave the tool', async () => {
    const dir = tempDir('mcptap-live-join-');
    const log = join(dir, 'llm.ndjson');
    writeFileSync(log, '');
    const index = new LiveToolCallIndex(dir, undefined);
    await index.refresh();
    appendFileSync(log, reply('weather_get_weather', 'x1') + reply('wx__get_weather', 'x2') + reply('check_weather', 'x3'));
    await index.refresh();
    expect(index.find('get_weather', { city: 'Paris' }, T + 5, ['weather'])?.exchange).toBe('x1');
    expect(index.find('get_weather', { city: 'Paris' }, T + 6, ['weather'])?.exchange).toBe('x2');
    expect(index.find('get_weather', { city: 'Paris' }, T + 7, ['weather'])).toBeUndefined();
    expect(index.find('weather', { city: 'Paris' }, T + 8, ['other'])).toBeUndefined();
  });

  it('walks the folder as every reader does: a log in a subfolder is read, a named pipe is never opened', async () => {
    const dir = tempDir('mcptap-live-join-');
    mkdirSync(join(dir, 'demo-1'));
    const log = join(dir, 'demo-1', 'llm.ndjson');
    writeFileSync(log, '');
    // Opening a FIFO for reading blocks until a writer comes: a tail that opened it would hang here.
    execFileSync('mkfifo', [join(dir, 'pipe.ndjson')]);
    const index = new LiveToolCallIndex(dir, undefined);
    await index.refresh();
    appendFileSync(log, reply('get_weather', 'x9'));
    await index.refresh();
    expect(index.find('get_weather', { city: 'Paris' }, T + 5, ['weather'])?.exchange).toBe('x9');
  });
});
