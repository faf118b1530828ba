/**
 * yargs renders the whole help text each time a command starts, and caches it for a handler that might call
 * showHelp later: a cost paid before `mcptap http` listens or `mcptap replay` answers (docs/benchmarks.md,
 * "Start-up"). No mcptap handler shows help (`--help` and failures render their own), so the cache stays empty.
 *
 * The hook is yargs' internal API (yargs is pinned in package.json; a test checks the hook still works). Where
 * it is not there, yargs does as it did.
 */
interface UsageInternals {
  getInternalMethods?: () => { getUsageInstance?: () => { cacheHelpMessage?: () => void } };
}

export function skipHelpCache(cli: unknown): void {
  const usage = (cli as UsageInternals).getInternalMethods?.().getUsageInstance?.();
  if (usage && typeof usage.cacheHelpMessage === 'function') usage.cacheHelpMessage = () => {};
}
