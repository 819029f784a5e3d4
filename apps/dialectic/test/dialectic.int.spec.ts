/**
 * The dialectic service with the registry's circuit breaker and the voting service, over a real
 * store and a real transport: in-process with the embedded store, and NATS (a private server) with
 * a JetStream log of its own. Agents send signed commands through the gates; the services answer
 * each other only through the log (reactors with checkpoints).
 */
import { randomUUID } from 'node:crypto';
import { mkdtemp, rm } from 'node:fs/promises';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import {
  CastValidatorVote,
  CreateVotingSession,
  DialecticSessionView,
  EscalateRecovery,
  GetAgent,
  GetDialecticSession,
  GetVotingSession,
  ListDialecticSessions,
  RecordTieBreak,
  ReportHealth,
  SignResolution,
  SubmitAntithesis,
  SubmitSynthesis,
  SubmitThesis,
  type AgentView,
  type CommandDefinition,
  type Condition,
  type DialecticSessionSummary,
  type Role,
  type VotingSessionView,
} from '@agora/contracts';
import { seedFrom } from '@agora/domain-common';
import { pickFromPool, signResolution } from '@agora/domain-dialectic';
import { agentDecider, agentStreamId, type AgentCommand } from '@agora/domain-registry';
import { handleCommand } from '@agora/eventsourcing';
import type { EventStore } from '@agora/eventstore';
import { generateKeyPair, type KeyPair } from '@agora/identity';
// eslint-disable-next-line @nx/enforce-module-boundaries -- test only: the breaker lives in the registry (ReportHealth, the resume reactor), wired here as standalone mode wires them.
import { startRegistryService } from '@agora/registry';
import { openServiceContext, startAll, type Running, type RuntimeConfig, type ServiceContext } from '@agora/runtime';
import { agentsOn, serviceTransports, waitFor } from '@agora/testing';
// eslint-disable-next-line @nx/enforce-module-boundaries -- test only: a quorum escalation goes through the real voting service, wired here as standalone mode wires them.
import { startVotingService } from '@agora/voting';
import { startDialecticService } from '../src/dialectic-service.js';

// In one process, and over a NATS server of this file's own.
const setups = serviceTransports('dialectic');

/** One paused agent per scenario (its breaker is its own), reviewers, and six validators for a quorum of five. */
const FLEET: Record<string, { roles: Role[]; trustScore: number }> = {
  ada: { roles: ['executive'], trustScore: 500 },
  bob: { roles: ['executive'], trustScore: 500 },
  cyd: { roles: ['executive'], trustScore: 500 },
  dee: { roles: ['executive'], trustScore: 500 },
  rev1: { roles: ['reviewer'], trustScore: 700 },
  rev2: { roles: ['reviewer'], trustScore: 700 },
  // May only debate: the gate would refuse its antithesis, so it is never drawn to review.
  deb: { roles: ['debater'], trustScore: 950 },
  ...Object.fromEntries([1, 2, 3, 4, 5, 6].map((n) => [`val${n}`, { roles: ['validator'] as Role[], trustScore: 900 - n * 20 }])),
};

async function registerFleet(store: EventStore, keys: Record<string, KeyPair>): Promise<void> {
  for (const [agentId, spec] of Object.entries(FLEET)) {
    const commandId = randomUUID();
    const command: AgentCommand = {
      type: 'RegisterAgent',
      context: { actor: 'root', actorRoles: ['operator'], now: new Date().toISOString(), commandId },
      payload: { agentId, publicKey: keys[agentId]!.publicKey, displayName: agentId, constitutions: [], specializations: [], health: 1, risk: 0, ...spec },
    };
    await handleCommand({ store, decider: agentDecider, streamId: agentStreamId(agentId), command, metadata: { commandId, commandType: 'RegisterAgent', actor: 'root', issuedAt: command.context.now } });
  }
}

const threshold = (value: number): Condition => ({ operation: 'set_risk_threshold', parameters: { threshold: value } });
const cascade: Condition = { operation: 'enable_cascade_detection', parameters: {} };

describe.each(setups)('dialectic service ($name)', ({ agora }) => {
  let dir: string;
  let config: RuntimeConfig;
  let context: ServiceContext;
  let running: Running;
  const keys: Record<string, KeyPair> = Object.fromEntries(['root', ...Object.keys(FLEET)].map((id) => [id, generateKeyPair()]));

  // Signs and sends as the agents do, through the running context's client.
  const agents = agentsOn(() => context.client, keys);
  const command = (definition: CommandDefinition, actor: string, payload: Record<string, unknown>, key?: KeyPair) => agents.send(actor, definition, payload, key ? { key } : {});
  const query = <T>(subject: string, params: unknown): Promise<T> => agents.query<T>(subject, params);
  const session = (sessionId: string) => query<DialecticSessionView>(GetDialecticSession.subject, { sessionId });
  const agentView = (agentId: string) => query<AgentView>(GetAgent.subject, { agentId });
  const sessionWhen = (sessionId: string, check: (s: DialecticSessionView) => boolean, what: string) => agents.until(() => session(sessionId), check, `${what} (session ${sessionId})`);
  const breakerWhen = (agentId: string, state: 'open' | 'closed') => waitFor(async () => (await context.registry.agent(agentId))?.breaker.state === state, `the breaker of ${agentId} to be ${state}`);

  /** Trips the breaker of `agentId` (the seed: risk 0.65) and waits for its recovery to open with a reviewer. */
  const pause = async (agentId: string) => {
    expect(await command(ReportHealth, agentId, { agentId, health: 0.35, risk: 0.65, tags: ['cascade'], metrics: { coherence: 0.45 } })).toMatchObject({
      ok: true,
      result: { events: ['AgentHealthReported', 'AgentPaused'] },
    });
    await breakerWhen(agentId, 'open');
    return sessionWhen(`${agentId}-p1`, (s) => s.status === 'awaiting_thesis', 'the recovery to open');
  };
  /** Thesis (0.45), antithesis (0.48), and the agent's first synthesis agreeing on the reviewer's threshold. */
  const argue = async (s: DialecticSessionView, agreed: Condition[]) => {
    const reviewer = s.reviewer!;
    expect(await command(SubmitThesis, s.agentId, { sessionId: s.sessionId, rootCause: 'AGI discussion triggered complexity spike', proposedConditions: [threshold(0.45), cascade], reasoning: 'External spike, not internal failure' })).toMatchObject({ ok: true });
    expect(
      await command(SubmitAntithesis, reviewer, {
        sessionId: s.sessionId,
        observedMetrics: { risk_score: 0.65, coherence: 0.45 },
        concerns: ['Risk too high', 'Need monitoring'],
        reasoning: 'Threshold 0.45 too permissive, suggest 0.48',
        counterProposal: { rootCause: 'External complexity spike', proposedConditions: [threshold(0.48), cascade] },
      }),
    ).toMatchObject({ ok: true });
    expect(await command(SubmitSynthesis, s.agentId, { sessionId: s.sessionId, round: 1, rootCause: 'External complexity spike', proposedConditions: agreed, reasoning: "Compromise on reviewer's threshold", agrees: true })).toMatchObject({ ok: true });
  };
  const sign = async (sessionId: string, signer: string) => {
    const s = await session(sessionId);
    const payload = s.proposed!.payload;
    return command(SignResolution, signer, { sessionId, publicKey: keys[signer]!.publicKey, signature: signResolution(payload, signer, keys[signer]!.secretKey) });
  };

  const start = async () => {
    context = await openServiceContext(config);
    running = await startAll([() => startRegistryService(context, { logger: false }), () => startVotingService(context, { logger: false }), () => startDialecticService(context, { logger: false })]);
  };
  const stop = async () => {
    await running?.close();
    await context?.close();
  };

  beforeAll(async () => {
    dir = await mkdtemp(join(tmpdir(), 'agora-dialectic-'));
    config = agora(dir, { agentId: 'root', publicKey: keys['root']!.publicKey });
    await start();
    await registerFleet(context.store, keys);
    await waitFor(() => context.registry.list().length === Object.keys(FLEET).length, 'the agent directory to know the fleet');
  }, 30_000);

  afterAll(async () => {
    await stop();
    await rm(dir, { recursive: true, force: true });
  });

  it("runs the seed's worked example: risk 0.65 pauses the agent, a seeded reviewer argues to 0.48, both sign, the agent resumes (and relapses at its own threshold); paused, its other commands are refused", async () => {
    const opened = await pause('ada');
    // The reviewer is the seeded draw: the seed is the AgentPaused event's id, and the recorded pool and draw give the reviewer.
    const pausedEvent = (await context.store.readStream(agentStreamId('ada'))).find((e) => e.type === 'AgentPaused')!;
    expect(opened.seed).toBe(seedFrom(pausedEvent.id));
    expect(opened.reviewer).toBe(pickFromPool(opened.reviewerSelection!.pool, opened.reviewerSelection!.draw));
    expect(opened.reviewerSelection!.excluded).toEqual(expect.arrayContaining([{ agentId: 'ada', reason: 'self' }]));
    expect(opened.reviewerSelection!.pool.map((c) => c.agentId)).toEqual(expect.arrayContaining(['rev1', 'rev2']));
    expect(opened.reviewerSelection!.pool.map((c) => c.agentId)).not.toContain('deb');
    expect(await agentView('ada')).toMatchObject({ risk: 0.65, breaker: { state: 'open', pauses: 1, sessionId: 'ada-p1' } });

    // While paused, the agent's commands to another service are refused; its part in its recovery is not.
    const create = () => command(CreateVotingSession, 'ada', { requestId: `ada-deploy-${randomUUID()}`, actionType: 'deploy_production', riskLevel: 'high' });
    expect(await create()).toMatchObject({ ok: false, error: { code: 'forbidden', message: expect.stringMatching(/paused by its circuit breaker/) } });

    const agreed = [threshold(0.48), cascade];
    await argue(opened, agreed);
    const reviewer = opened.reviewer!;
    expect(await command(SubmitSynthesis, reviewer, { sessionId: 'ada-p1', round: 2, rootCause: 'external complexity spike', proposedConditions: [cascade, threshold(0.48)], reasoning: 'Agreed', agrees: true })).toMatchObject({
      ok: true,
      result: { events: ['SynthesisSubmitted', 'ResolutionProposed'] },
    });

    // A forged signature: made with another key, under the agent's registered key; or under a key that is not the agent's.
    const proposed = (await session('ada-p1')).proposed!.payload;
    expect(proposed).toMatchObject({ rootCause: 'External complexity spike', conditions: [cascade, threshold(0.48)], decidedBy: 'dialectic' });
    const mallory = generateKeyPair();
    expect(await command(SignResolution, 'ada', { sessionId: 'ada-p1', publicKey: keys['ada']!.publicKey, signature: signResolution(proposed, 'ada', mallory.secretKey) })).toMatchObject({ ok: false, error: { code: 'bad_signature' } });
    expect(await command(SignResolution, 'ada', { sessionId: 'ada-p1', publicKey: mallory.publicKey, signature: signResolution(proposed, 'ada', mallory.secretKey) })).toMatchObject({ ok: false, error: { code: 'bad_signature' } });
    // Signed for another signer: does not verify as ada's.
    expect(await command(SignResolution, 'ada', { sessionId: 'ada-p1', publicKey: keys['ada']!.publicKey, signature: signResolution(proposed, reviewer, keys['ada']!.secretKey) })).toMatchObject({ ok: false, error: { code: 'bad_signature' } });

    expect(await sign('ada-p1', 'ada')).toMatchObject({ ok: true, result: { events: ['ResolutionSigned'] } });
    expect(await sign('ada-p1', reviewer)).toMatchObject({ ok: true, result: { events: ['ResolutionSigned', 'RecoveryResolved'] } });
    await breakerWhen('ada', 'closed');
    expect(await agentView('ada')).toMatchObject({ breaker: { state: 'closed', riskThreshold: 0.48, sessionId: null, lastResume: { pause: 1, sessionId: 'ada-p1' } } });
    const resolved = await session('ada-p1');
    expect(DialecticSessionView.parse(resolved)).toEqual(resolved);
    expect(resolved).toMatchObject({ status: 'resolved', resolved: { riskThreshold: 0.48, resolution: { decidedBy: 'dialectic' } } });
    expect(resolved.resolved!.signatures.map((s) => s.role).sort()).toEqual(['agent', 'reviewer']);
    // Resumed, its commands go through again.
    expect(await create()).toMatchObject({ ok: true });

    // Its own threshold (0.48) now trips the breaker at 0.5, soon after the resume: a relapse on the session that resumed it.
    expect(await command(ReportHealth, 'ada', { agentId: 'ada', health: 0.5, risk: 0.5 })).toMatchObject({ ok: true, result: { events: ['AgentHealthReported', 'AgentPaused'] } });
    await sessionWhen('ada-p2', (s) => s.status === 'awaiting_thesis' && s.trigger.threshold === 0.48, 'the second recovery');
    const relapsed = await sessionWhen('ada-p1', (s) => s.relapse !== null, 'the relapse');
    expect(relapsed.relapse).toMatchObject({ pause: 2, risk: 0.5 });
    const listed = await query<{ sessions: DialecticSessionSummary[] }>(ListDialecticSessions.subject, { agentId: 'ada' });
    expect(listed.sessions.map((x) => [x.sessionId, x.status])).toEqual([
      ['ada-p2', 'awaiting_thesis'],
      ['ada-p1', 'resolved'],
    ]);
  });

  it('blocks a resolution that breaks a hard limit (risk threshold 0.95): the agent stays paused, waiting for an operator', async () => {
    const opened = await pause('bob');
    const unsafe = [threshold(0.95)];
    await argue(opened, unsafe);
    expect(await command(SubmitSynthesis, opened.reviewer!, { sessionId: 'bob-p1', round: 2, rootCause: 'External complexity spike', proposedConditions: unsafe, reasoning: 'Fine by me', agrees: true })).toMatchObject({
      ok: true,
      result: { events: ['SynthesisSubmitted', 'ResolutionBlocked', 'RecoveryEscalated'] },
    });
    const blocked = await session('bob-p1');
    expect(blocked).toMatchObject({ status: 'awaiting_operator', proposed: null, escalations: [{ tier: 'operator', reason: 'hard_limit_violation' }] });
    expect(blocked.blocked[0]!.violations).toEqual([expect.objectContaining({ rule: 'risk_threshold_above_max' })]);
    expect(await agentView('bob')).toMatchObject({ breaker: { state: 'open', sessionId: 'bob-p1' } });
  });

  it('climbs to a quorum that the real voting service runs, and resumes the agent on its approval', async () => {
    const opened = await pause('cyd');
    await argue(opened, [threshold(0.5), cascade]);
    // Tier 1: the agent asks to escalate; the service draws a tie-breaker, who sides with neither.
    expect(await command(EscalateRecovery, 'cyd', { sessionId: 'cyd-p1', reason: 'we will not agree' })).toMatchObject({ ok: true, result: { events: ['RecoveryEscalated'] } });
    const tie = await sessionWhen('cyd-p1', (s) => s.escalations[0]?.tieBreaker != null, 'the tie-breaker draw');
    const tieBreaker = tie.escalations[0]!.tieBreaker!;
    expect([opened.agentId, opened.reviewer]).not.toContain(tieBreaker);
    expect(await command(RecordTieBreak, tieBreaker, { sessionId: 'cyd-p1', escalation: 1, side: 'neither', reasoning: 'both have a point' })).toMatchObject({ ok: true });
    // Tier 2: a voting session of the voting service, created from the log, on the reviewer's position.
    const quorum = await sessionWhen('cyd-p1', (s) => s.status === 'quorum', 'the quorum tier');
    const votingSessionId = quorum.escalations[1]!.votingSessionId!;
    expect(votingSessionId).toBe('cyd-p1-q2');
    const voting = await agents.until(() => query<VotingSessionView>(GetVotingSession.subject, { sessionId: votingSessionId }), () => true, 'the voting session');
    expect(voting).toMatchObject({ requestingAgent: 'cyd', actionType: 'resume_paused_agent', createdBy: 'service:dialectic' });
    expect(voting.validators).toHaveLength(5);
    for (const { agentId } of voting.validators) {
      expect(await command(CastValidatorVote, agentId, { sessionId: votingSessionId, decision: 'approve', reasoning: 'the reviewer position is sound', confidence: 0.9 })).toMatchObject({ ok: true });
    }
    // The voting session's decision comes back as RecordQuorumResult: approved, resolved on the proposal, the agent resumes.
    const resolved = await sessionWhen('cyd-p1', (s) => s.status === 'resolved', 'the quorum result');
    expect(resolved.escalations[1]).toMatchObject({ tier: 'quorum', quorumResult: { decision: 'approve', votes: 5, approve: 5, approved: true } });
    expect(resolved.resolved).toMatchObject({ resolution: { decidedBy: 'quorum', decider: votingSessionId, conditions: [cascade, threshold(0.48)] }, riskThreshold: 0.48 });
    await breakerWhen('cyd', 'closed');
  });

  it('loses nothing when every part restarts in the middle of a synthesis round', async () => {
    const opened = await pause('dee');
    const agreed = [threshold(0.48), cascade];
    await argue(opened, agreed);
    const before = await session('dee-p1');
    expect(before).toMatchObject({ status: 'synthesis', round: 1, awaiting: [opened.reviewer] });

    await stop();
    await start();

    expect(await session('dee-p1')).toEqual(before);
    expect(await command(SubmitSynthesis, opened.reviewer!, { sessionId: 'dee-p1', round: 2, rootCause: 'External complexity spike', proposedConditions: agreed, reasoning: 'Agreed', agrees: true })).toMatchObject({
      ok: true,
      result: { events: ['SynthesisSubmitted', 'ResolutionProposed'] },
    });
    expect(await sign('dee-p1', 'dee')).toMatchObject({ ok: true });
    expect(await sign('dee-p1', opened.reviewer!)).toMatchObject({ ok: true, result: { events: ['ResolutionSigned', 'RecoveryResolved'] } });
    await breakerWhen('dee', 'closed');
    // The other recoveries are as they were: one session per pause, nothing opened twice.
    const all = await query<{ sessions: DialecticSessionSummary[] }>(ListDialecticSessions.subject, {});
    expect(all.sessions.map((s) => [s.sessionId, s.status]).sort()).toEqual([
      ['ada-p1', 'resolved'],
      ['ada-p2', 'awaiting_thesis'],
      ['bob-p1', 'awaiting_operator'],
      ['cyd-p1', 'resolved'],
      ['dee-p1', 'resolved'],
    ]);
  });
});
