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
 * does for every worker thread (measured: set before the inspection thread started, the main thread's young
 * generation still grew to 16 MB). So the CLI sets it, and each inspection thread sets it again once it runs.
 * A library user's process is left as it is: only the CLI calls keepYoungGenerationSmall.
 */
import { setFlagsFromString } from 'node:v8';

let keptSmall = false;

/** Stop V8 growing young generations, in this process, from now on (and in inspection threads started later). */
export function keepYoungGenerationSmall(): void {
  keptSmall = true;
  setFlagsFromString('--semi-space-growth-factor=1');
}

/** True when the CLI asked for small young generations: inspection threads then ask again once they run. */
export function youngGenerationKeptSmall(): boolean {
  return keptSmall;
}
