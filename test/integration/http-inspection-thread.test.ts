/**
 * The HTTP tap's inspection thread when it falls behind: an exchange whose copy is refused is only counted from
 * then on, one warning says so, its http-end carries uninspectedBytes, and the byte totals stay true. Driven
 * through the same client the tap uses, with a tiny backlog bound so the skip is certain. What was seen of the
 * cut exchange is left to its chunk records, as a whole stream's body is. And one exchange may hold only its
 * share of the backlog: a long stream is cut while one beside it is inspected whole.
 */
import { readFileSync } from 'node:fs';
import { join } from 'node:path';
import { describe, expect, it } from 'vitest';
import { HttpCalls } from '../../src/capture/http-calls.js';
import { ThreadChannel } from '../../src/inspect/channel.js';
import { openLogFile } from '../../src/log/open-file.js';
import { tempDir } from '../support/temp-dir.js';
import { readAllRecords } from '../../src/index.js';

const chunk = (i: number) => Buffer.from(`${JSON.stringify({ model: 'm', created_at: 't', message: { role: 'assistant', content: ` w${i}` }, done: false })}\n`);
const lastChunk = Buffer.from(`${JSON.stringify({ model: 'm', created_at: 't', message: { role: 'assistant', content: '' }, done: true })}\n`);
const head = (path: string) => ({ method: 'POST', path, headers: { 'content-type': 'application/json' } });
const body = Buffer.from(JSON.stringify({ model: 'm', messages: [{ role: 'user', content: 'hi' }], stream: true }));

async function startedThread(file: string, bounds: { maxBacklogBytes: number; maxSubjectBacklogBytes?: number }, notices: string[]): Promise<ThreadChannel> {
  const config = { logFile: file, fd: openLogFile(file), session: 's', label: 'gap', maxBody: 1 << 20, chunks: true, targetPath: '' };
  const thread = new ThreadChannel({ inspector: 'http-inspector', config, ...bounds, notice: (m) => notices.push(m) });
  // Running before any traffic comes, as a tap's thread is.
  for (const until = Date.now() + 10_000; !thread.started && Date.now() < until; ) await new Promise((r) => setTimeout(r, 10));
  return thread;
}

/** Begin a chat exchange: its request, and its response's head. */
function beginChat(client: HttpCalls, time: number): number {
  const x = client.begin(head('/api/chat'), time, time);
  client.requestData(x, body, time, time);
  client.requestEnd(x, time, time);
  client.responseHead(x, 200, { 'content-type': 'application/x-ndjson' }, time, time);
  return x;
}

describe('the HTTP inspection thread, behind', () => {
  it('counts the rest of a cut exchange without inspecting it, says so once, and keeps the next exchange whole', async () => {
    const file = join(tempDir('mcptap-http-gap-'), 'gap.ndjson');
    const notices: string[] = [];
    const thread = await startedThread(file, { maxBacklogBytes: 2000 }, notices);
    const client = new HttpCalls(thread);
    // All in one turn: the thread takes in nothing meanwhile, so the 2000-byte bound is passed part-way.
    const x = client.begin(head('/api/chat'), 1, 1);
    client.requestData(x, body, 1, 1);
    client.requestEnd(x, 2, 2);
    client.responseHead(x, 200, { 'content-type': 'application/x-ndjson' }, 3, 3);
    let sent = 0;
    for (let i = 0; i < 60; i++) {
      const c = chunk(i);
      sent += c.length;
      client.responseData(x, c, 4 + i, 4 + i);
    }
    client.responseEnd(x, 100, 100);
    for (const until = Date.now() + 10_000; !thread.caughtUp && Date.now() < until; ) await new Promise((r) => setTimeout(r, 10));
    // The next exchange, once caught up, is inspected whole.
    const y = client.begin(head('/api/chat'), 200, 200);
    client.requestData(y, body, 200, 200);
    client.requestEnd(y, 201, 201);
    client.responseHead(y, 200, { 'content-type': 'application/x-ndjson' }, 202, 202);
    client.responseData(y, Buffer.concat([chunk(0), lastChunk]), 203, 203);
    client.responseEnd(y, 204, 204);
    await client.close({ time: 300, kind: 'lifecycle', event: 'close', durationMs: 1, msg: 'closed' }, 300, 300);

    const records = readFileSync(file, 'utf8').trim().split('\n').map((l) => JSON.parse(l) as Record<string, unknown>);
    const ends = records.filter((r) => r.kind === 'http-end');
    expect(ends.map((r) => r.exchange)).toEqual(['x1', 'x2']);
    const [cut, whole] = ends;
    // The byte count stays true; what went uninspected is said, once, as a warning and on the end record.
    expect(cut!.resBytes).toBe(sent);
    expect(cut!.uninspectedBytes).toBeGreaterThan(0);
    expect(cut!.uninspectedBytes).toBeLessThan(sent);
    const warnings = records.filter((r) => r.event === 'warning');
    expect(warnings).toHaveLength(1);
    expect(warnings[0]!.msg).toBe('mcptap fell behind the traffic: the rest of POST /api/chat (exchange x1) is relayed in full but not inspected, and its records end with what was seen.');
    const inspectedChunks = records.filter((r) => r.kind === 'llm-chunk' && r.exchange === 'x1').length;
    expect(inspectedChunks).toBeGreaterThan(0);
    expect(inspectedChunks).toBeLessThan(60);
    // What was seen is its chunks: the http-end leaves that to them rather than write it again, and the reader
    // puts it back as the body, as far as it was seen.
    expect(cut!.body).toBeUndefined();
    expect(cut!.bodyInChunks).toBe(inspectedChunks);
    const read = (await readAllRecords([file])).find((r) => r.kind === 'http-end' && r.exchange === 'x1') as { body?: string };
    expect(read.body).toBe(Array.from({ length: inspectedChunks }, (_, i) => chunk(i).toString()).join(''));
    expect(whole!.uninspectedBytes).toBeUndefined();
    // The cut reply says it is partial; the whole one reads as usual.
    const partial = records.find((r) => r.kind === 'llm-response' && r.exchange === 'x1')!;
    expect(String(partial.msg)).toMatch(/^mcptap fell behind and saw only the start of this reply \(it was relayed in full\); as far as it saw: Model answers "w0 w1/);
    expect(partial.truncated).toBe(true);
    // Not the model's error: no llm-error for it.
    expect(records.filter((r) => r.kind === 'llm-error')).toEqual([]);
    expect(records.find((r) => r.kind === 'llm-response' && r.exchange === 'x2')).toMatchObject({ content: ' w0', msg: 'Model answers "w0" (3 ms).' });
    expect(notices).toEqual([]);
  });
  it('cuts one exchange at its share of the backlog and keeps the one beside it whole', async () => {
    const file = join(tempDir('mcptap-http-share-'), 'share.ndjson');
    const notices: string[] = [];
    // Room for everything in the ring, but 2000 bytes at most for one exchange.
    const thread = await startedThread(file, { maxBacklogBytes: 64_000, maxSubjectBacklogBytes: 2000 }, notices);
    const client = new HttpCalls(thread);
    // Both in one turn, their chunks taking turns: the thread takes in nothing meanwhile.
    const long = beginChat(client, 1);
    const short = beginChat(client, 1);
    for (let i = 0; i < 60; i++) {
      client.responseData(long, chunk(i), 2 + i, 2 + i);
      if (i < 10) client.responseData(short, chunk(i), 2 + i, 2 + i);
    }
    client.responseData(short, lastChunk, 70, 70);
    client.responseEnd(short, 71, 71);
    client.responseData(long, lastChunk, 72, 72);
    client.responseEnd(long, 73, 73);
    await client.close({ time: 300, kind: 'lifecycle', event: 'close', durationMs: 1, msg: 'closed' }, 300, 300);

    const records = readFileSync(file, 'utf8').trim().split('\n').map((l) => JSON.parse(l) as Record<string, unknown>);
    const end = (x: number) => records.find((r) => r.kind === 'http-end' && r.exchange === `x${x}`)!;
    expect(end(long).uninspectedBytes).toBeGreaterThan(0);
    expect(end(short).uninspectedBytes).toBeUndefined();
    expect(records.find((r) => r.kind === 'llm-response' && r.exchange === `x${short}`)).toMatchObject({ content: Array.from({ length: 10 }, (_, i) => ` w${i}`).join('') });
    expect(records.filter((r) => r.event === 'warning').map((r) => r.msg)).toEqual([`mcptap fell behind the traffic: the rest of POST /api/chat (exchange x${long}) is relayed in full but not inspected, and its records end with what was seen.`]);
    expect(notices).toEqual([]);
  });
});
