/**
 * The live stdio path under random input: `mcptap -- cat` must hand back exactly the bytes it was given, however
 * they are cut into chunks and whatever they contain (binary, lone \r, no final newline, huge lines), while the
 * log still gets a record for every line.
 */
import { readFileSync, readdirSync } from 'node:fs';
import { join } from 'node:path';
import { PassThrough } from 'node:stream';
import fc from 'fast-check';
import { describe, expect, it } from 'vitest';
import { startStdioTap } from '../../src/index.js';
import { tempDir } from '../support/temp-dir.js';

const byte = fc.oneof({ weight: 6, arbitrary: fc.integer({ min: 0, max: 255 }) }, { weight: 2, arbitrary: fc.constantFrom(0x0a, 0x0d, 0x7b, 0x22) });
const piece = fc.oneof(
  fc.array(byte, { maxLength: 300 }).map((a) => Buffer.from(a)),
  fc.jsonValue().map((v) => Buffer.from(`${JSON.stringify({ jsonrpc: '2.0', id: 1, method: 'tools/call', params: { v } })}\n`)),
  // A line longer than the tap's cap, so truncation is exercised too.
  fc.integer({ min: 2000, max: 20_000 }).map((n) => Buffer.from(`${'x'.repeat(n)}\n`)),
);

async function throughCat(chunks: Buffer[]): Promise<{ out: Buffer; log: string[] }> {
  const logDir = tempDir('mcptap-fuzz-');
  const input = new PassThrough();
  const output = new PassThrough();
  const got: Buffer[] = [];
  output.on('data', (c: Buffer) => got.push(c));
  const tap = startStdioTap({ command: 'cat', logDir, input, output, errorOutput: new PassThrough(), maxBody: 1024 });
  for (const c of chunks) {
    input.write(c);
    // Let some chunks cross the pipe on their own, as a real client's writes would.
    if (c.length % 3 === 0) await new Promise((r) => setImmediate(r));
  }
  input.end();
  const exit = await tap.exited;
  expect(exit.exitCode).toBe(0);
  const [file] = readdirSync(logDir);
  return { out: Buffer.concat(got), log: readFileSync(join(logDir, file!), 'utf8').split('\n').filter(Boolean) };
}

describe('mcptap -- cat under random input', () => {
  it('output bytes equal input bytes, and every line is logged', async () => {
    await fc.assert(
      fc.asyncProperty(fc.array(piece, { minLength: 1, maxLength: 12 }), async (chunks) => {
        const sent = Buffer.concat(chunks);
        const { out, log } = await throughCat(chunks);
        expect(out.equals(sent)).toBe(true);
        const records = log.map((l) => JSON.parse(l) as { kind: string; dir?: string });
        // cat echoes, so each line is seen once each way; a last line without \n is a partial frame each way.
        const lines = sent.toString('latin1').split('\n');
        const expected = lines.length - 1 + (lines.at(-1) === '' ? 0 : 1);
        for (const dir of ['c2s', 's2c']) {
          const frames = records.filter((r) => r.dir === dir && ['request', 'response', 'notification', 'invalid'].includes(r.kind));
          expect(frames.length).toBe(expected);
        }
      }),
      { numRuns: 15 },
    );
  });
});
