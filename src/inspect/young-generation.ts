/**
 * Keeping each thread's young generation (V8's nursery for new objects) at its starting size, and collecting it
 * early, for mcptap's own processes.
 *
 * A relay allocates a little JS per chunk and much more outside the JS heap: each read's bytes live in an
 * ArrayBuffer that is freed only once a collection finds its small handle dead. Under a fast stream V8 grows a
 * busy thread's young generation from 1 MB per half to 16 MB, so collections come rarely and the bytes pile up
 * on every thread. Measured, `mcptap http` relaying 1 GiB: 175–193 MB peak RSS as V8 has it, 140–161 MB with
 * the young generation kept small, at the same rate.
 *
 * Even at 1 MB a half, the relay's thread collected rarely: during that stream the chunks' buffers awaiting
 * collection on it swung between 3 and 48 MB (process.memoryUsage().arrayBuffers; some 750 chunks of 64 KiB).
 * V8 also collects a young generation as a task of its own once it is --minor-gc-task-trigger percent full (80
 * by default). At 20 they peaked at 40 MB in the same measurement, and the stream's peak RSS came down by about
 * 8 MB (148.0–153.4 MB against 158.2–162.4, three runs each).
 *
 * V8's flags belong to the process, and V8 resets the growth factor to its default whenever it sets up a heap,
 * which it does for every worker thread (measured: set on the main thread before the inspection thread started,
 * the main thread's young generation still grew to 16 MB). So the inspection thread sets both flags, once its
 * heap is set up, for both threads. The CLI only asks for it: a library user's process is left as it is, and
 * the main thread never loads node:v8 (6–7 ms while the server starts).
 */

let asked = false;

/** The CLI asks that inspection threads started from now on keep young generations small (see above). */
export function keepYoungGenerationSmall(): void {
  asked = true;
}

/** True when the CLI asked for small young generations (the inspection thread then applies it). */
export function youngGenerationKeptSmall(): boolean {
  return asked;
}

/** How full (percent) a young generation is when V8 collects it as a task of its own. */
const MINOR_GC_TASK_TRIGGER = 20;

/**
 * Keep young generations small and collect them early, in every thread of the process: for an inspection
 * thread, once it runs.
 */
export async function keepYoungGenerationsSmallNow(): Promise<void> {
  const { setFlagsFromString } = await import('node:v8');
  setFlagsFromString('--semi-space-growth-factor=1');
  setFlagsFromString(`--minor-gc-task-trigger=${MINOR_GC_TASK_TRIGGER}`);
}
