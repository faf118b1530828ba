/**
 * `mcptap view LOG_OR_DIR...`: a readable, coloured timeline of one or more logs, merged by time.
 */
import { readAllRecords, formatPretty } from '../index.js';
import { fail, wantColor, type RegisterCommand } from './shared.js';

export const registerView: RegisterCommand = (cli) =>
  cli.command(
    'view <logs..>',
    'Show logs as one timeline, merged by time',
    (y) =>
      y
        .positional('logs', { type: 'string', array: true, describe: 'Log files or folders of logs' })
        .option('color', { type: 'boolean', describe: 'Colour the output (default: when stdout is a terminal; --no-color to turn off)' })
        .option('relative', { type: 'boolean', default: false, describe: 'Show times since the first record' })
        .example('$0 view logs/', 'Every log in ./logs as one timeline')
        .example('$0 view --no-color logs/weather-*.ndjson | less', 'Plain text for a pager'),
    async (argv) => {
      try {
        const problems: string[] = [];
        const records = await readAllRecords(argv.logs as string[], { onProblem: (p) => problems.push(`${p.file}:${p.line}: ${p.message}`) });
        const lines = formatPretty(records, { color: wantColor(argv.color as boolean | undefined), relative: argv.relative as boolean });
        process.stdout.write(lines.length ? `${lines.join('\n')}\n` : '');
        for (const p of problems.slice(0, 5)) process.stderr.write(`mcptap: skipped a line that is not a record: ${p}\n`);
        if (problems.length > 5) process.stderr.write(`mcptap: … and ${problems.length - 5} more such lines\n`);
      } catch (error) {
        fail(error);
      }
    },
  );
