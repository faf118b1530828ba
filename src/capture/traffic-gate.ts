/**
 * When the inspection thread does its work: in the pauses of the traffic, not during a burst of it.
 *
 * On a small machine the thread's work competes with the relay, the client and the server for the cores, and a
 * nice value does not keep it out of their way (measured on 2 cores, seven 2000-chunk HTTP streams back to back
 * at nice 10: 1.26–1.34x a bare proxy's time; with the thread waiting for a pause, 1.21–1.23x; two A/B runs).
 * The kernel's idle scheduling class keeps it out of their way (64 KiB stdio frames: 0.73–0.77x a bare relay
 * against 0.62–0.70x), but a thread there runs only when nothing else wants a core, so the log would stall behind
 * a busy machine (an Ollama model answering on the CPU), and without privileges the thread could never leave it.
 * So the thread waits, by itself, while the relay is still posting copies, and catches up once it pauses,
 * within bounds:
 *
 * - a pause is QUIET_MS without a call posted: a model streaming tokens pauses between them;
 * - work begun in a pause stops as soon as the traffic starts again (stopsFor);
 * - the thread never waits longer than MAX_WAIT_MS in all (from its first wait since it last caught up), nor
 *   while more than its tap's `holdBackBytes` of copies wait for it (at most half the tap's backlog bound, so
 *   that much is still free before the tap would skip copies), nor while MAX_WAITING_CALLS calls do: a session
 *   that never pauses is logged at most that late, and its backlog stays bounded;
 * - a call someone waits on (the end of input, the tap's close) is carried out at once.
 *
 * Bursts are what MCP and LLM traffic is made of (a tool result, a model's answer, then a pause while someone
 * reads or a model thinks), so the bounds are sized for a burst to pass whole before the thread starts: tens of
 * MB on stdio, a run of model turns on HTTP. Measured on 2 cores against a bare relay, six alternating rounds of
 * the benchmark's 512 pipelined 64 KiB stdio frames: 0.82x warmed up and 0.83x fresh, against 0.80x and 0.77x
 * with the bounds at 200 ms and 1 MiB (a thread that did no work at all: 0.84–0.90x); sequential round trips
 * 1.04x and 0.90x against 0.88x and 0.82x.
 *
 * Pure: the worker feeds it the clock, how long ago the last call was posted, and what is pending.
 */

/** No call posted for this long: the traffic has paused. */
export const QUIET_MS = 5;
/** The longest the thread waits for pauses (from its first wait since it last caught up) before it catches up anyway. */
export const MAX_WAIT_MS = 1000;
/**
 * Calls waiting past this many are worked on at once, pause or not. Small frames come many to a megabyte, and
 * the byte bound alone would let a second of them wait; a process that then exits (a crash, process.exit) gives
 * the thread half a second to write what it has (inspection-worker.ts), and the thread carries out about this
 * many calls in that time (15.6–28.1 µs of its CPU per chunk of a token stream, 2 cores). Measured, a library
 * host relaying ping frames through `cat` over 0.9 s and calling process.exit once all were echoed: of 20,000
 * frames all were logged with this bound, and 18,800 and 20,000 without it, as with the bounds of 200 ms and
 * 1 MiB before (two runs each); of 30,000 (one run each), 21,000–21,600 a direction with it, 20,400–20,815
 * without, 18,000 with the bounds before.
 */
export const MAX_WAITING_CALLS = 16 * 1024;
/** Longest interval between two looks at the traffic while waiting (the looks back off from QUIET_MS). */
const MAX_LOOK_MS = 40;
/** The last wait's length before a row of waits begins: half of QUIET_MS, so that the first wait is QUIET_MS. */
const NO_WAIT_YET = QUIET_MS / 2;

export interface TrafficNow {
  /** The clock, in ms. */
  now: number;
  /** How long ago the relay last posted a call, in ms. */
  sinceLastPost: number;
  /** Bytes of copies pending on the thread. */
  pendingBytes: number;
  /** Calls pending on the thread. */
  pendingCalls: number;
  /** A pending call is one someone waits on. */
  urgent: boolean;
}

export class TrafficGate {
  /** `holdBackBytes`: copies waiting past this size are worked on at once, pause or not. */
  constructor(private readonly holdBackBytes: number) {}

  /** When the thread started waiting, while it waits. */
  private waitingSince: number | undefined;
  /** Set once a wait ended without a pause: everything pending is then carried out before waiting again. */
  private catchingUp = false;
  /** The last wait's length: each wait in a row is twice the one before, up to MAX_LOOK_MS. */
  private lastWait = NO_WAIT_YET;

  /** How long to wait before carrying out the next slice of pending calls: 0 to carry it out now. */
  waitBeforeWork(traffic: TrafficNow): number {
    if (this.catchingUp || traffic.urgent) return 0;
    if (traffic.pendingBytes >= this.holdBackBytes || traffic.pendingCalls >= MAX_WAITING_CALLS || (this.waitingSince !== undefined && traffic.now - this.waitingSince >= MAX_WAIT_MS)) {
      this.catchingUp = true;
      return 0;
    }
    if (traffic.sinceLastPost >= QUIET_MS) {
      // A wait cut short by the traffic's return (stopsFor) looks again soon: its next pause may be as short.
      this.lastWait = NO_WAIT_YET;
      return 0;
    }
    if (this.waitingSince === undefined) this.waitingSince = traffic.now;
    this.lastWait = Math.min(2 * this.lastWait, MAX_LOOK_MS);
    // Look again no sooner than the traffic could have paused (a wait is QUIET_MS at least), and never past
    // MAX_WAIT_MS in all.
    return Math.max(1, Math.min(this.lastWait, MAX_WAIT_MS - (traffic.now - this.waitingSince)));
  }

  /**
   * Whether work begun in a pause should stop, the traffic having started again (the thread looks every few
   * calls): a slice of 512 calls took the thread 9–57 ms (logged over 2000-chunk HTTP streams, each about as
   * long), and work begun in a pause between two bursts ran on into the second. Catching up, or carrying out a
   * call someone waits on, goes on.
   */
  stopsFor(traffic: Pick<TrafficNow, 'sinceLastPost' | 'urgent'>): boolean {
    return !this.catchingUp && !traffic.urgent && traffic.sinceLastPost < QUIET_MS;
  }

  /** Nothing is pending any more: the next calls may wait for a pause again, for MAX_WAIT_MS from their first wait. */
  caughtUp(): void {
    this.catchingUp = false;
    this.waitingSince = undefined;
    this.lastWait = NO_WAIT_YET;
  }
}
