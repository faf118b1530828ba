// Waiting until processes have gone idle, so that work a relay still does for an earlier run does not fall on
// the next measurement.
import { readFileSync } from 'node:fs';

/** CPU time (clock ticks) a process has used so far, or undefined where /proc cannot tell (not Linux). */
function cpuTicks(pid) {
  try {
    const stat = readFileSync(`/proc/${pid}/stat`, 'utf8');
    const fields = stat.slice(stat.lastIndexOf(')') + 2).split(' ');
    return Number(fields[11]) + Number(fields[12]);
  } catch {
    return undefined;
  }
}

/** Resolves once none of `pids` has used CPU for 100 ms (at most 10 s; 300 ms where /proc cannot tell). */
export async function untilIdle(pids) {
  const sample = () => pids.map(cpuTicks);
  if (sample().includes(undefined)) return new Promise((r) => setTimeout(r, 300));
  const until = Date.now() + 10_000;
  let last = sample().join();
  for (;;) {
    await new Promise((r) => setTimeout(r, 100));
    const now = sample().join();
    if (now === last || Date.now() > until) return;
    last = now;
  }
}
