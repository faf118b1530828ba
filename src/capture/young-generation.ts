/**
 * Keeping each thread's young generation (V8's nursery for new objects) at its starting size, for mcptap's own
 * processes.
 *
 * A relay allocates a little JS per chunk and much more outside the JS heap: each read's bytes live in an
 * ArrayBuffer that is freed only once a collection finds its small handle dead. Under a fast stream V8 grows a
 * busy thread's young generation from 1 MB per half to 16 MB, so collections come rarely and the bytes pile up
 * on every thread. Measured, `mcptap http` relaying 1 GiB: 175–193 MB peak RSS as V8 has it, 140–161 MB with
 * the young generation kept small, at the same rate.
 *
 * V8's flags belong to the process, and V8 resets this one to its default whenever it sets up a heap, which it
 * does for every worker thread (measured: set on the main thread before the inspection thread started, the main
 * thread's young generation still grew to 16 MB). So the inspection thread sets it, once its heap is set up,
 * for both threads. The CLI only asks for it: a library user's process is left as it is, and the main thread
 * never loads node:v8 (6–7 ms while the server starts).
 */

let asked = false;

/** The CLI asks that inspection threads started from now on stop young generations growing. */
export function keepYoungGenerationSmall(): void {
  asked = true;
}

/** True when the CLI asked for small young generations (the inspection thread then applies it). */
export function youngGenerationKeptSmall(): boolean {
  return asked;
}

/** Stop V8 growing young generations, in every thread of the process: for an inspection thread, once it runs. */
export async function stopYoungGenerationGrowth(): Promise<void> {
  const { setFlagsFromString } = await import('node:v8');
  setFlagsFromString('--semi-space-growth-factor=1');
}
