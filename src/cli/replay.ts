/**
 * `mcptap replay LOG... [--match params|sequential|strict]`: stand in for the recorded MCP server over stdio.
 * `mcptap replay LOG... --listen [HOST:]PORT`: serve the recorded HTTP exchanges (MCP, Ollama, OpenAI, JSON).
 * A thin layer over the replay API: flags in, exit code out.
 */
import type { Argv } from 'yargs';
import { startStdioReplay } from '../replay/stdio-server.js';
import { startHttpReplay, parseListen } from '../replay/http-server.js';
import { MATCH_MODES, type MatchMode } from '../replay/match.js';
import { isLoopbackHost } from '../net-safety.js';
import { fail, logPaths, printNote, type RegisterCommand } from './shared.js';
import { SkippedLines } from './read-logs.js';

function options(y: Argv): Argv {
  return y
    .positional('logs', { type: 'string', array: true, describe: 'Log files or folders holding the capture' })
    .option('match', { type: 'string', choices: MATCH_MODES as string[], default: 'params', describe: 'stdio: pair live requests with recorded ones by method and params (falling back to recorded order), by order only, or strictly both' })
    .option('session', { type: 'string', describe: 'stdio: which recorded MCP session to replay, when the logs hold several' })
    .option('listen', { type: 'string', describe: 'Serve recorded HTTP exchanges on [HOST:]PORT instead of stdio (HOST defaults to 127.0.0.1; port 0 picks a free one)' })
    .option('speed', { type: 'number', default: 1, describe: 'Play the recorded pauses (server answers, streamed chunks) this many times faster' })
    .option('delay', { type: 'boolean', default: true, describe: 'Keep the recorded pauses (--no-delay answers at once)' })
    .option('ignore', { type: 'string', describe: 'HTTP: JSON fields to leave out when matching bodies (timestamps, request ids); repeatable' })
    .example('$0 replay fixtures/captures/mcp-stdio/everything-sdk.ndjson', 'Act as the recorded server for a stdio client')
    .example('"command": "npx", "args": ["-y", "mcptap", "replay", "weather.ndjson"]', 'In an mcpServers entry, instead of the real server')
    .example('$0 replay logs/ollama-*.ndjson --listen 11434 --no-delay', 'Serve a recorded Ollama conversation to an agent')
    .check((argv) => {
      if (!Number.isFinite(argv.speed as number) || (argv.speed as number) <= 0) throw new Error(`--speed must be a number above 0, not ${String(argv.speed)}.`);
      return true;
    });
}

async function run(argv: Record<string, unknown>): Promise<void> {
  const logs = logPaths(argv, 'replay');
  const skipped = new SkippedLines(printNote);
  try {
    if (typeof argv.listen === 'string') {
      const listen = parseListen(argv.listen);
      if (!isLoopbackHost(listen.host)) {
        process.stderr.write(`mcptap: serving the capture on ${listen.host}, not only this machine: anyone who can reach port ${listen.port} can read what was recorded. Use --listen ${listen.port} (127.0.0.1) unless you mean it.\n`);
      }
      const server = await startHttpReplay({
        logs,
        listen,
        speed: argv.speed as number,
        noDelay: argv.delay === false,
        ignore: ([] as string[]).concat((argv.ignore as string | string[] | undefined) ?? []),
        onNote: printNote,
        onProblem: skipped.add,
      });
      skipped.finish();
      process.stderr.write(`mcptap: replaying ${server.exchanges} recorded HTTP exchanges at ${server.url}\n`);
      const stop = (): void => {
        void server.close().then(() => process.exit(0));
      };
      process.on('SIGINT', stop);
      process.on('SIGTERM', stop);
      return;
    }
    const replay = await startStdioReplay({
      logs,
      match: argv.match as MatchMode,
      speed: argv.speed as number,
      noDelay: argv.delay === false,
      onNote: printNote,
      onProblem: skipped.add,
      ...(typeof argv.session === 'string' ? { session: argv.session } : {}),
    });
    skipped.finish();
    const stats = await replay.done;
    process.stderr.write(
      `mcptap: replay of ${replay.session} ended: ${stats.answered} of ${stats.recordedRequests} recorded requests answered, ${stats.misses} not in the capture.\n`,
    );
    // Let the last frames reach the client before leaving.
    process.stdout.write('', () => process.exit(0));
  } catch (error) {
    skipped.finish();
    fail(error);
  }
}

/** Registers `mcptap replay`. */
export const registerReplay: RegisterCommand = (cli) =>
  cli.command('replay [logs..]', 'Stand in for a recorded MCP server (stdio) or recorded HTTP peers (--listen)', options, (argv) => run(argv));
