/**
 * A command line loads only the command file it needs (src/cli/commands.ts); help, the default wrap command and
 * anything it cannot tell get every command, in the order `mcptap --help` lists them.
 */
import { describe, expect, it } from 'vitest';
import { commandsFor } from '../../src/cli/commands.js';
import { registerWrap } from '../../src/cli/wrap.js';
import { registerView } from '../../src/cli/view.js';
import { registerReplay } from '../../src/cli/replay.js';
import { registerCheck } from '../../src/cli/check.js';
import { registerDiff } from '../../src/cli/diff.js';
import { registerHttp } from '../../src/cli/http.js';
import { registerDemo } from '../../src/cli/demo.js';
import { registerPrune } from '../../src/cli/prune.js';
import { registerExport } from '../../src/cli/export.js';
import { registerUi } from '../../src/cli/ui.js';

const ALL = [registerWrap, registerView, registerReplay, registerCheck, registerDiff, registerHttp, registerDemo, registerPrune, registerExport, registerUi];

describe('commandsFor', () => {
  it('gives the one command the first word names', async () => {
    expect(await commandsFor(['replay', 'capture.ndjson', '--no-delay'])).toEqual([registerReplay]);
    expect(await commandsFor(['http', '--target', 'http://127.0.0.1:11435'])).toEqual([registerHttp]);
    expect(await commandsFor(['stdio', '--log-dir', 'logs'])).toEqual([registerWrap]);
  });

  it('gives every command, in help order, for help, the default command, an option first, or an unknown word', async () => {
    for (const args of [[], ['--help'], ['--log-dir', 'logs'], ['--name', 'http'], ['htp', '--target', 'x'], ['constructor'], ['toString']]) {
      expect(await commandsFor(args)).toEqual(ALL);
    }
  });
});
