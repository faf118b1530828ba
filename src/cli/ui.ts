/**
 * `mcptap ui [--listen PORT] [LOG_DIR]`: the live view. Serves a page on 127.0.0.1 that shows every session in
 * the log folder — the past ones at once, running ones as they happen. A thin layer over startUiServer.
 */
import { statSync } from 'node:fs';
import { dirname } from 'node:path';
import { resolveLogDir } from '../log/location.js';
import { megabytes, startUiServer } from '../ui/server.js';
import { McptapError } from '../types.js';
import { fail, type RegisterCommand } from './shared.js';

/**
 * A live view follows a folder that may not exist yet (`mcptap ui logs/`, then the agent): a missing one is said
 * once and waited for, as the default folder is. A file is refused (exit 2): `view` is what reads one log.
 */
function checkFolder(given: string, logDir: string): void {
  let info;
  try {
    info = statSync(logDir);
  } catch {
    process.stderr.write(`mcptap: there is no folder at ${given} yet; the view shows its logs as soon as a tap writes there.\n`);
    return;
  }
  if (!info.isDirectory()) {
    throw new McptapError('NOT_A_LOG', `${given} is not a folder: mcptap ui follows a folder of logs (give ${dirname(logDir)}); to read one log, use mcptap view ${given}.`);
  }
}

export const registerUi: RegisterCommand = (cli) =>
  cli.command(
    'ui [logDir]',
    'Open a live view of the log folder in your browser: timeline, round trips, sequence diagram, filters, each frame\u2019s JSON',
    (y) =>
      y
        .positional('logDir', { type: 'string', describe: 'The log folder the taps write to (default: $MCPTAP_LOG_DIR, else ./logs, else the per-user folder)' })
        .option('listen', { type: 'string', default: '7007', describe: 'Where the page is served: PORT (on 127.0.0.1) or HOST:PORT; 0 picks a free port' })
        .example('$0 ui', 'Follow ./logs at http://127.0.0.1:7007/')
        .example('$0 ui --listen 0 /tmp/mcp-logs', 'Any free port, another folder'),
    async (argv) => {
      let server;
      try {
        const logDir = resolveLogDir(argv.logDir as string | undefined);
        if (argv.logDir !== undefined) checkFolder(argv.logDir as string, logDir);
        server = await startUiServer({ logDir, listen: String(argv.listen) });
      } catch (error) {
        fail(error);
      }
      const left = server.leftOutBytes > 0 ? `; the older ${megabytes(server.leftOutBytes)} MB of the logs left out, as the view holds their newest ${megabytes(server.maxBytes)} MB (mcptap view reads them all)` : '';
      process.stderr.write(`mcptap: live view of ${server.logDir} at ${server.url} (${server.records} past records${left}); Ctrl-C to stop\n`);
      let stopping = false;
      const stop = (): void => {
        if (stopping) return;
        stopping = true;
        void server.close().then(() => process.exit(0));
      };
      process.on('SIGINT', stop);
      process.on('SIGTERM', stop);
      process.on('SIGHUP', stop);
    },
  );
