/**
 * The process entry (bin/mcptap.js imports this). Wrapping a server is the hot start — it happens every time a
 * host launches an MCP server — so when the words before `--` are plain wrap flags, only the stdio tap is
 * loaded; every other command line goes to the full CLI in main.ts.
 */
import { parseWrapFlags, runWrap } from './wrap.js';

const argv = process.argv.slice(2);
const separator = argv.indexOf('--');
const flags = separator === -1 ? undefined : parseWrapFlags(argv.slice(0, separator));
if (flags) await runWrap(flags, argv.slice(separator + 1));
else await import('./main.js');
