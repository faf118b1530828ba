/**
 * `mcptap check LOG...`: exit 1 when a capture shows what CI should fail on (see check/check.ts for the signals).
 * A one-screen summary by default, `--format junit` for CI systems. Exit 2 when the logs cannot be read.
 */
import { writePrivateFile } from '../log/open-file.js';
import { streamLogRecords } from './read-logs.js';
import { checkStream, formatCheckSummary, formatJunit, parseSignals, CHECK_SIGNALS, DEFAULT_FAIL_ON } from '../check/check.js';
import { McptapError } from '../types.js';
import { fail, logPaths, printNote, wantColor, type RegisterCommand } from './shared.js';
import { startProgress } from './progress.js';

/** Registers `mcptap check`. */
export const registerCheck: RegisterCommand = (cli) =>
  cli.command(
    'check [logs..]',
    'Fail (exit 1) when captures show error responses, invalid frames, unanswered requests or broken round trips',
    (y) =>
      y
        .positional('logs', { type: 'string', array: true, describe: 'Log files or folders of logs' })
        .option('fail-on', {
          // Not an array option: yargs would swallow the log paths after it. Repeating the flag still collects.
          type: 'string',
          default: DEFAULT_FAIL_ON.join(','),
          describe: `Signals that fail the check, comma-separated: ${CHECK_SIGNALS.join(', ')}, or all`,
        })
        .option('format', { type: 'string', choices: ['text', 'junit'], default: 'text', describe: 'A one-screen summary, or JUnit XML for CI systems' })
        .option('output', { alias: 'o', type: 'string', describe: 'Write the report to this file instead of stdout' })
        .option('color', { type: 'boolean', describe: 'Colour the summary (default: when stdout is a terminal)' })
        .example('$0 check logs/', 'Check every log in ./logs')
        .example('$0 check --fail-on errors,unanswered --format junit -o mcptap.xml logs/', 'A JUnit report for CI'),
    async (argv) => {
      let failOn;
      try {
        failOn = parseSignals(([] as string[]).concat(argv['fail-on'] as string | string[]));
      } catch (error) {
        fail(new McptapError('BAD_FLAG', (error as Error).message), 2);
      }
      try {
        const progress = startProgress();
        const stream = await streamLogRecords(logPaths(argv, 'check'), { progress: progress.read, slim: true });
        const { report, notes } = await checkStream(stream.records, { failOn, haveLlm: stream.haveLlm });
        progress.done();
        for (const note of notes) printNote(note);
        const text = argv.format === 'junit' ? formatJunit(report) : formatCheckSummary(report, { color: argv.output ? false : wantColor(argv.color as boolean | undefined) });
        if (typeof argv.output === 'string') await writePrivateFile(argv.output, text);
        else process.stdout.write(text);
        process.exitCode = report.failed ? 1 : 0;
      } catch (error) {
        fail(error, 2);
      }
    },
  );
