/**
 * Outcome reports and the calibration figures, end to end over standalone mode's wiring (in-process
 * transport, embedded store, every service of the tribunal and the voting engine): signed commands
 * through the gate, the tribunal's own rounds, then the calibration query and /metrics of the
 * projections service agree on the figures the reviews, the revision, the approvals, the executions,
 * the outcome reports and the votes make.
 */
import {
  CastValidatorVote,
  CreateVotingSession,
  GetProposal,
  GetReviewerCalibration,
  GetValidatorAgreement,
  GetVotingSession,
  RecordExecution,
  ReportOutcome,
  ReviseProposal,
  SubmitProposal,
  SubmitReview,
  type CommandDefinition,
  type ProposalView,
  type ReviewerCalibration,
  type Role,
  type VotingSessionView,
} from '@agora/contracts';
import { generateKeyPair, type KeyPair } from '@agora/identity';
import { startProjectionsService, type RunningProjections } from '@agora/projections';
import { startProposalService } from '@agora/proposal';
import { startRegistryService } from '@agora/registry';
import { openServiceContext, startAll, type ServiceContext } from '@agora/runtime';
import { agentsOn, embeddedAgora, QUIET_PROJECTIONS, quietServices, REVIEWER_PROFILES, REVIEWERS, startServicesInProcess, waitFor, type InProcessServices } from '@agora/testing';
import { startTribunalService } from '@agora/tribunal';
import { startVotingService } from '@agora/voting';

const FLEET: Record<string, { roles: Role[]; constitutions?: string[] }> = {
  seldon: { roles: ['executive'] },
  deployer: { roles: ['executive'] },
  ...REVIEWER_PROFILES,
  val1: { roles: ['validator'] },
  val2: { roles: ['validator'] },
  val3: { roles: ['validator'] },
};

/** The samples of one metric in a Prometheus text exposition, as label sets with their values. */
function samplesOf(text: string, name: string): { labels: Record<string, string>; value: number }[] {
  const out: { labels: Record<string, string>; value: number }[] = [];
  for (const line of text.split('\n')) {
    const m = /^([a-z_:]+)(?:\{(.*)\})? (\S+)$/.exec(line);
    if (!m || m[1] !== name) continue;
    out.push({ labels: Object.fromEntries([...(m[2] ?? '').matchAll(/(\w+)="([^"]*)"/g)].map(([, k, v]) => [k!, v!])), value: Number(m[3]) });
  }
  return out;
}
const valueAt = (text: string, name: string, labels: Record<string, string>): number | undefined =>
  samplesOf(text, name).find((s) => Object.entries(labels).every(([k, v]) => s.labels[k] === v))?.value;

describe('outcome reports and calibration figures (standalone wiring)', () => {
  let agora: InProcessServices<ServiceContext>;
  let context: ServiceContext;
  let projections: RunningProjections;
  const keys: Record<string, KeyPair> = Object.fromEntries(['root', ...Object.keys(FLEET)].map((id) => [id, generateKeyPair()]));

  const agents = agentsOn(() => context.client, keys);
  const send = (definition: CommandDefinition, actor: string, payload: Record<string, unknown>) => agents.send(actor, definition, payload);
  const ok = (definition: CommandDefinition, actor: string, payload: Record<string, unknown>) => agents.ok(actor, definition, payload);
  const query = <T>(subject: string, params: unknown) => agents.query<T>(subject, params);
  const proposal = (proposalId: string) => query<ProposalView>(GetProposal.subject, { proposalId });
  const roundOpen = (proposalId: string, round: number) =>
    waitFor(async () => (await proposal(proposalId).catch(() => undefined))?.rounds.some((r) => r.round === round && r.status === 'open') === true, `round ${round} of ${proposalId} to open`, 30_000);
  const review = (proposalId: string, round: number, constitution: string, verdict: 'approve' | 'object') =>
    ok(SubmitReview, REVIEWERS[constitution as keyof typeof REVIEWERS], {
      proposalId,
      round,
      constitution,
      verdict,
      reasoning: `${constitution} on ${proposalId}`,
      ...(verdict === 'object' ? { constraint: `${constitution} constraint`, scenario: `${proposalId} breaks on ${constitution}`, suggestedRevision: `fix ${constitution}` } : {}),
    });
  const submit = (proposalId: string) => ok(SubmitProposal, 'seldon', { proposalId, title: proposalId, body: `Plan ${proposalId}`, problem: 'No users yet' });

  beforeAll(async () => {
    const start = (started: ServiceContext) => startAll([...quietServices(started, [startRegistryService, startProposalService, startTribunalService, startVotingService]), async () => (projections = await startProjectionsService(started, QUIET_PROJECTIONS))]);
    agora = await startServicesInProcess({ label: 'outcomes', keys, open: (dir, operator) => openServiceContext(embeddedAgora(dir, operator)), start });
    context = agora.context;
    await agora.register(FLEET, { trustScore: 700 });
  }, 60_000);

  afterAll(() => agora?.stop());

  it('reviews, a revision, approvals, executions and outcome reports make the figures of the query and of /metrics', async () => {
    // bounties: risk objects in round 1; the revision answers it; round 2 approves; executed; it failed.
    await submit('bounties');
    await roundOpen('bounties', 1);
    await review('bounties', 1, 'risk', 'object');
    for (const c of ['premise', 'evidence', 'execution']) await review('bounties', 1, c, 'approve');
    await waitFor(async () => (await proposal('bounties')).rounds[0]?.status === 'closed', 'round 1 of bounties to close');
    await ok(ReviseProposal, 'seldon', { proposalId: 'bounties', body: 'Bounties with a budget cap', answers: ['r1-risk'] });
    await roundOpen('bounties', 2);
    for (const c of ['risk', 'premise', 'evidence', 'execution']) await review('bounties', 2, c, 'approve');
    await waitFor(async () => (await proposal('bounties')).status === 'approved', 'bounties to be approved');

    // Not executed yet: refused, and so is a reviewer's report.
    expect(await send(ReportOutcome, 'seldon', { proposalId: 'bounties', outcome: 'failed', note: 'too early' })).toMatchObject({ ok: false, error: { code: 'illegal_state', message: expect.stringMatching(/has not been executed/) } });
    await ok(RecordExecution, 'seldon', { proposalId: 'bounties', summary: 'Bounties posted' });
    expect(await send(ReportOutcome, 'harbinger', { proposalId: 'bounties', outcome: 'failed', note: 'I said so' })).toMatchObject({ ok: false, error: { code: 'forbidden' } });
    expect(await ok(ReportOutcome, 'seldon', { proposalId: 'bounties', outcome: 'failed', note: 'No contributor came' })).toMatchObject({ events: ['OutcomeReported'] });
    // Once: the same report changes nothing, a different one is refused.
    expect(await ok(ReportOutcome, 'seldon', { proposalId: 'bounties', outcome: 'failed', note: 'No contributor came' })).toMatchObject({ events: [] });
    expect(await send(ReportOutcome, 'root', { proposalId: 'bounties', outcome: 'worked', note: 'changed my mind' })).toMatchObject({ ok: false, error: { code: 'illegal_state', message: expect.stringMatching(/already reported \(failed\)/) } });
    expect((await proposal('bounties')).outcome).toMatchObject({ outcome: 'failed', reporter: 'seldon', reportedAs: 'executive' });

    // demo: execution objects in round 1 and the executive proceeds anyway; an operator reports it worked.
    await submit('demo');
    await roundOpen('demo', 1);
    await review('demo', 1, 'execution', 'object');
    for (const c of ['risk', 'premise', 'evidence']) await review('demo', 1, c, 'approve');
    await ok(RecordExecution, 'seldon', { proposalId: 'demo', summary: 'Demo shipped anyway' });
    expect(await ok(ReportOutcome, 'root', { proposalId: 'demo', outcome: 'worked', note: 'Forty sign-ups' })).toMatchObject({ events: ['OutcomeReported'] });

    // Votes: a unanimous approval, then 2 approve / 1 deny (majority approve).
    for (const [sessionId, decisions] of [['v-unanimous', ['approve', 'approve', 'approve']], ['v-majority', ['approve', 'approve', 'deny']]] as const) {
      await ok(CreateVotingSession, 'deployer', { requestId: sessionId, actionType: 'deploy', riskLevel: 'high' });
      for (const [i, decision] of decisions.entries()) await ok(CastValidatorVote, `val${i + 1}`, { sessionId, decision, reasoning: decision, confidence: 0.9 });
      await waitFor(async () => (await query<VotingSessionView>(GetVotingSession.subject, { sessionId })).finalDecision === 'approve', `${sessionId} to be approved`);
    }

    // The query, once the projections have taken in both reports.
    type Calibration = { outcomes: { executed: number; worked: number; failed: number }; reviewers: ReviewerCalibration[] };
    let calibration: Calibration | undefined;
    await waitFor(async () => (calibration = await query<Calibration>(GetReviewerCalibration.subject, {})).outcomes.worked === 1, 'the calibration figures to show both reports');
    expect(calibration!.outcomes).toEqual({ executed: 2, worked: 1, failed: 1 });
    const row = (reviewer: string) => calibration!.reviewers.find((r) => r.reviewer === reviewer)!;
    expect(calibration!.reviewers.map((r) => `${r.reviewer}/${r.constitution}`)).toEqual(['harbinger/risk', 'heretic/premise', 'sentinel/evidence', 'zealot/execution']);
    // harbinger's objection was upheld by the revision; its final approval of bounties failed, of demo worked.
    expect(row('harbinger')).toMatchObject({ approvals: 2, objections: 1, upheldByRevision: 1, upheldByOutcome: 0, notUpheld: 0, pending: 0, upheldRate: 1, approvalsFailed: 1, approvalsWorked: 1 });
    // zealot's objection to demo was not answered and demo worked: not upheld.
    expect(row('zealot')).toMatchObject({ approvals: 2, objections: 1, upheldByRevision: 0, notUpheld: 1, upheldRate: 0, approvalsFailed: 1, objectionsWorked: 1 });
    expect(row('sentinel')).toMatchObject({ approvals: 3, objections: 0, upheldRate: null, approvalsFailed: 1, approvalsWorked: 1 });
    expect(await query(GetReviewerCalibration.subject, { reviewer: 'zealot' })).toMatchObject({ reviewers: [{ reviewer: 'zealot', constitution: 'execution' }] });

    type Agreement = { validators: { validator: string; agreed: number; disagreed: number }[] };
    let agreement: Agreement | undefined;
    await waitFor(async () => (agreement = await query<Agreement>(GetValidatorAgreement.subject, {})).validators.reduce((n, v) => n + v.agreed + v.disagreed, 0) === 6, 'the agreement figures to show every vote');
    expect(agreement!.validators.map((v) => [v.validator, v.agreed, v.disagreed])).toEqual([
      ['val1', 2, 0],
      ['val2', 2, 0],
      ['val3', 1, 1],
    ]);

    // /metrics says the same, computed at scrape time.
    const metrics = await (await fetch(projections.metricsUrl)).text();
    expect(valueAt(metrics, 'agora_tribunal_outcomes_total', { outcome: 'failed' })).toBe(1);
    expect(valueAt(metrics, 'agora_tribunal_outcomes_total', { outcome: 'worked' })).toBe(1);
    expect(valueAt(metrics, 'agora_tribunal_executed_proposals', {})).toBe(2);
    expect(valueAt(metrics, 'agora_tribunal_reviewer_objections', { reviewer: 'harbinger', constitution: 'risk', fate: 'upheld_by_revision' })).toBe(1);
    expect(valueAt(metrics, 'agora_tribunal_reviewer_objections', { reviewer: 'zealot', constitution: 'execution', fate: 'not_upheld' })).toBe(1);
    expect(valueAt(metrics, 'agora_tribunal_reviewer_objections', { reviewer: 'zealot', constitution: 'execution', fate: 'pending' })).toBe(0);
    expect(valueAt(metrics, 'agora_tribunal_reviewer_final_verdicts', { reviewer: 'harbinger', constitution: 'risk', verdict: 'approve', outcome: 'failed' })).toBe(1);
    expect(valueAt(metrics, 'agora_tribunal_reviewer_final_verdicts', { reviewer: 'zealot', constitution: 'execution', verdict: 'object', outcome: 'worked' })).toBe(1);
    expect(valueAt(metrics, 'agora_tribunal_reviewer_verdicts', { reviewer: 'sentinel', constitution: 'evidence', verdict: 'approve' })).toBe(3);
    expect(valueAt(metrics, 'agora_voting_validator_votes', { validator: 'val3', agreement: 'disagreed' })).toBe(1);
    expect(valueAt(metrics, 'agora_voting_validator_votes', { validator: 'val1', agreement: 'agreed' })).toBe(2);
    // Only the documented labels: no proposal or session id.
    const labels = new Set(['agora_tribunal_reviewer_verdicts', 'agora_tribunal_reviewer_objections', 'agora_tribunal_reviewer_final_verdicts', 'agora_voting_validator_votes', 'agora_tribunal_outcomes_total'].flatMap((name) => samplesOf(metrics, name).flatMap((s) => Object.keys(s.labels))));
    expect([...labels].sort()).toEqual(['agreement', 'constitution', 'fate', 'outcome', 'reviewer', 'validator', 'verdict']);
  }, 120_000);
});
