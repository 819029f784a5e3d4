/**
 * The web console in a real browser (Debian's Chromium through playwright-core; never a downloaded
 * browser) against a running Agora (the one-process standalone, started as a user would) after
 * the tribunal, voting and dialectic demos: every page shows the demos' data, stays live without
 * reloading, works by keyboard and on a narrow screen, and an operator decides what waits for a
 * person in the browser, each decision signed there and found in the log signed by the operator.
 * Screenshots go to apps/console/test-output/ (not committed): look at them.
 */
import { mkdirSync, readFileSync } from 'node:fs';
import { join } from 'node:path';
import { consoleBuilt } from '../src/index.js';
import { generateKeyPair, parseKeyFile, verifyCommandSignature, type SignedCommand } from '@agora/identity';
import { firstPage, fitsWidth as fitsWidthOf, hasAttr, hasCount, hasText, isFocused, launchChromium, REPO_ROOT, runToCompletion, shows, startStandalone, visit as visitOn, waitFor, type Standalone } from '@agora/testing';
import type { BrowserContext, Page } from 'playwright-core';

const SHOTS = join(REPO_ROOT, 'apps/console/test-output/screenshots');
// A round may be time-boxed in seconds (the tribunal demo's silent reviewer), and proposals of the
// class `security` need constitutions nobody holds, so one escalates at once for lack of coverage.
const TRIBUNAL_POLICY = { minRoundDeadlineMs: 1000, requiredConstitutions: { default: ['risk', 'premise', 'evidence', 'execution'], security: ['risk', 'compliance', 'privacy'] } };

interface LogEvent {
  type: string;
  streamId: string;
  data: Record<string, unknown>;
  metadata: Record<string, unknown>;
}

describe('the web console in Chromium (e2e)', () => {
  let agora: Standalone;
  let dir: string;
  let url: string;
  let browser: BrowserContext;
  let page: Page;
  const opsKeyFile = () => join(dir, 'demo-keys', 'ops.key.json');
  // Signed with the demos' keys (<data>/demo-keys), over POST /v1/commands.
  const send = (actor: string, type: string, payload: Record<string, unknown>) => agora.ok(actor, type, payload);
  const query = <T>(path: string): Promise<T> => agora.get<T>(path);
  /** Every event of the log so far, read off GET /v1/events until it has been quiet for a moment. */
  const readLog = async (filter: string): Promise<LogEvent[]> => {
    const controller = new AbortController();
    const res = await fetch(`${url}/v1/events?${filter}`, { signal: controller.signal });
    const reader = res.body!.pipeThrough(new TextDecoderStream()).getReader();
    const events: LogEvent[] = [];
    let buffer = '';
    for (;;) {
      const next = await Promise.race([reader.read(), new Promise<'quiet'>((resolve) => setTimeout(() => resolve('quiet'), 700))]);
      if (next === 'quiet' || next.done) break;
      buffer += next.value;
      for (let end = buffer.indexOf('\n\n'); end >= 0; end = buffer.indexOf('\n\n')) {
        const data = buffer
          .slice(0, end)
          .split('\n')
          .filter((l) => l.startsWith('data: '))
          .map((l) => l.slice(6))
          .join('\n');
        buffer = buffer.slice(end + 2);
        if (data) events.push(JSON.parse(data) as LogEvent);
      }
    }
    controller.abort();
    return events;
  };
  const demo = async (scenario: string) => {
    const run = await runToCompletion('tools/demo/src/main.ts', [scenario, '--url', url, '--data', dir, '--metrics', `${url}/metrics`], {}, 90_000);
    if (run.code !== 0) throw new Error(`demo ${scenario} failed (${run.code}):\n${run.stdout}${run.stderr}`);
  };
  const shot = async (name: string) => {
    await page.screenshot({ path: join(SHOTS, `${name}.png`), fullPage: true });
  };
  const visit = (path: string) => visitOn(page, url, path);
  const fitsWidth = () => fitsWidthOf(page);

  beforeAll(async () => {
    if (!consoleBuilt()) throw new Error('the console is not built: run npm run build first (the e2e tests run what the build produced)');
    mkdirSync(SHOTS, { recursive: true });
    agora = await startStandalone({ label: 'console-e2e', env: { AGORA_TRIBUNAL_POLICY: JSON.stringify(TRIBUNAL_POLICY) } });
    ({ dir, url } = agora);
    for (const scenario of ['tribunal', 'voting', 'dialectic']) await demo(scenario);
    // An escalation nobody has decided yet: the tribunal demo's deadlock is decided by ops in the demo itself.
    await send('seldon', 'SubmitProposal', { proposalId: 'audit-trail', title: 'Keep every audit trail for a year', body: 'Store audit trails for 365 days.', problem: 'Audits need history', proposalClass: 'security' });
    await waitFor(async () => (await query<{ status: string }>('/v1/proposal/proposals/audit-trail')).status === 'escalated', 'the security proposal to escalate');
    // A consultation of the chamber that waits for an operator (the one the demo's deadlock attached is moot: ops decided that escalation).
    await send('seldon', 'ProposeChamberSession', { sessionId: 'retention', question: 'Should audit trails be kept for one year or for five?', context: 'Regulators ask for five years; storage would cost three times as much.', rationale: 'One model may share our blind spot on regulation.' });
    // The demo's rogue proposal, executed despite an objection: an operator reports that it failed.
    const rogue = (await query<{ proposals: { proposalId: string }[] }>('/v1/proposal/proposals?limit=1000')).proposals.find((p) => p.proposalId.startsWith('rogue'))!.proposalId;
    await send('ops', 'ReportOutcome', { proposalId: rogue, outcome: 'failed', note: 'The week went to the wrong thing.' });

    browser = await launchChromium(join(dir, 'chromium-profile'));
    page = await firstPage(browser);
  }, 180_000);

  afterAll(async () => {
    await browser?.close();
    await agora?.stop();
  }, 30_000);

  it("shows every page with the demos' data, wide and narrow", async () => {
    for (const [width, height, tag] of [
      [1280, 900, 'wide'],
      [390, 844, 'narrow'],
    ] as const) {
      await page.setViewportSize({ width, height });

      await visit('/');
      await page.getByRole('row', { name: /seldon/ }).waitFor();
      await hasText(page.getByRole('heading', { level: 1 }), 'Fleet');
      // lyra waits for a human at tier 3: paused, with a link to her recovery.
      const lyra = page.getByRole('row', { name: /lyra/ });
      await shows(lyra.getByText('paused'));
      await hasAttr(lyra.getByRole('link', { name: 'recovery' }), 'href', '/dialectic/lyra-p1');
      await shows(page.getByRole('row', { name: /harbinger/ }).getByText('reviewer'));
      // nova, resumed after its recovery and not reported on since: active, its health and risk greyed as the figures that paused it.
      const nova = page.getByRole('row', { name: /nova/ });
      await shows(nova.getByText('resumed, no report since'));
      await hasAttr(nova.getByRole('meter', { name: 'health of nova' }), 'data-stale', 'true');
      await hasAttr(nova.getByRole('meter', { name: 'risk of nova' }), 'data-stale', 'true');
      expect(await page.getByRole('row', { name: /aegis/ }).getByRole('meter', { name: 'health of aegis' }).getAttribute('data-stale')).toBeNull();
      await fitsWidth();
      await shot(`${tag}-fleet`);

      await visit('/tribunal');
      await page.getByText(/challenge rate over 30 days/).waitFor();
      // The demos review a handful of proposals: the band says that is too few to judge, not an alarm.
      await hasText(page.locator('.tiles'), /\d+ reviewed: too few to judge \(healthy is 20–40 % over 20 or more\)/);
      const deadlock = page.getByRole('link', { name: /^deadlock/ });
      await deadlock.click();
      await shows(page.getByRole('heading', { name: 'deadlock', level: 2 }));
      await shows(page.getByText('The rewrite misses the weekend and nothing works on Monday.').first());
      await shows(page.getByText(/Risk: no big-bang rewrites/).first());
      await hasText(page.getByLabel('Constitutions covered'), 'premise');
      await shows(page.getByText(/deadlock/).first());
      await shows(page.getByText('Round 3'));
      await fitsWidth();
      await shot(`${tag}-tribunal`);
      await page.getByRole('link', { name: /^space-os/ }).click();
      await shows(page.getByText(/answered by revision 2/).first());
      await page.getByRole('link', { name: /^rogue/ }).click();
      await hasText(page.locator('#proposal-outcome'), /failed reported by .*ops.* \(operator\).*The week went to the wrong thing\./);
      await shot(`${tag}-tribunal-outcome`);

      await visit('/voting');
      await page.getByRole('link', { name: /rotate_root_keys/ }).click();
      await shows(page.getByRole('row', { name: /aegis/ }).getByText('Rotating during business hours risks locking out the on-call team.'));
      await shows(page.getByText(/requires a human: critical not unanimous/));
      await shows(page.getByRole('row', { name: /aegis/ }).getByText('deny'));
      await hasAttr(page.getByRole('meter', { name: 'confidence of aegis' }), 'aria-valuenow', '0.9');
      // Its votes are in and a person must decide: it reads as waiting for a human, never "decided" beside it.
      const rotate = page.getByRole('link', { name: /rotate_root_keys/ });
      await hasText(rotate, /votes in: waiting for a human/);
      expect(await rotate.getByText('decided', { exact: true }).count()).toBe(0);
      expect(await page.locator('.card-head .chips').getByText('decided', { exact: true }).count()).toBe(0);
      await fitsWidth();
      await shot(`${tag}-voting`);

      await visit('/dialectic/nova-p1');
      await shows(page.getByRole('heading', { name: /Recovery of nova/ }));
      await shows(page.getByText('Thesis', { exact: true }));
      await shows(page.getByText('Antithesis', { exact: true }));
      await shows(page.getByText('Synthesis, round 2'));
      await shows(page.getByText(/hard limit: risk threshold above max/));
      // Both resolution signatures, checked in the browser.
      await hasCount(page.getByText('✓ signature verified'), 2);
      await hasText(page.getByLabel('Escalation ladder'), 'Tier 3 · operator');
      await fitsWidth();
      await shot(`${tag}-dialectic`);

      await visit('/chamber');
      // A consultation: nothing called before an operator approves. The one the tribunal's deadlock asked for
      // was cancelled as moot when ops decided that escalation in the demo.
      await hasAttr(page.getByTestId('chamber-session').filter({ hasText: /Should audit trails be kept/ }), 'data-status', 'awaiting_approval');
      const consultations = await query<{ sessions: { question: string; status: string }[] }>('/v1/chamber/sessions?limit=100');
      expect(consultations.sessions.filter((c) => c.question.includes('The reviewers of the proposal "deadlock" deadlocked')).map((c) => c.status)).toEqual(['cancelled']);
      await shows(page.getByRole('link', { name: 'decide in the inbox' }));
      await hasText(page.getByTestId('chamber-budget'), /sessions today/);
      await fitsWidth();
      await shot(`${tag}-chamber-awaiting`);

      await visit('/events');
      await page.locator('tr[data-event-type="EscalationDecided"]').first().waitFor();
      // The count of events beside the last position, and a note on why positions run ahead of it; each row its stream@revision and position.
      await hasText(page.locator('.lede').first(), /\d+ events received, up to log position \d+/);
      await shows(page.getByTestId('positions-note'));
      await hasText(page.locator('tr[data-event-type="EscalationDecided"]').first(), /[a-z_]+-\S+@\d+ · position \d+/);
      // ops decided the demo's deadlock: its command, signed in the demo, verifies in the browser.
      await hasAttr(page.locator('tr[data-event-type="EscalationDecided"]').first(), 'data-signature', 'verified');
      await page.getByLabel('Stream category').selectOption('voting_session');
      await page.getByLabel('Event type').selectOption('ValidatorVoteReceived');
      await page.getByLabel('Actor').selectOption('aegis');
      await hasCount(page.locator('tbody tr'), 2);
      for (const row of await page.locator('tbody tr').all()) expect(await row.getAttribute('data-signature')).toBe('verified');
      expect(new URL(page.url()).search).toBe('?category=voting_session&type=ValidatorVoteReceived&actor=aegis');
      await fitsWidth();
      await shot(`${tag}-events`);
      await page.getByRole('button', { name: 'Clear filters' }).click();
      // Nothing in the log fails its check or is signed under a key the console cannot find: root's key
      // and the services' (configured outside the log) come from the registry's configured keys.
      await hasCount(page.locator('tr[data-signature="checking"]'), 0);
      await hasCount(page.locator('tr[data-signature="failed"]'), 0);
      await hasCount(page.locator('tr[data-signature="unknown_key"]'), 0);
      await hasAttr(page.locator('tr[data-event-type="AgentRegistered"]').last(), 'data-signature', 'verified');
      // A service's own command (the tribunal opening a round), signed with its service key.
      await hasAttr(page.locator('tr[data-event-type="ReviewRoundOpened"]').last(), 'data-signature', 'verified');

      await visit('/inbox');
      await shows(page.getByRole('heading', { name: 'Keep every audit trail for a year' }));
      await shows(page.getByRole('heading', { name: 'rotate_root_keys' }));
      await shows(page.getByRole('heading', { name: 'Recovery of lyra' }));
      // A consultation waits for an operator's approval; the deadlock's, moot once its escalation was decided, is not here.
      await shows(page.getByRole('heading', { name: /Should audit trails be kept/ }));
      expect(await page.getByRole('heading', { name: /The reviewers of the proposal "deadlock" deadlocked/ }).count()).toBe(0);
      await hasText(page.getByRole('link', { name: /Human inbox/ }), '4');
      await fitsWidth();
      await shot(`${tag}-inbox`);
    }
  }, 120_000);

  it('stays live: a change in the log shows without reloading', async () => {
    await page.setViewportSize({ width: 1280, height: 900 });
    await visit('/fleet');
    const kestrel = page.getByRole('meter', { name: 'risk of kestrel' });
    await hasAttr(kestrel, 'aria-valuenow', '0');
    await page.evaluate(() => ((globalThis as unknown as { marker: string }).marker = 'same page'));
    await send('kestrel', 'ReportHealth', { agentId: 'kestrel', health: 0.8, risk: 0.35, tags: [], metrics: {} });
    await hasAttr(kestrel, 'aria-valuenow', '0.35', 10_000);
    expect(await page.evaluate(() => (globalThis as unknown as { marker?: string }).marker)).toBe('same page');
  }, 30_000);

  it('is usable by keyboard: a skip link to the content, focus moved to each page', async () => {
    await visit('/fleet');
    await page.keyboard.press('Tab');
    await isFocused(page.getByRole('link', { name: 'Skip to content' }));
    await page.keyboard.press('Enter');
    await isFocused(page.locator('main'));
    await page.getByRole('link', { name: 'Voting' }).focus();
    await page.keyboard.press('Enter');
    await hasText(page.getByRole('heading', { level: 1 }), 'Voting');
    await isFocused(page.locator('main'));
    await hasAttr(page.getByRole('link', { name: 'Voting' }), 'aria-current', 'page');
    // Landmarks, and a label for every form field.
    await hasCount(page.getByRole('banner'), 1);
    await hasCount(page.getByRole('navigation', { name: 'Pages' }), 1);
    await hasCount(page.getByRole('main'), 1);
    for (const path of ['/events', '/inbox']) {
      await visit(path);
      const unlabelled = await page.locator('input, select, textarea').evaluateAll((fields) => fields.filter((f) => !(f as unknown as { labels?: { length: number } }).labels?.length).length);
      expect(unlabelled).toBe(0);
    }
  }, 30_000);

  it('lets an operator decide in the browser: signed there with a key file that never leaves the page, then in the log, signed by the operator', async () => {
    const ops = parseKeyFile(readFileSync(opsKeyFile(), 'utf8'));
    const sentBodies: string[] = [];
    page.on('request', (request) => {
      if (request.method() === 'POST') sentBodies.push(request.postData() ?? '');
    });
    await visit('/inbox');
    await page.getByLabel('Operator key file').setInputFiles(opsKeyFile());
    await page.getByRole('button', { name: 'Load key' }).click();
    await hasText(page.getByText(/Signing as/), 'ops');

    // The tribunal escalation: rejected, with a reason.
    const tribunal = page.getByRole('article', { name: 'Keep every audit trail for a year' });
    await tribunal.getByLabel('Reject').check();
    await tribunal.getByLabel(/Reason/).fill('Nobody holds the compliance and privacy constitutions yet: register reviewers first.');
    await tribunal.getByRole('button', { name: 'Sign as ops and send' }).click();
    await shows(tribunal.getByText(/Decided: EscalationDecided/));
    await shows(tribunal.getByText(/In the log: EscalationDecided/), 15_000);
    await shows(tribunal.getByText('✓ verified'));

    // The vote that needs a human: approved.
    const voting = page.getByRole('article', { name: 'rotate_root_keys' });
    await voting.getByLabel('Approve the action').check();
    await voting.getByLabel(/Reason/).fill('Rotate tonight, outside business hours, with the on-call team warned.');
    await voting.getByRole('button', { name: 'Sign as ops and send' }).click();
    await shows(voting.getByText(/In the log: VotingEscalationResolved/), 15_000);

    // The tier-3 recovery: resumed under a resolution the operator signs in the browser.
    const dialectic = page.getByRole('article', { name: 'Recovery of lyra' });
    await dialectic.getByLabel(/Resume under a resolution/).check();
    await dialectic.getByText(/Resolution terms/).click();
    await dialectic.getByLabel('Root cause').fill('A scheduled campaign, announced late');
    await dialectic.getByLabel('Conditions (JSON)').fill('[{"operation":"set_risk_threshold","parameters":{"threshold":0.75}}]');
    await dialectic.getByLabel(/Reasoning/).fill('The campaign was planned; announce campaigns to the fleet first.');
    await dialectic.getByRole('button', { name: 'Sign as ops and send' }).click();
    await shows(dialectic.getByText(/In the log: RecoveryDecided/), 15_000);

    // The chamber consultation: rejected (nothing is called).
    const chamber = page.getByRole('article', { name: /Should audit trails be kept/ });
    await chamber.getByLabel('Reject the session').check();
    await chamber.getByLabel(/Note or reason/).fill('Legal decides this one.');
    await chamber.getByRole('button', { name: 'Sign as ops and send' }).click();
    await shows(chamber.getByText(/In the log: ChamberSessionRejected/), 15_000);
    await shot('wide-inbox-decided');

    // The secret never went over the wire: only the four signed envelopes were posted.
    expect(sentBodies).toHaveLength(4);
    for (const body of sentBodies) expect(body).not.toContain(ops.secretKey.slice('ed25519-secret:'.length));

    // The decisions are in the log, each signed by ops: re-verified here from the events alone.
    const decided = (await readLog('type=EscalationDecided&type=VotingEscalationResolved&type=RecoveryDecided&type=ChamberSessionRejected')).filter((e) => e.metadata['actor'] === 'ops' && e.metadata['commandPayload']);
    const byType = new Map(decided.map((e) => [e.type, e]));
    expect([...byType.keys()].sort()).toEqual(['ChamberSessionRejected', 'EscalationDecided', 'RecoveryDecided', 'VotingEscalationResolved']);
    expect(byType.get('ChamberSessionRejected')!.data).toMatchObject({ rejectedBy: 'ops', reason: 'Legal decides this one.' });
    expect(byType.get('EscalationDecided')!.data).toMatchObject({ proposalId: 'audit-trail', decision: 'reject', operator: 'ops' });
    const registered = await query<{ publicKey: string }>('/v1/registry/agents/ops');
    for (const event of byType.values()) {
      const m = event.metadata;
      const envelope = { commandId: m['commandId'], type: m['commandType'], actor: m['actor'], issuedAt: m['issuedAt'], payload: m['commandPayload'], signature: m['signature'] } as SignedCommand;
      expect(verifyCommandSignature(envelope, registered.publicKey)).toBe(true);
      expect(verifyCommandSignature({ ...envelope, payload: { ...envelope.payload, reason: 'forged' } }, registered.publicKey)).toBe(false);
    }
    // And they took effect.
    expect(await query('/v1/proposal/proposals/audit-trail')).toMatchObject({ status: 'rejected' });
    await waitFor(async () => (await query<{ breaker: { state: string } }>('/v1/registry/agents/lyra')).breaker.state === 'closed', 'lyra to resume');
    expect(await query('/v1/dialectic/sessions/lyra-p1')).toMatchObject({ status: 'resolved', resolved: { resolution: { decidedBy: 'operator', decider: 'ops' }, signatures: [{ signer: 'ops', role: 'operator' }] } });

    // The log page marks the operator's decisions verified.
    await visit('/events?actor=ops');
    await hasAttr(page.locator('tr[data-event-type="RecoveryDecided"]'), 'data-signature', 'verified');
    await shot('wide-events-ops');
    await page.setViewportSize({ width: 390, height: 844 });
    await visit('/inbox');
    await shows(page.getByText('0 waiting for a person.'));
    await shot('narrow-inbox-empty');
  }, 60_000);

  it('shows a fleet larger than a page one page at a time, with a control for the next', async () => {
    // 200 more agents: with the demos' there are more than two pages of 100.
    const count = async () => (await query<{ agents: unknown[] }>('/v1/registry/agents?includeDisabled=true&limit=1000')).agents.length;
    const total = (await count()) + 200;
    const ids = Array.from({ length: 200 }, (_, i) => `fleet-${String(i).padStart(3, '0')}`);
    for (let i = 0; i < ids.length; i += 25) {
      await Promise.all(ids.slice(i, i + 25).map((agentId) => send('ops', 'RegisterAgent', { agentId, publicKey: generateKeyPair().publicKey, displayName: agentId, roles: ['observer'] })));
    }
    await waitFor(async () => (await count()) === total, 'the registry to list every agent');
    await page.setViewportSize({ width: 1280, height: 900 });
    await visit('/fleet');
    const rows = page.locator('main tbody tr');
    await hasCount(rows, 100);
    await shows(page.getByText('first 100 agents'));
    const more = page.getByRole('button', { name: 'Show more agents' });
    await more.click();
    await hasCount(rows, 200);
    await shows(page.getByText('200 agents shown, more follow'));
    await shot('wide-fleet-paged');
    await more.click();
    await hasCount(rows, total);
    await hasCount(more, 0);
    // In id order, each agent once.
    const shown = await page.locator('main tbody tr th .strong').allTextContents();
    expect(shown).toEqual([...new Set(shown)].sort());
  }, 60_000);
});
