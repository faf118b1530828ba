/**
 * What a reader keeps of a request while it waits for the answer: who sent it, when, and what it asked, without
 * its frame or its sentence. A server that never answers leaves thousands waiting, and a whole record with its
 * frame is most of a kilobyte.
 */
import type { RequestRecord } from './schema.js';

export type RequestHead = Pick<RequestRecord, 'session' | 'label' | 'channel' | 'seq' | 'time' | 'dir' | 'id' | 'method' | 'tool' | 'protocolVersion'>;

export function requestHead(r: RequestRecord): RequestHead {
  return { session: r.session, label: r.label, channel: r.channel, seq: r.seq, time: r.time, dir: r.dir, id: r.id, method: r.method, tool: r.tool, protocolVersion: r.protocolVersion };
}
