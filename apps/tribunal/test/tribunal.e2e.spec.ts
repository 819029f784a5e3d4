// The tribunal as an operator runs it: registry, proposal, tribunal and projections as separate
// processes over a NATS server of the test's own (so no other run's services join their queue
// groups), the log in JetStream. A fleet of
// agents (the seed's Space-OS cast) speaks to them over NATS with signed commands; the figures are
// read back from the projections' /metrics.
import { GetAgent, GetProposal, type AgentView, type ProposalView } from '@agora/contracts';
import { openJetStreamEventStore, type EventStore } from '@agora/eventstore';
import { REVIEWER_PROFILES, startServiceFleet, waitFor, type ServiceFleet } from '@agora/testing';

// Rounds are long enough that reviews always arrive in time; the one round that must expire asks
// for its own time-box, long enough to restart every process (from source) before it is due.
const POLICY = { roundDeadlineMs: 120_000, minRoundDeadlineMs: 1_000, maxRoundsBeforeEscalation: 2 };
const QUIET_ROUND_MS = 20_000;
const SERVICES = ['registry', 'proposal', 'projections', 'tribunal'] as const;

const CAST = {
  seldon: { roles: ['executive'], constitutions: [] },
  ...REVIEWER_PROFILES,
  ops: { roles: ['operator'], constitutions: [] },
} as const;
type Agent = keyof typeof CAST;

describe('the tribunal over separate processes (e2e)', () => {
  let fleet: ServiceFleet;
  let metricsUrl: string;
  let store: EventStore;

  const start = async (name: (typeof SERVICES)[number]) => {
    const started = await fleet.start(name);
    if (name === 'projections') metricsUrl = /metrics: (http:\S+\/metrics)/.exec(started.output())![1]!;
  };
  const send = (agent: Agent | 'root', type: string, payload: Record<string, unknown>) => fleet.send(agent, type, payload);
  const ok = (agent: Agent | 'root', type: string, payload: Record<string, unknown>) => fleet.ok(agent, type, payload);
  const proposal = (proposalId: string) => fleet.query<ProposalView>(GetProposal.subject, { proposalId });
  const roundOpened = (proposalId: string, round: number) =>
    waitFor(async () => (await proposal(proposalId)).rounds.some((r) => r.round === round && r.status === 'open'), `round ${round} of ${proposalId} to open`, 15_000);
  const statusOf = (proposalId: string, status: string) => waitFor(async () => (await proposal(proposalId)).status === status, `${proposalId} to be ${status}`, 40_000);
  const review = (agent: Agent, proposalId: string, round: number, constitution: string, verdict: 'approve' | 'object', objection: Record<string, string> = {}) =>
    ok(agent, 'SubmitReview', { proposalId, round, constitution, verdict, reasoning: `${agent} on ${constitution}`, ...objection });
  const submit = (proposalId: string, body: string, extra: Record<string, unknown> = {}) =>
    ok('seldon', 'SubmitProposal', { proposalId, title: `Plan ${proposalId}`, body, problem: 'Space-OS needs users', evidence: [{ ref: 'brr/threads/004', summary: 'context' }], ...extra });

  beforeAll(async () => {
    fleet = await startServiceFleet({ label: 'tribunal', env: () => ({ AGORA_TRIBUNAL_POLICY: JSON.stringify(POLICY), METRICS_PORT: '0', METRICS_HOST: '127.0.0.1' }) });
    store = await openJetStreamEventStore({ servers: fleet.nats.url, streamName: fleet.log.streamName, subjectPrefix: fleet.log.subjectPrefix });
    await Promise.all((['registry', 'proposal', 'projections'] as const).map(start));
    await fleet.register(Object.fromEntries(Object.entries(CAST).map(([agentId, profile]) => [agentId, { ...profile, constitutions: [...profile.constitutions], trustScore: 500 }])));
    // The tribunal draws reviewers from the registry as its process knows it: started now, it has caught up with every reviewer.
    await start('tribunal');
  }, 180_000);

  afterAll(async () => {
    await store?.close();
    await fleet?.stop();
  }, 60_000);

  it('Space-OS: two objections in round 1, a revision answering both, approval in round 2', async () => {
    await submit('space-os', 'Week 1: bounties. Week 2: demo. Week 3: distribution.');
    await roundOpened('space-os', 1);
    const objection = (constraint: string, scenario: string, suggestedRevision: string) => ({ constraint, scenario, suggestedRevision });
    await review('harbinger', 'space-os', 1, 'risk', 'object', objection('Risk: every step needs a path that exists', 'Week 3 assumes distribution path exists. GitHub private, PyPI blocked.', 'Decouple distribution.'));
    await review('heretic', 'space-os', 1, 'premise', 'object', objection('Premise: rest on the ledger', "'All three or none' not in ledger. Cascade assumption fabricated.", 'Drop the cascade.'));
    // An objection without its three parts is refused, naming what is missing, and writes nothing.
    const vague = await send('sentinel', 'SubmitReview', { proposalId: 'space-os', round: 1, constitution: 'evidence', verdict: 'object', reasoning: "this doesn't feel right" });
    expect(vague).toMatchObject({ ok: false, error: { code: 'invalid_command', message: expect.stringMatching(/constraint/) } });
    await review('sentinel', 'space-os', 1, 'evidence', 'approve');
    await review('zealot', 'space-os', 1, 'execution', 'approve');
    await waitFor(async () => (await proposal('space-os')).rounds[0]?.status === 'closed', 'round 1 to close');
    expect((await proposal('space-os')).status).toBe('review');

    await ok('seldon', 'ReviseProposal', { proposalId: 'space-os', body: 'No sequential dependency. Continue building regardless of bounty outcome.', answers: ['r1-risk', 'r1-premise'] });
    await roundOpened('space-os', 2);
    for (const [agent, constitution] of [['harbinger', 'risk'], ['heretic', 'premise'], ['sentinel', 'evidence'], ['zealot', 'execution']] as const) {
      await review(agent, 'space-os', 2, constitution, 'approve');
    }
    await statusOf('space-os', 'approved');
    expect((await proposal('space-os')).rounds).toHaveLength(2);
  }, 60_000);

  it('a silent reviewer is deemed to approve at the deadline, even with every process restarted mid-round', async () => {
    await submit('quiet', 'Ship the demo on Friday.', { reviewDeadlineMs: QUIET_ROUND_MS });
    await roundOpened('quiet', 1);
    await review('harbinger', 'quiet', 1, 'risk', 'approve');

    // Every process goes down hard in the middle of the round, and comes back before the deadline.
    await Promise.all([...fleet.processes.values()].map((p) => p.kill()));
    await Promise.all(SERVICES.map(start));
    const deadlineAt = Date.parse((await proposal('quiet')).rounds[0]!.deadlineAt);
    expect(Date.now()).toBeLessThan(deadlineAt);

    await review('heretic', 'quiet', 1, 'premise', 'approve');
    await review('sentinel', 'quiet', 1, 'evidence', 'approve');
    // zealot (execution) says nothing: the restarted tribunal's deadline closes the round.
    await statusOf('quiet', 'approved');
    const round = (await proposal('quiet')).rounds[0]!;
    expect(round).toMatchObject({ closeReason: 'deadline', outcome: 'approved' });
    expect(round.reviews.filter((r) => r.deemed).map((r) => [r.reviewer, r.constitution])).toEqual([['zealot', 'execution']]);
    expect(round.reviews.filter((r) => !r.deemed)).toHaveLength(3);
  }, 120_000);

  it('a deadlock goes to a human after two contested rounds, and the operator decides', async () => {
    await submit('deadlock', 'Rewrite everything in a weekend.');
    const blockingObjection = { constraint: 'Risk: no big-bang rewrites', scenario: 'The rewrite misses the weekend and nothing works on Monday.', rejectReason: 'Too risky at any size.' };
    for (const round of [1, 2]) {
      await roundOpened('deadlock', round);
      await review('harbinger', 'deadlock', round, 'risk', 'object', blockingObjection);
      for (const [agent, constitution] of [['heretic', 'premise'], ['sentinel', 'evidence'], ['zealot', 'execution']] as const) await review(agent, 'deadlock', round, constitution, 'approve');
      if (round === 1) {
        await waitFor(async () => (await proposal('deadlock')).rounds[0]?.status === 'closed', 'round 1 to close');
        await ok('seldon', 'ReviseProposal', { proposalId: 'deadlock', body: 'Rewrite everything in two weekends.', answers: ['r1-risk'] });
      }
    }
    await statusOf('deadlock', 'escalated');
    const escalation = (await proposal('deadlock')).escalations[0]!;
    expect(escalation).toMatchObject({ reason: 'deadlock', escalation: 1 });
    // Only an operator decides; the executive cannot approve its own way out.
    expect(await send('seldon', 'DecideEscalation', { proposalId: 'deadlock', escalation: 1, decision: 'approve', reason: 'mine' })).toMatchObject({ ok: false, error: { code: 'forbidden' } });
    await ok('ops', 'DecideEscalation', { proposalId: 'deadlock', escalation: 1, decision: 'approve', reason: 'The risk is accepted for this quarter.' });
    await statusOf('deadlock', 'approved');
  }, 90_000);

  it('an executive that proceeds despite objections is recorded, and the registry lowers its trust', async () => {
    await submit('rogue', 'Start week 1 now.');
    await roundOpened('rogue', 1);
    await review('harbinger', 'rogue', 1, 'risk', 'object', { constraint: 'Risk: wait for review', scenario: 'Workers build the wrong thing.', suggestedRevision: 'Wait.' });
    const result = await ok('seldon', 'RecordExecution', { proposalId: 'rogue', summary: 'started anyway' });
    expect(result.events).toEqual(['ExecutionRecorded', 'ProceededDespiteObjections']);
    await fleet.until(() => fleet.query<AgentView>(GetAgent.subject, { agentId: 'seldon' }), (agent) => agent.trustScore === 400, "seldon's trust to drop by 100");
    const events = await store.readStream('agent-seldon');
    expect(events.filter((e) => e.type === 'AgentTrustAdjusted')).toHaveLength(1);
  }, 60_000);

  it('the projections export the figures of what happened', async () => {
    const value = (text: string, metric: string) => {
      const lines = text.split('\n').filter((l) => l.startsWith(metric) && !l.startsWith('#'));
      return lines.reduce((sum, l) => sum + Number(l.slice(l.lastIndexOf(' ') + 1)), 0);
    };
    // The round of "rogue" may still be open: the figures below do not depend on it.
    await waitFor(async () => value(await (await fetch(metricsUrl)).text(), 'agora_tribunal_proceeded_despite_objections_total') === 1, 'the projections to catch up');
    const text = await (await fetch(metricsUrl)).text();
    // 4 proposals reviewed; space-os, deadlock and rogue drew objections.
    expect(value(text, 'agora_tribunal_challenge_rate_ratio')).toBeCloseTo(3 / 4);
    expect(value(text, 'agora_tribunal_deemed_approvals_total')).toBe(1);
    expect(value(text, 'agora_tribunal_deadlocks_escalated_total')).toBe(1);
    expect(value(text, 'agora_tribunal_decisions_total{outcome="approved"')).toBe(3);
    expect(value(text, 'agora_tribunal_operator_decisions_total{decision="approve"}')).toBe(1);
    // space-os took 2 rounds, quiet 1, deadlock 2.
    expect(value(text, 'agora_tribunal_resolution_rounds_count')).toBe(3);
    expect(value(text, 'agora_tribunal_resolution_rounds_sum')).toBe(5);
    expect(value(text, 'agora_tribunal_overhead')).toBe(1);
    expect(text).not.toMatch(/space-os|deadlock"|rogue|seldon/);
  }, 30_000);
});
