/**
 * `mcptap export --format har|otlp [-o FILE] [--endpoint URL] LOG_OR_DIR...`: logs into the tools people already
 * use — a HAR archive for browser devtools and HAR viewers, or OTLP/JSON spans for a tracing backend (written to
 * a file or stdout, or posted to an OTLP/HTTP receiver).
 */
import { writeHar } from '../export/har.js';
import { streamLogRecords } from './read-logs.js';
import { Output } from './output.js';
import { openSpanSender } from '../export/otlp-live.js';
import { streamSpans } from '../export/otlp-stream.js';
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
        // Every format streams: each HAR entry, each batch of spans, is written once final.
        const stream = await streamLogRecords(logPaths(argv, 'export'), { progress: progress.read });
        if (format === 'har') {
          const output = Output.to(out);
          const done = await writeHar(stream.records, output);
          await output.close();
          progress.done();
          if (out !== undefined) process.stderr.write(`mcptap: wrote ${format} of ${done.records.toLocaleString('en')} records to ${out}\n`);
          return;
        }
        const spanOptions = { ...linkOptions, haveLlm: stream.haveLlm, onNote: printNote };
        if (endpoint !== undefined) {
          const sender = await openSpanSender(endpoint);
          try {
            const done = await streamSpans(stream.records, (batch) => sender.send(batch), spanOptions);
            progress.done();
            process.stderr.write(`mcptap: sent ${done.spans} spans from ${done.records} records to ${endpoint}\n`);
          } finally {
            await sender.close();
          }
          return;
        }
        // The OpenTelemetry serializer costs ~200 ms to load: only this command, and only this format, pays it.
        const { writeOtlp } = await import('../export/otlp.js');
        const output = Output.to(out);
        const done = await writeOtlp(stream.records, output, spanOptions);
        await output.close();
        progress.done();
        if (out !== undefined) process.stderr.write(`mcptap: wrote ${format} of ${done.records.toLocaleString('en')} records to ${out}\n`);
      } catch (error) {
        fail(error);
      }
    },
  );
