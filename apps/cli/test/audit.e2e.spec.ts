/**
 * The trust boundary end to end, as deployed: a nats-server running deploy/nats/single.conf (users
 * and permissions), the services as separate processes under the `service` user with the log in
 * JetStream, agents speaking NATS as the `agent` user. A tribunal review, a voting session and a
 * recovery run; `agora audit`
 * (as the `auditor` user) finds nothing. Then the forgery of the opening list, "an anonymous
 * client publishes AgentRegistered(operator) into the log": NATS refuses it, and written anyway
 * by a privileged connection it is the one thing the audit reports.
 */
import { join } from 'node:path';
import { errors } from '@nats-io/nats-core';
import { connect } from '@nats-io/transport-node';
import { GetDialecticSession, GetProposal, GetVotingSession, READ_TOKEN, type DialecticSessionView, type ProposalView, type Reply, type VotingSessionView } from '@agora/contracts';
import { openEventStore, type StoreConfig } from '@agora/eventstore';
import { generateKeyPair, mintReadToken } from '@agora/identity';
import { approveProposal, convergeRecovery, natsPasswordEnv, natsPasswords, REPO_ROOT, REVIEWER_PROFILES, runToCompletion, startServiceFleet, waitFor, type ServiceFleet } from '@agora/testing';
import type { AuditReport } from '../src/audit/engine.js';

const ROLES = ['service', 'gateway', 'agent', 'observer', 'auditor'] as const;
const passwords = natsPasswords(ROLES);

const CAST = {
  seldon: { roles: ['executive'], constitutions: [] },
  ...REVIEWER_PROFILES,
  ada: { roles: ['executive'], constitutions: [] },
  val1: { roles: ['validator'], constitutions: [] },
  val2: { roles: ['validator'], constitutions: [] },
  val3: { roles: ['validator'], constitutions: [] },
  val4: { roles: ['validator'], constitutions: [] },
  val5: { roles: ['validator'], constitutions: [] },
} as const;
type Agent = keyof typeof CAST;

describe('the trust boundary on the deploy NATS configuration (e2e)', () => {
  let fleet: ServiceFleet;
  let nats: ServiceFleet['nats'];
  let client: ServiceFleet['client'];

  // Every process on the deploy's default log (EVENT_STORE=jetstream) as the `service` user, with the services' keys in one place.
  const common = (): Record<string, string> => ({ EVENT_STORE: 'jetstream', AGORA_SERVICE_KEYS_DIR: join(fleet.dir, 'service-keys') });
  const start = (service: string, extra: Record<string, string> = {}) => fleet.start(service, extra);
  const ok = (agent: Agent | 'root', type: string, payload: Record<string, unknown>) => fleet.ok(agent, type, payload);
  // Services run as NATS users answer NATS queries only with the reader's read token (AGORA_NATS_READS=closed, their default).
  const asOperator = () => ({ [READ_TOKEN.natsHeader]: mintReadToken({ agentId: 'root', secretKey: fleet.key('root').secretKey }) });
  const proposal = async (proposalId: string) => {
    const reply = (await client.request(GetProposal.subject, { proposalId }, { timeoutMs: 15_000, headers: asOperator() })) as Reply<ProposalView>;
    return reply.ok ? reply.result : undefined;
  };
  const audit = async (): Promise<{ code: number | null; report: AuditReport; stderr: string }> => {
    const finished = await runToCompletion('apps/cli/src/main.ts', ['audit', '--json', '--workers', '1'], { ...fleet.env('audit'), NATS_USER: 'auditor', NATS_PASSWORD: passwords.auditor, AGORA_DATA_DIR: fleet.dir }, 120_000);
    if (!finished.stdout.trim()) throw new Error(`agora audit printed no report (exit ${finished.code}):\n${finished.stderr}`);
    return { code: finished.code, report: JSON.parse(finished.stdout) as AuditReport, stderr: finished.stderr };
  };

  beforeAll(async () => {
    fleet = await startServiceFleet({
      label: 'audit',
      nats: { config: join(REPO_ROOT, 'deploy/nats/single.conf'), env: natsPasswordEnv(passwords) },
      credentials: { user: 'agent', pass: passwords.agent },
      env: () => ({ ...common(), NATS_USER: 'service', NATS_PASSWORD: passwords.service, METRICS_PORT: '0', METRICS_HOST: '127.0.0.1' }),
    });
    ({ nats, client } = fleet);
    await start('registry');
    await start('proposal');
    await start('projections', { AGORA_CHECKPOINT_EVERY: '5', AGORA_CHECKPOINT_INTERVAL_MS: '500' });
    await fleet.register(Object.fromEntries(Object.entries(CAST).map(([agentId, profile]) => [agentId, { roles: profile.roles, constitutions: [...profile.constitutions], trustScore: 500 }])));
    // The tribunal, voting and dialectic draw reviewers and validators from the registry as their process knows it: started now, they have caught up with every agent.
    await start('tribunal');
    await start('voting');
    await start('dialectic');
  }, 240_000);

  afterAll(() => fleet?.stop(), 60_000);

  it('runs the tribunal, voting and dialectic flows under the service and agent users; agora audit, as the auditor user, finds nothing', async () => {
    const tribunal = { ok: fleet.ok, read: proposal };
    await approveProposal(tribunal, 'seldon', { proposalId: 'space-os', title: 'Space-OS', body: 'Week 1: bounties.', problem: 'Space-OS needs users', evidence: [{ ref: 'brr/threads/004', summary: 'context' }] }, 30_000);

    // Voting: a session on the registry's validators, every selected one approves.
    await ok('seldon', 'CreateVotingSession', { requestId: 'deploy-1', actionType: 'deploy_production', riskLevel: 'high' });
    const voting = async () => {
      const reply = (await client.request(GetVotingSession.subject, { sessionId: 'deploy-1' }, { timeoutMs: 15_000, headers: asOperator() })) as Reply<VotingSessionView>;
      return reply.ok ? reply.result : undefined;
    };
    for (const { agentId } of (await voting())!.validators) await ok(agentId as Agent, 'CastValidatorVote', { sessionId: 'deploy-1', decision: 'approve', confidence: 0.9, reasoning: `${agentId} approves` });
    await waitFor(async () => (await voting())?.status === 'decided', 'deploy-1 decided', 30_000);

    // Dialectic: ada's breaker trips; the dialectic service opens the recovery with a reviewer (its own signed command); they converge.
    await ok('ada', 'ReportHealth', { agentId: 'ada', health: 0.35, risk: 0.65, tags: [], metrics: {} });
    const recovery = async () => {
      const reply = (await client.request(GetDialecticSession.subject, { sessionId: 'ada-p1' }, { timeoutMs: 15_000, headers: asOperator() })) as Reply<DialecticSessionView>;
      return reply.ok ? reply.result : undefined;
    };
    await waitFor(async () => (await recovery())?.status === 'awaiting_thesis', 'the recovery to open', 30_000);
    await convergeRecovery(fleet.ok, (await recovery())!);
    // A checkpoint after the last commit (every 500 ms while commits come in).
    await new Promise((r) => setTimeout(r, 1_500));

    const { code, report, stderr } = await audit();
    expect(report.findings).toEqual([]);
    expect(code).toBe(0);
    expect(report.protocols['tribunal']?.commands).toBeGreaterThanOrEqual(6);
    expect(report.protocols['voting']?.commands).toBeGreaterThanOrEqual(4);
    expect(report.protocols['dialectic']?.commands).toBeGreaterThanOrEqual(5);
    expect(report.protocols['registry']?.commands).toBeGreaterThan(Object.keys(CAST).length);
    expect(report.checkpoints.recorded).toBeGreaterThanOrEqual(1);
    expect(report.checkpoints.verified).toBe(report.checkpoints.recorded);
    expect(stderr).toMatch(/audit: position \S+, \d+ events, \d+ events\/s/);
  }, 180_000);

  it('"an anonymous client publishes AgentRegistered(operator) into the log": refused by NATS; written by a privileged connection, reported by the audit', async () => {
    const forged = { type: 'AgentRegistered', data: { agentId: 'mallory', publicKey: generateKeyPair().publicKey, displayName: 'Mallory', roles: ['operator'], constitutions: [], specializations: [], trustScore: 500, health: 1, risk: 0 }, metadata: { actor: 'root' } };
    // No credentials: no connection at all.
    await expect(connect({ servers: nats.url, reconnect: false })).rejects.toBeInstanceOf(errors.AuthorizationError);
    // An agent's connection: the publish on the log's subject is refused.
    const agent = await connect({ servers: nats.url, reconnect: false, user: 'agent', pass: passwords.agent });
    try {
      const refusal = await agent.request('agora.es.agent-mallory', JSON.stringify({ r: 0, e: [forged] }), { timeout: 5_000 }).then(
        () => undefined,
        (error: unknown) => (error instanceof errors.RequestError && error.cause ? error.cause : error),
      );
      expect(refusal).toBeInstanceOf(errors.PermissionViolationError);
    } finally {
      await agent.close();
    }
    const before = await audit();
    expect(before.report.findings).toEqual([]);

    // Written anyway, by a connection allowed to write the log (a stolen service password).
    const privileged: StoreConfig = { kind: 'jetstream', servers: nats.url, credentials: { user: 'service', pass: passwords.service } };
    const store = await openEventStore(privileged);
    try {
      await store.append('agent-mallory', [forged], 'no_stream');
    } finally {
      await store.close();
    }
    const after = await audit();
    expect(after.code).toBe(1);
    expect(after.report.findings.map((f) => ({ check: f.check, streamId: f.streamId, revision: f.revision, eventType: f.eventType }))).toEqual([
      { check: 'envelope', streamId: 'agent-mallory', revision: 0, eventType: 'AgentRegistered' },
    ]);
  }, 240_000);
});
