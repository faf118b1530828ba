/**
 * The package as a newcomer gets it: `npm pack`, installed into an empty folder with production dependencies
 * only, then the README's commands run there through npx. One pack and one install for the whole file: the
 * install is the slowest step of the suite's integration tests.
 */
import { execFile } from 'node:child_process';
import { readdirSync, writeFileSync } from 'node:fs';
import { join, resolve } from 'node:path';
import { promisify } from 'node:util';
import { beforeAll, describe, expect, it } from 'vitest';
import { tempDir } from '../support/temp-dir.js';

const ROOT = resolve(import.meta.dirname, '../..');
const exec = promisify(execFile);
const env = { ...process.env, NO_COLOR: '1', npm_config_update_notifier: 'false', npm_config_fund: 'false', npm_config_audit: 'false' };

/** A stdio MCP server of a few lines, without any package: answers initialize and tools/list. */
const SERVER = `
let buffer = '';
process.stdin.on('data', (chunk) => {
  buffer += chunk;
  let end;
  while ((end = buffer.indexOf('\\n')) !== -1) {
    const message = JSON.parse(buffer.slice(0, end));
    buffer = buffer.slice(end + 1);
    if (message.id === undefined) continue;
    const result = message.method === 'initialize'
      ? { protocolVersion: '2025-11-25', capabilities: { tools: {} }, serverInfo: { name: 'tiny', version: '1.0.0' } }
      : { tools: [{ name: 'echo', inputSchema: { type: 'object' } }] };
    process.stdout.write(JSON.stringify({ jsonrpc: '2.0', id: message.id, result }) + '\\n');
  }
});
`;

let app: string;
let packed: string[];
let installWarnings: string;

beforeAll(async () => {
  const dir = tempDir('mcptap-package-');
  // npm test has just built dist/: packing again would only build it a second time.
  const { stdout } = await exec('npm', ['pack', '--json', '--ignore-scripts', '--pack-destination', dir], { cwd: ROOT, env });
  const [info] = JSON.parse(stdout) as { filename: string; files: { path: string }[] }[];
  packed = info!.files.map((f) => f.path);
  app = join(dir, 'app');
  await exec('mkdir', [app]);
  writeFileSync(join(app, 'package.json'), JSON.stringify({ name: 'newcomer-app', version: '1.0.0', private: true }));
  writeFileSync(join(app, 'server.js'), SERVER);
  const install = await exec('npm', ['install', '--omit=dev', '--prefer-offline', join(dir, info!.filename)], { cwd: app, env });
  installWarnings = install.stderr;
}, 180_000);

describe('the installed package', () => {
  it('installs without warnings and ships no source maps pointing at files it does not have', () => {
    expect(installWarnings).not.toMatch(/npm warn/i);
    expect(packed.filter((f) => f.endsWith('.map'))).toEqual([]);
    expect(packed).toContain('dist/cli/entry.js');
    expect(packed).toContain('fixtures/weather-server.mjs');
  });

  it('runs npx mcptap demo offline, npx mcptap --log-dir D node server.js, then npx mcptap view logs/ shows both', async () => {
    const demo = await exec('npx', ['mcptap', 'demo', '--speed', '0'], { cwd: app, env });
    expect(demo.stdout).toMatch(/Host \/ client → weather\s+tools\/call get_weather \{"location":"California"\}/);
    expect(readdirSync(join(app, 'logs'))).toEqual([expect.stringMatching(/^demo-\d{8}T\d{6}Z$/)]);
    // A client mcptap does not install: a sentence saying how to get it, and nothing left behind.
    const anthropic = await exec('npx', ['mcptap', 'demo', '--client', 'anthropic'], { cwd: app, env }).catch((e: { code: number; stderr: string }) => e);
    expect(anthropic).toMatchObject({ code: 1 });
    expect((anthropic as { stderr: string }).stderr).toContain('mcptap: --client anthropic needs the @anthropic-ai/sdk package, which mcptap does not install with itself');
    expect(readdirSync(join(app, 'logs'))).toHaveLength(1);

    const wrap = execFile('npx', ['mcptap', '--log-dir', join('logs', 'wrapped'), 'node', 'server.js'], { cwd: app, env });
    let out = '';
    wrap.stdout!.on('data', (c: Buffer) => (out += c.toString()));
    wrap.stdin!.end('{"jsonrpc":"2.0","id":0,"method":"initialize","params":{"protocolVersion":"2025-11-25","capabilities":{},"clientInfo":{"name":"t","version":"1"}}}\n{"jsonrpc":"2.0","id":1,"method":"tools/list"}\n');
    const code = await new Promise((done) => wrap.once('exit', done));
    expect(code).toBe(0);
    expect(out).toContain('"serverInfo":{"name":"tiny"');
    // server.js is a generic entry name: the log takes the package's name.
    expect(readdirSync(join(app, 'logs', 'wrapped'))).toEqual([expect.stringMatching(/^newcomer-app-.*\.ndjson$/)]);

    const view = await exec('npx', ['mcptap', 'view', 'logs/'], { cwd: app, env });
    expect(view.stdout).toMatch(/weather .*tools\/call get_weather/);
    expect(view.stdout).toMatch(/newcomer-app .*tools\/list #1/);
  });
});
