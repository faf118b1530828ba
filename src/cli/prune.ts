/**
 * `mcptap prune --older-than 7d [--yes] [LOG_DIR]`: list the logs older than the given age in the folder and its
 * subfolders; with --yes, delete them. A dry run by default, because a deleted log cannot come back. The folder
 * is a word, as for view and check (`--log-dir DIR` also works, as for the taps).
 */
import { resolveLogDir } from '../log/location.js';
import { deleteLogs, findOldLogs, parseDuration } from '../prune.js';
import { McptapError } from '../types.js';
import { fail, type RegisterCommand } from './shared.js';

export const registerPrune: RegisterCommand = (cli) =>
  cli.command(
    'prune [logDir]',
    'Delete logs older than an age, in the folder and its subfolders (a dry run unless --yes)',
    (y) =>
      y
        .positional('logDir', { type: 'string', describe: 'The log folder (default: as for wrapping: $MCPTAP_LOG_DIR, else ./logs, else the per-user folder)' })
        .option('older-than', { type: 'string', demandOption: 'for example --older-than 7d (the logs last written more than a week ago)', describe: 'Age of the logs to delete: 30m, 12h, 7d, 2w' })
        .option('log-dir', { type: 'string', describe: 'The log folder, as a flag (the same as giving it as a word)' })
        .option('yes', { alias: 'y', type: 'boolean', default: false, describe: 'Delete them (without it, only list what would go)' })
        .example('$0 prune --older-than 7d', 'List the logs in ./logs older than a week')
        .example('$0 prune --older-than 2w /tmp/mcp-logs', 'The same for another folder')
        .example('$0 prune --older-than 7d --yes', 'Delete them'),
    async (argv) => {
      try {
        const olderThan = String(argv['older-than']);
        const ms = parseDuration(olderThan);
        const given = [argv.logDir, argv['log-dir']].filter((d): d is string => typeof d === 'string');
        if (given.length === 2 && given[0] !== given[1]) throw new McptapError('BAD_USAGE', `give one log folder, not two (${given[0]} and ${given[1]}).`);
        const dir = resolveLogDir(given[0]);
        const old = await findOldLogs(dir, ms);
        const total = formatBytes(old.reduce((sum, l) => sum + l.bytes, 0));
        if (old.length === 0) {
          process.stdout.write(`No logs older than ${olderThan} in ${dir}.\n`);
          return;
        }
        if (!argv.yes) {
          process.stdout.write(`${old.length} log${old.length === 1 ? '' : 's'} older than ${olderThan} in ${dir} (${total}) would be deleted:\n`);
          for (const log of old) process.stdout.write(`  ${log.file}  ${formatBytes(log.bytes)}  ${new Date(log.mtimeMs).toISOString()}\n`);
          process.stdout.write('Nothing was deleted. Run again with --yes to delete them.\n');
          return;
        }
        const { deleted, failed } = await deleteLogs(old);
        process.stdout.write(`Deleted ${deleted.length} log${deleted.length === 1 ? '' : 's'} older than ${olderThan} from ${dir} (${formatBytes(deleted.reduce((s, l) => s + l.bytes, 0))}).\n`);
        for (const f of failed) process.stderr.write(`mcptap: could not delete ${f.file} (${f.message}).\n`);
        if (failed.length > 0) process.exitCode = 1;
      } catch (error) {
        fail(error, 2);
      }
    },
  );

function formatBytes(n: number): string {
  if (n < 1024) return `${n} B`;
  if (n < 1024 * 1024) return `${(n / 1024).toFixed(1)} KB`;
  return `${(n / 1024 / 1024).toFixed(1)} MB`;
}
