/**
 * No orphans, even when mcptap is SIGKILLed (Node has no PR_SET_PDEATHSIG). The kernel closes mcptap's pipes,
 * so a server that exits on stdin EOF goes by itself; for the others a tiny `/bin/sh` blocks reading a pipe only
 * mcptap holds: `done` means mcptap ended normally, EOF without it that mcptap is gone, and the watchdog ends the
 * server's process group (SIGTERM, the grace period, SIGKILL). It has its own process group, so a Ctrl-C meant
 * for mcptap does not reach it; POSIX only.
 */
import { spawn, type ChildProcess } from 'node:child_process';
import type { Socket } from 'node:net';

/** `$1` is the process group, `$2` the grace period in whole seconds. */
const SCRIPT = [
  'read -r word',
  '[ "$word" = done ] && exit 0',
  'kill -s TERM -- "-$1" 2>/dev/null || exit 0',
  'sleep "$2"',
  'kill -s 0 -- "-$1" 2>/dev/null || exit 0',
  'kill -s KILL -- "-$1" 2>/dev/null',
  'exit 0',
].join('\n');

/** A running watchdog. */
export interface Watchdog {
  readonly pid: number | undefined;
  /** mcptap is ending normally (the server has exited): the watchdog leaves without killing anything. */
  release(): void;
}

/**
 * Watch over the process group `pgid` (the wrapped server's, which it leads). Returns undefined where a
 * watchdog cannot run (Windows, or no /bin/sh); the server's closed stdin is then the only signal.
 */
export function startWatchdog(pgid: number, graceMs: number): Watchdog | undefined {
  if (process.platform === 'win32') return undefined;
  let dog: ChildProcess;
  try {
    dog = spawn('/bin/sh', ['-c', SCRIPT, 'mcptap-watchdog', String(pgid), String(Math.max(1, Math.ceil(graceMs / 1000)))], {
      stdio: ['pipe', 'ignore', 'ignore'],
      detached: true,
    });
  } catch {
    return undefined;
  }
  dog.on('error', () => {});
  const stdin = dog.stdin!;
  stdin.on('error', () => {});
  // The watchdog must never keep mcptap alive: neither the process nor its pipe holds the event loop.
  dog.unref();
  (stdin as unknown as Socket).unref?.();
  let released = false;
  return {
    pid: dog.pid,
    release() {
      if (released) return;
      released = true;
      try {
        stdin.end('done\n');
      } catch {
        // already gone
      }
    },
  };
}
