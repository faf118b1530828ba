/**
 * `mcptap http --target URL [--listen [HOST:]PORT]`: put the HTTP tap in front of an MCP server, Ollama or an
 * OpenAI-compatible API. A thin layer over startHttpTap: flags in, a running proxy out, Ctrl-C to stop.
 */
import { dirname } from 'node:path';
import type { Argv } from 'yargs';
import { startHttpTap, DEFAULT_HTTP_MAX_BODY } from '../capture/http.js';
import type { LiveSpanExporter } from '../export/otlp-live.js';
import { fail, type RegisterCommand } from './shared.js';
import { McptapError } from '../types.js';
import { logSafetyFromArgv, logSafetyOptions, NO_REDACT_WARNING } from './log-options.js';
import { redactDefaults } from '../log/redact.js';

function httpOptions(y: Argv): Argv {
  return logSafetyOptions(y)
    .option('target', { type: 'string', demandOption: 'the upstream to forward to, for example --target http://127.0.0.1:11434', describe: 'Upstream base URL (http:// or https://), e.g. http://127.0.0.1:11435' })
    .option('strict-host', { type: 'boolean', default: false, describe: 'Refuse (403) proxied requests whose Host or Origin does not name this proxy, as mcptap\u2019s own pages always do (DNS rebinding)' })
    .option('listen', { type: 'string', describe: 'Where the proxy listens: PORT (binds 127.0.0.1) or HOST:PORT (default: a free port on 127.0.0.1)' })
    .option('log-dir', { type: 'string', describe: 'Folder for the log (default: $MCPTAP_LOG_DIR, else ./logs, else a per-user folder)' })
    .option('name', { type: 'string', describe: "Label for the log file and records (default: the target's host and port)" })
    .option('max-body', { type: 'number', default: DEFAULT_HTTP_MAX_BODY, describe: 'Keep at most this many bytes of one body or frame in the log (traffic is never cut)' })
    .option('chunks', { type: 'boolean', default: true, describe: 'Log every streamed LLM chunk (--no-chunks keeps only the reassembled reply)' })
    .option('otlp-endpoint', { type: 'string', describe: 'Also stream OpenTelemetry spans to this OTLP/HTTP receiver, e.g. http://127.0.0.1:4318 (best-effort, never slows the traffic)' })
    .example('OLLAMA_HOST=127.0.0.1:11435 ollama serve & $0 http --target http://127.0.0.1:11435 --listen 11434', 'Capture every Ollama client unchanged')
    .example('$0 http --target http://127.0.0.1:8000 --listen 8001', 'Tap an MCP server: point the client at http://127.0.0.1:8001/mcp')
    .example('$0 http --target https://api.openai.com/v1 --listen 8080', 'Tap an OpenAI-compatible API: base URL http://127.0.0.1:8080');
}

async function run(argv: Record<string, unknown>): Promise<void> {
  const maxBody = argv['max-body'] as number;
  if (!Number.isFinite(maxBody) || maxBody < 0) {
    fail(new McptapError('BAD_FLAG', `--max-body must be a number of bytes (0 or more), not ${String(argv['max-body'])}.`), 2);
  }
  let tap;
  let live: LiveSpanExporter | undefined;
  try {
    // Loaded only when asked for, as the wrap does: the exporter brings the reader and the trace linker along.
    if (typeof argv['otlp-endpoint'] === 'string') live = (await import('../export/otlp-live.js')).startLiveSpanExporter({ endpoint: argv['otlp-endpoint'] });
    const safety = logSafetyFromArgv(argv);
    if (safety.redact === false) process.stderr.write(`mcptap: ${NO_REDACT_WARNING}\n`);
    tap = await startHttpTap({
      ...safety,
      target: String(argv.target),
      ...(typeof argv.listen === 'string' || typeof argv.listen === 'number' ? { listen: argv.listen } : {}),
      ...(typeof argv['log-dir'] === 'string' ? { logDir: argv['log-dir'] } : {}),
      ...(typeof argv.name === 'string' ? { label: argv.name } : {}),
      maxBody,
      chunks: argv.chunks !== false,
      strictHost: argv['strict-host'] === true,
      ...(live ? { onRecord: live.observe } : {}),
    });
  } catch (error) {
    fail(error, error instanceof McptapError && error.code.startsWith('BAD_') ? 2 : 1);
  }
  live?.joinLogsIn(dirname(tap.logFile), tap.logFile);
  process.stderr.write(`mcptap: listening on ${tap.url}, forwarding to ${redactDefaults(tap.target)}\nmcptap: logging to ${tap.logFile}\n`);
  let stopping = false;
  const stop = (): void => {
    if (stopping) return;
    stopping = true;
    void tap.close().then(async () => {
      await live?.close(1000);
      process.exit(0);
    });
  };
  process.on('SIGINT', stop);
  process.on('SIGTERM', stop);
  process.on('SIGHUP', stop);
}

export const registerHttp: RegisterCommand = (cli) =>
  cli.command('http', 'Reverse-proxy an HTTP server (MCP Streamable HTTP or SSE, Ollama, OpenAI-compatible) and log what passes', httpOptions, (argv) => run(argv));
