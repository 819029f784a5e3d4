/**
 * The voting service over a real store and a real transport: in-process with the embedded store,
 * and NATS with a JetStream log of its own. Signed commands go through the service's gate; the
 * test reads what it wrote straight from the log, listens to the relay, and restarts everything
 * to see that a timeout survives.
 */
import { mkdtemp, rm } from 'node:fs/promises';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import {
  CancelVotingSession,
  CastValidatorVote,
  CreateVotingSession,
  DecideVotingEscalation,
  GetVotingSession,
  GetVotingSessionByRequest,
  ListPendingVotingSessions,
  ListValidators,
  ListVotingSessions,
  UpdateVotingConfig,
  VotingSessionView,
  type CommandDefinition,
  type CommandResult,
  type Reply,
  type VotingSessionSummary,
} from '@agora/contracts';
import type { RecordedEvent } from '@agora/eventstore';
import { verifyCommandSignature, type KeyPair, type SignedCommand } from '@agora/identity';
import type { AgoraMessage } from '@agora/messaging';
import { openServiceContext, runEventRelay, type RuntimeConfig, type ServiceContext } from '@agora/runtime';
import { serviceTransports, waitFor } from '@agora/testing';
import { startVotingService, type RunningVoting } from '../src/voting-service.js';
import { AGENTS, FIVE, generateKeys, registerAgents, sign as signWith, type Keys } from './support/fleet.js';

// In one process, and over a NATS server of this file's own.
const setups = serviceTransports('voting');

describe.each(setups)('voting service ($name)', ({ agora, nats }) => {
  let dir: string;
  let keys: Keys;
  let config: RuntimeConfig;
  let context: ServiceContext;
  let running: RunningVoting;
  let request = 0;

  const send = <T = CommandResult>(subject: string, body: unknown): Promise<Reply<T>> => context.client.request<T>(subject, body, { timeoutMs: 10_000 });
  const sign = (definition: CommandDefinition, actor: string, payload: Record<string, unknown>, key?: KeyPair): SignedCommand => signWith(keys, definition, actor, payload, key);
  const command = (definition: CommandDefinition, actor: string, payload: Record<string, unknown>, key?: KeyPair) => send(definition.subject, sign(definition, actor, payload, key));
  const vote = (sessionId: string, validator: string, decision: 'approve' | 'deny' | 'abstain', confidence = 0.9, key?: KeyPair) =>
    command(CastValidatorVote, validator, { sessionId, decision, reasoning: `${validator} says ${decision}`, confidence }, key);
  const create = (requestId: string, extra: Record<string, unknown> = {}, actor = 'deployer') => command(CreateVotingSession, actor, { requestId, actionType: 'deploy_production', riskLevel: 'high', ...extra });
  /** One session; given a position, once the read model holds it (read your writes). */
  const session = async (sessionId: string, minPosition?: string) => {
    const reply = await send<VotingSessionView>(GetVotingSession.subject, { sessionId, ...(minPosition === undefined ? {} : { minPosition }) });
    if (!reply.ok) throw new Error(JSON.stringify(reply.error));
    return reply.result;
  };
  const sessionEvents = async (sessionId: string): Promise<RecordedEvent[]> => context.store.readStream(`voting_session-${sessionId}`).catch(() => []);
  const votingEventCount = async () => {
    let n = 0;
    for await (const e of context.store.readAll()) if (e.streamId.startsWith('voting_')) n++;
    return n;
  };
  const nextId = () => `req-${++request}-${Date.now().toString(36)}`;

  const open = async () => {
    context = await openServiceContext(config);
    running = await startVotingService(context, { logger: false });
  };
  const close = async () => {
    await running?.close();
    await context?.close();
  };

  beforeAll(async () => {
    dir = await mkdtemp(join(tmpdir(), 'agora-voting-'));
    keys = generateKeys();
    config = agora(dir, { agentId: 'root', publicKey: keys['root']!.publicKey });
    await open();
    await registerAgents(context.store, keys);
    await waitFor(() => context.registry.list().length === Object.keys(AGENTS).length, 'the agent directory to know every agent');
  }, 30_000);

  afterAll(async () => {
    await close();
    await rm(dir, { recursive: true, force: true });
  });

  it('runs a session end to end: registry validators selected, signed votes, consensus, decision; one session per request; events relayed in order', async () => {
    const id = nextId();
    const relayed: AgoraMessage[] = [];
    const subscription = context.client.subscribe('agora.evt.voting_session.>', (m) => relayed.push(m));
    const relay = await runEventRelay(context);
    try {
      const envelope = sign(CreateVotingSession, 'deployer', { requestId: id, actionType: 'deploy_production', riskLevel: 'high', summary: 'v2 to production' });
      expect(await send(CreateVotingSession.subject, envelope)).toEqual({ ok: true, result: expect.objectContaining({ streamId: `voting_session-${id}`, events: ['VotingSessionCreated'], duplicate: false }) });
      // A second create for the same request (another envelope, another actor) returns the first session.
      expect(await create(id, { riskLevel: 'critical' }, 'root')).toMatchObject({ ok: true, result: { streamId: `voting_session-${id}`, events: [], revision: 0 } });

      const created = await session(id);
      expect(VotingSessionView.parse(created)).toEqual(created);
      expect(created).toMatchObject({ sessionId: id, requestId: id, requestingAgent: 'deployer', status: 'pending', riskLevel: 'high', critical: false, configRevision: -1 });
      expect(created.validators.map((v) => [v.agentId, v.tier])).toEqual([
        ['security_bot', 'ELITE'],
        ['compliance_bot', 'TRUSTED'],
        ['ops_bot', 'TRUSTED'],
        ['risk_bot', 'TRUSTED'],
        ['ethics_bot', 'TRUSTED'],
      ]);
      expect(Date.parse(created.deadlineAt) - Date.parse(created.createdAt)).toBe(300_000);
      expect(await send(GetVotingSessionByRequest.subject, { requestId: id })).toEqual({ ok: true, result: created });
      await waitFor(async () => {
        const pending = await send<{ sessions: VotingSessionSummary[] }>(ListPendingVotingSessions.subject, { validator: 'ops_bot' });
        return pending.ok && pending.result.sessions.some((s) => s.sessionId === id);
      }, 'the session among the pending ones');

      const replies = [];
      for (const [i, validator] of FIVE.entries()) replies.push(await vote(id, validator, i === 2 ? 'deny' : 'approve', 0.8));
      expect(replies.map((r) => r.ok && r.result.events)).toEqual([
        ['ValidatorVoteReceived'],
        ['ValidatorVoteReceived'],
        ['ValidatorVoteReceived'],
        ['ValidatorVoteReceived'],
        ['ValidatorVoteReceived', 'VotingConsensusReached', 'VotingSessionDecided'],
      ]);
      const decided = await session(id);
      expect(decided).toMatchObject({
        status: 'decided',
        consensus: 'majority_approve',
        finalDecision: 'approve',
        awaitingOperator: false,
        tally: { approve: 4, deny: 1, abstain: 0, approveWeight: 2.576, denyWeight: 0.64 },
        recommendation: { decision: 'approve', consensus: 'majority_approve', confidence: 0.8, requiresHitl: false, escalationReason: null },
      });
      expect(decided.recommendation!.dissent).toEqual(['Ops Validator (ops_bot) deny, confidence 0.8: ops_bot says deny']);

      // Every vote keeps the validator's signature: an auditor re-verifies it from the log alone.
      const events = await sessionEvents(id);
      const firstVote = events.find((e) => e.type === 'ValidatorVoteReceived')!;
      const m = firstVote.metadata;
      const rebuilt = { commandId: m['commandId'], type: m['commandType'], actor: m['actor'], issuedAt: m['issuedAt'], payload: m['commandPayload'], signature: m['signature'] } as SignedCommand;
      expect(verifyCommandSignature(rebuilt, keys['security_bot']!.publicKey)).toBe(true);
      expect(events[0]!.metadata).toMatchObject({ actor: 'deployer', commandId: envelope.commandId, signature: envelope.signature });

      // The relay announced the lifecycle on agora.evt.voting_session.<Type>, in order.
      const expected = ['VotingSessionCreated', ...FIVE.map(() => 'ValidatorVoteReceived'), 'VotingConsensusReached', 'VotingSessionDecided'];
      const ours = () => relayed.filter((msg) => (msg.body as { streamId: string }).streamId === `voting_session-${id}`);
      await waitFor(() => ours().length === expected.length, 'the relayed events');
      expect(ours().map((msg) => msg.subject)).toEqual(expected.map((t) => `agora.evt.voting_session.${t}`));
      expect(ours().map((msg) => (msg.body as { revision: number }).revision)).toEqual(expected.map((_, i) => i));
    } finally {
      subscription.unsubscribe();
      await relay.close();
    }
  }, 30_000);

  it('refuses bad input and abuse with a clear code, and writes nothing', async () => {
    const id = nextId();
    expect(await create(id)).toMatchObject({ ok: true });
    expect(await vote(id, 'security_bot', 'approve')).toMatchObject({ ok: true });
    const before = await votingEventCount();
    const cases: [Promise<Reply>, string, RegExp?][] = [
      // A registered validator not selected is no party: told no more than for a session that does not exist.
      [vote(id, 'junior_bot', 'approve'), 'forbidden', /^junior_bot may not CastValidatorVote on voting_session-\S+: it does not exist, or it is not one junior_bot may act on$/],
      [vote(id, 'security_bot', 'deny'), 'illegal_state', /already voted approve/], // a changed mind
      [vote(id, 'compliance_bot', 'approve', 1.5), 'invalid_command', /confidence/],
      [vote(id, 'compliance_bot', 'approve', 0.9, keys['ops_bot']), 'bad_signature'], // signed with another agent's key
      [vote(id, 'watcher', 'approve'), 'forbidden', /needs one of the roles validator/],
      [vote('no-such-session', 'compliance_bot', 'approve'), 'forbidden', /^compliance_bot may not CastValidatorVote on voting_session-no-such-session: it does not exist, or it is not one compliance_bot may act on$/],
      [create(nextId(), {}, 'watcher'), 'forbidden'],
      [create(nextId(), { requestingAgent: 'watcher' }), 'forbidden', /only an operator \(or the dialectic service, for a quorum\) may name another requesting agent/],
      [create(nextId(), { votingTimeoutMs: 10 }), 'invalid_command'],
      [command(UpdateVotingConfig, 'deployer', { minConfidence: 0.9 }), 'forbidden'],
      [command(UpdateVotingConfig, 'root', { minValidators: 6 }), 'invalid_command', /would exceed maxValidators/],
      [command(DecideVotingEscalation, 'root', { sessionId: id, decision: 'approve', reason: 'early' }), 'illegal_state', /still collecting votes/],
    ];
    for (const [reply, code, message] of cases) {
      const answer = await reply;
      expect(answer).toMatchObject({ ok: false, error: { code } });
      if (message && !answer.ok) expect(answer.error.message).toMatch(message);
    }
    // The same vote again is already recorded: ok, nothing new.
    expect(await vote(id, 'security_bot', 'approve')).toMatchObject({ ok: true, result: { events: [] } });
    expect(await command(CancelVotingSession, 'root', { sessionId: id, reason: 'test over' })).toMatchObject({ ok: true, result: { events: ['VotingSessionCancelled'] } });
    expect(await vote(id, 'compliance_bot', 'approve')).toMatchObject({ ok: false, error: { code: 'illegal_state', message: expect.stringMatching(/is cancelled/) } });
    expect(await votingEventCount()).toBe(before + 1);
  }, 30_000);

  it('escalates a split to a human: the operator lists it, decides with a signed command, and the session closes', async () => {
    const splitId = nextId();
    expect(await create(splitId)).toMatchObject({ ok: true });
    // Weighted by trust × confidence: 900 × 0.8 approve against 800 × 0.9 deny, 0.72 each; the rest abstain.
    await vote(splitId, 'security_bot', 'approve', 0.8);
    await vote(splitId, 'ops_bot', 'deny', 0.9);
    for (const validator of ['compliance_bot', 'risk_bot', 'ethics_bot']) await vote(splitId, validator, 'abstain', 0.5);
    expect(await session(splitId)).toMatchObject({
      status: 'decided',
      consensus: 'split',
      awaitingOperator: true,
      tally: { approveWeight: 0.72, denyWeight: 0.72, abstain: 3 },
      recommendation: { decision: 'escalate', requiresHitl: true, escalationReason: 'split' },
    });

    const criticalId = nextId();
    expect(await command(CreateVotingSession, 'root', { requestId: criticalId, requestingAgent: 'deployer', actionType: 'rotate_keys', riskLevel: 'critical' })).toMatchObject({ ok: true });
    for (const [validator, decision] of [['security_bot', 'approve'], ['compliance_bot', 'approve'], ['ops_bot', 'approve'], ['risk_bot', 'approve'], ['ethics_bot', 'deny']] as const) await vote(criticalId, validator, decision);
    expect(await session(criticalId)).toMatchObject({ consensus: 'majority_approve', recommendation: { decision: 'escalate', escalationReason: 'critical_not_unanimous' } });

    await waitFor(async () => {
      const reply = await send<{ sessions: VotingSessionSummary[] }>(ListPendingVotingSessions.subject, { awaitingOperator: 'true' });
      return reply.ok && reply.result.sessions.some((s) => s.sessionId === splitId);
    }, 'the escalated session among those awaiting an operator');
    expect(await command(DecideVotingEscalation, 'deployer', { sessionId: splitId, decision: 'approve', reason: 'mine' })).toMatchObject({ ok: false, error: { code: 'forbidden' } });
    expect(await command(DecideVotingEscalation, 'root', { sessionId: splitId, decision: 'approve', reason: 'the dissent concerns staging only' })).toMatchObject({
      ok: true,
      result: { events: ['VotingEscalationResolved'] },
    });
    expect(await session(splitId)).toMatchObject({ awaitingOperator: false, finalDecision: 'approve', resolution: { operator: 'root', decision: 'approve' }, closedAt: expect.any(String) });

    // Every session, most recently updated first; by status and by requesting agent.
    await waitFor(async () => {
      const reply = await send<{ sessions: VotingSessionSummary[] }>(ListVotingSessions.subject, {});
      return reply.ok && reply.result.sessions[0]?.sessionId === splitId && reply.result.sessions.some((s) => s.sessionId === criticalId);
    }, 'the decided session first in the list');
    const decided = await send<{ sessions: VotingSessionSummary[] }>(ListVotingSessions.subject, { status: 'decided', requestingAgent: 'deployer', limit: 1 });
    expect(decided.ok && decided.result.sessions.map((s) => [s.status, s.requestingAgent])).toEqual([['decided', 'deployer']]);
    expect(await send(ListVotingSessions.subject, { status: 'nonsense' })).toMatchObject({ ok: false, error: { code: 'invalid_command' } });

    // One session a page, following nextCursor: the same sessions in the same order as one page of them all.
    const all = await send<{ sessions: VotingSessionSummary[]; nextCursor?: string }>(ListVotingSessions.subject, {});
    expect(all.ok && all.result.nextCursor).toBe(undefined);
    const walked: string[] = [];
    let cursor: string | undefined;
    do {
      const page = await send<{ sessions: VotingSessionSummary[]; nextCursor?: string }>(ListVotingSessions.subject, { limit: 1, ...(cursor === undefined ? {} : { cursor }) });
      if (!page.ok) throw new Error(JSON.stringify(page.error));
      walked.push(...page.result.sessions.map((s) => s.sessionId));
      cursor = page.result.nextCursor;
    } while (cursor !== undefined);
    expect(walked).toEqual(all.ok ? all.result.sessions.map((s) => s.sessionId) : []);
    expect(walked.length).toBeGreaterThan(1);
  }, 30_000);

  it('records configuration changes by an operator and decides each new session by the rules in force at its creation', async () => {
    const validators = await send<{ validators: { agentId: string; tier: string }[] }>(ListValidators.subject, { minTrustScore: 700 });
    expect(validators.ok && validators.result.validators.map((v) => v.agentId)).toEqual(FIVE);
    const before = nextId();
    expect(await create(before)).toMatchObject({ ok: true });
    const update = await command(UpdateVotingConfig, 'root', { maxValidators: 3, votingTimeoutMs: 600_000, minConfidence: 0.95 });
    expect(update).toMatchObject({ ok: true, result: { streamId: 'voting_config-global', events: ['VotingConfigUpdated'] } });
    const after = nextId();
    expect(await create(after, { criteria: { preferredSpecializations: ['ethics'] } })).toMatchObject({ ok: true });
    const old = await session(before);
    const fresh = await session(after);
    expect(old.rules).toMatchObject({ maxValidators: 5, votingTimeoutMs: 300_000, minConfidence: 0.6 });
    expect(old.validators).toHaveLength(5);
    expect(fresh).toMatchObject({ rules: { maxValidators: 3, votingTimeoutMs: 600_000, minConfidence: 0.95 }, configRevision: update.ok ? update.result.revision : -2 });
    expect(fresh.validators.map((v) => v.agentId)).toEqual(['security_bot', 'compliance_bot', 'ethics_bot']);
    for (const validator of ['security_bot', 'compliance_bot', 'ethics_bot']) await vote(after, validator, 'approve', 0.9);
    expect(await session(after)).toMatchObject({ consensus: 'unanimous_approve', recommendation: { decision: 'escalate', escalationReason: 'low_confidence' } });
    // Back to the defaults, for the other tests.
    expect(await command(UpdateVotingConfig, 'root', { maxValidators: 5, votingTimeoutMs: 300_000, minConfidence: 0.6 })).toMatchObject({ ok: true });
  }, 30_000);

  it('expires a session at its timeout on its partial votes, also when every process restarted in between', async () => {
    const live = nextId();
    const restarted = nextId();
    expect(await create(live, { votingTimeoutMs: 1000 })).toMatchObject({ ok: true });
    expect(await create(restarted, { votingTimeoutMs: 1500 })).toMatchObject({ ok: true });
    for (const validator of ['security_bot', 'compliance_bot', 'ops_bot']) await vote(live, validator, 'approve');
    await vote(restarted, 'risk_bot', 'deny');

    // The live one expires while the service runs.
    await waitFor(async () => (await sessionEvents(live)).some((e) => e.type === 'VotingSessionExpired'), 'the live timeout', 10_000);
    // The service's own command: read once the read model holds its event.
    const expired = await session(live, (await sessionEvents(live)).find((e) => e.type === 'VotingSessionExpired')!.position);
    expect(expired).toMatchObject({
      status: 'expired',
      consensus: 'majority_approve',
      awaitingOperator: true,
      recommendation: { decision: 'escalate', requiresHitl: true, escalationReason: 'expired' },
    });
    const expiry = (await sessionEvents(live)).find((e) => e.type === 'VotingSessionExpired')!;
    expect(expiry.metadata).toMatchObject({ actor: 'service:voting', commandType: 'ExpireVotingSession' });
    expect(expiry.data).toMatchObject({ missing: ['risk_bot', 'ethics_bot'], deadlineAt: expired.deadlineAt });
    // Decided when it fired, never before it was due.
    expect(Date.parse((expiry.data as { expiredAt: string }).expiredAt)).toBeGreaterThanOrEqual(Date.parse(expired.deadlineAt));

    // Everything stops before the other one is due, and starts again after.
    const { deadlineAt } = await session(restarted);
    await close();
    const wait = Date.parse(deadlineAt) - Date.now() + 200;
    if (wait > 0) await new Promise((resolve) => setTimeout(resolve, wait));
    await open();
    await waitFor(async () => (await sessionEvents(restarted)).some((e) => e.type === 'VotingSessionExpired'), 'the timeout after the restart', 10_000);
    const concluded = await session(restarted, (await sessionEvents(restarted)).find((e) => e.type === 'VotingSessionExpired')!.position);
    expect(concluded).toMatchObject({ status: 'expired', consensus: 'no_quorum', recommendation: { escalationReason: 'no_quorum' } });
    // Concluded when the expiry fired after the restart, not "as of" the due time.
    expect(Date.parse(concluded.concludedAt!)).toBeGreaterThan(Date.parse(deadlineAt));
    expect((await sessionEvents(restarted)).filter((e) => e.type === 'VotingSessionExpired')).toHaveLength(1);
    expect(running.deadlines.pending().filter((d) => d.key.includes(restarted) || d.key.includes(live))).toEqual([]);
    expect(await command(DecideVotingEscalation, 'root', { sessionId: restarted, decision: 'deny', reason: 'nobody but risk looked' })).toMatchObject({ ok: true });
    expect((await sessionEvents(restarted)).at(-1)!.type).toBe('VotingEscalationResolved');
  }, 30_000);

  // Last: it closes the store under the running service. On JetStream only: the embedded store still
  // answers reads from its memory once closed, so it cannot stand for an outage.
  if (nats) it('answers unavailable, not internal, when the event store does not answer', async () => {
    const id = nextId();
    expect(await create(id)).toMatchObject({ ok: true });
    await context.store.close();
    // CreateVotingSession reads the configuration in force before it decides: that read fails too.
    for (const reply of [await create(nextId()), await vote(id, 'security_bot', 'approve')]) {
      expect(reply).toMatchObject({ ok: false, error: { code: 'unavailable' } });
    }
    // A session is read from the service's read model, which the outage leaves as it was.
    expect(await send(GetVotingSession.subject, { sessionId: id })).toMatchObject({ ok: true, result: { sessionId: id } });
  }, 30_000);
});
