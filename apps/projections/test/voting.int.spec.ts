/**
 * The voting part of the projections service over a real embedded store and the in-process
 * transport, fed with real voting events (the session decider through handleCommand, as the voting
 * service writes them): /metrics scraped over HTTP, the stats and agreement queries against the
 * pure functions, the live read model against a rebuild.
 */
import { randomUUID } from 'node:crypto';
import { isDeepStrictEqual } from 'node:util';
import { GetValidatorAgreement, GetVotingStats, VotingStats, type ValidatorAgreement, type ValidatorCandidate } from '@agora/contracts';
import { DEFAULT_CONFIG, validatorAgreement, votingSessionDecider, votingSessionStreamId, votingStats, type VotingSessionCommand } from '@agora/domain-voting';
import { handleCommand, ProjectionRunner } from '@agora/eventsourcing';
import type { EventStore } from '@agora/eventstore';
import { votingSessionsProjection, votingSessionsTable } from '@agora/read-models';
import type { ServiceContext } from '@agora/runtime';
import { waitFor } from '@agora/testing';
import type { RunningProjections } from '../src/projections-service.js';
import { parseExposition, valueOf } from './support/exposition.js';
import { startProjectionsOver, type ProjectionsOver } from './support/service.js';

const VALIDATORS = ['security_bot', 'compliance_bot', 'ops_bot', 'risk_bot', 'ethics_bot'];
const TRUST = [900, 850, 800, 750, 720];
const candidates: ValidatorCandidate[] = VALIDATORS.map((agentId, i) => ({ agentId, displayName: agentId, trustScore: TRUST[i]!, specializations: [], status: 'active' }));
const ROLES: Record<string, string[]> = { deployer: ['executive'], root: ['operator'], 'service:voting': ['service'], ...Object.fromEntries(VALIDATORS.map((v) => [v, ['validator']])) };
const SESSION_IDS = ['v1-unanimous', 'v2-split', 'v3-expired', 'v4-cancelled', 'v5-pending', 'v6-no-quorum'];

/** Commands on one session, timed in seconds after `t0`, decided and appended as the voting service does. */
function script(store: EventStore, sessionId: string, t0: number) {
  const run = async (type: VotingSessionCommand['type'], actor: string, seconds: number, payload: Record<string, unknown>) => {
    const commandId = randomUUID();
    const now = new Date(t0 + seconds * 1000).toISOString();
    const command = { type, context: { actor, now, actorRoles: ROLES[actor] ?? [], commandId }, payload: { sessionId, ...payload } } as VotingSessionCommand;
    await handleCommand({ store, decider: votingSessionDecider, streamId: votingSessionStreamId(sessionId), command, metadata: { commandId, commandType: type, actor, issuedAt: now } });
  };
  return {
    create: (over: Record<string, unknown> = {}) =>
      run('CreateVotingSession', 'deployer', 0, {
        requestId: sessionId,
        actionType: 'deploy',
        riskLevel: 'high',
        criteria: { minTrustScore: 0, excludeAgents: [], preferredSpecializations: [] },
        candidates,
        config: { ...DEFAULT_CONFIG, votingTimeoutMs: 60_000 },
        configRevision: -1,
        ...over,
      }),
    vote: (validator: string, decision: string, seconds: number, confidence = 0.9) => run('CastValidatorVote', validator, seconds, { decision, reasoning: `${validator}: ${decision}`, confidence }),
    expire: (seconds: number) => run('ExpireVotingSession', 'service:voting', seconds, {}),
    cancel: (seconds: number) => run('CancelVotingSession', 'root', seconds, { reason: 'withdrawn' }),
    decide: (decision: string, seconds: number) => run('DecideVotingEscalation', 'root', seconds, { decision, reason: 'checked by hand' }),
  };
}

/** One session in each situation (the same as the domain's stats spec). */
async function writeSessions(store: EventStore): Promise<void> {
  const t0 = Date.now() - 3_600_000;
  const [a, b, c, d, e, f] = SESSION_IDS.map((id) => script(store, id, t0));
  await a!.create();
  for (const [i, v] of VALIDATORS.entries()) await a!.vote(v, 'approve', 10 + i); // decided at 14 s
  await b!.create({ config: { ...DEFAULT_CONFIG, weightByTrustScore: false } });
  for (const [i, v] of VALIDATORS.entries()) await b!.vote(v, ['approve', 'deny', 'approve', 'deny', 'abstain'][i]!, 20 + i); // split at 24 s
  await b!.decide('deny', 100);
  await c!.create();
  await c!.vote('ops_bot', 'approve', 5);
  await c!.expire(60);
  await d!.create();
  await d!.vote('risk_bot', 'deny', 5);
  await d!.cancel(10);
  await e!.create();
  await f!.create({ criteria: { minTrustScore: 850, excludeAgents: [], preferredSpecializations: [] } });
}

const ALLOWED_LABELS = new Set(['status', 'consensus', 'outcome', 'reason', 'decision', 'le']);

describe('projections service: voting statistics and metrics', () => {
  let context: ServiceContext;
  let running: RunningProjections;
  let request: ProjectionsOver['request'];
  let close: ProjectionsOver['close'];

  beforeAll(async () => {
    ({ context, running, request, close } = await startProjectionsOver('projections-voting', writeSessions));
  });

  afterAll(() => close?.());

  it('folds the voting sessions read model from the log into its table, equal to a rebuild, and counts it in /health', async () => {
    const rebuilt = await ProjectionRunner.rebuild(context.store, votingSessionsProjection);
    expect([...rebuilt.keys()].sort()).toEqual([...SESSION_IDS].sort());
    const inTable = async () => new Map(await Promise.all([...rebuilt.keys()].map(async (id) => [id, await votingSessionsTable.get(context.readSide.db, id)] as const)));
    await waitFor(async () => isDeepStrictEqual(await inTable(), rebuilt), 'the voting sessions table');
    const health = await fetch(running.metricsUrl.replace(/\/metrics$/, '/health'));
    expect(await health.json()).toMatchObject({ readModels: { votingSessions: 6 } });
  });

  it("answers the seed's getStats() and per-validator agreement as queries, with the figures of the pure functions", async () => {
    const records = [...(await ProjectionRunner.rebuild(context.store, votingSessionsProjection)).values()];
    const stats = await request<VotingStats>(GetVotingStats.subject, {});
    if (!stats.ok) throw new Error(JSON.stringify(stats.error));
    expect(VotingStats.parse(stats.result)).toEqual(stats.result);
    expect(stats.result).toEqual(votingStats(records));
    expect(stats.result).toMatchObject({
      totalSessions: 6,
      pendingSessions: 1,
      decidedSessions: 3,
      expiredSessions: 1,
      cancelledSessions: 1,
      awaitingOperator: 2,
      consensusBreakdown: { unanimous_approve: 1, split: 1, no_quorum: 2, majority_approve: 0 },
      escalationRate: 0.75,
      averageVotingTime: 38_000 / 3, // decided after 14 s, 24 s and at once
    });
    const agreement = await request<{ validators: ValidatorAgreement[] }>(GetValidatorAgreement.subject, {});
    expect(agreement).toEqual({ ok: true, result: { validators: validatorAgreement(records) } });
    expect(await request(GetValidatorAgreement.subject, { validator: 'ops_bot' })).toMatchObject({ ok: true, result: { validators: [{ validator: 'ops_bot', agreed: 1, disagreed: 1, agreementRate: 0.5 }] } });
    expect(await request(GetValidatorAgreement.subject, { validator: 'Not An Id' })).toMatchObject({ ok: false, error: { code: 'invalid_command' } });
  });

  it('exports the voting metrics computed at scrape time: sessions by consensus and outcome, HITL rate, time to decision; no id as a label', async () => {
    const text = await (await fetch(running.metricsUrl)).text();
    const m = parseExposition(text);
    expect(Object.fromEntries(['pending', 'voting', 'decided', 'expired', 'cancelled'].map((status) => [status, valueOf(m, 'agora_voting_sessions', { status })]))).toEqual({
      pending: 1,
      voting: 0,
      decided: 3,
      expired: 1,
      cancelled: 1,
    });
    expect(valueOf(m, 'agora_voting_sessions_awaiting_operator')).toBe(2);
    expect(valueOf(m, 'agora_voting_escalation_ratio')).toBe(0.75);
    expect(valueOf(m, 'agora_voting_concluded_sessions_total', { consensus: 'unanimous_approve', outcome: 'approve' })).toBe(1);
    expect(valueOf(m, 'agora_voting_concluded_sessions_total', { consensus: 'split', outcome: 'escalate' })).toBe(1);
    expect(valueOf(m, 'agora_voting_concluded_sessions_total', { consensus: 'no_quorum', outcome: 'escalate' })).toBe(2);
    expect(valueOf(m, 'agora_voting_concluded_sessions_total', { consensus: 'majority_deny', outcome: 'deny' })).toBe(0);
    expect(m.samples.filter((s) => s.name === 'agora_voting_concluded_sessions_total')).toHaveLength(18);
    expect(valueOf(m, 'agora_voting_escalations_total', { reason: 'no_quorum' })).toBe(2);
    expect(valueOf(m, 'agora_voting_escalations_total', { reason: 'split' })).toBe(1);
    expect(valueOf(m, 'agora_voting_operator_decisions_total', { decision: 'deny' })).toBe(1);
    expect(valueOf(m, 'agora_voting_votes_total', { decision: 'approve' })).toBe(8);
    // time to decision: 14 s, 24 s, 60 s (expired), 0 s (no quorum at creation)
    const bucket = (le: string) => valueOf(m, 'agora_voting_time_to_decision_seconds_bucket', { le });
    expect([bucket('1'), bucket('15'), bucket('30'), bucket('60'), bucket('+Inf')]).toEqual([1, 2, 3, 4, 4]);
    expect(valueOf(m, 'agora_voting_time_to_decision_seconds_sum')).toBe(98);

    // Per validator, its votes by agreement with the final decision: the agreement query's figures.
    const agreement = validatorAgreement([...(await ProjectionRunner.rebuild(context.store, votingSessionsProjection)).values()]);
    expect(agreement.length).toBeGreaterThan(0);
    for (const a of agreement) {
      const votes = (agreement: string) => valueOf(m, 'agora_voting_validator_votes', { validator: a.validator, agreement });
      expect([votes('agreed'), votes('disagreed'), votes('abstained'), votes('undecided')]).toEqual([a.agreed, a.disagreed, a.abstain, a.votes - a.abstain - a.agreed - a.disagreed]);
    }

    const families = [...m.types.entries()].filter(([name]) => name.startsWith('agora_voting_'));
    expect(families).toHaveLength(9);
    for (const [name, type] of families) {
      if (type === 'counter') expect(name).toMatch(/_total$/);
      expect(m.help.get(name)?.length ?? 0).toBeGreaterThan(30);
    }
    // No id as a label, but for the calibration gauge: one series per validator and agreement, never per session.
    const ids = new Set([...SESSION_IDS, ...VALIDATORS, 'deployer', 'root']);
    for (const sample of m.samples.filter((s) => s.name.startsWith('agora_voting_'))) {
      const calibration = sample.name === 'agora_voting_validator_votes';
      for (const [key, value] of Object.entries(sample.labels)) {
        expect(ALLOWED_LABELS.has(key) || (calibration && (key === 'validator' || key === 'agreement')) ? key : `${sample.name}{${key}}`).toBe(key);
        expect(ids.has(value) && !(calibration && key === 'validator' && VALIDATORS.includes(value)) ? `${sample.name}{${key}="${value}"}` : value).toBe(value);
      }
    }
    // Scraping again counts nothing twice.
    const again = parseExposition(await (await fetch(running.metricsUrl)).text());
    const voting = (e: typeof m) => e.samples.filter((s) => s.name.startsWith('agora_voting_'));
    expect(voting(again)).toEqual(voting(m));
  });
});
