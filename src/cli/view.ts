/**
 * `mcptap view [--format pretty|timeline|mermaid|json|html] LOG_OR_DIR...`: one or more logs, merged by time, as
 * a readable timeline with the tool round trips summarized, the round trip as a story, a Mermaid diagram, the
 * linked trace as NDJSON, or a self-contained html page.
 */
import { writeHtmlView, writeJsonView, writeMermaidView, writePrettyView, writeTimelineView } from '../trace/write-view.js';
import { streamLogRecords } from './read-logs.js';
import { Output } from './output.js';
import { McptapError } from '../types.js';
import { fail, logPaths, printNote, wantColor, type RegisterCommand } from './shared.js';
import { fitWidth, terminalWidth } from './fit-width.js';
import { startProgress } from './progress.js';

/** The output formats of `view`. */
export const VIEW_FORMATS = ['pretty', 'timeline', 'mermaid', 'json', 'html'] as const;
export type ViewFormat = (typeof VIEW_FORMATS)[number];

export const registerView: RegisterCommand = (cli) =>
  cli.command(
    'view [logs..]',
    'Show logs as one timeline, merged by time, with the LLM ↔ MCP tool round trips linked',
    (y) =>
      y
        .positional('logs', { type: 'string', array: true, describe: 'Log files or folders of logs' })
        .option('format', {
          alias: 'f',
          choices: VIEW_FORMATS,
          default: 'pretty' as ViewFormat,
          describe:
            'pretty: every record, then the round trips; timeline: the round trip as arrows between User, Host, LLM and servers; mermaid: a sequenceDiagram; json: linked trace lines (NDJSON); html: one self-contained page',
        })
        .option('out', { alias: 'o', type: 'string', describe: 'Write to this file instead of stdout (handy for --format html)' })
        .option('color', { type: 'boolean', describe: 'Colour the output (default: when stdout is a terminal; --no-color to turn off)' })
        .option('relative', { type: 'boolean', default: false, describe: 'Show times since the first record (pretty)' })
        .option('wide', { type: 'boolean', default: false, describe: 'Keep whole lines in a terminal (pretty and timeline lines are cut to its width with …)' })
        .option('window', { type: 'number', describe: 'Seconds after a model reply within which the tools/call that ran it must start (default 120)' })
        .example('$0 view logs/', 'Every log in ./logs as one timeline, round trips at the end')
        .example('$0 view --format json logs/ | grep tool-round-trip', 'Each model tool call linked to its tools/call and feed-back')
        .example('$0 view --format html -o trace.html logs/', 'One page to open in a browser, offline')
        .example('$0 view --no-color logs/weather-*.ndjson | less', 'Plain text for a pager'),
    async (argv) => {
      try {
        const format = argv.format as ViewFormat;
        const window = argv.window as number | undefined;
        if (window !== undefined && (!Number.isFinite(window) || window < 0)) {
          throw new McptapError('BAD_FLAG', `--window must be a number of seconds (0 or more), not ${String(argv.window)}.`);
        }
        const out = argv.out as string | undefined;
        const color = out === undefined && wantColor(argv.color as boolean | undefined);
        const width = out === undefined ? terminalWidth(process.stdout, argv.wide as boolean) : undefined;
        const link = window !== undefined ? { windowMs: window * 1000 } : {};
        const fit = (line: string): string => fitWidth(line, width);
        const progress = startProgress();
        // Every format streams: the records pass through, the linker holds a window of them.
        const stream = await streamLogRecords(logPaths(argv, 'view'), { progress: progress.read, slim: format !== 'html' });
        const output = Output.to(out);
        const viewOptions = { link: { ...link, haveLlm: stream.haveLlm }, fit };
        const done =
          format === 'json'
            ? await writeJsonView(stream.records, output, viewOptions)
            : format === 'timeline'
              ? await writeTimelineView(stream.records, output, { ...viewOptions, color })
              : format === 'mermaid'
                ? await writeMermaidView(stream.records, output, viewOptions)
                : format === 'html'
                  ? await writeHtmlView(stream.records, output, viewOptions)
                  : await writePrettyView(stream.records, output, { ...viewOptions, color, relative: argv.relative as boolean });
        await output.close();
        progress.done();
        for (const note of done.notes) printNote(note);
        if (out !== undefined) process.stderr.write(`mcptap: wrote ${format} of ${done.records.toLocaleString('en')} records to ${out}\n`);
      } catch (error) {
        fail(error);
      }
    },
  );

