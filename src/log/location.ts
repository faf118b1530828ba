/**
 * Where logs go and what they are called.
 *
 * Hosts such as Claude Desktop start MCP servers with the working directory `/`, where `./logs` cannot be
 * created; a log that silently goes nowhere defeats the tool, so the default falls back to a per-user folder.
 */
import { accessSync, constants, readFileSync } from 'node:fs';
import { homedir } from 'node:os';
import { basename, dirname, join, resolve } from 'node:path';
import { randomBytes } from 'node:crypto';

/**
 * The log folder: `--log-dir`, else `$MCPTAP_LOG_DIR`, else `./logs` when the working directory is writable,
 * else a per-user folder (`$XDG_STATE_HOME/mcptap/logs`, `~/Library/Logs/mcptap`, `%LOCALAPPDATA%\mcptap\logs`).
 */
export function resolveLogDir(explicit: string | undefined, env: NodeJS.ProcessEnv = process.env, cwd = process.cwd()): string {
  if (explicit) return resolve(cwd, explicit);
  if (env.MCPTAP_LOG_DIR) return resolve(cwd, env.MCPTAP_LOG_DIR);
  if (isWritable(cwd)) return join(cwd, 'logs');
  return perUserLogDir(env);
}

/** The per-user log folder for this platform. */
export function perUserLogDir(env: NodeJS.ProcessEnv = process.env, platform: NodeJS.Platform = process.platform): string {
  if (platform === 'win32') return join(env.LOCALAPPDATA ?? join(homedir(), 'AppData', 'Local'), 'mcptap', 'logs');
  if (platform === 'darwin') return join(homedir(), 'Library', 'Logs', 'mcptap');
  return join(env.XDG_STATE_HOME ?? join(homedir(), '.local', 'state'), 'mcptap', 'logs');
}

/** `<label>-<UTC timestamp>-<pid>.ndjson`, e.g. `weather-20261129T133827Z-4242.ndjson`. */
export function logFileName(label: string, date: Date = new Date(), pid: number = process.pid): string {
  return `${safeLabel(label)}-${compactUtc(date)}-${pid}.ndjson`;
}

/**
 * A label from a wrapped command: the script or package for runtimes (`node weather.js` → `weather`), else the
 * command's base name. A file named `index`, `server`… takes its package's name (a JS runtime's package.json),
 * else, when the command gives a path, its folder's past `dist`, `src`… (`weather/dist/index.js` → `weather`).
 */
export function labelFromCommand(command: string, args: readonly string[] = [], cwd = process.cwd()): string {
  const base = basename(command).replace(/\.(exe|cmd|bat|js|mjs|cjs|py)$/i, '');
  // `node server.js`, `python weather.py`, `npx -y pkg`: the script or package says more than the runtime.
  if (/^(node|python3?|uv|uvx|npx|bun|deno|tsx)$/i.test(base)) {
    const script = scriptOf(base, args);
    if (script && SCRIPT_FILE.test(script) && GENERIC_ENTRY.test(basename(script).replace(SCRIPT_FILE, ''))) {
      const file = resolve(cwd, script);
      // The folder only where the command names one: `python server.py` run from a home folder is no `alice`.
      const name = (JS_RUNTIMES.test(base) ? packageNameOf(file) : undefined) ?? (/[\\/]/.test(script) ? folderNameOf(file) : undefined);
      if (name) return safeLabel(name.replace(/^@[^/]+\//, ''));
    }
    if (script) {
      // `@scope/pkg@1.2.3` → `pkg`, `mcp-server-git==2025.1.14` → `mcp-server-git`: the version is not the name.
      const name = basename(script).replace(/(?<=.)@[^/@]*$/, '').replace(/(==|>=|<=|~=).*$/, '');
      return safeLabel(name.replace(/\.(js|mjs|cjs|ts|py)$/i, '').replace(/^@[^/]+\//, ''));
    }
  }
  return safeLabel(base);
}

const JS_RUNTIMES = /^(node|bun|deno|tsx)$/i;
/** Entry-file names shared by most packages: the package's own name says which server it is. */
const GENERIC_ENTRY = /^(index|main|server|cli|app|start|run|stdio|mcp)$/i;
/** A script file, by its extension (not a package or module name). */
const SCRIPT_FILE = /\.([cm]?[jt]s|py)$/i;
/** Folders that hold a package's built or source files, not its name. */
const GENERIC_FOLDER = /^(dist|build|out|lib|src|bin|esm|cjs|app)$/i;

/** The name of the folder a file is in, past folders that say nothing (`dist`, `src`…); undefined at the root. */
function folderNameOf(file: string): string | undefined {
  for (let dir = dirname(file); dirname(dir) !== dir; dir = dirname(dir)) if (!GENERIC_FOLDER.test(basename(dir))) return basename(dir);
  return undefined;
}

/** How many folders up from a script its package.json is looked for. */
const PACKAGE_SEARCH_DEPTH = 8;

/** The `name` of the nearest package.json above a file, or undefined (none within reach, unreadable, unnamed). */
function packageNameOf(file: string): string | undefined {
  let dir = dirname(file);
  for (let i = 0; i < PACKAGE_SEARCH_DEPTH; i++) {
    try {
      const name: unknown = (JSON.parse(readFileSync(join(dir, 'package.json'), 'utf8')) as { name?: unknown }).name;
      // A package.json without a name (a folder's `{"type": "module"}`) is not the package: keep looking up.
      if (typeof name === 'string' && name !== '') return name;
    } catch {
      // no package.json here, or not JSON
    }
    const parent = dirname(dir);
    if (parent === dir) return undefined;
    dir = parent;
  }
  return undefined;
}

/** Flags whose value is inline code, per runtime: a snippet is no name, the runtime's own name says more. */
const CODE_FLAGS: Record<string, RegExp> = {
  node: /^(-e|--eval|-p|--print)(=|$)/,
  bun: /^(-e|--eval|-p|--print)(=|$)/,
  deno: /^eval$/,
  python: /^-c/,
  python3: /^-c/,
};
/** Flags that take a separate value which is not the script (`node --import tsx`, `npx -p pkg`, `uvx --from x`). */
const VALUE_FLAGS = new Set(['-r', '--require', '--import', '--loader', '--experimental-loader', '-p', '--package', '-W', '-X', '--with', '--from', '--python']);

/** The script, module or package a runtime is asked to run, if the arguments name one. */
function scriptOf(runtime: string, args: readonly string[]): string | undefined {
  const code = CODE_FLAGS[runtime.toLowerCase()];
  for (let i = 0; i < args.length; i++) {
    const arg = args[i]!;
    if (code?.test(arg)) return undefined;
    if (arg === '-m') return args[i + 1]; // python -m module
    if (VALUE_FLAGS.has(arg)) {
      i++;
      continue;
    }
    if (!arg.startsWith('-') && arg !== 'run') return arg;
  }
  return undefined;
}

/** A session id unique across logs: label, start time, and random bits. */
export function newSessionId(label: string, date: Date = new Date()): string {
  return `${safeLabel(label)}-${compactUtc(date)}-${randomBytes(3).toString('hex')}`;
}

function safeLabel(label: string): string {
  return label.replace(/[^A-Za-z0-9._-]+/g, '_').slice(0, 60) || 'mcptap';
}

function compactUtc(date: Date): string {
  return date.toISOString().replace(/[-:]/g, '').replace(/\.\d+Z$/, 'Z');
}

function isWritable(dir: string): boolean {
  try {
    accessSync(dir, constants.W_OK);
    return true;
  } catch {
    return false;
  }
}
