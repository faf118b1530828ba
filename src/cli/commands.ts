/**
 * The commands, each loaded only when a command line needs it: loading them all cost `mcptap replay`, which
 * hosts start as a stand-in server, about a quarter of its start-up (docs/benchmarks.md, "Start-up").
 */
import type { RegisterCommand } from './shared.js';

/** Each command's file, by the word that names it, in the order `mcptap --help` lists them. */
const COMMAND_FILES: Record<string, () => Promise<RegisterCommand>> = {
  stdio: async () => (await import('./wrap.js')).registerWrap,
  view: async () => (await import('./view.js')).registerView,
  replay: async () => (await import('./replay.js')).registerReplay,
  check: async () => (await import('./check.js')).registerCheck,
  diff: async () => (await import('./diff.js')).registerDiff,
  http: async () => (await import('./http.js')).registerHttp,
  demo: async () => (await import('./demo.js')).registerDemo,
  prune: async () => (await import('./prune.js')).registerPrune,
  export: async () => (await import('./export.js')).registerExport,
  ui: async () => (await import('./ui.js')).registerUi,
};

/** The words that name a command, in help order. */
export const COMMAND_NAMES: readonly string[] = Object.keys(COMMAND_FILES);

/**
 * The commands `args` (mcptap's own words, before any `--`) needs registered: the one its first word names,
 * else all of them. Only the first word counts: further in, a word may be an option's value (`--name http`).
 * All of them serve the default wrap command, `--help`, and a mistyped name, which yargs answers from the full
 * list.
 */
export async function commandsFor(args: readonly string[]): Promise<RegisterCommand[]> {
  const first = args[0];
  const files = first !== undefined && Object.hasOwn(COMMAND_FILES, first) ? [COMMAND_FILES[first]!] : Object.values(COMMAND_FILES);
  return Promise.all(files.map((load) => load()));
}
