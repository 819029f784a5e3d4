/**
 * The web console against a gateway that closes its reads (AGORA_READS=closed), in Debian's
 * Chromium through playwright-core: the console asks for a key file, logs in by signing the
 * gateway's challenge in the browser, reads the inbox with its session cookie (HttpOnly,
 * SameSite=Strict; nothing in the page's storage), decides an escalation with the same key, and
 * logs out, after which the session reads nothing. Screenshots go to apps/console/test-output/.
 */
import { mkdirSync, writeFileSync } from 'node:fs';
import { join } from 'node:path';
import type { Reply } from '@agora/contracts';
import { firstPage, launchChromium, REPO_ROOT, startStandalone, waitFor, type Standalone } from '@agora/testing';
import type { BrowserContext, Page } from 'playwright-core';
import { consoleBuilt } from '../src/index.js';

const SHOTS = join(REPO_ROOT, 'apps/console/test-output/screenshots');
// Proposals of the class `security` need constitutions nobody holds: one escalates at once for lack of coverage.
const TRIBUNAL_POLICY = { requiredConstitutions: { default: ['risk', 'premise', 'evidence', 'execution'], security: ['risk', 'compliance', 'privacy'] } };
const TIMEOUT_MS = 15_000;

describe('the console logs in with a key when reads are closed (e2e, Chromium)', () => {
  let agora: Standalone;
  let dir: string;
  let url: string;
  let browser: BrowserContext;
  let page: Page;
  const operatorKeyFile = () => agora.operatorKeyFile;
  const root = () => ({ agentId: 'root', ...agora.key('root') });
  const readAs = async (path: string, headers: Record<string, string>) => {
    const res = await fetch(`${url}${path}`, { headers });
    return { status: res.status, body: (await res.json()) as Reply<Record<string, unknown>> };
  };
  const shot = (name: string) => page.screenshot({ path: join(SHOTS, `${name}.png`), fullPage: true });

  beforeAll(async () => {
    if (!consoleBuilt()) throw new Error('the console is not built: run npm run build first (the e2e tests run what the build produced)');
    mkdirSync(SHOTS, { recursive: true });
    agora = await startStandalone({ label: 'console-login', env: { AGORA_READS: 'closed', AGORA_TRIBUNAL_POLICY: JSON.stringify(TRIBUNAL_POLICY) } });
    ({ dir, url } = agora);
    await agora.ok('root', 'RegisterAgent', { agentId: 'seldon', publicKey: agora.key('seldon').publicKey, displayName: 'Hari Seldon', roles: ['executive'] });
    await agora.ok('seldon', 'SubmitProposal', { proposalId: 'audit-trail', title: 'Keep every audit trail for a year', body: 'Store audit trails for 365 days.', problem: 'Audits need history', proposalClass: 'security' });
    await waitFor(async () => (await agora.get<{ status: string }>('/v1/proposal/proposals/audit-trail', { as: 'root' }).catch(() => undefined))?.status === 'escalated', 'the security proposal to escalate', TIMEOUT_MS);
    browser = await launchChromium(join(dir, 'chromium-profile'));
    page = await firstPage(browser);
  }, 120_000);

  afterAll(async () => {
    await browser?.close();
    await agora?.stop();
  }, 30_000);

  it('asks for a key file, and refuses a file that is not a key', async () => {
    await page.setViewportSize({ width: 390, height: 844 });
    const errors: string[] = [];
    page.on('console', (message) => void (message.type() === 'error' && errors.push(message.text())));
    await page.goto(`${url}/inbox`);
    await page.getByRole('heading', { name: 'Log in with your key' }).waitFor({ timeout: TIMEOUT_MS });
    // Asking who the page reads as before any login is not an error (no failed request in the console).
    expect(errors).toEqual([]);
    await shot('login-narrow');
    await page.setViewportSize({ width: 1280, height: 900 });
    await shot('login-wide');
    // Nothing of the log reached the page before the login.
    expect(await page.content()).not.toContain('audit trail');
    const notAKey = join(dir, 'notes.json');
    writeFileSync(notAKey, '{"hello": "world"}');
    await page.getByLabel(/Key file/).setInputFiles(notAKey);
    await page.getByRole('button', { name: 'Log in' }).click();
    await page.getByRole('alert').getByText(/no "secretKey"/).waitFor({ timeout: TIMEOUT_MS });
    await shot('login-refused');
  });

  it('logs in with the operator key file, reads the inbox with an HttpOnly session, and decides an escalation', async () => {
    const sent: string[] = [];
    page.on('request', (request) => {
      if (request.method() === 'POST') sent.push(request.postData() ?? '');
    });
    await page.getByLabel(/Key file/).setInputFiles(operatorKeyFile());
    await page.getByRole('button', { name: 'Log in' }).click();
    await page.getByText('Logged in as').waitFor({ timeout: TIMEOUT_MS });
    await page.getByRole('heading', { name: /inbox/i, level: 1 }).waitFor({ timeout: TIMEOUT_MS });
    const escalation = page.getByRole('article', { name: 'Keep every audit trail for a year' });
    await escalation.waitFor({ timeout: TIMEOUT_MS });
    // The key loaded to log in signs decisions too: no second prompt.
    await page.getByText(/Signing as/).waitFor({ timeout: TIMEOUT_MS });
    await page.locator('.live-live').waitFor({ timeout: TIMEOUT_MS });
    await shot('login-inbox');

    const cookies = await browser.cookies(url);
    const session = cookies.find((c) => c.name === 'agora_session');
    expect(session).toMatchObject({ httpOnly: true, sameSite: 'Strict', path: '/' });
    // The page's view of its own storage (typed here without the DOM library).
    const storage = await page.evaluate(() => {
      const w = globalThis as unknown as { document: { cookie: string }; localStorage: { length: number }; sessionStorage: { length: number } };
      return { cookie: w.document.cookie, stored: w.localStorage.length + w.sessionStorage.length };
    });
    expect(storage).toEqual({ cookie: '', stored: 0 });
    // The secret was never sent: only the challenge request, the signed challenge and, later, the decision.
    const secret = root().secretKey.slice('ed25519-secret:'.length);
    expect(sent.join('\n')).not.toContain(secret);

    await escalation.getByLabel('Reject').check();
    await escalation.getByLabel(/Reason/).fill('Nobody holds the compliance and privacy constitutions yet: register reviewers first.');
    await escalation.getByRole('button', { name: `Sign as ${root().agentId} and send` }).click();
    await escalation.getByText(/In the log: EscalationDecided/).waitFor({ timeout: TIMEOUT_MS });
    await escalation.getByText('✓ verified').first().waitFor({ timeout: TIMEOUT_MS });
    await shot('login-decided');
    expect(sent.join('\n')).not.toContain(secret);
    const cookie = `agora_session=${session!.value}`;
    expect((await readAs('/v1/proposal/proposals/audit-trail', { cookie })).body).toMatchObject({ ok: true, result: { status: 'rejected' } });

    // The session ends under the page (as at its expiry): with the key still in memory, the page logs in again by itself.
    await fetch(`${url}/v1/logout`, { method: 'POST', headers: { cookie } });
    await page.getByRole('link', { name: 'Fleet' }).click();
    await page.getByRole('row', { name: /seldon/ }).waitFor({ timeout: TIMEOUT_MS });
    await waitFor(async () => (await browser.cookies(url)).some((c) => c.name === 'agora_session' && c.value !== session!.value), 'a new session cookie', TIMEOUT_MS);
    await page.getByText('Logged in as').waitFor();
  });

  it('logs out: back to the login page, and the session reads nothing any more', async () => {
    const session = (await browser.cookies(url)).find((c) => c.name === 'agora_session')!;
    await page.getByRole('button', { name: 'Log out' }).click();
    await page.getByText(/You are logged out/).waitFor({ timeout: TIMEOUT_MS });
    await page.getByRole('heading', { name: 'Log in with your key' }).waitFor();
    await shot('login-logged-out');
    expect((await browser.cookies(url)).find((c) => c.name === 'agora_session')).toBeUndefined();
    for (const path of ['/v1/session', '/v1/proposal/proposals/audit-trail', '/v1/events']) {
      expect({ path, ...(await readAs(path, { cookie: `agora_session=${session.value}` })) }).toMatchObject({ path, status: 401, body: { ok: false, error: { code: 'unauthenticated' } } });
    }
  });
});
