import { until, type Fleet } from './fleet.js';

type Say = (line: string) => void;

export const CAST = {
  deployer: { roles: ['executive'] },
  aegis: { roles: ['validator'], specializations: ['security'], trustScore: 900 },
  ledger: { roles: ['validator'], specializations: ['compliance'], trustScore: 820 },
  pilot: { roles: ['validator'], specializations: ['operations'], trustScore: 760 },
  sage: { roles: ['validator'], specializations: ['risk'], trustScore: 720 },
  tally: { roles: ['validator'], specializations: ['ethics'], trustScore: 650 },
  ops: { roles: ['operator'] },
};

/**
 * The voting seed's two outcomes, played against a running Agora: a high-risk deploy approved by
 * weighted validator votes, and a critical action whose vote is not unanimous, so the session
 * waits for a human (left undecided: decide it in the web console's inbox, or with
 * `npm run agora -- send DecideVotingEscalation ...`).
 */
export async function votingDemo(fleet: Fleet, say: Say, options: { run: string; consoleUrl: string }): Promise<void> {
  const session = (sessionId: string) => fleet.query('GetVotingSession', { sessionId });
  const decided = (sessionId: string) =>
    until(`session ${sessionId} to be decided`, async () => {
      const s = await session(sessionId).catch(() => undefined);
      return s?.recommendation ? s : undefined;
    });
  const vote = async (validator: string, sessionId: string, decision: 'approve' | 'deny', reasoning: string, confidence: number, riskAssessment?: string) => {
    await fleet.must(validator, 'CastValidatorVote', { sessionId, decision, reasoning, confidence, ...(riskAssessment ? { riskAssessment } : {}) });
    say(`  ${validator} votes ${decision} (confidence ${confidence}): ${reasoning}`);
  };

  await fleet.enlist(CAST);

  say('\n1. A high-risk deploy: the validators agree, weighted by trust and confidence');
  const deploy = `deploy-${options.run}`;
  await fleet.must('deployer', 'CreateVotingSession', { requestId: deploy, actionType: 'deploy_production', riskLevel: 'high', summary: 'Roll out release 4.2 to every region' });
  const created = await session(deploy);
  say(`  deployer asks to deploy_production; validators drawn: ${created.validators.map((v) => `${v.agentId} (${v.tier.toLowerCase()})`).join(', ')}`);
  const reasons: Record<string, string> = {
    aegis: 'The release passed the security scan and the canary held for an hour.',
    ledger: 'Change ticket approved; the audit trail is complete.',
    pilot: 'Rollback tested in staging this morning.',
    sage: 'Blast radius limited by the regional rollout.',
    tally: 'No user-facing change that needs consent.',
  };
  for (const v of created.validators) await vote(v.agentId, deploy, 'approve', reasons[v.agentId] ?? 'No objection.', 0.85);
  const approved = await decided(deploy);
  say(`  => ${approved.consensus?.replace(/_/g, ' ')}: ${approved.recommendation?.decision} (confidence ${approved.recommendation?.confidence.toFixed(2)})`);

  say('\n2. A critical action that is not unanimous: a human must decide');
  const rotate = `rotate-${options.run}`;
  await fleet.must('deployer', 'CreateVotingSession', { requestId: rotate, actionType: 'rotate_root_keys', riskLevel: 'critical', summary: 'Rotate the root signing keys during business hours' });
  const critical = await session(rotate);
  for (const v of critical.validators) {
    if (v.agentId === 'aegis') await vote(v.agentId, rotate, 'deny', 'Rotating during business hours risks locking out the on-call team.', 0.9, 'high: a failed rotation blocks every deploy');
    else await vote(v.agentId, rotate, 'approve', 'The keys are overdue for rotation.', 0.7);
  }
  const escalated = await decided(rotate);
  say(`  => ${escalated.consensus?.replace(/_/g, ' ')}, recommendation ${escalated.recommendation?.decision}: ${escalated.recommendation?.escalationReason?.replace(/_/g, ' ')}`);
  say(`  left for a human: decide it in the web console's inbox (${options.consoleUrl}/inbox), signed with an operator key`);

  const stats = await fleet.query('GetVotingStats', {});
  say(`\nvoting: ${stats.totalSessions} sessions, ${stats.awaitingOperator} waiting for a human, HITL rate ${stats.escalationRate === null ? 'n/a' : `${Math.round(stats.escalationRate * 100)} %`}`);
}
