/**
 * /docs in a real browser (Debian's Chromium driven by playwright-core): Swagger UI, served by the
 * gateway from swagger-ui-dist (no CDN), renders the gateway's OpenAPI document: operations and
 * schemas are visible, and the page links the AsyncAPI document, the JSON Schemas and the signing
 * specification, each of which the gateway serves. Nothing is fetched from anywhere else. The
 * screenshots are kept in test-output/docs/.
 */
import { mkdirSync, mkdtempSync, rmSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { openEmbeddedEventStore, type EventStore } from '@agora/eventstore';
import { InProcessAgoraClient, InProcessBus } from '@agora/messaging';
import { launchChromium, REPO_ROOT } from '@agora/testing';
import type { BrowserContext, Page } from 'playwright-core';
import { startGateway, type Gateway } from '../src/index.js';

const OUT = join(REPO_ROOT, 'test-output', 'docs');

describe('/docs in Chromium', () => {
  let dir: string;
  let store: EventStore;
  let bus: InProcessBus;
  let gateway: Gateway;
  let browser: BrowserContext;
  let page: Page;
  const requested: string[] = [];
  const problems: string[] = [];

  beforeAll(async () => {
    dir = mkdtempSync(join(tmpdir(), 'agora-docs-'));
    mkdirSync(OUT, { recursive: true });
    store = await openEmbeddedEventStore({ directory: join(dir, 'events') });
    bus = new InProcessBus();
    gateway = await startGateway({ client: new InProcessAgoraClient(bus), store, port: 0, host: '127.0.0.1', logger: false });
    browser = await launchChromium(join(dir, 'chromium-profile'), { width: 1280, height: 1000 });
    page = browser.pages()[0] ?? (await browser.newPage());
    page.on('request', (r) => requested.push(r.url()));
    page.on('console', (m) => {
      if (m.type() === 'error') problems.push(m.text());
    });
    page.on('pageerror', (e) => problems.push(e.message));
    page.on('response', (r) => {
      if (r.status() >= 400) problems.push(`${r.status()} ${r.url()}`);
    });
  }, 60_000);

  afterAll(async () => {
    await browser?.close();
    await gateway?.close();
    await store?.close();
    bus?.close();
    rmSync(dir, { recursive: true, force: true });
  });

  it('renders the operations and the schemas of the OpenAPI document, offline', async () => {
    await page.goto(`${gateway.url}/docs`);
    // An operation, as Swagger UI renders it: method, path and summary.
    const sendCommand = page.locator('.opblock-post', { hasText: '/v1/commands' });
    await sendCommand.first().waitFor({ timeout: 20_000 });
    await page.screenshot({ path: join(OUT, 'docs-top.png'), fullPage: false });
    expect(await sendCommand.first().locator('.opblock-summary-method').textContent()).toBe('POST');
    expect(await sendCommand.first().textContent()).toContain('Send a signed command');
    expect(await page.locator('.opblock-get', { hasText: '/v1/registry/agents/{agentId}' }).count()).toBeGreaterThan(0);
    // A schema of the components, in the Schemas section (Swagger UI's JSON Schema 2020-12 view); opened, it shows its properties.
    const envelope = page.locator('.models article.json-schema-2020-12', { has: page.locator('.json-schema-2020-12__title', { hasText: /^CommandEnvelope$/ }) });
    await envelope.first().waitFor();
    await envelope.first().locator('.json-schema-2020-12-accordion').first().click();
    for (const property of ['commandId', 'actor', 'issuedAt', 'signature']) await envelope.first().locator('.json-schema-2020-12-property', { hasText: property }).first().waitFor();
    // Opening an operation shows its request body.
    await sendCommand.first().locator('.opblock-summary').click();
    await sendCommand.first().locator('.opblock-section-request-body').waitFor();
    await page.screenshot({ path: join(OUT, 'docs-operation.png'), fullPage: false });

    // No warning from the viewer about the document (it shows them in the page), no failed request, no script error.
    expect(await page.locator('.swagger-ui .errors-wrapper, .swagger-ui .error-wrapper').count()).toBe(0);
    expect(problems).toEqual([]);
    const origin = new URL(gateway.url).origin;
    expect(requested.filter((url) => !url.startsWith(origin) && !url.startsWith('data:'))).toEqual([]);
  });

  it('links the AsyncAPI document, the JSON Schemas and the signing specification, which the gateway serves', async () => {
    await page.goto(`${gateway.url}/docs`);
    const hrefs = await page.locator('header a').evaluateAll((as) => as.map((a) => a.getAttribute('href') as string));
    expect(hrefs).toEqual(expect.arrayContaining(['/docs/openapi.json', '/docs/asyncapi.json', '/docs/signing.md', '/docs/json-schema/CommandEnvelope.json', '/docs/json-schema/commands/SubmitProposal.json']));
    for (const href of hrefs) {
      const res = await fetch(`${gateway.url}${href}`);
      expect([href, res.status]).toEqual([href, 200]);
    }
    const asyncapi = (await (await fetch(`${gateway.url}/docs/asyncapi.json`)).json()) as { asyncapi: string };
    expect(asyncapi.asyncapi).toMatch(/^3\./);
    const schema = (await (await fetch(`${gateway.url}/docs/json-schema/commands/SubmitProposal.json`)).json()) as { $schema: string };
    expect(schema.$schema).toBe('https://json-schema.org/draft/2020-12/schema');
    expect(await (await fetch(`${gateway.url}/docs/signing.md`)).text()).toContain('## Signing specification\n');
    const missing = await fetch(`${gateway.url}/docs/json-schema/commands/Nope.json`);
    expect([missing.status, ((await missing.json()) as { error: { code: string } }).error.code]).toEqual([404, 'not_found']);
  });
});
