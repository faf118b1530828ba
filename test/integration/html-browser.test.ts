/**
 * The html view opens in a real browser (headless Chromium from Debian, driven by playwright-core) with the
 * sequence diagram drawn — from the logs of a real demo run — without touching the network. A screenshot is
 * written next to the logs (its path is printed) so a person can look at it.
 *
 * Needs chromium, the optional dependency of the browser checks (test/support/chromium.ts; without it the checks
 * skip and say why), and a built dist/ (npm test builds first).
 */
import { execFile } from 'node:child_process';
import { readFileSync, statSync } from 'node:fs';
import { join } from 'node:path';
import { pathToFileURL } from 'node:url';
import { promisify } from 'node:util';
import { describe, expect, it } from 'vitest';
import { chromium } from 'playwright-core';
import { tempDir } from '../support/temp-dir.js';
import { CHROMIUM, HAVE_CHROMIUM, NEEDS_CHROMIUM } from '../support/chromium.js';

const run = promisify(execFile);
const BIN = 'bin/mcptap.js';

describe('view --format html in headless Chromium', () => {
  it.runIf(HAVE_CHROMIUM)(`draws the sequence diagram with participant boxes and arrows, offline${NEEDS_CHROMIUM}`, async () => {
    const dir = tempDir('mcptap-html-');
    const logs = join(dir, 'logs');
    await run(process.execPath, [BIN, 'demo', '--log-dir', logs, '--no-color', '--speed', '0']);
    const page = join(dir, 'trace.html');
    await run(process.execPath, [BIN, 'view', '--format', 'html', '-o', page, logs]);
    expect(readFileSync(page, 'utf8')).not.toMatch(/<script/i);

    // A fresh profile per run: playwright takes it as launchPersistentContext's userDataDir (not --user-data-dir).
    const context = await chromium.launchPersistentContext(join(dir, 'profile'), {
      executablePath: CHROMIUM,
      viewport: { width: 1280, height: 900 },
      args: [
        '--headless',
        '--no-sandbox',
        '--disable-gpu',
        '--disable-quic',
        '--no-first-run',
        '--disable-background-networking',
        '--disable-component-update',
        '--disable-sync',
      ],
    });
    try {
      const tab = await context.newPage();
      const requests: string[] = [];
      tab.on('request', (r) => requests.push(r.url()));
      await tab.goto(pathToFileURL(page).href);

      const svg = tab.locator('svg.sequence');
      await svg.scrollIntoViewIfNeeded();
      const box = await svg.boundingBox();
      expect(box!.width).toBeGreaterThan(600);
      expect(box!.height).toBeGreaterThan(300);
      // User, Host, LLM, weather: a box at the top and the bottom of each lifeline.
      const names = await tab.locator('svg.sequence g.participant text').allTextContents();
      expect(new Set(names)).toEqual(new Set(['User', 'Host / client', 'LLM (ollama)', 'weather']));
      expect(await tab.locator('svg.sequence g.participant rect').count()).toBe(8);
      const arrows = tab.locator('svg.sequence line.arrow');
      expect(await arrows.count()).toBeGreaterThanOrEqual(10);
      // Arrows are drawn, not just present: each has a visible horizontal extent.
      const firstArrow = await arrows.first().boundingBox();
      expect(firstArrow!.width).toBeGreaterThan(100);
      const labels = await tab.locator('svg.sequence g.message text').allTextContents();
      expect(labels.some((t) => t.startsWith('tools/call get_weather'))).toBe(true);
      expect(labels.some((t) => t.startsWith('tool call get_weather'))).toBe(true);

      // A frame's JSON opens on click.
      const item = tab.locator('ol.records li', { hasText: 'tools/call get_weather' }).first();
      await item.locator('summary').click();
      await expect.poll(() => item.locator('pre').first().isVisible()).toBe(true);

      const shot = join(dir, 'trace.png');
      await svg.screenshot({ path: shot });
      expect(statSync(shot).size).toBeGreaterThan(10_000);
      console.log(`screenshot of the diagram: ${shot}`);
      expect(requests.filter((u) => !u.startsWith('file:') && !u.startsWith('data:'))).toEqual([]);
    } finally {
      await context.close();
    }
  });
});
