/**
 * The trust boundary, tried from the outside as an attacker would, against every service of
 * standalone mode wired as standalone mode wires them (in-process transport, embedded store):
 * each forgery is refused with its own reason and writes nothing; the authorization table is
 * enforced row by row; and the log that the honest traffic leaves behind is signed, chained and
 * authorized commit by commit, under the keys the signers had (a mini audit with the pure
 * functions an auditor uses).
 */
import { randomUUID } from 'node:crypto';
import {
  authorizeCommand,
  CancelVotingSession,
  CastValidatorVote,
  commands as catalog,
  DecideRecovery,
  EscalateRecovery,
  GetVotingSessionByRequest,
  RecordExecution,
  RecordTieBreak,
  ReviseProposal,
  SubmitAudit,
  SubmitProposal,
  WithdrawProposal,
  CreateVotingSession,
  GetDialecticSession,
  GetVotingSession,
  isServiceOnly,
  RecordQuorumResult,
  RegisterAgent,
  ReportHealth,
  serviceOfActor,
  SignResolution,
  SubmitAntithesis,
  SubmitSynthesis,
  SubmitThesis,
  UpdateAgent,
  type CommandDefinition,
  type CommandResult,
  type Condition,
  type DialecticSessionView,
  type Reply,
  type Role,
  type VotingSessionView,
} from '@agora/contracts';
import { dialecticStreamId, signResolution } from '@agora/domain-dialectic';
import { agentStreamId } from '@agora/domain-registry';
import type { EventStore, RecordedEvent } from '@agora/eventstore';
import { commitsOf, generateKeyPair, parseServiceKeyring, serviceKeyAt, verifyMetadataSignature, verifyStreamChain, type KeyPair } from '@agora/identity';
import { startChamberService } from '@agora/chamber';
import { startDebateService } from '@agora/debate';
import { startDialecticService } from '@agora/dialectic';
import { startProjectionsService } from '@agora/projections';
import { startProposalService } from '@agora/proposal';
import { startRegistryService } from '@agora/registry';
import { ConfigError, issueInternalCommand, loadServiceIdentity, notYoursRefusal, openServiceContext, resolveServiceKeyring, startAll, type ServiceContext } from '@agora/runtime';
import { agentsOn, QUIET_PROJECTIONS, quietServices, serviceTransports, startServicesInProcess, waitFor, type InProcessServices } from '@agora/testing';
import { startTribunalService } from '@agora/tribunal';
import { startVotingService } from '@agora/voting';
import { createDialecticDecider, DEFAULT_DIALECTIC_POLICY } from '@agora/domain-dialectic';

const FLEET: Record<string, Role[]> = {
  ada: ['executive'],
  bob: ['executive'],
  cyd: ['executive'],
  dee: ['executive'],
  eve: ['executive'],
  fay: ['executive'],
  gus: ['executive'],
  hal: ['executive'],
  rev1: ['reviewer'],
  rev2: ['reviewer'],
  watcher: ['observer'],
  ...Object.fromEntries([1, 2, 3, 4, 5, 6].map((n) => [`val${n}`, ['validator'] as Role[]])),
};

/** The one refusal a sender gets for an aggregate it may not read (libs/runtime deciderHandler), whatever its state or owner. */
const notYours = (actor: string, commandType: string, streamId: string): string => notYoursRefusal(commandType, streamId, actor).message;
const threshold = (value: number): Condition => ({ operation: 'set_risk_threshold', parameters: { threshold: value } });

// In one process, and over a NATS server of this file's own.
const setups = serviceTransports('trust');

let services: InProcessServices<ServiceContext>;
let dir: string;
let context: ServiceContext;
const keys: Record<string, KeyPair> = Object.fromEntries(['root', ...Object.keys(FLEET)].map((id) => [id, generateKeyPair()]));

/** The log's length as the last refusal left it, while nothing but refusals has been sent since. */
let unchangedAt: number | undefined;

// Signs and sends as the agents do, through the running context's client.
const agents = agentsOn(() => context.client, keys);
const command = (definition: CommandDefinition, actor: string, payload: Record<string, unknown>, key?: KeyPair) => {
  unchangedAt = undefined;
  return agents.send(actor, definition, payload, key ? { key } : {});
};
const query = <T>(subject: string, params: unknown): Promise<T> => agents.query<T>(subject, params);
const session = (sessionId: string) => query<DialecticSessionView>(GetDialecticSession.subject, { sessionId });
const sessionWhen = (sessionId: string, check: (s: DialecticSessionView) => boolean, what: string) => agents.until(() => session(sessionId), check, `${what} (session ${sessionId})`);

async function allEvents(store: EventStore): Promise<RecordedEvent[]> {
  const out: RecordedEvent[] = [];
  for await (const event of store.readAll()) out.push(event);
  return out;
}
/** The log's length: a refusal must leave it as it was. */
const logLength = async () => (await allEvents(context.store)).length;

/** The log once what earlier steps set off (a reactor's answer) has landed: unchanged for 300 ms. Its length. */
async function quietLog(): Promise<number> {
  let before = await logLength();
  for (;;) {
    await new Promise((r) => setTimeout(r, 300));
    const now = await logLength();
    if (now === before) return now;
    before = now;
  }
}

/**
 * Runs `attempt` and checks that it wrote nothing to the log. Right after another refusal (nothing
 * sent since) the log must still be as that one left it, and needs no settling again.
 */
async function writesNothing<T>(attempt: () => Promise<T>): Promise<T> {
  const before = unchangedAt ?? (await quietLog());
  if (unchangedAt !== undefined) expect(await logLength()).toBe(unchangedAt);
  const result = await attempt();
  // Reactors answer what is appended: give them a moment to (wrongly) react.
  await new Promise((r) => setTimeout(r, 100));
  expect(await logLength()).toBe(before);
  unchangedAt = before;
  return result;
}

/** The first of these agents never paused: anyone may be drawn as a reviewer, and ada's reviewer is paused by a test. */
async function neverPaused(...ids: string[]): Promise<string> {
  for (const id of ids) if ((await context.registry.agent(id))?.breaker.pauses === 0) return id;
  throw new Error(`all of ${ids.join(', ')} were paused`);
}

/** Trips `agentId`'s breaker and waits for its recovery to open with a reviewer. */
async function pause(agentId: string): Promise<DialecticSessionView> {
  expect(await command(ReportHealth, agentId, { agentId, health: 0.35, risk: 0.65, tags: [], metrics: {} })).toMatchObject({ ok: true, result: { events: ['AgentHealthReported', 'AgentPaused'] } });
  return sessionWhen(`${agentId}-p1`, (s) => s.status === 'awaiting_thesis', 'the recovery to open');
}

/** Thesis, antithesis and agreeing syntheses: a resolution proposed, nobody signed yet. */
async function converge(s: DialecticSessionView, agreed: Condition[] = [threshold(0.48)]): Promise<DialecticSessionView> {
  const reviewer = s.reviewer!;
  expect(await command(SubmitThesis, s.agentId, { sessionId: s.sessionId, rootCause: 'spike', proposedConditions: [threshold(0.45)], reasoning: 'external' })).toMatchObject({ ok: true });
  expect(
    await command(SubmitAntithesis, reviewer, {
      sessionId: s.sessionId,
      observedMetrics: { risk_score: 0.65 },
      concerns: ['risk'],
      reasoning: 'tighter',
      counterProposal: { rootCause: 'spike', proposedConditions: [threshold(0.48)] },
    }),
  ).toMatchObject({ ok: true });
  expect(await command(SubmitSynthesis, s.agentId, { sessionId: s.sessionId, round: 1, rootCause: 'spike', proposedConditions: agreed, reasoning: 'agreed', agrees: true })).toMatchObject({ ok: true });
  expect(await command(SubmitSynthesis, reviewer, { sessionId: s.sessionId, round: 2, rootCause: 'spike', proposedConditions: agreed, reasoning: 'agreed', agrees: true })).toMatchObject({
    ok: true,
    result: { events: ['SynthesisSubmitted', 'ResolutionProposed'] },
  });
  return session(s.sessionId);
}

describe.each(setups)('the trust boundary ($name)', ({ agora }) => {
  beforeAll(async () => {
    const start = (started: ServiceContext) =>
      startAll([...quietServices(started, [startRegistryService, startProposalService, startTribunalService, startVotingService, startDialecticService, startChamberService, startDebateService]), () => startProjectionsService(started, QUIET_PROJECTIONS)]);
    services = await startServicesInProcess({ label: 'trust', keys, open: (directory, operator) => openServiceContext(agora(directory, operator)), start });
    ({ dir, context } = services);
    // The fleet is registered through the gate, signed by the bootstrap operator: nothing unsigned in the log.
    for (const [agentId, roles] of Object.entries(FLEET)) {
      expect(await command(RegisterAgent, 'root', { agentId, publicKey: keys[agentId]!.publicKey, displayName: agentId, roles, trustScore: 700 })).toMatchObject({ ok: true });
    }
    await waitFor(() => context.registry.list().length === Object.keys(FLEET).length, 'the agent directory to know the fleet');
  }, 30_000);

  afterAll(() => services?.stop());

  describe('service-only commands', () => {
    it('refuses every service-only command from an operator, with service_only, and writes nothing', async () => {
      const serviceOnly = catalog.filter(isServiceOnly);
      expect(serviceOnly.map((c) => c.type).sort()).toEqual(
        [
          ...['AdjustTrust', 'AssignAuditor', 'AssignTieBreaker', 'ExpireDialecticPhase', 'ExpireReviewRound', 'ExpireVotingSession', 'OpenRecovery', 'OpenReviewRound', 'RecordLogCheckpoint', 'RecordQuorumResult', 'RecordRelapse', 'RecordSettings', 'ResumeAgent'],
          ...['ExpireChamberApproval', 'RecordChamberCallOutcome', 'ReserveChamberBudget', 'SettleChamberBudget', 'ModerateDebate'],
        ].sort(),
      );
      for (const definition of serviceOnly) {
        const reply = await writesNothing(() => command(definition, 'root', { sessionId: 'ada-p1', agentId: 'ada' }));
        expect(reply).toMatchObject({ ok: false, error: { code: 'service_only', message: expect.stringContaining(`service:${definition.issuers![0]}`) } });
      }
    }, 60_000);

    it("refuses an operator's RecordQuorumResult (approve, 5 votes) on a recovery, which stays as it was", async () => {
      const opened = await pause('bob');
      const reply = await writesNothing(() =>
        command(RecordQuorumResult, 'root', { sessionId: opened.sessionId, escalation: 1, votingSessionId: 'forged', decision: 'approve', votes: 5, approve: 5, deny: 0, reason: 'trust me' }),
      );
      expect(reply).toMatchObject({ ok: false, error: { code: 'service_only' } });
      expect((await session(opened.sessionId)).status).toBe('awaiting_thesis');
      expect((await context.registry.agent('bob'))?.breaker.state).toBe('open');
    }, 60_000);

    it('refuses on the subjects a service sending a command that does not name it among its issuers, or a service signed for with another key; and a service issuing a command that is not its own', async () => {
      const voting = context.serviceIdentity('voting');
      const request = () => ({ requestId: `x-${randomUUID()}`, actionType: 'deploy', riskLevel: 'high' });
      // CreateVotingSession names service:dialectic among its issuers (a quorum escalation), not service:voting.
      const asService = await writesNothing(() => command(CreateVotingSession, 'service:voting', request(), voting));
      expect(asService).toMatchObject({ ok: false, error: { code: 'forbidden', message: expect.stringContaining('only service:dialectic does') } });
      const forged = await writesNothing(() => command(CreateVotingSession, 'service:dialectic', request(), voting));
      expect(forged).toMatchObject({ ok: false, error: { code: 'bad_signature' } });

      const decider = createDialecticDecider(DEFAULT_DIALECTIC_POLICY);
      await writesNothing(async () => {
        await expect(
          issueInternalCommand(
            { streamId: dialecticStreamId('ada-p9'), decider, type: 'AssignAuditor', payload: { sessionId: 'ada-p9', candidates: [] } },
            { store: context.store, as: voting, commandId: randomUUID(), now: new Date().toISOString() },
          ),
        ).rejects.toThrow(/service:voting may not issue AssignAuditor on its own behalf: service:voting does not issue AssignAuditor: only service:dialectic does/);
      });
    }, 60_000);
  });

  describe('identities', () => {
    it('refuses an agent claiming the service role (register or update), and writes nothing', async () => {
      const register = await writesNothing(() => command(RegisterAgent, 'root', { agentId: 'mole', publicKey: generateKeyPair().publicKey, displayName: 'mole', roles: ['service'] }));
      expect(register).toMatchObject({ ok: false, error: { code: 'invalid_command', message: expect.stringContaining('the role "service" belongs to Agora\'s own services') } });
      const update = await writesNothing(() => command(UpdateAgent, 'root', { agentId: 'ada', roles: ['executive', 'service'] }));
      expect(update).toMatchObject({ ok: false, error: { code: 'invalid_command', message: expect.stringContaining('no agent can hold it') } });
    }, 60_000);

    it("refuses to start a service with another service's key, or with a rotated-out key", () => {
      const tribunal = generateKeyPair();
      const voting = generateKeyPair();
      const rotated = generateKeyPair();
      const keyring = parseServiceKeyring({
        tribunal: tribunal.publicKey,
        voting: voting.publicKey,
        dialectic: [
          { publicKey: rotated.publicKey, until: '2026-01-01T00:00:00Z' },
          { publicKey: generateKeyPair().publicKey, from: '2026-01-01T00:00:00Z' },
        ],
      });
      const settings = (secret: string, service: string) => ({ serviceKeysDir: dir, serviceSecretKeys: { [service]: secret }, serviceKeyring: keyring });
      expect(loadServiceIdentity(settings(tribunal.secretKey, 'tribunal'), 'tribunal').actor).toBe('service:tribunal');
      expect(() => loadServiceIdentity(settings(voting.secretKey, 'tribunal'), 'tribunal')).toThrow(ConfigError);
      expect(() => loadServiceIdentity(settings(voting.secretKey, 'tribunal'), 'tribunal')).toThrow(/it is the voting service's key/);
      expect(() => loadServiceIdentity(settings(rotated.secretKey, 'dialectic'), 'dialectic', { now: () => Date.parse('2026-06-01T00:00:00Z') })).toThrow(/rotated out/);
      // Before the rotation, the old key was the one in force.
      expect(loadServiceIdentity(settings(rotated.secretKey, 'dialectic'), 'dialectic', { now: () => Date.parse('2025-06-01T00:00:00Z') }).publicKey).toBe(rotated.publicKey);
    }, 60_000);
  });

  describe('paused agents', () => {
    it("refuses a paused reviewer's signature on another agent's resolution; that agent does not resume", async () => {
      const opened = await pause('ada');
      const proposed = await converge(opened);
      const reviewer = opened.reviewer!;
      // The reviewer's own breaker trips after the parties converged.
      expect(await command(ReportHealth, reviewer, { agentId: reviewer, health: 0.2, risk: 0.9, tags: [], metrics: {} })).toMatchObject({ ok: true, result: { events: ['AgentHealthReported', 'AgentPaused'] } });
      await waitFor(async () => (await context.registry.agent(reviewer))?.breaker.state === 'open', 'the reviewer to be paused');
      await sessionWhen(`${reviewer}-p1`, (s) => s.status !== undefined, "the reviewer's own recovery to open");

      const payload = proposed.proposed!.payload;
      const signed = await writesNothing(() => command(SignResolution, reviewer, { sessionId: opened.sessionId, publicKey: keys[reviewer]!.publicKey, signature: signResolution(payload, reviewer, keys[reviewer]!.secretKey) }));
      expect(signed).toMatchObject({ ok: false, error: { code: 'forbidden', message: expect.stringMatching(/in another recovery session \(ada-p1\) is refused until it resumes/) } });
      // Nor may it report on another agent's health.
      const report = await writesNothing(() => command(ReportHealth, reviewer, { agentId: 'ada', health: 1, risk: 0, tags: [], metrics: {} }));
      expect(report).toMatchObject({ ok: false, error: { code: 'forbidden', message: expect.stringMatching(/about another agent \(ada\)/) } });
      // The paused agent signing its own recovery is still allowed.
      expect(await command(SignResolution, 'ada', { sessionId: opened.sessionId, publicKey: keys['ada']!.publicKey, signature: signResolution(payload, 'ada', keys['ada']!.secretKey) })).toMatchObject({ ok: true });
      expect((await session(opened.sessionId)).status).not.toBe('resolved');
      expect((await context.registry.agent('ada'))?.breaker.state).toBe('open');
    }, 60_000);
  });

  describe("a resumed agent's conditions", () => {
    it('enforces rate_limit at every gate (rate_limited, health reports excepted), records probation, and announces the other conditions as obligations', async () => {
      const cyd = await neverPaused('cyd', 'fay');
      const opened = await pause(cyd);
      const agreed: Condition[] = [threshold(0.48), { operation: 'rate_limit', parameters: { max_actions_per_minute: 2 } }, { operation: 'probation', parameters: { hours: 1 } }, { operation: 'notify_operator', parameters: { reason: 'relapse risk' } }];
      const proposed = await converge(opened, agreed);
      const payload = proposed.proposed!.payload;
      for (const signer of [opened.agentId, opened.reviewer!]) {
        expect(await command(SignResolution, signer, { sessionId: opened.sessionId, publicKey: keys[signer]!.publicKey, signature: signResolution(payload, signer, keys[signer]!.secretKey) })).toMatchObject({ ok: true });
      }
      await waitFor(async () => (await context.registry.agent(cyd))?.breaker.state === 'closed', `${cyd} to resume`);
      const resumed = (await context.store.readStream(agentStreamId(cyd))).find((e) => e.type === 'AgentResumed')!;
      expect(resumed.data).toMatchObject({ enforced: { rateLimitPerMinute: 2, probation: { reportEveryMs: 3_600_000, riskMargin: 0.1 } }, obligations: [{ operation: 'notify_operator' }] });
      expect(resumed.metadata).toMatchObject({ actor: 'service:registry', commandType: 'ResumeAgent' });

      // Two commands a minute to the voting service, then rate_limited with nothing written; health reports still pass.
      const create = () => command(CreateVotingSession, cyd, { requestId: `${cyd}-${randomUUID()}`, actionType: 'deploy_production', riskLevel: 'high' });
      expect(await create()).toMatchObject({ ok: true });
      expect(await create()).toMatchObject({ ok: true });
      const third = await writesNothing(() => create());
      expect(third).toMatchObject({ ok: false, error: { code: 'rate_limited', details: { condition: 'rate_limit', maxActionsPerMinute: 2 } } });
      expect(await command(ReportHealth, cyd, { agentId: cyd, health: 0.9, risk: 0.1, tags: [], metrics: {} })).toMatchObject({ ok: true });
      // On probation the breaker is stricter: 0.40 is under cyd's 0.48, but at 0.48 - 0.10.
      expect(await command(ReportHealth, cyd, { agentId: cyd, health: 0.6, risk: 0.4, tags: [], metrics: {} })).toMatchObject({ ok: true, result: { events: ['AgentHealthReported', 'AgentPaused'] } });
    }, 60_000);

    it('refuses to resume on a resolution without conditions: both parties agreeing on none goes to an operator', async () => {
      const agent = await neverPaused('dee', 'eve');
      const opened = await pause(agent);
      const reviewer = opened.reviewer!;
      expect(await command(SubmitThesis, agent, { sessionId: opened.sessionId, rootCause: 'spike', proposedConditions: [], reasoning: 'nothing to change' })).toMatchObject({ ok: true });
      expect(await command(SubmitAntithesis, reviewer, { sessionId: opened.sessionId, observedMetrics: {}, concerns: ['c'], reasoning: 'fine', counterProposal: { rootCause: 'spike', proposedConditions: [] } })).toMatchObject({ ok: true });
      expect(await command(SubmitSynthesis, agent, { sessionId: opened.sessionId, round: 1, rootCause: 'spike', proposedConditions: [], reasoning: 'agreed', agrees: true })).toMatchObject({ ok: true });
      await command(SubmitSynthesis, reviewer, { sessionId: opened.sessionId, round: 2, rootCause: 'spike', proposedConditions: [], reasoning: 'agreed', agrees: true });
      const s = await session(opened.sessionId);
      expect(s.status).not.toBe('resolved');
      expect(s.status).toBe('awaiting_operator');
      expect((await context.registry.agent(agent))?.breaker.state).toBe('open');
    }, 60_000);
  });

  describe('the authorization table, row by row', () => {
    it('refuses each command from an agent holding none of its roles, before anything is decided, and writes nothing', async () => {
      for (const definition of catalog.filter((c) => !isServiceOnly(c))) {
        const outsider = Object.keys(FLEET).find((id) => !FLEET[id]!.some((role) => definition.roles.includes(role)));
        if (outsider === undefined) continue; // any role may send it: the relation (below) is what is checked
        const reply = await writesNothing(() => command(definition, outsider, { sessionId: 'ada-p1', agentId: outsider }));
        expect(reply).toMatchObject({ ok: false, error: { code: 'forbidden', message: expect.stringContaining(`${definition.type} needs one of the roles`) } });
        expect(authorizeCommand(definition.type, { actor: outsider, roles: FLEET[outsider]! })).toMatchObject({ allowed: false, code: 'forbidden' });
      }
    }, 60_000);

    it('refuses senders with the role but not the relation: the thesis of another agent, an antithesis by a non-reviewer and a vote by an unselected validator', async () => {
      // bob-p1 is open (see above): only bob writes its thesis, only its reviewer the antithesis.
      const bobs = await session('bob-p1');
      // Someone neither bob nor its reviewer, and not paused (reviewers are drawn from the whole fleet).
      const active = async (id: string) => (await context.registry.agent(id))?.breaker.state === 'closed';
      const stranger = (await Promise.all(['val1', 'val2', 'val3', 'val4'].map(async (id) => ((await active(id)) && id !== bobs.reviewer ? id : undefined)))).find((id) => id !== undefined)!;
      const thesis = await writesNothing(() => command(SubmitThesis, stranger, { sessionId: 'bob-p1', rootCause: 'x', proposedConditions: [threshold(0.5)], reasoning: 'y' }));
      // Not a party: the one refusal a reader gets for what it may not read, naming nobody (bob's own refusals stay his).
      expect(thesis).toMatchObject({ ok: false, error: { code: 'forbidden', message: notYours(stranger, 'SubmitThesis', 'dialectic_session-bob-p1') } });
      const antithesis = await writesNothing(() =>
        command(SubmitAntithesis, stranger, { sessionId: 'bob-p1', observedMetrics: {}, concerns: ['c'], reasoning: 'r', counterProposal: { rootCause: 'x', proposedConditions: [threshold(0.5)] } }),
      );
      expect(antithesis).toMatchObject({ ok: false, error: { code: 'forbidden' } });

      // A voting session with a validator pool: an unselected validator's vote, another executive's cancellation.
      const outsider = (await Promise.all(['val6', 'val5', 'val4', 'val3'].map(async (id) => ((await active(id)) ? id : undefined)))).find((id) => id !== undefined)!;
      const requestId = `trust-${randomUUID()}`;
      const created = await command(CreateVotingSession, 'root', { requestId, requestingAgent: 'watcher', actionType: 'deploy_production', riskLevel: 'high', votingTimeoutMs: 600_000, criteria: { minTrustScore: 0, excludeAgents: [outsider], preferredSpecializations: [] } });
      expect(created).toMatchObject({ ok: true });
      const votingSessionId = (created as { result: CommandResult }).result.streamId.slice('voting_session-'.length);
      const view = await query<VotingSessionView>(GetVotingSession.subject, { sessionId: votingSessionId });
      expect(view.validators.map((v) => v.agentId)).not.toContain(outsider);
      const vote = await writesNothing(() => command(CastValidatorVote, outsider, { sessionId: votingSessionId, decision: 'approve', confidence: 0.9, reasoning: 'let me in' }));
      expect(vote).toMatchObject({ ok: false, error: { code: 'forbidden', message: notYours(outsider, 'CastValidatorVote', `voting_session-${votingSessionId}`) } });
    }, 60_000);
  });

  describe('the authorization table: the relation rows, each by a sender with the role and without the relation', () => {
    it('refuses another executive on a proposal, a non-party in a recovery, a non-tie-breaker, a non-auditor, an operator outside the operator tier, another executive cancelling a vote or reusing its request id, another operator taking the bootstrap operator\'s id', async () => {
      // Two distinct executives whose breakers never tripped (which ones were drawn as reviewers earlier varies).
      const proposer = await neverPaused('gus', 'hal', 'fay', 'eve');
      const other = await neverPaused(...['hal', 'fay', 'eve', 'dee'].filter((id) => id !== proposer));
      expect(proposer).not.toBe(other);
      const proposalId = `trust-${randomUUID()}`;
      expect(await command(SubmitProposal, proposer, { proposalId, title: 'Cache', body: 'Add a cache', problem: 'Slow reads' })).toMatchObject({ ok: true });
      const refusedWith = async (attempt: () => Promise<Reply>, code: string, message?: RegExp | string) => {
        const answer = await writesNothing(attempt);
        expect(answer).toMatchObject({ ok: false, error: { code, ...(message ? { message: typeof message === 'string' ? message : expect.stringMatching(message) } : {}) } });
      };
      // ReviseProposal, WithdrawProposal, RecordExecution: the executive that submitted the proposal.
      // Another executive is no party to the proposal: the same refusal as for a proposal that does not exist, naming nobody.
      await refusedWith(() => command(ReviseProposal, other, { proposalId, body: 'Mine now' }), 'forbidden', notYours(other, 'ReviseProposal', `proposal-${proposalId}`));
      await refusedWith(() => command(WithdrawProposal, other, { proposalId, reason: 'Mine now' }), 'forbidden', notYours(other, 'WithdrawProposal', `proposal-${proposalId}`));
      await refusedWith(() => command(RecordExecution, other, { proposalId, summary: 'done' }), 'forbidden', notYours(other, 'RecordExecution', `proposal-${proposalId}`));
      await refusedWith(() => command(WithdrawProposal, other, { proposalId: `${proposalId}-none`, reason: 'Mine now' }), 'forbidden', notYours(other, 'WithdrawProposal', `proposal-${proposalId}-none`));

      // bob-p1 is open: SubmitSynthesis, EscalateRecovery by someone who is no party; RecordTieBreak by someone not drawn; DecideRecovery before the operator tier.
      const bobs = await session('bob-p1');
      const outsider = other === bobs.reviewer ? proposer : other;
      await refusedWith(() => command(SubmitSynthesis, outsider, { sessionId: 'bob-p1', round: 1, rootCause: 'x', proposedConditions: [threshold(0.5)], reasoning: 'y', agrees: true }), 'forbidden');
      await refusedWith(() => command(EscalateRecovery, outsider, { sessionId: 'bob-p1', reason: 'let me' }), 'forbidden', notYours(outsider, 'EscalateRecovery', 'dialectic_session-bob-p1'));
      const tieBreak = await writesNothing(() => command(RecordTieBreak, outsider, { sessionId: 'bob-p1', escalation: 1, side: 'agent', reasoning: 'me' }));
      // No tie-break was ever asked for, so nobody was drawn; the outsider is told no more than that it may not act on the session.
      expect(tieBreak).toMatchObject({ ok: false, error: { code: 'forbidden', message: notYours(outsider, 'RecordTieBreak', 'dialectic_session-bob-p1') } });
      await refusedWith(() => command(DecideRecovery, 'root', { sessionId: 'bob-p1', decision: 'stay_paused', reasoning: 'not yet' }), 'illegal_state', /an operator decides at tier 3/);
      // SubmitAudit: only the auditor drawn for the resolution.
      const audit = await writesNothing(() => command(SubmitAudit, outsider, { sessionId: 'bob-p1', verdict: 'sound', reasoning: 'me' }));
      expect(audit).toMatchObject({ ok: false, error: { code: 'forbidden', message: notYours(outsider, 'SubmitAudit', 'dialectic_session-bob-p1') } });

      // CancelVotingSession: the requesting agent, or an operator.
      const requestId = `trust-${randomUUID()}`;
      expect(await command(CreateVotingSession, proposer, { requestId, actionType: 'deploy_production', riskLevel: 'high' })).toMatchObject({ ok: true });
      const view = await query<VotingSessionView>(GetVotingSessionByRequest.subject, { requestId });
      await refusedWith(() => command(CancelVotingSession, other, { sessionId: view.sessionId, reason: 'mine' }), 'forbidden', notYours(other, 'CancelVotingSession', `voting_session-${view.sessionId}`));
      // CreateVotingSession reusing a request id the sender may not read: refused as on any unreadable aggregate (no `events: []`, no revision: no oracle).
      const reused = await writesNothing(() => command(CreateVotingSession, other, { requestId, actionType: 'deploy_production', riskLevel: 'high' }));
      expect(reused).toEqual({ ok: false, error: { code: 'forbidden', message: notYours(other, 'CreateVotingSession', `voting_session-${view.sessionId}`), details: { commandType: 'CreateVotingSession' } } });
      // Another operator registering the bootstrap operator's id (with its own key, which would win over the configured one): refused, nothing written.
      expect(await command(RegisterAgent, 'root', { agentId: 'opal', publicKey: (keys['opal'] ??= generateKeyPair()).publicKey, displayName: 'opal', roles: ['operator'] })).toMatchObject({ ok: true });
      await waitFor(() => context.registry.list().some((a) => a.agentId === 'opal'), 'the directory to know opal');
      const shadow = await writesNothing(() => command(RegisterAgent, 'opal', { agentId: 'root', publicKey: keys['opal']!.publicKey, displayName: 'root', roles: ['operator'] }));
      expect(shadow).toMatchObject({ ok: false, error: { code: 'invalid_command', message: expect.stringMatching(/agent id root is reserved for the bootstrap operator/) } });
      // Its requesting agent's repeat is answered with the session it created, as before.
      expect(await command(CreateVotingSession, proposer, { requestId, actionType: 'deploy_production', riskLevel: 'high' })).toMatchObject({ ok: true, result: { events: [] } });
      // CreateVotingSession naming another requesting agent: only an operator (or the dialectic service).
      await refusedWith(() => command(CreateVotingSession, other, { requestId: `trust-${randomUUID()}`, requestingAgent: proposer, actionType: 'deploy_production', riskLevel: 'high' }), 'forbidden', /may only put its own action requests to a vote/);
    }, 60_000);
  });

  describe('the log the honest traffic left', () => {
    it('is signed commit by commit under the key the signer had, chained per stream, and authorized by the table', async () => {
      const events = await allEvents(context.store);
      const byStream = new Map<string, RecordedEvent[]>();
      for (const e of events) byStream.set(e.streamId, [...(byStream.get(e.streamId) ?? []), e]);
      // What an auditor reads: the services' public keys, here from the key files standalone-like start-up created.
      const keyring = resolveServiceKeyring(context.config);
      expect(Object.keys(keyring)).toEqual(expect.arrayContaining(['registry', 'tribunal', 'voting', 'dialectic']));
      expect(keyring['dialectic']![0]!.publicKey).toBe(context.serviceIdentity('dialectic').publicKey);
      let commits = 0;
      const serviceCommits = new Set<string>();
      for (const [streamId, stream] of byStream) {
        expect(verifyStreamChain(streamId, stream)).toEqual([]);
        for (const commit of commitsOf(stream)) {
          commits++;
          const first = commit[0]!.metadata;
          const actor = first['actor'] as string;
          const type = first['commandType'] as string;
          const service = serviceOfActor(actor);
          const publicKey = service !== undefined ? serviceKeyAt(keyring, service, first['issuedAt'] as string) : actor === 'root' ? keys['root']!.publicKey : keys[actor]?.publicKey;
          expect({ streamId, type, actor, check: verifyMetadataSignature(first, publicKey!).ok }).toEqual({ streamId, type, actor, check: true });
          const roles = service !== undefined ? ['service'] : actor === 'root' ? ['operator'] : FLEET[actor]!;
          expect({ type, actor, allowed: authorizeCommand(type, { actor, roles }).allowed }).toEqual({ type, actor, allowed: true });
          if (service !== undefined) {
            serviceCommits.add(`${actor} ${type}`);
            expect(typeof first['causationId']).toBe('string');
          }
        }
      }
      expect(commits).toBeGreaterThan(20);
      expect([...serviceCommits]).toEqual(expect.arrayContaining(['service:dialectic OpenRecovery']));
      // A commit signed by the dialectic service verifies under no other service's key.
      const opened = (await context.store.readStream(dialecticStreamId('ada-p1')))[0]!;
      expect(verifyMetadataSignature(opened.metadata, context.serviceIdentity('voting').publicKey).ok).toBe(false);
      // Nor under a rotated-out dialectic key: at the commit's time the keyring names the new one.
      const rotatedRing = parseServiceKeyring({ dialectic: [{ publicKey: context.serviceIdentity('dialectic').publicKey, until: '2000-01-01T00:00:00Z' }, { publicKey: generateKeyPair().publicKey, from: '2000-01-01T00:00:00Z' }] });
      expect(verifyMetadataSignature(opened.metadata, serviceKeyAt(rotatedRing, 'dialectic', opened.metadata['issuedAt'] as string)!).ok).toBe(false);
      // An edited commit breaks the chain of its stream.
      const agentStream = await context.store.readStream(agentStreamId('ada'));
      const edited = agentStream.map((e, i) => (i === 0 ? { ...e, data: { ...(e.data as object), trustScore: 1000 } } : e));
      expect(verifyStreamChain(agentStreamId('ada'), edited)).toEqual([expect.objectContaining({ commit: 1, reason: expect.stringMatching(/does not match the commit before it/) })]);
    }, 60_000);
  });
});
