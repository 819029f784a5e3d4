import type { Condition, DialecticSessionView } from '@agora/contracts';
import { signResolution } from '@agora/domain-dialectic';
import { until, type Fleet } from './fleet.js';

type Say = (line: string) => void;

const CAST = {
  nova: { roles: ['executive'], specializations: ['planning'] },
  lyra: { roles: ['executive'], specializations: ['outreach'] },
  kestrel: { roles: ['reviewer'], specializations: ['monitoring'], trustScore: 700 },
  osprey: { roles: ['reviewer'], specializations: ['planning'], trustScore: 680 },
  heron: { roles: ['reviewer'], specializations: ['reliability'], trustScore: 650 },
  wren: { roles: ['reviewer'], specializations: ['outreach'], trustScore: 620 },
  ops: { roles: ['operator'] },
};

const threshold = (value: number): Condition => ({ operation: 'set_risk_threshold', parameters: { threshold: value } });
const cascade: Condition = { operation: 'enable_cascade_detection', parameters: {} };

/**
 * The dialectic seed, played against a running Agora: an agent whose risk trips its circuit
 * breaker recovers through a thesis, an antithesis and a synthesis with the reviewer drawn for it
 * (its first proposal breaks a hard limit, which is recorded), both sign the resolution and it
 * resumes; a second agent's recovery is escalated by an operator to tier 3 and left for a human
 * (decide it in the web console's inbox).
 */
export async function dialecticDemo(fleet: Fleet, say: Say, options: { consoleUrl: string }): Promise<void> {
  const agent = (agentId: string) => fleet.query('GetAgent', { agentId });
  const session = (sessionId: string) => fleet.query('GetDialecticSession', { sessionId });
  const sessionWhen = (sessionId: string, what: string, check: (s: DialecticSessionView) => boolean) =>
    until(what, async () => {
      const s = await session(sessionId).catch(() => undefined);
      return s && check(s) ? s : undefined;
    });
  /** Trips the breaker and waits for the recovery to open with a reviewer; undefined when the agent is still paused from an earlier run. */
  const pause = async (agentId: string, risk: number): Promise<DialecticSessionView | undefined> => {
    if ((await agent(agentId)).breaker.state === 'open') {
      say(`  ${agentId} is still paused from an earlier run (its recovery: ${(await agent(agentId)).breaker.sessionId})`);
      return undefined;
    }
    await fleet.must(agentId, 'ReportHealth', { agentId, health: 0.35, risk, tags: ['cascade'], metrics: { coherence: 0.45, risk_score: risk } });
    const sessionId = await until(`${agentId} to be paused`, async () => (await agent(agentId)).breaker.sessionId ?? undefined);
    say(`  ${agentId} reports risk ${risk}: its circuit breaker trips, recovery ${sessionId} opens`);
    const opened = await sessionWhen(sessionId, `a reviewer for ${sessionId}`, (s) => s.reviewer !== null || s.status === 'awaiting_operator');
    if (!opened.reviewer) throw new Error(`no reviewer was eligible for ${sessionId}; register more agents`);
    say(`  reviewer drawn by authority: ${opened.reviewer}`);
    return opened;
  };

  await fleet.enlist(CAST);

  say('\n1. A paused agent and its reviewer converge on a signed resolution');
  const first = await pause('nova', 0.65);
  if (first) {
    const { sessionId, reviewer } = first as DialecticSessionView & { reviewer: string };
    await fleet.must('nova', 'SubmitThesis', { sessionId, rootCause: 'An outside discussion triggered a complexity spike', proposedConditions: [threshold(0.95), cascade], reasoning: 'External spike, not an internal failure; raise my threshold' });
    say('  nova (thesis): an outside complexity spike; raise my threshold to 0.95 (above the hard limit of 0.90: recorded as a violation)');
    await fleet.must(reviewer, 'SubmitAntithesis', {
      sessionId,
      observedMetrics: { risk_score: 0.65, coherence: 0.45 },
      concerns: ['0.95 is above the hard limit', 'No monitoring of cascades'],
      reasoning: 'The spike was real, but the threshold must stay tight; watch for cascades',
      counterProposal: { rootCause: 'External complexity spike', proposedConditions: [threshold(0.48), cascade] },
    });
    say(`  ${reviewer} (antithesis): external spike, threshold 0.48 and cascade detection`);
    await fleet.must('nova', 'SubmitSynthesis', { sessionId, round: 1, rootCause: 'External complexity spike', proposedConditions: [threshold(0.48), cascade], reasoning: "I accept the reviewer's threshold", agrees: true });
    await fleet.must(reviewer, 'SubmitSynthesis', { sessionId, round: 2, rootCause: 'External complexity spike', proposedConditions: [cascade, threshold(0.48)], reasoning: 'Agreed', agrees: true });
    say('  synthesis: both agree on the root cause and the conditions');
    const proposed = await sessionWhen(sessionId, `the resolution of ${sessionId}`, (s) => s.proposed !== null);
    for (const signer of ['nova', reviewer]) {
      await fleet.must(signer, 'SignResolution', { sessionId, publicKey: fleet.publicKeyOf(signer), signature: signResolution(proposed.proposed!.payload, signer, fleet.secretKeyOf(signer)) });
    }
    await until('nova to resume', async () => ((await agent('nova')).breaker.state === 'closed' ? true : undefined));
    say(`  => both signed; nova resumes with its own threshold 0.48`);
  }

  say('\n2. A recovery that needs a human (tier 3)');
  const second = await pause('lyra', 0.72);
  if (second) {
    await fleet.must('lyra', 'SubmitThesis', { sessionId: second.sessionId, rootCause: 'A burst of outreach messages looked like spam', proposedConditions: [threshold(0.7)], reasoning: 'The burst was a scheduled campaign' });
    say('  lyra (thesis): a scheduled campaign, not spam');
    await fleet.must('ops', 'EscalateRecovery', { sessionId: second.sessionId, reason: 'A campaign policy question: a person must decide', toOperator: true });
    await sessionWhen(second.sessionId, `${second.sessionId} to wait for an operator`, (s) => s.status === 'awaiting_operator');
    say(`  => ops escalates it to tier 3: lyra stays paused until a human decides`);
    say(`  left for a human: decide it in the web console's inbox (${options.consoleUrl}/inbox), signed with an operator key`);
  }
}
