/**
 * `mcptap replay LOG` over stdio, against the real SDK client: the scenario recorded from server-everything
 * (fixtures/captures/mcp-stdio/everything-sdk.ndjson, made by scripts/make-fixtures.mjs) must give the client the
 * same results from the replay as from the live server. Needs a fresh build (bin/mcptap.js runs dist/).
 */
import { spawn } from 'node:child_process';
import { once } from 'node:events';
import { describe, expect, test } from 'vitest';
import { StdioClientTransport } from '@modelcontextprotocol/sdk/client/stdio.js';
import { Client } from '@modelcontextprotocol/sdk/client/index.js';
import { replay } from '../../src/index.js';
// @ts-expect-error plain ESM helper shared with scripts/make-fixtures.mjs
import { runSdkScenario, EVERYTHING } from '../support/sdk-scenario.mjs';

const CAPTURE = 'fixtures/captures/mcp-stdio/everything-sdk.ndjson';

describe('stdio replay', () => {
  test('the SDK scenario gets identical results from the replay as from server-everything', async () => {
    const live = await runSdkScenario(new StdioClientTransport({ command: process.execPath, args: EVERYTHING, cwd: process.cwd(), stderr: 'pipe' }));
    const stand = await replay({ logs: CAPTURE });
    const transport = new StdioClientTransport({ command: stand.command, args: stand.args, stderr: 'pipe' });
    let stderr = '';
    transport.stderr?.on('data', (chunk: Buffer) => (stderr += chunk.toString('utf8')));
    const replayed = await runSdkScenario(transport);
    expect(replayed).toEqual(live);
    // The scenario saw the server's requests and progress, so the comparison above covers them.
    expect(live.serverRequests.map((r: { method: string }) => r.method)).toEqual(['roots/list', 'sampling/createMessage', 'elicitation/create']);
    expect(live.progress).toHaveLength(3);
    expect(stderr).not.toContain('replay miss');
  });

  test('a request not in the capture gets a JSON-RPC error naming it, and a line on stderr', async () => {
    const stand = await replay({ logs: CAPTURE, match: 'strict', noDelay: true });
    const transport = new StdioClientTransport({ command: stand.command, args: stand.args, stderr: 'pipe' });
    let stderr = '';
    transport.stderr?.on('data', (chunk: Buffer) => (stderr += chunk.toString('utf8')));
    // The scenario's own client identity, so even --match strict recognises the recorded initialize.
    const client = new Client({ name: 'mcptap-scenario-client', version: '1.0.0' }, { capabilities: { sampling: {}, elicitation: {}, roots: { listChanged: true } } });
    await client.connect(transport);
    try {
      await expect(client.callTool({ name: 'get-sum', arguments: { a: 40, b: 2 } })).rejects.toThrow(
        /tools\/call get-sum \{"a":40,"b":2\} is not in the capture .*everything-sdk\.ndjson/,
      );
      await expect(client.complete({ ref: { type: 'ref/prompt', name: 'completable-prompt' }, argument: { name: 'x', value: 'y' } })).rejects.toThrow(
        /completion\/complete is not in the capture .*never received completion\/complete/,
      );
      // The next recorded question still gets its recorded answer (strict: the recorded order, echo first).
      const echo = await client.callTool({ name: 'echo', arguments: { message: 'hello from the scenario' } });
      expect(echo.content).toEqual([{ type: 'text', text: 'Echo: hello from the scenario' }]);
    } finally {
      await client.close();
    }
    expect(stderr).toMatch(/mcptap: replay miss: tools\/call get-sum \{"a":40,"b":2\} is not in the capture/);
    expect(stderr).toMatch(/mcptap: replay miss: completion\/complete is not in the capture/);
  });

  test('replay() refuses, in the caller, a log with no MCP session to stand in for', async () => {
    await expect(replay({ logs: 'fixtures/captures/ollama/agent.ndjson' })).rejects.toThrow(
      'the log holds no MCP frames to replay. Give a log written by mcptap around an MCP server (stdio or Streamable HTTP).',
    );
    await expect(replay({ logs: 'fixtures/captures/roundtrip' })).resolves.toMatchObject({ command: process.execPath });
  });

  test('stdout carries only the recorded frames; a missing log is one plain sentence and exit 2', async () => {
    const child = spawn(process.execPath, ['bin/mcptap.js', 'replay', 'no/such/log.ndjson'], { stdio: ['pipe', 'pipe', 'pipe'] });
    let out = '';
    let err = '';
    child.stdout.on('data', (c: Buffer) => (out += c.toString()));
    child.stderr.on('data', (c: Buffer) => (err += c.toString()));
    const [code] = (await once(child, 'exit')) as [number];
    expect(code).toBe(2);
    expect(out).toBe('');
    expect(err).toBe('mcptap: There is no log at no/such/log.ndjson. Give a log file or a folder of logs (mcptap writes them to ./logs by default).\n');
  });
});
