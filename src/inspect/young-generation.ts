/**
 * Young generations (V8's nursery) kept at their starting size (for HTTP also collected early) in mcptap's own
 * processes: a relayed chunk's bytes are freed only once a collection finds its handle dead, and under a fast stream V8
 * grows a busy thread's young generation until they pile up (the 1 GiB stream's RSS, docs/benchmarks.md).
 * V8's flags are per process but reset whenever V8 sets up a worker's heap, so the inspection thread sets them
 * once it runs. Only the CLI asks for it; the main thread never loads node:v8.
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
 * Keep young generations small, in every thread of the process (for an inspection thread, once it runs), and
 * collect them early when `collectEarly`: the HTTP relay's memory wants it, while on stdio round trips the
 * early collections cost the relay's thread more than the memory they save is worth.
 */
export async function keepYoungGenerationsSmallNow(collectEarly: boolean): Promise<void> {
  const { setFlagsFromString } = await import('node:v8');
  setFlagsFromString('--semi-space-growth-factor=1');
  if (collectEarly) setFlagsFromString(`--minor-gc-task-trigger=${MINOR_GC_TASK_TRIGGER}`);
}
