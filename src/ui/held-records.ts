/**
 * The records the live view holds (and sends to a page that connects): the newest, in time order, within a
 * count and a budget of bytes of their log lines, so a folder of any size costs the server a bounded
 * memory. What was let go is counted, for the page and the start-up line to say.
 */
import type { LogRecord } from '../log/schema.js';
import type { TailRecords } from './tail.js';

export class HeldRecords {
  records: LogRecord[] = [];
  private bytes: number[] = [];
  private total = 0;
  /** Bytes of the lines of records let go (the oldest first) to stay within the bounds. */
  leftOutBytes = 0;

  constructor(
    readonly maxRecords: number,
    readonly maxBytes: number,
  ) {}

  /**
   * Take one look's records (several files, each in file order), put in time order in place; keep the list
   * ordered by time as readLogs would.
   */
  add(fresh: TailRecords): void {
    if (fresh.records.length === 0) return;
    const order = fresh.records.map((_, i) => i).sort((a, b) => fresh.records[a]!.time - fresh.records[b]!.time || fresh.records[a]!.seq - fresh.records[b]!.seq);
    fresh.records = order.map((i) => fresh.records[i]!);
    fresh.bytes = order.map((i) => fresh.bytes[i]!);
    const last = this.records[this.records.length - 1];
    // A loop, not push(...fresh): one look at a folder of many logs can bring more records than a call takes.
    for (let i = 0; i < fresh.records.length; i++) {
      this.records.push(fresh.records[i]!);
      this.bytes.push(fresh.bytes[i]!);
      this.total += fresh.bytes[i]!;
    }
    if (last && fresh.records[0]!.time < last.time) this.sort();
    this.trim();
  }

  private sort(): void {
    const order = this.records.map((_, i) => i).sort((a, b) => this.records[a]!.time - this.records[b]!.time);
    this.records = order.map((i) => this.records[i]!);
    this.bytes = order.map((i) => this.bytes[i]!);
  }

  /** Let go of the oldest until both bounds hold. */
  private trim(): void {
    let drop = Math.max(0, this.records.length - this.maxRecords);
    let total = this.total;
    for (let i = 0; i < drop; i++) total -= this.bytes[i]!;
    while (total > this.maxBytes && drop < this.records.length - 1) total -= this.bytes[drop++]!;
    if (drop === 0) return;
    this.records = this.records.slice(drop);
    this.bytes = this.bytes.slice(drop);
    this.leftOutBytes += this.total - total;
    this.total = total;
  }
}
