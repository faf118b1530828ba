/**
 * The mistakes people make on the command line, each answered by the built CLI with one sentence and exit 2;
 * and the wrap as the MCP Inspector CLI starts it, with its `--` swallowed: `mcptap --log-dir D node server.mjs`.
 */
import { execFile } from 'node:child_process';
import { readdirSync } from 'node:fs';
import { join, resolve } from 'node:path';
import { promisify } from 'node:util';
import { describe, expect, it } from 'vitest';
import { Client } from '@modelcontextprotocol/sdk/client/index.js';
import { StdioClientTransport } from '@modelcontextprotocol/sdk/client/stdio.js';
import { readAllRecords } from '../../src/log/reader.js';
import { tempDir } from '../support/temp-dir.js';

const BIN = resolve(import.meta.dirname, '../../bin/mcptap.js');
const WEATHER = resolve(import.meta.dirname, '../../fixtures/weather-server.mjs');
const exec = promisify(execFile);

async function cli(...args: string[]): Promise<{ code: number; stdout: string; stderr: string }> {
  try {
    const { stdout, stderr } = await exec(process.execPath, [BIN, ...args], { cwd: tempDir('mcptap-usage-') });
    return { code: 0, stdout, stderr };
  } catch (error) {
    const e = error as { code: number; stdout: string; stderr: string };
    return { code: e.code, stdout: e.stdout, stderr: e.stderr };
  }
}

describe('a mistake on the command line is one sentence and exit 2', () => {
  const cases: [string[], string][] = [
    [['--logdir', 'D', 'node', 'server.js'], 'unknown option --logdir; did you mean --log-dir?'],
    [['--bogus-flag', 'node', 'server.js'], 'unknown option --bogus-flag; mcptap takes --redact, --redact-key, --redact-pattern, --max-log-mb, --max-log-files, --log-dir, --name, --max-body, --otlp-endpoint (mcptap --help says what each does).'],
    [['view', '--bogus', 'logs/'], 'unknown option --bogus; mcptap view takes --format, --out, --color, --relative, --wide, --window (mcptap view --help says what each does).'],
    [['view'], 'view needs a log file or a folder of logs, for example: mcptap view logs/'],
    [['check'], 'check needs a log file or a folder of logs, for example: mcptap check logs/'],
    [['view', '--format', 'nope', 'logs/'], '--format must be one of pretty, timeline, mermaid, json, html, not "nope".'],
    [['view', '--window', '-3', 'logs/'], '--window must be a number of seconds (0 or more), not -3.'],
    [['http', '--target', 'notaurl'], '--target must be a URL such as http://127.0.0.1:11434, not "notaurl".'],
    [['http'], 'http needs --target, the upstream to forward to, for example --target http://127.0.0.1:11434.'],
    [['prune'], 'prune needs --older-than, for example --older-than 7d (the logs last written more than a week ago).'],
    [['demo', 'extra'], 'demo does not take "extra"; see mcptap demo --help for what it takes.'],
    [['frobnicate'], "frobnicate is neither an mcptap command nor a program on PATH; the commands are stdio, view, replay, check, diff, http, demo, prune, export, ui, and mcptap [options] <program> [args...] wraps a server (give the program's full path if PATH lacks it)."],
    [['veiw', 'logs/'], "veiw is neither an mcptap command nor a program on PATH (did you mean mcptap view?); the commands are stdio, view, replay, check, diff, http, demo, prune, export, ui, and mcptap [options] <program> [args...] wraps a server (give the program's full path if PATH lacks it)."],
  ];
  for (const [args, sentence] of cases) {
    it(`mcptap ${args.join(' ')}`, async () => {
      const r = await cli(...args);
      expect(r).toEqual({ code: 2, stdout: '', stderr: `mcptap: ${sentence}\n` });
    });
  }
});

describe('the server command without --', () => {
  it('as the MCP Inspector CLI starts it (its -- swallowed), the official SDK client lists and calls the tools', async () => {
    const logDir = tempDir('mcptap-inspector-');
    // What `inspector --cli mcptap --log-dir D -- node server.mjs` hands the transport once `--` is gone.
    const transport = new StdioClientTransport({ command: process.execPath, args: [BIN, '--log-dir', logDir, process.execPath, WEATHER], stderr: 'pipe' });
    let stderr = '';
    transport.stderr?.on('data', (chunk: Buffer) => (stderr += chunk.toString()));
    const client = new Client({ name: 'inspector-like', version: '1.0.0' });
    await client.connect(transport);
    expect((await client.listTools()).tools.map((t) => t.name)).toEqual(['get_weather']);
    const result = await client.callTool({ name: 'get_weather', arguments: { location: 'California' } });
    expect(result.content).toEqual([{ type: 'text', text: "It's always raining in California" }]);
    await client.close();
    const [file] = readdirSync(logDir);
    expect(file).toMatch(/^weather-server-\d{8}T\d{6}Z-\d+\.ndjson$/);
    expect(stderr).toContain(`mcptap: logging weather-server to ${join(logDir, file!)}`);
    const records = await readAllRecords([join(logDir, file!)]);
    expect(records.filter((r) => r.kind === 'request').map((r) => (r as { method?: string }).method)).toEqual(['initialize', 'tools/list', 'tools/call']);
  });

  it('--name names the log and the start-up line', async () => {
    const logDir = tempDir('mcptap-named-');
    const child = execFile(process.execPath, [BIN, '--name', 'forecast', '--log-dir', logDir, 'cat']);
    let stderr = '';
    child.stderr!.on('data', (c: Buffer) => (stderr += c.toString()));
    child.stdin!.end('{"jsonrpc":"2.0","method":"x"}\n');
    await new Promise((done) => child.once('exit', done));
    const [file] = readdirSync(logDir);
    expect(file).toMatch(/^forecast-/);
    expect(stderr).toBe(`mcptap: logging forecast to ${join(logDir, file!)}\n`);
  });
});
