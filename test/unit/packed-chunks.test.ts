/**
 * The inspection thread's transport: a batch's chunks are packed end to end into one movable buffer, and the
 * thread takes each one back out as a Buffer of its own; and the Node options the thread starts with.
 */
import { randomBytes } from 'node:crypto';
import { describe, expect, test } from 'vitest';
import { packChunks, unpackChunks, workerExecArgv } from '../../src/capture/inspection-thread.js';

describe('packed chunks', () => {
  test('every chunk comes back byte for byte, empty ones and large ones included', () => {
    const chunks = [Buffer.from('{"jsonrpc":"2.0"}\n'), Buffer.alloc(0), randomBytes(70_000), Buffer.from('é€😀'), randomBytes(1)];
    const chunkAt = unpackChunks({ calls: [], ...packChunks(chunks) });
    chunks.forEach((chunk, ref) => expect(chunkAt(ref).equals(chunk)).toBe(true));
  });

  test('a chunk taken out does not keep the packed batch alive: it has memory of its own', () => {
    const packed = packChunks([randomBytes(10), randomBytes(100_000)]);
    const chunkAt = unpackChunks({ calls: [], ...packed });
    expect(chunkAt(0).buffer).not.toBe(packed.packed);
    expect(chunkAt(1).buffer).not.toBe(packed.packed);
    expect(chunkAt(1).buffer.byteLength).toBeLessThan(packed.packed!.byteLength);
  });

  test('a batch without chunks packs nothing', () => {
    expect(packChunks([])).toEqual({});
  });
});

describe('workerExecArgv', () => {
  test('passes on the Node options but --input-type, which a worker file cannot start with', () => {
    expect(workerExecArgv(['--input-type=module', '-e', 'code', '--enable-source-maps'])).toEqual(['-e', 'code', '--enable-source-maps']);
    expect(workerExecArgv(['--input-type', 'module', '--cpu-prof'])).toEqual(['--cpu-prof']);
    expect(workerExecArgv([])).toEqual([]);
  });
});
