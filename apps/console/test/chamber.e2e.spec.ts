/**
 * The Chamber page and the chamber's approvals in the human inbox, in a real browser (Debian's
 * Chromium through playwright-core) against the one-process standalone, its panel's providers
 * pointed at stand-in servers speaking the OpenAI, Anthropic and Gemini wire APIs (the only
 * stand-ins allowed: the paid providers, at the network boundary). An operator approves a session
 * in the inbox, signed in the browser; the approval is in the log signed by the operator; the
 * page shows the phases, the verdict, the provider errors verbatim, the transcript and the cost.
 * Screenshots go to apps/console/test-output/ (not committed): look at them.
 */
import { mkdirSync } from 'node:fs';
import { join } from 'node:path';
import type { ChamberSessionView } from '@agora/contracts';
import { verifyCommandSignature, type KeyPair, type SignedCommand } from '@agora/identity';
import { StandIns, type StandInRequest, type StandInScript } from '@agora/providers';
import { becomes, firstPage, fitsWidth as fitsWidthOf, hasText, launchChromium, REPO_ROOT, shows, startStandalone, visit as visitOn, waitFor, type Standalone } from '@agora/testing';
import type { BrowserContext, Page } from 'playwright-core';
import { consoleBuilt } from '../src/index.js';

const SHOTS = join(REPO_ROOT, 'apps/console/test-output/screenshots');

const BILLING = 'Should a five-person team rewrite its billing service in Rust this quarter, or harden the existing one?';
const CLUSTER = 'Should the staging cluster move to Kubernetes before the audit?';
const GEMINI_ERROR = 'Request contains an invalid argument: the staging cluster prompt was refused.';

/**
 * The panel, as the providers would answer (read off the chamber's prompts): blind, two against
 * one; in cross-examination the third comes round to the other position; the arbiter finds the
 * majority's position and rests on the answers holding it. The cluster question's Gemini call
 * fails with the provider's own error, so that session has too few answers and fails.
 */
const panel: StandInScript = (request: StandInRequest) => {
  const arbiter = request.prompt.includes("THE PANEL'S FINAL ANSWERS");
  const cross = request.prompt.includes("THE OTHER PANELISTS' ANSWERS");
  if (request.kind === 'google' && request.prompt.includes('Kubernetes')) return { status: 400, message: GEMINI_ERROR };
  const answer = (position: string, claims: string[]) => ({ position, confidence: 0.8, keyClaims: claims, evidence: [`evidence for: ${position}`], reasoning: `Reasoning towards "${position}".` });
  if (arbiter) {
    const shown = [...request.prompt.matchAll(/ANSWER ([A-J])\nPosition: (.*)/g)].map((m) => ({ label: m[1]!, position: m[2]! }));
    const holding = shown.filter((a) => a.position === shown[0]!.position);
    const majority = holding.length * 2 > shown.length ? holding : shown.filter((a) => a.position !== shown[0]!.position);
    return {
      json: { verdict: 'consensus', position: majority[0]!.position, synthesis: `The panel converges: ${majority[0]!.position}.`, restsOn: majority.map((a) => a.label), reasoning: 'The answers holding this position give the most specific evidence.', selfCheck: { leanedOn: majority[0]!.label, why: 'its evidence was the most specific' } },
      delayMs: 200,
    };
  }
  const harden = 'Harden the existing service';
  if (request.kind !== 'google') return { json: cross ? { ...answer(harden, ['nobody on the team knows Rust']), revised: false, influencedBy: null } : answer(harden, ['nobody on the team knows Rust']), delayMs: 200 };
  if (!cross) return { json: answer('Rewrite in Rust', ['a rewrite removes the race conditions']), delayMs: 200 };
  const label = /ANSWER ([A-J])\nPosition: Harden the existing service/.exec(request.prompt)?.[1] ?? null;
  return { json: { ...answer(harden, ['the pricing change lands in 10 weeks']), revised: true, influencedBy: label }, delayMs: 200 };
};

describe('the Chamber page and chamber approvals in the inbox, in Chromium (e2e)', () => {
  let stands: StandIns;
  let agora: Standalone;
  let url: string;
  let browser: BrowserContext;
  let page: Page;
  let root: KeyPair;
  let pipeline: KeyPair;
  const query = <T>(path: string): Promise<T> => agora.get<T>(path);
  const session = (id: string) => query<ChamberSessionView>(`/v1/chamber/sessions/${id}`);
  const concluded = async (id: string) => {
    let view: ChamberSessionView | undefined;
    await waitFor(async () => ((view = await session(id)).summary.outcome !== null && view.summary.pendingCalls === 0), `session ${id} to conclude`, 60_000);
    return view!;
  };
  const propose = (sessionId: string, question: string, context: string) =>
    waitFor(async () => (await agora.send('pipeline', 'ProposeChamberSession', { sessionId, question, context, rationale: 'A wrong call costs a quarter; one model may share our blind spot.' })).ok, `the proposal of ${sessionId} (once the chamber knows the pipeline agent)`, 20_000);
  const shot = (name: string) => page.screenshot({ path: join(SHOTS, `${name}.png`), fullPage: true });
  const visit = (path: string) => visitOn(page, url, path);
  const fitsWidth = () => fitsWidthOf(page);

  beforeAll(async () => {
    if (!consoleBuilt()) throw new Error('the console is not built: run npm run build first (the e2e tests run what the build produced)');
    mkdirSync(SHOTS, { recursive: true });
    stands = await StandIns.start(panel);
    agora = await startStandalone({ label: 'console-chamber-e2e', env: { ...stands.env, AGORA_PROVIDER_BACKOFF_MS: '50' } });
    url = agora.url;
    root = agora.key('root');
    pipeline = agora.key('pipeline');
    await agora.ok('root', 'RegisterAgent', { agentId: 'pipeline', publicKey: pipeline.publicKey, displayName: 'pipeline', roles: ['executive'], constitutions: [], trustScore: 500 });
    browser = await launchChromium(join(agora.dir, 'chromium-profile'));
    page = await firstPage(browser);
  }, 120_000);

  afterAll(async () => {
    await browser?.close();
    await agora?.stop();
    await stands?.close();
  }, 30_000);

  it('an operator approves a session in the inbox, signed in the browser; the page shows the phases, the verdict, the transcript and the cost', async () => {
    // The cluster session: approved over the API; Gemini refuses, so it fails with the error verbatim.
    await propose('cluster', CLUSTER, 'Staging runs on three hand-managed VMs; the audit is in six weeks.');
    await agora.ok('root', 'ApproveChamberSession', { sessionId: 'cluster' });
    expect((await concluded('cluster')).summary.outcome).toBe('failed');

    // The billing session waits for an operator: nothing is called before approval.
    await propose('billing', BILLING, 'The billing service is 40k lines of Python, 3 incidents last quarter (two from race conditions), no Rust experience on the team, a pricing change due in 10 weeks.');
    const billingCalls = () => stands.requests.filter((r) => r.prompt.includes('billing service')).length;
    expect(billingCalls()).toBe(0);

    // A second tab follows the session live from before the approval to its outcome, never reloaded.
    const watcher = await browser.newPage();
    await watcher.goto(`${url}/chamber/billing`);
    const watched = watcher.getByTestId('chamber-session');
    await becomes('the session to wait for approval', () => watched.getAttribute('data-status'), (s) => s === 'awaiting_approval');
    await watcher.evaluate(() => ((globalThis as unknown as { marker: string }).marker = 'same page'));

    await visit('/inbox');
    const item = page.getByRole('article', { name: BILLING });
    await shows(item.getByText(/Nothing is called before approval/));
    await hasText(page.getByRole('link', { name: /Human inbox/ }), '1');
    await page.getByLabel('Operator key file').setInputFiles(agora.operatorKeyFile);
    await page.getByRole('button', { name: 'Load key' }).click();
    await hasText(page.getByText(/Signing as/), 'root');
    await item.getByLabel('Approve the session').check();
    await item.getByLabel(/Note or reason/).fill('Go: a wrong call costs a quarter.');
    await shot('wide-inbox-chamber');
    await item.getByRole('button', { name: 'Sign as root and send' }).click();
    await shows(item.getByText(/In the log: ChamberSessionApproved/));
    await shows(item.getByText('✓ verified'));

    // The approval is in the log, signed by the operator: re-verified here from the event alone.
    const approved = (await session('billing')).transcript.find((e) => e.type === 'ChamberSessionApproved')!;
    expect(approved.actor).toBe('root');
    expect(approved.data).toMatchObject({ approvedBy: 'root', note: 'Go: a wrong call costs a quarter.' });
    const log = await readApproval(url, 'billing');
    expect(log.metadata['actor']).toBe('root');
    const m = log.metadata;
    const envelope = { commandId: m['commandId'], type: m['commandType'], actor: m['actor'], issuedAt: m['issuedAt'], payload: m['commandPayload'], signature: m['signature'] } as SignedCommand;
    expect(envelope.type).toBe('ApproveChamberSession');
    expect(verifyCommandSignature(envelope, root.publicKey)).toBe(true);
    expect(verifyCommandSignature({ ...envelope, payload: { ...envelope.payload, note: 'forged' } }, root.publicKey)).toBe(false);

    // The watching tab got there live.
    await becomes('the watching tab to show the outcome', () => watched.getAttribute('data-status'), (s) => s === 'consensus', 60_000);
    await shows(watcher.getByTestId('chamber-verdict'));
    expect(await watcher.evaluate(() => (globalThis as unknown as { marker?: string }).marker)).toBe('same page');
    await watcher.close();

    await visit('/chamber/billing');
    await shows(page.getByRole('heading', { name: BILLING }));
    const final = await concluded('billing');
    expect(final.summary.outcome).toBe('consensus');
    expect(billingCalls()).toBe(7); // three blind, three cross-examination, one arbiter
    await agora.ok('root', 'RecordChamberFollowUp', { sessionId: 'billing', decision: 'accepted', reason: 'matches what the team saw in the incidents' });

    const detail = page.getByTestId('chamber-session');
    await becomes('the session to show its outcome', () => detail.getAttribute('data-status'), (s) => s === 'consensus');
    await shows(page.getByTestId('chamber-verdict').getByText('Harden the existing service').first());
    await hasText(page.getByTestId('chamber-verdict'), /Rests on answer [A-J] .*answer [A-J] .*answer [A-J]/);
    await hasText(page.getByTestId('chamber-verdict'), /Blind majority"harden the existing service" \(2 of 3\)/i);
    await hasText(page.getByTestId('divergence-blind'), 'divergent');
    await hasText(page.getByTestId('position-changes'), /Answer [A-J] \(google:[^)]+\) moved from “?Rewrite in Rust”? to “?Harden the existing service”? toward Answer [A-J] \((openai|anthropic):[^)]+\)/i);
    await hasText(page.getByTestId('chamber-panel'), 'google');
    await hasText(page.getByTestId('chamber-follow-up'), 'matches what the team saw in the incidents');
    // The cost as the session recorded it, against its maximum.
    const money = (amount: number) => `${amount.toFixed(amount >= 1 ? 2 : 4)} ${final.summary.currency}`;
    expect(final.summary.cost).toBeGreaterThan(0);
    await hasText(page.getByTestId('chamber-cost'), `${money(final.summary.cost)} of at most ${money(final.summary.maxCost)}`);
    await hasText(page.getByTestId('chamber-verdict'), `Cost${money(final.summary.cost)}`);
    // The whole transcript, every event, the prompts verbatim on demand.
    const events = (await session('billing')).transcript.length; // the follow-up included
    expect(events).toBe(final.transcript.length + 1);
    await becomes('the whole transcript', () => page.getByTestId('chamber-transcript').locator('li').count(), (n) => n === events);
    const call = page.getByTestId('chamber-transcript').locator('li').filter({ hasText: 'ChamberCallRequested' }).first();
    await call.locator('summary').click();
    const prompt = call.locator('pre.verbatim').nth(1); // the system prompt, then the prompt
    await shows(prompt);
    await hasText(prompt, 'The billing service is 40k lines of Python');
    // The month's budget, from the ledger.
    await becomes('the budget to settle', async () => (await query<{ spent: number }>('/v1/chamber/budget')).spent, (spent) => spent > 0, 20_000);
    await hasText(page.getByTestId('chamber-budget'), /sessions today/);
    await hasText(page.getByTestId('chamber-budget'), /the month's budget/);

    for (const [width, height, tag] of [
      [1280, 900, 'wide'],
      [390, 844, 'narrow'],
    ] as const) {
      await page.setViewportSize({ width, height });
      await visit('/chamber/billing');
      await shows(page.getByTestId('chamber-verdict'));
      await fitsWidth();
      await shot(`${tag}-chamber`);
      // The failed session: the provider's error verbatim.
      await visit('/chamber/cluster');
      await shows(page.getByTestId('chamber-verdict').getByText('failed', { exact: true }));
      await hasText(page.getByTestId('chamber-verdict'), GEMINI_ERROR);
      await hasText(page.getByTestId('answers-blind'), 'HTTP 400');
      await fitsWidth();
      await shot(`${tag}-chamber-failed`);
      await visit('/inbox');
      await shows(page.getByText('0 waiting for a person.'));
    }
  }, 180_000);
});

/** A session's ChamberSessionApproved event, read off GET /v1/events (the log, as any client reads it). */
async function readApproval(url: string, sessionId: string): Promise<{ metadata: Record<string, unknown> }> {
  const controller = new AbortController();
  const res = await fetch(`${url}/v1/events?type=ChamberSessionApproved`, { signal: controller.signal });
  const reader = res.body!.pipeThrough(new TextDecoderStream()).getReader();
  let buffer = '';
  try {
    for (;;) {
      const next = await reader.read();
      if (next.done) throw new Error('the event stream ended without the approval');
      buffer += next.value;
      const complete = buffer.slice(0, buffer.lastIndexOf('\n') + 1);
      for (const line of complete.split('\n').filter((l) => l.startsWith('data: '))) {
        const event = JSON.parse(line.slice('data: '.length)) as { data: { sessionId?: string }; metadata: Record<string, unknown> };
        if (event.data.sessionId === sessionId) return event;
      }
    }
  } finally {
    controller.abort();
  }
}
