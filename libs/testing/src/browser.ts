// Debian's Chromium driven by playwright-core, for the browser tests (never a downloaded browser).
import { existsSync } from 'node:fs';
import { chromium, type BrowserContext, type Page } from 'playwright-core';

/** The Chromium the browser tests drive: Debian's, or CHROMIUM_BIN. */
export const CHROMIUM_BIN = process.env['CHROMIUM_BIN'] ?? '/usr/bin/chromium';

/** Without the background-networking flags, Chromium keeps calling out of a machine with no network. */
const CHROMIUM_ARGS = ['--headless', '--no-sandbox', '--disable-gpu', '--disable-background-networking', '--disable-component-update', '--disable-sync', '--no-first-run'];

/**
 * A headless Chromium with a fresh profile in `profileDir`. Fails, saying how to install it, when
 * there is no Chromium: a browser test never passes by skipping.
 */
export async function launchChromium(profileDir: string, viewport = { width: 1280, height: 900 }): Promise<BrowserContext> {
  if (!existsSync(CHROMIUM_BIN)) throw new Error(`no Chromium at ${CHROMIUM_BIN}: apt-get install -y chromium (or set CHROMIUM_BIN)`);
  return chromium.launchPersistentContext(profileDir, { executablePath: CHROMIUM_BIN, headless: true, args: CHROMIUM_ARGS, viewport });
}

/** The first page of a browser from launchChromium, with the page's script errors printed to the test's output. */
export async function firstPage(browser: BrowserContext): Promise<Page> {
  const page = browser.pages()[0] ?? (await browser.newPage());
  page.on('pageerror', (error) => console.error(`page error: ${error.message}`));
  return page;
}
