/**
 * `mcptap diff A B`: tools added, removed or changed; calls whose outcome changed; latency regressions.
 * `--exit-code` exits 1 when there are differences (as `git diff --exit-code`), for CI. Exit 2 on unreadable logs.
 */
import { streamLogRecords } from './read-logs.js';
import { diffStreams, formatDiff, hasDifferences } from '../check/diff.js';
import type { LogRecord } from '../log/schema.js';
import { McptapError } from '../types.js';
import { fail, type RegisterCommand } from './shared.js';

/** Registers `mcptap diff`. */
export const registerDiff: RegisterCommand = (cli) =>
  cli.command(
    'diff [a] [b]',
    'Compare two captures of an MCP server: tools, call outcomes, latency',
    (y) =>
      y
        .positional('a', { type: 'string', describe: 'The earlier capture (a log file or a folder of logs)' })
        .positional('b', { type: 'string', describe: 'The later capture' })
        .option('exit-code', { type: 'boolean', default: false, describe: 'Exit 1 when the captures differ' })
        .option('threshold', { type: 'number', default: 50, describe: 'Latency regression: percent by which the median must grow' })
        .option('min-ms', { type: 'number', default: 20, describe: 'Latency regression: milliseconds by which it must grow too' })
        .option('ignore', { type: 'string', describe: 'JSON fields left out when comparing results (timestamps, ids); repeatable' })
        .option('format', { type: 'string', choices: ['text', 'json'], default: 'text', describe: 'A readable report, or JSON' })
        .example('$0 diff fixtures/v1.ndjson logs/ --exit-code', 'Fail CI when the server changed its tools or answers'),
    async (argv) => {
      try {
        if (typeof argv.a !== 'string' || typeof argv.b !== 'string') fail(new McptapError('BAD_USAGE', 'diff needs two captures, each a log file or a folder of logs, for example: mcptap diff before.ndjson logs/'));
        const report = await diffStreams(records(argv.a as string), records(argv.b as string), { thresholdPct: argv.threshold as number, minMs: argv['min-ms'] as number, ignore: ([] as string[]).concat((argv.ignore as string | string[] | undefined) ?? []) });
        process.stdout.write(argv.format === 'json' ? `${JSON.stringify(report, null, 2)}\n` : formatDiff(report, [argv.a as string, argv.b as string]));
        process.exitCode = argv['exit-code'] && hasDifferences(report) ? 1 : 0;
      } catch (error) {
        fail(error, 2);
      }
    },
  );

/** One capture's records, its files found only when it is read (A's problems are said before B's, as ever). */
async function* records(path: string): AsyncGenerator<LogRecord> {
  yield* (await streamLogRecords([path])).records;
}
