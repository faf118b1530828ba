/**
 * Chromium is the optional dependency of the browser checks (the html page, the live view, a HAR replayed by a
 * real reader): `apt-get install -y chromium` (.ci/run does it when apt can). Without it those checks skip, and
 * their titles say so.
 */
import { existsSync } from 'node:fs';

export const CHROMIUM = '/usr/bin/chromium';
export const HAVE_CHROMIUM = existsSync(CHROMIUM);

/** Appended to a browser check's title: why it was skipped, when it was. */
export const NEEDS_CHROMIUM = HAVE_CHROMIUM ? '' : ` (skipped: needs ${CHROMIUM}, the optional dependency of the browser checks; apt-get install -y chromium)`;
