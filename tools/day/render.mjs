// `node tools/day/render.mjs <report folder> [plot ...]`: the plots of a `npm run day` report as PNG
// files beside their SVG (plots/<name>.png), drawn by Debian's chromium through playwright-core, for
// pages that take images (docs/day.md). Without names, every plot.
import { existsSync, readdirSync, readFileSync } from 'node:fs';
import { join } from 'node:path';
import { chromium } from 'playwright-core';

const [dir, ...names] = process.argv.slice(2);
if (!dir || dir === '--help') {
  console.log('Usage: node tools/day/render.mjs <report folder> [plot ...]   (needs Debian\'s chromium: apt-get install chromium)');
  process.exit(dir ? 0 : 2);
}
const plots = join(dir, 'plots');
const wanted = names.length > 0 ? names : readdirSync(plots).filter((f) => f.endsWith('.svg')).map((f) => f.slice(0, -4));
const executablePath = process.env['CHROMIUM_BIN'] ?? '/usr/bin/chromium';
if (!existsSync(executablePath)) {
  console.error(`render: ${executablePath} not found: install Debian's chromium (apt-get install chromium), or set CHROMIUM_BIN`);
  process.exit(2);
}
const browser = await chromium.launch({ executablePath, args: ['--no-sandbox'] });
try {
  const page = await browser.newPage({ deviceScaleFactor: 2 });
  for (const name of wanted) {
    const svg = readFileSync(join(plots, `${name}.svg`), 'utf8');
    await page.setContent(`<!doctype html><html><body style="margin:0">${svg}</body></html>`);
    await page.locator('svg').screenshot({ path: join(plots, `${name}.png`) });
    console.log(join(plots, `${name}.png`));
  }
} finally {
  await browser.close();
}
