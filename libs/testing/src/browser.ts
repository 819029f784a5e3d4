// Debian's Chromium driven by playwright-core, for the browser tests (never a downloaded browser).
import { existsSync } from 'node:fs';
import { chromium, type BrowserContext, type Locator, type Page } from 'playwright-core';
import { waitFor } from './basics.js';

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

// Web-first checks over playwright-core's locators: each waits (up to its timeout) for the page to get there.
/** How long a web-first check waits by default. */
export const PAGE_TIMEOUT_MS = 15_000;

/** Waits until `read()` gives a value `wanted` accepts; fails naming `what` and the last value seen. */
export async function becomes<T>(what: string, read: () => Promise<T>, wanted: (value: T) => boolean, timeoutMs = PAGE_TIMEOUT_MS): Promise<void> {
  let last: T | undefined;
  try {
    await waitFor(async () => wanted((last = await read())), what, timeoutMs);
  } catch (error) {
    throw new Error(`${(error as Error).message}; last seen: ${JSON.stringify(last)}`);
  }
}
export const shows = (l: Locator, timeout = PAGE_TIMEOUT_MS) => l.first().waitFor({ state: 'visible', timeout });
export const hasAttr = (l: Locator, name: string, value: string, timeoutMs?: number) => becomes(`${l} [${name}=${value}]`, () => l.first().getAttribute(name), (v) => v === value, timeoutMs);
export const hasCount = (l: Locator, n: number) => becomes(`${n} of ${l}`, () => l.count(), (c) => c === n);
export const hasText = (l: Locator, text: string | RegExp) => becomes(`${l} to say ${text}`, async () => (await l.first().textContent()) ?? '', (t) => (typeof text === 'string' ? t.includes(text) : text.test(t)));
export const isFocused = (l: Locator) => becomes(`${l} to have focus`, () => l.evaluate((el) => el.ownerDocument.activeElement === el), (f) => f);
/** Nothing sticks out sideways (a narrow screen scrolls down, never across). */
export const fitsWidth = (page: Page) =>
  becomes(
    'the page to fit the viewport width',
    () =>
      page.evaluate(() => {
        const w = globalThis as unknown as { innerWidth: number; document: { documentElement: { scrollWidth: number } } };
        return w.document.documentElement.scrollWidth - w.innerWidth;
      }),
    (overflow) => overflow <= 0,
  );
/** Opens `path` of `url` and waits for the page's main heading. */
export async function visit(page: Page, url: string, path: string): Promise<void> {
  await page.goto(`${url}${path}`);
  await page.locator('main h1').waitFor();
}
