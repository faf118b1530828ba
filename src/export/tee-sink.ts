/**
 * Hand the records a tap writes to an observer (the live OTLP exporter), stamped as the log stamps them, so the
 * observer sees the same `seq` and `session` as a later reader of the log (span ids depend on them).
 *
 * The observer runs on the copy path, never on the forwarding path, must return at once, and is switched off
 * the first time it throws: the log and the traffic go on. Without an observer the taps use the plain writer.
 */
import { LEVEL, LOG_FORMAT_VERSION, type LogRecord, type RecordDraft, type RecordSink } from '../log/schema.js';
import type { Channel } from '../types.js';

/** Called with every record a tap writes. Must return quickly and never block. */
export type RecordObserver = (record: LogRecord) => void;

/** What the log writer adds to each draft. */
export interface RecordStamp {
  session: string;
  channel: Channel;
  label: string;
}

function stamped(draft: RecordDraft, seq: number, stamp: RecordStamp): LogRecord {
  return {
    v: LOG_FORMAT_VERSION,
    seq,
    level: LEVEL.info,
    ...draft,
    session: draft.session ?? stamp.session,
    channel: draft.channel ?? stamp.channel,
    label: stamp.label,
  } as LogRecord;
}

/** Wrap `sink` (the log writer) so that `observer` also gets each record, with the `seq` the writer gave it. */
export function teeSink(sink: RecordSink, stamp: RecordStamp, observer: RecordObserver): RecordSink {
  let failed = false;
  return {
    write(draft: RecordDraft): number {
      const seq = sink.write(draft);
      if (failed) return seq;
      try {
        observer(stamped(draft, seq, stamp));
      } catch {
        failed = true;
      }
      return seq;
    },
  };
}
