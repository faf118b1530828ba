/**
 * mcptap's commands start without yargs rendering the help text first (see src/cli/help-cache.ts). The hook is
 * yargs' internal API: this checks it still exists and still keeps the help from being rendered.
 */
import { describe, expect, it } from 'vitest';
import yargs from 'yargs';
import { skipHelpCache } from '../../src/cli/help-cache.js';

interface UsageView {
  getInternalMethods(): { getUsageInstance(): { hasCachedHelpMessage(): boolean } };
}

async function runCommand(skip: boolean): Promise<{ ran: boolean; helpRendered: boolean }> {
  let ran = false;
  const cli = yargs(['serve', '--port', '1'])
    .command('serve', 'a command', (y) => y.option('port', { type: 'number', describe: 'a port' }), () => {
      ran = true;
    })
    .help();
  if (skip) skipHelpCache(cli);
  await cli.parseAsync();
  return { ran, helpRendered: (cli as unknown as UsageView).getInternalMethods().getUsageInstance().hasCachedHelpMessage() };
}

describe('skipHelpCache', () => {
  it('yargs renders the help text when a command starts, and does not once skipped; the command runs either way', async () => {
    expect(await runCommand(false)).toEqual({ ran: true, helpRendered: true });
    expect(await runCommand(true)).toEqual({ ran: true, helpRendered: false });
  });
});
