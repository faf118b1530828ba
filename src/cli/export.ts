/**
 * `mcptap export --format har|otlp [-o FILE] [--endpoint URL] LOG_OR_DIR...`: logs into the tools people already
 * use — a HAR archive for browser devtools and HAR viewers, or OTLP/JSON spans for a tracing backend (written to
 * a file or stdout, or posted to an OTLP/HTTP receiver).
 */
import { writePrivateFile } from '../log/open-file.js';
import { buildSpans } from '../export/otlp-spans.js';
import { writeHar } from '../export/har.js';
import { linkTrace } from '../trace/link.js';
import { readLogRecords, streamLogRecords } from './read-logs.js';
import { Output } from './output.js';
import { sendSpans } from '../export/otlp-live.js';
import { McptapError } from '../types.js';
import { fail, logPaths, printNote, type RegisterCommand } from './shared.js';
import { startProgress } from './progress.js';

/** The formats of `export`. */
export const EXPORT_FORMATS = ['har', 'otlp'] as const;
export type ExportFormat = (typeof EXPORT_FORMATS)[number];

export const registerExport: RegisterCommand = (cli) =>
  cli.command(
    'export [logs..]',
    'Export logs as HAR (browser devtools, HAR viewers) or OpenTelemetry spans (OTLP/JSON)',
    (y) =>
      y
        .positional('logs', { type: 'string', array: true, describe: 'Log files or folders of logs' })
        .option('format', {
          alias: 'f',
          choices: EXPORT_FORMATS,
          demandOption: 'for example --format har (for browser devtools) or --format otlp (OpenTelemetry spans)',
          describe: 'har: a HAR 1.2 archive (one entry per HTTP exchange and per stdio MCP call); otlp: OTLP/JSON spans (one per MCP request and per LLM call, tool round trips joined)',
        })
        .option('out', { alias: 'o', type: 'string', describe: 'Write to this file instead of stdout' })
        .option('endpoint', { type: 'string', describe: 'otlp only: post the spans to this OTLP/HTTP receiver (e.g. http://127.0.0.1:4318) instead of printing them' })
        .option('window', { type: 'number', describe: 'Seconds after a model reply within which the tools/call that ran it must start (default 120)' })
        .example('$0 export --format har -o session.har logs/', 'Open session.har in Chrome DevTools (Network → Import HAR)')
        .example('$0 export --format otlp -o spans.json logs/', 'OTLP/JSON to post to any OTLP/HTTP collector at /v1/traces')
        .example('$0 export --format otlp --endpoint http://127.0.0.1:4318 logs/', 'Send the spans to a local Jaeger or OpenTelemetry Collector'),
    async (argv) => {
      try {
        const format = argv.format as ExportFormat;
        const endpoint = argv.endpoint as string | undefined;
        if (endpoint !== undefined && format !== 'otlp') throw new McptapError('BAD_FLAG', '--endpoint goes with --format otlp (HAR is a file: use -o).');
        const window = argv.window as number | undefined;
        if (window !== undefined && (!Number.isFinite(window) || window < 0)) {
          throw new McptapError('BAD_FLAG', `--window must be a number of seconds (0 or more), not ${String(argv.window)}.`);
        }
        const linkOptions = window !== undefined ? { windowMs: window * 1000 } : {};
        const progress = startProgress();
        const out = argv.out as string | undefined;
        if (format === 'har' && endpoint === undefined) {
          // HAR streams: each entry is written once its exchange is over.
          const stream = await streamLogRecords(logPaths(argv, 'export'), { progress: progress.read });
          const output = Output.to(out);
          const done = await writeHar(stream.records, output);
          await output.close();
          progress.done();
          if (out !== undefined) process.stderr.write(`mcptap: wrote ${format} of ${done.records} records to ${out}\n`);
          return;
        }
        const records = await readLogRecords(logPaths(argv, 'export'), { progress: progress.read });
        progress.phase(`exporting ${records.length.toLocaleString('en')} records`);
        if (endpoint !== undefined) {
          const spans = buildSpans(records, linkTrace(records, { ...linkOptions, onNote: printNote }));
          await sendSpans(endpoint, spans);
          process.stderr.write(`mcptap: sent ${spans.length} spans from ${records.length} records to ${endpoint}\n`);
          return;
        }
        // The OpenTelemetry serializer costs ~200 ms to load: only this command, and only this format, pays it.
        const text = `${(await import('../export/otlp.js')).formatOtlp(records, { ...linkOptions, onNote: printNote })}\n`;
        progress.done();
        if (out !== undefined) {
          await writePrivateFile(out, text);
          process.stderr.write(`mcptap: wrote ${format} of ${records.length} records to ${out}\n`);
        } else {
          process.stdout.write(text);
        }
      } catch (error) {
        fail(error);
      }
    },
  );
