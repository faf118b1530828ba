import { describe, expect, it } from 'vitest';
import { Correlator, type OpenRequest } from '../../src/session/correlator.js';
import { McpSession } from '../../src/session/mcp-session.js';
import type { RecordDraft } from '../../src/log/schema.js';

const req = (id: number, mono: number): OpenRequest => ({ dir: 'c2s', id, method: 'tools/call', seq: id, mono });

describe('unanswered requests age out', () => {
  it('a request older than the age limit is handed back when the next request arrives, young ones stay', () => {
    const c = new Correlator(100, 1000);
    expect(c.request(req(1, 0))).toEqual([]);
    expect(c.request(req(2, 500))).toEqual([]);
    const out = c.request(req(3, 1200));
    expect(out.map((r) => r.id)).toEqual([1]);
    expect(c.size).toBe(2);
    // An answer for an aged-out request (a tool slower than the limit) still finds it, after its pending record.
    expect(c.respond('s2c', 1, 1300)).toMatchObject({ request: { id: 1 }, latencyMs: 1300, afterPending: true });
    expect(c.respond('s2c', 2, 1300)?.request.id).toBe(2);
  });

  it('McpSession logs the aged-out request as evicted, once', () => {
    const records: RecordDraft[] = [];
    const session = new McpSession({ sink: { write: (d) => records.push(d) - 1 }, stdio: true, maxPendingAgeMs: 1000 });
    const frame = (id: number, mono: number) => {
      const text = JSON.stringify({ jsonrpc: '2.0', id, method: 'tools/call', params: { name: 'slow' } });
      return { dir: 'c2s' as const, bytes: Buffer.from(text), size: text.length, truncated: false, time: mono, mono };
    };
    session.observe(frame(1, 0));
    session.observe(frame(2, 5000));
    const evicted = records.filter((r) => r.kind === 'evicted');
    expect(evicted).toHaveLength(1);
    expect(evicted[0]).toMatchObject({ requests: [{ id: 1, ageMs: 5000, tool: 'slow' }] });
    session.end(6000, 6000);
    expect(records.filter((r) => r.kind === 'pending').map((r) => (r as { id: number }).id)).toEqual([2]);
  });
});
