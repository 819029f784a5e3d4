import { until, type Fleet } from './fleet.js';

type Say = (line: string) => void;

const CAST = {
  seldon: { roles: ['executive'] },
  harbinger: { roles: ['reviewer'], constitutions: ['risk'] },
  heretic: { roles: ['reviewer'], constitutions: ['premise'] },
  sentinel: { roles: ['reviewer'], constitutions: ['evidence'] },
  zealot: { roles: ['reviewer'], constitutions: ['execution'] },
  ops: { roles: ['operator'] },
};
const REVIEWERS = [
  ['harbinger', 'risk'],
  ['heretic', 'premise'],
  ['sentinel', 'evidence'],
  ['zealot', 'execution'],
] as const;

/**
 * The tribunal seed's stories, played by a scripted fleet against a running Agora: the Space-OS
 * frame corrected in round 2, a silent reviewer deemed to approve at the deadline, a deadlock
 * escalated to an operator, and an executive proceeding despite objections. Prints what happened
 * and the tribunal's figures before and after.
 */
export async function tribunalDemo(fleet: Fleet, say: Say, options: { metricsUrl: string; run: string }): Promise<void> {
  const id = (name: string) => `${name}-${options.run}`;
  const proposal = (proposalId: string) => fleet.query('GetProposal', { proposalId });
  const openRound = (proposalId: string, round: number) =>
    until(`round ${round} of ${proposalId}`, async () => {
      const p = await proposal(proposalId).catch(() => undefined);
      if (p?.status === 'escalated') throw new Error(`${proposalId} was escalated: ${p.escalations.at(-1)?.reason} (are reviewers for every constitution registered?)`);
      return p?.rounds.find((r) => r.round === round && r.status === 'open');
    });
  const status = (proposalId: string, wanted: string, timeoutMs?: number) => until(`${proposalId} to be ${wanted}`, async () => ((await proposal(proposalId)).status === wanted ? true : undefined), timeoutMs);
  const submit = async (name: string, body: string, extra: Record<string, unknown> = {}) => {
    await fleet.must('seldon', 'SubmitProposal', { proposalId: id(name), title: name, body, problem: 'Space-OS needs users', ...extra });
    say(`  seldon proposes ${id(name)}: "${body}"`);
  };
  const review = async (agent: string, proposalId: string, round: number, constitution: string, objection?: Record<string, string>) => {
    await fleet.must(agent, 'SubmitReview', { proposalId, round, constitution, verdict: objection ? 'object' : 'approve', reasoning: objection?.['scenario'] ?? 'No violation of my constitution.', ...objection });
    say(`  ${agent} (${constitution}) ${objection ? `objects: ${objection['scenario']}` : 'approves'}`);
  };
  const stats = async (label: string) => {
    const s = await fleet.query('GetTribunalStats', {});
    say(`${label}: ${s.proposals.reviewed} reviewed, ${s.proposals.challenged} challenged, challenge rate ${s.challengeRate === null ? 'n/a' : `${Math.round(s.challengeRate * 100)} %`}, ${s.deemedApprovals} deemed approvals, ${s.deadlocksEscalated} deadlocks, ${s.proceededDespiteObjections} proceeded despite objections`);
  };

  await fleet.enlist(CAST);
  await stats('before');

  say('\n1. Space-OS: the executive frame is challenged and corrected before anyone executes it');
  const spaceOs = id('space-os');
  await submit('space-os', 'Week 1: bounties. Week 2: demo. Week 3: distribution.');
  await openRound(spaceOs, 1);
  await review('harbinger', spaceOs, 1, 'risk', { constraint: 'Risk: every step needs a path that exists', scenario: 'Week 3 assumes distribution path exists. GitHub private, PyPI blocked.', suggestedRevision: 'Decouple distribution from the bounties.' });
  await review('heretic', spaceOs, 1, 'premise', { constraint: 'Premise: rest on the ledger', scenario: "'All three or none' not in ledger. Cascade assumption fabricated.", suggestedRevision: 'Drop the cascade.' });
  const vague = await fleet.send('sentinel', 'SubmitReview', { proposalId: spaceOs, round: 1, constitution: 'evidence', verdict: 'object', reasoning: "this doesn't feel right" });
  say(`  sentinel tries a vague objection: refused (${vague.ok ? 'accepted?!' : `${vague.error.code}: ${vague.error.message}`})`);
  await review('sentinel', spaceOs, 1, 'evidence');
  await review('zealot', spaceOs, 1, 'execution');
  await fleet.must('seldon', 'ReviseProposal', { proposalId: spaceOs, body: 'No sequential dependency. Continue building regardless of bounty outcome.', answers: ['r1-risk', 'r1-premise'] });
  say('  seldon revises: "No sequential dependency. Continue building regardless of bounty outcome."');
  await openRound(spaceOs, 2);
  for (const [agent, constitution] of REVIEWERS) await review(agent, spaceOs, 2, constitution);
  await status(spaceOs, 'approved');
  say(`  => ${spaceOs} approved in round 2`);

  say('\n2. A time-boxed round: silence at the deadline is approval, written down as such');
  const quiet = id('quiet');
  const deadlineMs = 5_000;
  const asked = await fleet.send('seldon', 'SubmitProposal', { proposalId: quiet, title: 'quiet', body: 'Ship the demo on Friday.', problem: 'Space-OS needs users', reviewDeadlineMs: deadlineMs });
  if (!asked.ok) {
    say(`  skipped: ${asked.error.message}. Start Agora with AGORA_TRIBUNAL_POLICY='{"minRoundDeadlineMs":1000}' to see a round expire in seconds.`);
  } else {
    say(`  seldon proposes ${quiet} with a ${deadlineMs / 1000} s time-box`);
    await openRound(quiet, 1);
    for (const [agent, constitution] of REVIEWERS.slice(0, 3)) await review(agent, quiet, 1, constitution);
    say('  zealot (execution) stays silent...');
    await status(quiet, 'approved', deadlineMs + 30_000);
    const deemed = (await proposal(quiet)).rounds[0]!.reviews.filter((r) => r.deemed).map((r) => `${r.reviewer} (${r.constitution})`);
    say(`  => ${quiet} approved at the deadline; deemed approval recorded for ${deemed.join(', ')}`);
  }

  say('\n3. A deadlock: objections that no revision answers go to a human');
  const deadlock = id('deadlock');
  await submit('deadlock', 'Rewrite everything in a weekend.');
  const objection = { constraint: 'Risk: no big-bang rewrites', scenario: 'The rewrite misses the weekend and nothing works on Monday.', rejectReason: 'Too risky at any size.' };
  for (let round = 1; ; round++) {
    await openRound(deadlock, round);
    await review('harbinger', deadlock, round, 'risk', objection);
    for (const [agent, constitution] of REVIEWERS.slice(1)) await review(agent, deadlock, round, constitution);
    const p = await until(`round ${round} of ${deadlock} to close`, async () => {
      const current = await proposal(deadlock);
      return current.rounds[round - 1]?.status === 'closed' ? current : undefined;
    });
    if (p.status === 'escalated') break;
    await fleet.must('seldon', 'ReviseProposal', { proposalId: deadlock, body: `Rewrite everything in ${round + 1} weekends.`, answers: [`r${round}-risk`] });
    say(`  seldon revises (round ${round + 1}), harbinger objects again`);
  }
  const escalation = (await proposal(deadlock)).escalations.at(-1)!;
  say(`  => escalated to a human after ${escalation.round} rounds (${escalation.reason})`);
  const selfServe = await fleet.send('seldon', 'DecideEscalation', { proposalId: deadlock, escalation: escalation.escalation, decision: 'approve', reason: 'mine' });
  say(`  seldon tries to decide it: refused (${selfServe.ok ? 'accepted?!' : selfServe.error.code})`);
  await fleet.must('ops', 'DecideEscalation', { proposalId: deadlock, escalation: escalation.escalation, decision: 'reject', reason: 'A rewrite is not the problem; ship smaller steps.' });
  await status(deadlock, 'rejected');
  say('  => ops (operator) rejects it, with a reason');

  say('\n4. Provenance: an executive that ignores the tribunal loses trust');
  const rogue = id('rogue');
  await submit('rogue', 'Start week 1 now.');
  await openRound(rogue, 1);
  await review('harbinger', rogue, 1, 'risk', { constraint: 'Risk: wait for review', scenario: 'Workers build the wrong thing for a week.', suggestedRevision: 'Wait for the round.' });
  const before = (await fleet.query('GetAgent', { agentId: 'seldon' })).trustScore;
  const executed = (await fleet.must('seldon', 'RecordExecution', { proposalId: rogue, summary: 'started anyway' })) as { events: string[] };
  say(`  seldon records execution anyway: ${executed.events.join(' + ')}`);
  const after = await until('the registry to lower trust', async () => {
    const score = (await fleet.query('GetAgent', { agentId: 'seldon' })).trustScore;
    return score < before ? score : undefined;
  });
  say(`  => seldon's trust ${before} -> ${after}`);

  say('');
  await stats('after');
  const metrics = await fetch(options.metricsUrl).then((r) => r.text()).catch(() => undefined);
  if (metrics === undefined) {
    say(`(no metrics at ${options.metricsUrl}; pass --metrics <url>)`);
    return;
  }
  say(`metrics at ${options.metricsUrl}:`);
  for (const line of metrics.split('\n')) if (/^agora_tribunal_(challenge_rate_ratio|deemed_approvals_total|deadlocks_escalated_total|proceeded_despite_objections_total|rubber_stamping|overhead) /.test(line)) say(`  ${line}`);
}
