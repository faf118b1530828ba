/**
 * What a reading command says about the lines it skipped: one `skipped` sentence per line that is not a record,
 * naming the file, the line and why, for the first five of each file; then how many more. Shared by the CLI's
 * reading commands and the ui server.
 */
import type { LogProblem } from './reader.js';

/** Most `skipped` lines said for one file; the rest are counted. */
const MAX_NOTES_PER_FILE = 5;

export class SkippedLines {
  private readonly perFile = new Map<string, number>();
  /** Lines skipped so far, in every file. */
  total = 0;

  constructor(private readonly note: (sentence: string) => void) {}

  /** For ReadLogsOptions.onProblem. */
  readonly add = (problem: LogProblem): void => {
    this.total++;
    const seen = (this.perFile.get(problem.file) ?? 0) + 1;
    this.perFile.set(problem.file, seen);
    if (seen <= MAX_NOTES_PER_FILE) this.note(`skipped ${problem.file}:${problem.line}: ${problem.message}.`);
  };

  /** Say how many more lines of each file were skipped than were named. */
  finish(): void {
    for (const [file, seen] of this.perFile) {
      if (seen > MAX_NOTES_PER_FILE) this.note(`skipped ${seen - MAX_NOTES_PER_FILE} more lines of ${file} that are not records.`);
      this.perFile.set(file, Math.min(seen, MAX_NOTES_PER_FILE));
    }
  }
}
