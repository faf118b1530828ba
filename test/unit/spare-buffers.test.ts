/**
 * Spare buffers: a batch of big chunks is packed into a buffer the inspection thread already touched, moved to
 * the thread whole; a batch too small or too big for one gets a buffer of its own, as before.
 */
import { randomBytes } from 'node:crypto';
import { MessageChannel, receiveMessageOnPort } from 'node:worker_threads';
import { describe, expect, test } from 'vitest';
import { BatchReader, CallBatch, type PostedBatch } from '../../src/capture/call-batch.js';
import { makeSpare, SPARE_BYTES, SPARE_USE_MIN_BYTES, SpareBuffers } from '../../src/capture/spare-buffers.js';

const KIB_64 = 64 * 1024;

/** A batch of these chunks, one chunk call each, posted through a real port as the thread receives it. */
function postAcross(batch: CallBatch, chunks: readonly Buffer[]): { posted: PostedBatch; sent: PostedBatch; transfer: ArrayBuffer[] } {
  chunks.forEach((chunk, i) => batch.addChunkCall(100, i, chunk, i, i));
  const { batch: sent, transfer } = batch.take();
  const { port1, port2 } = new MessageChannel();
  port1.postMessage(sent, transfer);
  const posted = receiveMessageOnPort(port2)!.message as PostedBatch;
  port1.close();
  return { posted, sent, transfer };
}

/** Each chunk as the thread takes it out of the batch. */
function chunksOf(posted: PostedBatch): Buffer[] {
  const reader = new BatchReader(posted);
  const back: Buffer[] = [];
  for (let call = reader.next(); call !== undefined; call = reader.next()) back.push(reader.chunkAt(call[2] as number));
  return back;
}

describe('spare buffers', () => {
  test('a batch of 1 MiB of 64 KiB chunks goes in a spare, moved to the thread whole, and says so', () => {
    const spares = new SpareBuffers();
    const spare = makeSpare();
    spares.give(spare);
    // 17 pipe reads: past the size at which a batch is posted, as a burst's batches are.
    const chunks = Array.from({ length: 17 }, () => randomBytes(KIB_64));
    const { posted, sent, transfer } = postAcross(new CallBatch(spares), chunks);
    expect(sent.packed).toBe(spare);
    expect(transfer).toContain(spare);
    // Moved, not copied: the relay's side of it is gone.
    expect(spare.byteLength).toBe(0);
    expect(posted.fromSpare).toBe(true);
    expect(posted.packed!.byteLength).toBe(SPARE_BYTES);
    expect(spares.count).toBe(0);
    const back = chunksOf(posted);
    expect(back).toHaveLength(17);
    chunks.forEach((chunk, i) => expect(back[i]!.equals(chunk), `chunk ${i}`).toBe(true));
  });

  test('small chunks queued before, between and after the big ones land in their places in the spare', () => {
    const spares = new SpareBuffers();
    spares.give(makeSpare());
    const chunks: Buffer[] = [Buffer.from('{"id":1}\n')];
    for (let i = 0; i < 16; i++) chunks.push(randomBytes(KIB_64), randomBytes(100 + i));
    chunks.push(Buffer.from('tail'));
    const { posted } = postAcross(new CallBatch(spares), chunks);
    expect(posted.fromSpare).toBe(true);
    const back = chunksOf(posted);
    chunks.forEach((chunk, i) => expect(back[i]!.equals(chunk), `chunk ${i}`).toBe(true));
  });

  test('a batch under 1 MiB, one bigger than a spare, or one without a spare ready gets a buffer of its own', () => {
    const spares = new SpareBuffers();
    const spare = makeSpare();
    spares.give(spare);
    const cases = [
      Array.from({ length: 8 }, () => randomBytes(KIB_64)),
      [randomBytes(SPARE_BYTES + 1)],
      [randomBytes(SPARE_USE_MIN_BYTES - 1)],
    ];
    for (const chunks of cases) {
      const { posted } = postAcross(new CallBatch(spares), chunks);
      expect(posted.fromSpare).toBeUndefined();
      expect(posted.packed!.byteLength).toBe(chunks.reduce((n, chunk) => n + chunk.length, 0));
      chunksOf(posted).forEach((chunk, i) => expect(chunk.equals(chunks[i]!)).toBe(true));
    }
    expect(spares.count).toBe(1);
    expect(spare.byteLength).toBe(SPARE_BYTES);
    const empty = new SpareBuffers();
    const { posted } = postAcross(new CallBatch(empty), Array.from({ length: 17 }, () => randomBytes(KIB_64)));
    expect(posted.fromSpare).toBeUndefined();
  });

  test('a spare the thread makes is the size of the largest batch it is for, and already written', () => {
    const spare = makeSpare();
    expect(spare.byteLength).toBe(SPARE_BYTES);
    expect(Buffer.from(spare).every((byte) => byte === 0)).toBe(true);
    // A batch is posted once it holds 1 MiB; the chunk that took it there (a pipe read) still fits.
    expect(SPARE_BYTES).toBeGreaterThanOrEqual(SPARE_USE_MIN_BYTES + KIB_64);
  });
});
