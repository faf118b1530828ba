/**
 * What the wrap's fast path needs before the tap is loaded: its flags, read by hand from the words before `--`
 * (so that entry.ts can recognise a plain `mcptap [flags] -- server` and spawn the server before it loads
 * anything else), and the signals it forwards to the server.
 */
import type { LogSafetyFlags } from './log-options.js';

/** Signals mcptap passes on to the wrapped server (and its process group). */
export const FORWARDED_SIGNALS: readonly NodeJS.Signals[] = ['SIGINT', 'SIGTERM', 'SIGHUP'];

/** The wrap command's flags, parsed. */
export interface WrapFlags {
  logDir?: string;
  name?: string;
  maxBody?: number;
  /** OTLP/HTTP receiver to stream spans to while running (--otlp-endpoint). */
  otlpEndpoint?: string;
  /** Redaction and size-cap flags (only through yargs; see log-options.ts). */
  safety?: LogSafetyFlags;
}

/**
 * Read the wrap flags from the words before `--` when they are exactly what the fast path knows
 * (`[stdio] [--log-dir D] [--name N] [--max-body B] [--otlp-endpoint URL]`, also as `--flag=value`); otherwise undefined.
 */
export function parseWrapFlags(words: readonly string[]): WrapFlags | undefined {
  const flags: WrapFlags = {};
  let i = words[0] === 'stdio' ? 1 : 0;
  while (i < words.length) {
    const word = words[i]!;
    const eq = word.indexOf('=');
    const name = eq === -1 ? word : word.slice(0, eq);
    const value = eq === -1 ? words[i + 1] : word.slice(eq + 1);
    if (value === undefined) return undefined;
    if (name === '--log-dir') flags.logDir = value;
    else if (name === '--name') flags.name = value;
    else if (name === '--max-body' && /^\d+$/.test(value)) flags.maxBody = Number(value);
    else if (name === '--otlp-endpoint') flags.otlpEndpoint = value;
    else return undefined;
    i += eq === -1 ? 2 : 1;
  }
  return flags;
}
