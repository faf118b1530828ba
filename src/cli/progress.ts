/**
 * A progress line on stderr for reading commands whose work runs past a couple of seconds (a log of hundreds of
 * megabytes): how much of the logs is read, then what is being done with them. Only on a terminal, never in a
 * pipe or a CI log, and wiped when the work is done so the output is what it would be without it.
 */
import type { ReadProgress } from '../log/reader.js';

/** Work shorter than this shows nothing. */
const QUIET_MS = 2000;
const EVERY_MS = 250;

export interface Progress {
  /** Hand this to the reader (ReadLogsOptions.progress). */
  read: ReadProgress;
  /** Say what comes after the reading ("linking the trace"). */
  phase(text: string): void;
  /** Wipe the line and stop. */
  done(): void;
}

export function startProgress(stream: NodeJS.WriteStream = process.stderr): Progress {
  const read: ReadProgress = { total: 0, read: 0 };
  let phase: string | undefined;
  let shown = false;
  const draw = (): void => {
    const text = phase ?? `reading logs: ${read.total > 0 ? Math.min(99, Math.floor((read.read / read.total) * 100)) : 0}% of ${megabytes(read.total)}`;
    stream.write(`\r\u001b[Kmcptap: ${text}…`);
    shown = true;
  };
  let timer: NodeJS.Timeout | undefined;
  const start = stream.isTTY ? setTimeout(() => {
    draw();
    timer = setInterval(draw, EVERY_MS).unref();
  }, QUIET_MS).unref() : undefined;
  return {
    read,
    phase(text) {
      phase = text;
      if (shown) draw();
    },
    done() {
      clearTimeout(start);
      clearInterval(timer);
      if (shown) stream.write('\r\u001b[K');
    },
  };
}

function megabytes(bytes: number): string {
  return bytes >= 1024 * 1024 ? `${(bytes / 1024 / 1024).toFixed(0)} MB` : `${(bytes / 1024).toFixed(0)} KB`;
}
