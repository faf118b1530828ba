/**
 * The inspection thread's transport: calls come back in the order they were queued, chunk calls as the arrays
 * they stand for; a batch's chunks are packed end to end into one movable buffer (small ones as they are queued),
 * and the thread takes each one back out as a Buffer of its own; and the Node options the thread starts with.
 */
import { randomBytes } from 'node:crypto';
import { MessageChannel, receiveMessageOnPort } from 'node:worker_threads';
import { describe, expect, test } from 'vitest';
import { BatchReader, CallBatch, type PostedBatch } from '../../src/capture/call-batch.js';
import { workerExecArgv } from '../../src/capture/inspection-thread.js';

/** Post a batch through a real MessagePort, as the thread receives it (the moved buffers included). */
function acrossThreads(batch: CallBatch): BatchReader {
  const { port1, port2 } = new MessageChannel();
  const { batch: posted, transfer } = batch.take();
  port1.postMessage(posted, transfer);
  const received = receiveMessageOnPort(port2)!.message as PostedBatch;
  port1.close();
  return new BatchReader(received);
}

/** The kinds these tests give their chunk calls. */
const CHUNK_KINDS = new Set([100, 101]);

/** Every call of a reader, chunk calls with their chunk's bytes as text in place of the ChunkRef. */
function readAll(reader: BatchReader): unknown[][] {
  const calls: unknown[][] = [];
  for (let call = reader.next(); call !== undefined; call = reader.next()) {
    if (CHUNK_KINDS.has(call[0] as number)) call[2] = reader.chunkAt(call[2] as number).toString();
    calls.push(call);
  }
  return calls;
}

describe('call batches', () => {
  test('calls come back in order, chunk calls in runs between the others, each with its own chunk', () => {
    const batch = new CallBatch();
    batch.add([1, 'head', { a: 1 }]);
    batch.addChunkCall(100, 7, Buffer.from('one'), 1_796_000_000_123, 12.5);
    batch.addChunkCall(101, 8, Buffer.from(''), 1_796_000_000_124, 13.25);
    batch.add([2, 'middle']);
    batch.addChunkCall(100, 7, Buffer.from('three'), 1_796_000_000_125, 14);
    batch.add([3, 'end']);
    expect(batch.bytes).toBe(8);
    const reader = acrossThreads(batch);
    expect(reader.bytes).toBe(8);
    expect(reader.callCount).toBe(6);
    expect(readAll(reader)).toEqual([
      [1, 'head', { a: 1 }],
      [100, 7, 'one', 1_796_000_000_123, 12.5],
      [101, 8, '', 1_796_000_000_124, 13.25],
      [2, 'middle'],
      [100, 7, 'three', 1_796_000_000_125, 14],
      [3, 'end'],
    ]);
    expect(reader.done).toBe(true);
    expect(reader.next()).toBeUndefined();
  });

  test('thousands of chunk calls in a row (past the room a batch starts with) all come back', () => {
    const batch = new CallBatch();
    for (let i = 0; i < 3000; i++) batch.addChunkCall(100, i, Buffer.from(`chunk ${i}`), 1000 + i, i / 4);
    const calls = readAll(acrossThreads(batch));
    expect(calls).toHaveLength(3000);
    calls.forEach((call, i) => expect(call).toEqual([100, i, `chunk ${i}`, 1000 + i, i / 4]));
  });

  test('taking a batch empties it: the next one holds only what comes after', () => {
    const batch = new CallBatch();
    batch.addChunkCall(100, 1, Buffer.from('first'), 1, 1);
    acrossThreads(batch);
    expect(batch.empty).toBe(true);
    expect(batch.bytes).toBe(0);
    batch.add([5]);
    batch.addChunkCall(100, 2, Buffer.from('second'), 2, 2);
    expect(readAll(acrossThreads(batch))).toEqual([[5], [100, 2, 'second', 2, 2]]);
  });

  test('a batch without chunk calls moves no buffers and reads back as is', () => {
    const batch = new CallBatch();
    batch.add([4, { record: true }]);
    const { batch: posted, transfer } = batch.take({ urgent: true });
    expect(transfer).toEqual([]);
    const reader = new BatchReader(posted);
    expect(reader.urgent).toBe(true);
    expect(readAll(reader)).toEqual([[4, { record: true }]]);
  });
});

describe('packed chunks', () => {
  /** A batch of one chunk call per chunk, read back across a port: each chunk as the thread gets it. */
  function roundTrip(chunks: readonly Buffer[]): Buffer[] {
    const batch = new CallBatch();
    chunks.forEach((chunk, i) => batch.addChunkCall(100, i, chunk, i, i));
    const reader = acrossThreads(batch);
    const back: Buffer[] = [];
    for (let call = reader.next(); call !== undefined; call = reader.next()) back.push(reader.chunkAt(call[2] as number));
    return back;
  }

  test('every chunk comes back byte for byte, small and large ones mixed in any order, empty ones included', () => {
    const chunks = [Buffer.from('{"jsonrpc":"2.0"}\n'), Buffer.alloc(0), randomBytes(70_000), Buffer.from('é€😀'), randomBytes(9000), randomBytes(1), randomBytes(8192), randomBytes(8193), randomBytes(40_000)];
    const back = roundTrip(chunks);
    expect(back).toHaveLength(chunks.length);
    chunks.forEach((chunk, i) => expect(back[i]!.equals(chunk), `chunk ${i}`).toBe(true));
  });

  test('a batch of small chunks past the room it started with, after a smaller batch, all come back', () => {
    const batch = new CallBatch();
    for (let i = 0; i < 10; i++) batch.addChunkCall(100, i, randomBytes(1000), 0, 0);
    acrossThreads(batch);
    // About 55 KB: the room for small chunks (sized by the batch before) grows several times.
    const chunks = Array.from({ length: 100 }, (_, i) => randomBytes(500 + i));
    chunks.forEach((chunk, i) => batch.addChunkCall(100, i, chunk, 0, 0));
    const reader = acrossThreads(batch);
    expect(reader.bytes).toBe(chunks.reduce((n, chunk) => n + chunk.length, 0));
    for (const chunk of chunks) expect(reader.chunkAt(reader.next()![2] as number).equals(chunk)).toBe(true);
  });

  test("a small chunk is copied as it is queued: the batch does not hold the relay's buffer", () => {
    const batch = new CallBatch();
    const chunk = Buffer.from('{"id":1}\n');
    batch.addChunkCall(100, 1, chunk, 0, 0);
    chunk.fill(0x20);
    const reader = acrossThreads(batch);
    expect(reader.chunkAt(reader.next()![2] as number).toString()).toBe('{"id":1}\n');
  });

  test('a chunk taken out does not keep the packed batch alive: it has memory of its own', () => {
    const batch = new CallBatch();
    batch.addChunkCall(100, 1, randomBytes(10), 0, 0);
    batch.addChunkCall(100, 2, randomBytes(100_000), 0, 0);
    const { batch: posted } = batch.take();
    const reader = new BatchReader(posted);
    const small = reader.chunkAt(0);
    const large = reader.chunkAt(1);
    expect(small.buffer).not.toBe(posted.packed);
    expect(large.buffer).not.toBe(posted.packed);
    expect(large.buffer.byteLength).toBeLessThan(posted.packed!.byteLength);
  });
});

describe('workerExecArgv', () => {
  test('passes on the Node options but --input-type, which a worker file cannot start with', () => {
    expect(workerExecArgv(['--input-type=module', '-e', 'code', '--enable-source-maps'])).toEqual(['-e', 'code', '--enable-source-maps']);
    expect(workerExecArgv(['--input-type', 'module', '--cpu-prof'])).toEqual(['--cpu-prof']);
    expect(workerExecArgv([])).toEqual([]);
  });
});
