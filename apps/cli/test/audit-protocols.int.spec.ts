/**
 * `agora audit` on the log every protocol leaves: the registry, a tribunal review approved in
 * round 1 (then executed, its outcome reported), a voting session decided by its validators, a
 * recovery that converges (the services' own signed commands among them: rounds opened, the
 * recovery opened with its reviewer), a recovery that climbs to a quorum (the voting session the
 * dialectic service sends the voting service, decided there and again by the audit), and the
 * projections' log checkpoints. Every commit verifies, is authorized, chains, and decides again
 * to exactly the events recorded: 0 findings.
 */
import {
  CastValidatorVote,
  CreateVotingSession,
  EscalateRecovery,
  GetDialecticSession,
  GetProposal,
  GetVotingSession,
  RecordTieBreak,
  ReportHealth,
  SERVICE_NAMES,
  SubmitAntithesis,
  SubmitSynthesis,
  SubmitThesis,
  type DialecticSessionView,
  type ProposalView,
  type Role,
  type VotingSessionView,
} from '@agora/contracts';
import { startDialecticService } from '@agora/dialectic';
import { generateKeyPair, parseServiceKeyring, type KeyPair } from '@agora/identity';
import { startProjectionsService, type RunningProjections } from '@agora/projections';
import { startProposalService } from '@agora/proposal';
import { startRegistryService } from '@agora/registry';
import { openServiceContext, startAll, type ServiceContext } from '@agora/runtime';
import { agentsOn, approveProposal, convergeRecovery, embeddedAgora, QUIET_PROJECTIONS, quietServices, REVIEWER_PROFILES, startServicesInProcess, waitFor, type InProcessServices } from '@agora/testing';
import { startTribunalService } from '@agora/tribunal';
import { startVotingService } from '@agora/voting';
import { auditLog } from '../src/audit/engine.js';

const FLEET: Record<string, { roles: Role[]; constitutions?: string[] }> = {
  seldon: { roles: ['executive'] },
  ada: { roles: ['executive'] },
  bob: { roles: ['executive'] },
  ...REVIEWER_PROFILES,
  // Six: a quorum of five stands even when the recovery's reviewer drawn is one of them (it may not vote).
  ...Object.fromEntries([1, 2, 3, 4, 5, 6].map((n) => [`val${n}`, { roles: ['validator'] as Role[] }])),
};
const keys: Record<string, KeyPair> = Object.fromEntries(['root', ...Object.keys(FLEET)].map((id) => [id, generateKeyPair()]));

let agora: InProcessServices<ServiceContext>;
let context: ServiceContext;
let projections: RunningProjections;

const agents = agentsOn(() => context.client, keys);
const ok = (type: string, actor: string, payload: Record<string, unknown>) => agents.ok(actor, type, payload);
const query = async <T>(subject: string, params: unknown): Promise<T | undefined> => {
  const reply = await context.client.request<T>(subject, params, { timeoutMs: 10_000 });
  return reply.ok ? reply.result : undefined;
};
const tribunal = { ok: agents.ok, read: (proposalId: string) => query<ProposalView>(GetProposal.subject, { proposalId }) };

beforeAll(async () => {
  const start = (started: ServiceContext) =>
    startAll([...quietServices(started, [startRegistryService, startProposalService, startTribunalService, startVotingService, startDialecticService]), async () => (projections = await startProjectionsService(started, { ...QUIET_PROJECTIONS, checkpointEvery: 10 }))]);
  agora = await startServicesInProcess({ label: 'audit-protocols', keys, open: (dir, operator) => openServiceContext(embeddedAgora(dir, operator)), start });
  context = agora.context;
  await agora.register(FLEET, { trustScore: 700 });
}, 30_000);

afterAll(() => agora?.stop());

it('finds nothing on the log of the tribunal, voting and dialectic flows, and decides every command again', async () => {
  // Tribunal: a proposal, the round the tribunal opens itself, four approvals.
  await approveProposal(tribunal, 'seldon', { proposalId: 'p1', title: 'Plan p1', body: 'Week 1: bounties.', problem: 'users', evidence: [{ ref: 'thread/1', summary: 'context' }] });
  // Executed, and its outcome reported by the proposer.
  await ok('RecordExecution', 'seldon', { proposalId: 'p1', summary: 'bounties posted' });
  await ok('ReportOutcome', 'seldon', { proposalId: 'p1', outcome: 'failed', note: 'nobody came' });
  // A governed tool call decided by a proposal: approved, released once against its digest, its result recorded.
  const callDigest = 'c'.repeat(64);
  await approveProposal(tribunal, 'seldon', { proposalId: 'p2', title: 'MCP tool call memory/create_entities', body: 'the call', problem: 'a migration', toolCall: { server: 'memory', tool: 'create_entities', callDigest } });
  await ok('ReleaseProposalToolCall', 'seldon', { proposalId: 'p2', callDigest });
  await ok('RecordProposalToolCallResult', 'seldon', { proposalId: 'p2', outcome: 'ok', resultDigest: 'd'.repeat(64) });
  expect((await query<ProposalView>(GetProposal.subject, { proposalId: 'p2' }))?.toolCall).toMatchObject({ callDigest, outcome: 'ok' });

  // Voting: a session on the registry's validators, every selected one approves.
  await ok(CreateVotingSession.type, 'seldon', { requestId: 'r1', actionType: 'deploy_production', riskLevel: 'high' });
  const created = (await query<VotingSessionView>(GetVotingSession.subject, { sessionId: 'r1' }))!;
  for (const { agentId } of created.validators) await ok(CastValidatorVote.type, agentId, { sessionId: 'r1', decision: 'approve', confidence: 0.9, reasoning: `${agentId} approves` });
  await waitFor(async () => (await query<VotingSessionView>(GetVotingSession.subject, { sessionId: 'r1' }))?.status === 'decided', 'r1 decided', 15_000);

  // Dialectic: ada's breaker trips, the service opens the recovery with a reviewer, they converge.
  await ok(ReportHealth.type, 'ada', { agentId: 'ada', health: 0.35, risk: 0.65, tags: [], metrics: {} });
  let session: DialecticSessionView | undefined;
  await waitFor(async () => (session = await query<DialecticSessionView>(GetDialecticSession.subject, { sessionId: 'ada-p1' }))?.status === 'awaiting_thesis', 'the recovery to open', 15_000);
  await convergeRecovery(agents.ok, session!);
  const threshold = (value: number) => ({ operation: 'set_risk_threshold', parameters: { threshold: value } });

  // A recovery that climbs to a quorum: bob and its reviewer disagree, the tie-breaker sides with
  // neither, and the dialectic service sends CreateVotingSession to the voting service, whose
  // validators approve.
  await ok(ReportHealth.type, 'bob', { agentId: 'bob', health: 0.35, risk: 0.65, tags: [], metrics: {} });
  await waitFor(async () => (session = await query<DialecticSessionView>(GetDialecticSession.subject, { sessionId: 'bob-p1' }))?.status === 'awaiting_thesis', 'the recovery of bob to open', 15_000);
  const bobReviewer = session!.reviewer!;
  await ok(SubmitThesis.type, 'bob', { sessionId: 'bob-p1', rootCause: 'spike', proposedConditions: [threshold(0.45)], reasoning: 'external' });
  await ok(SubmitAntithesis.type, bobReviewer, { sessionId: 'bob-p1', observedMetrics: { risk_score: 0.65 }, concerns: ['risk'], reasoning: 'tighter', counterProposal: { rootCause: 'spike', proposedConditions: [threshold(0.48)] } });
  await ok(SubmitSynthesis.type, 'bob', { sessionId: 'bob-p1', round: 1, rootCause: 'spike', proposedConditions: [threshold(0.5)], reasoning: 'looser', agrees: true });
  await ok(EscalateRecovery.type, 'bob', { sessionId: 'bob-p1', reason: 'we will not agree' });
  await waitFor(async () => (session = await query<DialecticSessionView>(GetDialecticSession.subject, { sessionId: 'bob-p1' }))?.escalations[0]?.tieBreaker != null, 'the tie-breaker draw', 15_000);
  await ok(RecordTieBreak.type, session!.escalations[0]!.tieBreaker!, { sessionId: 'bob-p1', escalation: 1, side: 'neither', reasoning: 'both have a point' });
  let quorum: VotingSessionView | undefined;
  await waitFor(async () => (quorum = await query<VotingSessionView>(GetVotingSession.subject, { sessionId: 'bob-p1-q2' })) !== undefined, 'the quorum session', 15_000);
  expect(quorum).toMatchObject({ requestingAgent: 'bob', createdBy: 'service:dialectic' });
  // Sent as any CreateVotingSession is (the contract's payload, signed by service:dialectic), and decided by the voting service with what it adds (the validators, the configuration).
  const [createdQuorum] = await context.store.readStream('voting_session-bob-p1-q2');
  expect(createdQuorum!.metadata).toMatchObject({ actor: 'service:dialectic', commandPayload: expect.not.objectContaining({ candidates: expect.anything() }), decision: { payload: expect.objectContaining({ candidates: expect.any(Array) }) } });
  for (const { agentId } of quorum!.validators) await ok(CastValidatorVote.type, agentId, { sessionId: 'bob-p1-q2', decision: 'approve', confidence: 0.9, reasoning: `${agentId} approves` });
  await waitFor(async () => (await query<DialecticSessionView>(GetDialecticSession.subject, { sessionId: 'bob-p1' }))?.status === 'resolved', 'the quorum result', 15_000);

  // Everything settled: a last checkpoint of the whole log.
  await new Promise((r) => setTimeout(r, 300));
  await projections.checkpoints.checkpoint();

  const serviceKeys = parseServiceKeyring(Object.fromEntries(SERVICE_NAMES.filter((s) => s !== 'chamber' && s !== 'debate').map((s) => [s, context.serviceIdentity(s).publicKey])));
  const report = await auditLog(context.store, { trusted: [{ agentId: 'root', publicKey: keys['root']!.publicKey, roles: ['operator'] }], serviceKeys });
  expect(report.findings).toEqual([]);
  expect(Object.keys(report.protocols).sort()).toEqual(['audit', 'dialectic', 'other', 'registry', 'settings', 'tribunal', 'voting']) // other: the commandid reservations;
  for (const summary of Object.values(report.protocols)) expect(summary.commands).toBeGreaterThan(0);
  expect(report.checkpoints.recorded).toBeGreaterThanOrEqual(2);
  expect(report.checkpoints.verified).toBe(report.checkpoints.recorded);
}, 90_000);
