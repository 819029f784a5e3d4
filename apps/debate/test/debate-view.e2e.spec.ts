/**
 * The live debate view, in a real browser (Debian's Chromium driven by playwright-core): the
 * console's Debate page follows the seed's debate as its debaters play it, without a reload: the
 * stage indicator moves DISCOVERY -> CRUX_LOCK -> EVIDENCE -> CONVERGED, the steelman table, the
 * commitments and falsifiers fill in, and the final crux card appears. Screenshots are kept in
 * test-output/debate-view/ (desktop and a phone-sized single column). Needs the built console
 * (npm run build).
 */
import { mkdirSync, mkdtempSync, rmSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { consoleAssetsDir, consoleBuilt } from '@agora/console';
import { exampleScript } from '@agora/domain-debate';
import { launchChromium, REPO_ROOT } from '@agora/testing';
import type { BrowserContext, Page } from 'playwright-core';
import { playScript } from '../src/scripted.js';
import { startHarness, type Harness } from './support/harness.js';

const OUT = join(REPO_ROOT, 'test-output', 'debate-view');
describe('the live debate view in Chromium', () => {
  let h: Harness;
  let browser: BrowserContext;
  const profile = mkdtempSync(join(tmpdir(), 'agora-debate-view-'));
  let page: Page;
  const stage = () => page.locator('[data-testid="stage-current"]').first().getAttribute('data-stage');
  const shot = (name: string) => page.screenshot({ path: join(OUT, `${name}.png`), fullPage: true });

  beforeAll(async () => {
    if (!consoleBuilt(consoleAssetsDir())) throw new Error('the console is not built: npm run build');
    mkdirSync(OUT, { recursive: true });
    h = await startHarness({ console: true });
    browser = await launchChromium(profile, { width: 1200, height: 900 });
    page = browser.pages()[0] ?? (await browser.newPage());
  }, 60_000);
  afterAll(async () => {
    await browser?.close();
    await h?.close();
    rmSync(profile, { recursive: true, force: true });
  });

  it("follows the seed's debate live from the first message to the final crux", async () => {
    const script = exampleScript();
    await h.open('btc-gold');
    await page.goto(`${h.gateway.url}/debate`);
    await page.getByRole('link', { name: 'Bitcoin is digital gold' }).click();
    await page.waitForSelector('[data-testid="stage-current"][data-stage="DISCOVERY"]');
    await page.waitForFunction(`document.querySelector('[data-testid="stream-status"]')?.textContent?.startsWith('live')`);
    // A marker on the window: it would vanish if the page reloaded.
    await page.evaluate('window.marker = 42');
    await shot('1-discovery');

    await playScript(h.client, 'btc-gold', script.slice(0, 6));
    await page.waitForSelector('[data-testid="stage-current"][data-stage="CRUX_LOCK"]', { timeout: 15_000 });
    expect(await page.locator('.message').count()).toBe(6);
    expect(await page.locator('.message [class*="badge"]', { hasText: 'PROPOSE QUESTION' }).count()).toBe(1);

    await playScript(h.client, 'btc-gold', script.slice(6, 14)); // the first lock (at 8 messages) fails; the moderator answers
    await page.waitForSelector('.message-moderator', { timeout: 15_000 });
    await shot('2-crux-lock');
    const steelmans = page.locator('[data-testid="steelmans"] tbody tr');
    expect(await steelmans.count()).toBe(2); // one row per pair: saylor of hayes twice (INCOMPLETE, then ACCURATE), hayes of saylor once
    expect(await steelmans.first().textContent()).toMatch(/INCOMPLETE/);

    await playScript(h.client, 'btc-gold', script.slice(14, 16));
    await page.waitForSelector('[data-testid="stage-current"][data-stage="EVIDENCE"]', { timeout: 15_000 });
    expect(await page.locator('[data-testid="commitments"] tbody tr').count()).toBe(2);
    expect(await page.locator('[data-testid="falsifiers"] li').count()).toBe(2);
    await shot('3-evidence');

    await playScript(h.client, 'btc-gold', script.slice(16));
    await page.waitForSelector('[data-testid="crux-card"]', { timeout: 15_000 });
    expect(await stage()).toBe('CONVERGED');
    const card = page.locator('[data-testid="crux-card"]');
    expect(await card.textContent()).toMatch(/validated/);
    expect(await card.textContent()).toMatch(/Will Bitcoin hold its value when equities crash/);
    expect(await page.evaluate('window.marker')).toBe(42);
    await shot('4-converged');

    // A phone: one column, nothing wider than the screen.
    await page.setViewportSize({ width: 390, height: 844 });
    await page.waitForTimeout(200);
    expect(await page.evaluate('document.documentElement.scrollWidth')).toBeLessThanOrEqual(390);
    await shot('5-phone');
    await page.screenshot({ path: join(OUT, '6-phone-first-screen.png') });
  }, 120_000);
});
