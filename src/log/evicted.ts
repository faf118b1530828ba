/**
 * An `evicted` record (log format v6) as the `pending` records it stands for: one per request, as v5 wrote
 * them, so that check, trace and the exports settle each evicted request as they did. Pure.
 */
import { describePending, describeSubscriptionEnd } from '../session/annotate.js';
import { LEVEL, type EvictedRecord, type PendingRecord } from './schema.js';

export function pendingOfEvicted(r: EvictedRecord): PendingRecord[] {
  return r.requests.map((e) => {
    const subscription = e.method === 'subscriptions/listen';
    const pending: PendingRecord = {
      v: r.v,
      time: r.time,
      seq: r.seq,
      session: r.session,
      channel: r.channel,
      label: r.label,
      kind: 'pending',
      dir: e.dir,
      id: e.id,
      method: e.method,
      requestSeq: e.requestSeq,
      ageMs: e.ageMs,
      evicted: true,
      level: e.cancelled || subscription ? LEVEL.info : LEVEL.warn,
      msg: subscription ? describeSubscriptionEnd(e, e.ageMs, 'evicted') : describePending(e, e.ageMs, 'evicted'),
    };
    if (e.tool !== undefined) pending.tool = e.tool;
    if (e.cancelled) pending.cancelled = true;
    if (subscription) pending.subscription = true;
    if (r.redacted) pending.redacted = true;
    return pending;
  });
}
