import { mkdirSync, writeFileSync } from 'node:fs';
import { homedir } from 'node:os';
import { basename, join } from 'node:path';
import { describe, expect, test } from 'vitest';
import { labelFromCommand, logFileName, newSessionId, perUserLogDir, resolveLogDir } from '../../src/log/location.js';
import { tempDir } from '../support/temp-dir.js';

const root = tempDir('mcptap-location-');

describe('resolveLogDir', () => {
  test('--log-dir wins, relative to the working directory', () => {
    expect(resolveLogDir('out', { MCPTAP_LOG_DIR: '/env' }, '/work/x')).toBe('/work/x/out');
    expect(resolveLogDir('/abs', {}, '/work/x')).toBe('/abs');
  });
  test('then $MCPTAP_LOG_DIR', () => {
    expect(resolveLogDir(undefined, { MCPTAP_LOG_DIR: 'env-logs' }, '/work/x')).toBe('/work/x/env-logs');
  });
  test('then ./logs when the working directory is writable', () => {
    expect(resolveLogDir(undefined, {}, root)).toBe(join(root, 'logs'));
  });
  // (An unwritable working directory cannot be made for root, who runs CI here; a missing one takes the same path.)
  test('a working directory that does not exist falls back to the per-user folder', () => {
    expect(resolveLogDir(undefined, { XDG_STATE_HOME: '/state' }, join(root, 'missing'))).toBe(perUserLogDir({ XDG_STATE_HOME: '/state' }));
  });
});

describe('perUserLogDir', () => {
  test('per platform', () => {
    expect(perUserLogDir({ XDG_STATE_HOME: '/s' }, 'linux')).toBe('/s/mcptap/logs');
    expect(perUserLogDir({}, 'linux')).toBe(join(homedir(), '.local', 'state', 'mcptap', 'logs'));
    expect(perUserLogDir({}, 'darwin')).toBe(join(homedir(), 'Library', 'Logs', 'mcptap'));
    expect(perUserLogDir({ LOCALAPPDATA: 'C:\\Users\\me\\AppData\\Local' }, 'win32')).toBe(join('C:\\Users\\me\\AppData\\Local', 'mcptap', 'logs'));
  });
});

describe('names', () => {
  const date = new Date(Date.UTC(2026, 10, 29, 13, 38, 27, 512));
  test('logFileName is <label>-<UTC timestamp>-<pid>.ndjson', () => {
    expect(logFileName('weather', date, 4242)).toBe('weather-20261129T133827Z-4242.ndjson');
    expect(logFileName('my server/v2', date, 1)).toBe('my_server_v2-20261129T133827Z-1.ndjson');
    expect(logFileName('', date, 1)).toBe('mcptap-20261129T133827Z-1.ndjson');
    expect(logFileName('x'.repeat(100), date, 1)).toBe(`${'x'.repeat(60)}-20261129T133827Z-1.ndjson`);
  });
  test('labelFromCommand prefers the script or package for runtimes', () => {
    expect(labelFromCommand('python', ['weather.py'])).toBe('weather');
    expect(labelFromCommand('/usr/bin/python3', ['-u', '/srv/weather.py'])).toBe('weather');
    // Outside any package, the folder: past dist/, the one it was started in.
    expect(labelFromCommand('node', ['dist/index.js', 'stdio'], root)).toBe(basename(root));
    expect(labelFromCommand('npx', ['-y', '@modelcontextprotocol/server-everything'])).toBe('server-everything');
    expect(labelFromCommand('uv', ['run', 'server.py'])).toBe('server');
    expect(labelFromCommand('/opt/srv.exe', [])).toBe('srv');
    expect(labelFromCommand('/opt/bin/mcp-weather', ['--port', '1'])).toBe('mcp-weather');
    expect(labelFromCommand('node', [])).toBe('node');
  });
  test('inline code is not a name; a module is', () => {
    expect(labelFromCommand('node', ['-e', "process.kill(process.pid, 'SIGKILL')"])).toBe('node');
    expect(labelFromCommand('node', ['--eval=console.log(1)'])).toBe('node');
    expect(labelFromCommand('python3', ['-c', 'import weather; weather.main()'])).toBe('python3');
    expect(labelFromCommand('python', ['-m', 'weather_server'])).toBe('weather_server');
    expect(labelFromCommand('python', ['-u', '-m', 'mcp_server_git', '--repository', '.'])).toBe('mcp_server_git');
    expect(labelFromCommand('node', ['--import', 'tsx', 'server.ts'], root)).toBe('server');
    expect(labelFromCommand('npx', ['-y', '-p', 'pkg-a', 'tool-b'])).toBe('tool-b');
  });
  test('a file with a name that says nothing takes the name of its package, without the scope', () => {
    const pkg = join(root, 'node_modules', '@acme', 'weather-server');
    mkdirSync(join(pkg, 'dist', 'bin'), { recursive: true });
    writeFileSync(join(pkg, 'package.json'), JSON.stringify({ name: '@acme/weather-server', version: '1.0.0' }));
    // A nameless package.json (a folder's {"type": "module"}) is not the package.
    writeFileSync(join(pkg, 'dist', 'package.json'), '{"type":"module"}');
    expect(labelFromCommand('node', [join(pkg, 'dist', 'index.js')])).toBe('weather-server');
    expect(labelFromCommand('/usr/local/bin/node', ['node_modules/@acme/weather-server/dist/bin/cli.mjs', 'stdio'], root)).toBe('weather-server');
    expect(labelFromCommand('bun', ['run', join(pkg, 'dist', 'server.js')])).toBe('weather-server');
    // A file that names itself keeps its name; one outside any package takes its folder's.
    expect(labelFromCommand('node', [join(pkg, 'dist', 'weather.js')])).toBe('weather');
    expect(labelFromCommand('node', ['elsewhere/index.js'], root)).toBe('elsewhere');
    expect(labelFromCommand('python3', ['/srv/weather-mcp/src/server.py'])).toBe('weather-mcp');
    // Without a path, the folder it runs in says nothing of the server.
    expect(labelFromCommand('python3', ['server.py'], root)).toBe('server');
    expect(labelFromCommand('node', ['/index.js'])).toBe('index');
  });
  test('a package version is not part of the name', () => {
    expect(labelFromCommand('npx', ['-y', '@modelcontextprotocol/server-everything@latest'])).toBe('server-everything');
    expect(labelFromCommand('npx', ['-y', 'mcp-weather@1.2.3', 'stdio'])).toBe('mcp-weather');
    expect(labelFromCommand('uvx', ['mcp-server-git==2025.1.14'])).toBe('mcp-server-git');
    expect(labelFromCommand('uvx', ['mcp-server-fetch'])).toBe('mcp-server-fetch');
  });
  test('session ids are unique and carry label and time', () => {
    const a = newSessionId('weather', date);
    const b = newSessionId('weather', date);
    expect(a).toMatch(/^weather-20261129T133827Z-[0-9a-f]{6}$/);
    expect(a).not.toBe(b);
  });
});
