/**
 * The dialectic part of the projections service over a real embedded store and the in-process
 * transport, fed with real recovery events (the session decider through handleCommand, as the
 * dialectic service writes them): the stats and collusion queries, and /metrics scraped over HTTP.
 */
import { randomUUID } from 'node:crypto';
import { isDeepStrictEqual } from 'node:util';
import { DialecticStats, GetDialecticStats, ListCollusionFlags, type Condition, type RecoveryCandidate } from '@agora/contracts';
import { dialecticDecider, dialecticStreamId, dialecticTotals, recoveryCandidates, recoveryCandidatesFrom, signResolution, type DialecticCommand, type DialecticSession } from '@agora/domain-dialectic';
import { handleCommand, ProjectionRunner } from '@agora/eventsourcing';
import type { EventStore } from '@agora/eventstore';
import { generateKeyPair } from '@agora/identity';
import { dialecticDrawFigures, dialecticSessionsProjection, dialecticSessionsTable } from '@agora/read-models';
import type { ServiceContext } from '@agora/runtime';
import { waitFor } from '@agora/testing';
import type { RunningProjections } from '../src/projections-service.js';
import { parseExposition, valueOf } from './support/exposition.js';
import { startProjectionsOver, type ProjectionsOver } from './support/service.js';

const keys = { ada: generateKeyPair(), bob: generateKeyPair(), rev: generateKeyPair() };
const candidates: RecoveryCandidate[] = [
  { agentId: 'rev', status: 'active', paused: false, risk: 0.1, health: 0.9, lastReportAt: null, trackRecord: { reviews: 0, successful: 0 }, expertise: [], lastReviewedAgentAt: null, collusionFlagged: false },
];
const SESSION_IDS = ['ada-p1', 'bob-p1', 'cyd-p1'];
const threshold = (value: number): Condition => ({ operation: 'set_risk_threshold', parameters: { threshold: value } });

/** Commands on one recovery, timed in seconds after `t0`, decided and appended as the dialectic service does. */
function script(store: EventStore, agentId: string, t0: number) {
  const sessionId = `${agentId}-p1`;
  const run = async (type: DialecticCommand['type'], actor: string, seconds: number, payload: Record<string, unknown>) => {
    const commandId = randomUUID();
    const now = new Date(t0 + seconds * 1000).toISOString();
    const command = { type, context: { actor, now, actorRoles: actor === 'service:dialectic' ? ['service'] : ['executive'], commandId }, payload: { sessionId, ...payload } } as unknown as DialecticCommand;
    await handleCommand({ store, decider: dialecticDecider, streamId: dialecticStreamId(sessionId), command, metadata: { commandId, commandType: type, actor, issuedAt: now } });
  };
  const synthesis = (actor: string, round: number, conditions: Condition[], seconds: number) =>
    run('SubmitSynthesis', actor, seconds, { round, rootCause: 'External complexity spike', proposedConditions: conditions, reasoning: 'agreed', agrees: true });
  return {
    open: () =>
      run('OpenRecovery', 'service:dialectic', 0, { agentId, pause: 1, reason: 'risk 0.65', risk: 0.65, health: 0.35, threshold: 0.6, tags: ['cascade'], pausedAt: new Date(t0).toISOString(), seed: 7, candidates }),
    argue: async (conditions: Condition[]) => {
      await run('SubmitThesis', agentId, 10, { rootCause: 'AGI discussion', proposedConditions: [threshold(0.45)], reasoning: 'external spike' });
      await run('SubmitAntithesis', 'rev', 20, { observedMetrics: { risk_score: 0.65 }, concerns: ['too permissive'], reasoning: 'suggest 0.48' });
      await synthesis(agentId, 1, conditions, 30);
      await synthesis('rev', 2, conditions, 40);
    },
    sign: async (records: Map<string, DialecticSession>) => {
      const payload = records.get(sessionId)!.proposed!.payload;
      for (const [signer, seconds] of [
        [agentId, 50],
        ['rev', 60],
      ] as const) {
        const key = keys[signer as keyof typeof keys];
        await run('SignResolution', signer, seconds, { publicKey: key.publicKey, signature: signResolution(payload, signer, key.secretKey) });
      }
    },
  };
}

/** One recovery resolved within a minute, one blocked by a hard limit (0.95), one waiting for its thesis. */
async function writeSessions(store: EventStore): Promise<void> {
  const t0 = Date.now() - 3_600_000;
  const [ada, bob, cyd] = ['ada', 'bob', 'cyd'].map((id) => script(store, id, t0));
  await ada!.open();
  await ada!.argue([threshold(0.48)]);
  await ada!.sign(await ProjectionRunner.rebuild(store, dialecticSessionsProjection));
  await bob!.open();
  await bob!.argue([threshold(0.95)]);
  await cyd!.open();
}

const ALLOWED_LABELS = new Set(['status', 'decided_by', 'tier', 'verdict', 'stage', 'le']);

describe('projections service: dialectic statistics and metrics', () => {
  let context: ServiceContext;
  let running: RunningProjections;
  let request: ProjectionsOver['request'];
  let close: ProjectionsOver['close'];

  beforeAll(async () => {
    ({ context, running, request, close } = await startProjectionsOver('projections-dialectic', writeSessions));
  });

  afterAll(() => close?.());

  it("answers the seed's success metrics and the collusion flags as queries", async () => {
    const rebuilt = await ProjectionRunner.rebuild(context.store, dialecticSessionsProjection);
    const inTable = async () => new Map(await Promise.all([...rebuilt.keys()].map(async (id) => [id, await dialecticSessionsTable.get(context.readSide.db, id)] as const)));
    await waitFor(async () => isDeepStrictEqual(await inTable(), rebuilt), 'the recovery sessions table');
    const stats = await request<DialecticStats>(GetDialecticStats.subject, {});
    if (!stats.ok) throw new Error(JSON.stringify(stats.error));
    expect(DialecticStats.parse(stats.result)).toEqual(stats.result);
    expect(stats.result).toMatchObject({
      sessions: 3,
      byStatus: { resolved: 1, awaiting_operator: 1, awaiting_thesis: 1, synthesis: 0 },
      resolved: 1,
      decidedBy: { dialectic: 1, tie_break: 0, quorum: 0, operator: 0 },
      resolvedWithinTarget: 1,
      escalated: 1,
      escalatedToQuorum: 0,
      hardLimitBlocks: 1,
      relapsed: 0,
      collusionFlags: 0,
      meanTimeToResolutionMs: 60_000,
      window: { days: 30 },
    });
    expect(stats.result.escalationRate).toBeCloseTo(1 / 3);
    expect(await request(GetDialecticStats.subject, { windowDays: 0 })).toMatchObject({ ok: false, error: { code: 'invalid_command' } });
    expect(await request(ListCollusionFlags.subject, { windowDays: 7 })).toEqual({ ok: true, result: { flags: [] } });
  });

  it('a draw of candidates weighs the same figures read from the tables as from the records, and a success once its relapse window has passed', async () => {
    const rebuilt = await ProjectionRunner.rebuild(context.store, dialecticSessionsProjection);
    await waitFor(async () => (await dialecticSessionsTable.get(context.readSide.db, 'cyd-p1')) !== undefined, 'the recovery sessions table');
    const records = [...rebuilt.values()];
    const agents = ['rev', 'ada', 'bob', 'cyd'].map((agentId) => ({ agentId, status: 'active', risk: 0.1, health: 0.9, specializations: agentId === 'rev' ? ['latency'] : [] }));
    const draw = async (agentId: string, now: string) => recoveryCandidatesFrom(agents, await dialecticDrawFigures(context.readSide.db, agentId, now), agentId);
    const soon = new Date().toISOString();
    const later = new Date(Date.now() + 60 * 86_400_000).toISOString();
    for (const now of [soon, later]) for (const agentId of ['ada', 'bob', 'cyd']) expect(await draw(agentId, now)).toEqual(recoveryCandidates(agents, records, agentId, now));
    // rev reviewed ada's resolved recovery: no track record until the relapse window has passed, then one success.
    const opened = rebuilt.get('ada-p1')!.openedAt;
    expect((await draw('ada', soon))[0]).toMatchObject({ agentId: 'rev', trackRecord: { reviews: 0, successful: 0 }, expertise: ['latency', 'cascade'], lastReviewedAgentAt: opened });
    expect((await draw('ada', later))[0]).toMatchObject({ agentId: 'rev', trackRecord: { reviews: 1, successful: 1 } });
    expect((await draw('zed', later))[0]).toMatchObject({ agentId: 'rev', lastReviewedAgentAt: null });
  });

  it('exports the dialectic metrics computed at scrape time; no id as a label', async () => {
    const m = parseExposition(await (await fetch(running.metricsUrl)).text());
    expect(valueOf(m, 'agora_dialectic_sessions', { status: 'resolved' })).toBe(1);
    expect(valueOf(m, 'agora_dialectic_sessions', { status: 'awaiting_operator' })).toBe(1);
    expect(valueOf(m, 'agora_dialectic_sessions', { status: 'awaiting_thesis' })).toBe(1);
    expect(valueOf(m, 'agora_dialectic_resolved_sessions_total', { decided_by: 'dialectic' })).toBe(1);
    expect(valueOf(m, 'agora_dialectic_escalations_total', { tier: 'operator' })).toBe(1);
    expect(valueOf(m, 'agora_dialectic_hard_limit_blocks_total')).toBe(1);
    expect(valueOf(m, 'agora_dialectic_relapses_total')).toBe(0);
    expect(valueOf(m, 'agora_dialectic_resolved_within_target_ratio')).toBeCloseTo(1 / 3);
    expect(valueOf(m, 'agora_dialectic_escalation_ratio')).toBeCloseTo(1 / 3);
    expect(valueOf(m, 'agora_dialectic_collusion_flags')).toBe(0);
    expect(valueOf(m, 'agora_dialectic_time_to_resolution_seconds_sum')).toBe(60);
    expect(valueOf(m, 'agora_dialectic_window_sessions', { stage: 'opened' })).toBe(3);
    expect(valueOf(m, 'agora_dialectic_window_sessions', { stage: 'resolved' })).toBe(1);
    expect(valueOf(m, 'agora_dialectic_window_sessions', { stage: 'resolved_within_target' })).toBe(1);
    // ada's resolution carries both parties' signatures, and they verify
    expect(valueOf(m, 'agora_dialectic_verifiable_resolutions_ratio')).toBe(1);
    expect(valueOf(m, 'agora_dialectic_unverifiable_resolutions')).toBe(0);
    const families = [...m.types.entries()].filter(([name]) => name.startsWith('agora_dialectic_'));
    expect(families).toHaveLength(16);
    for (const [name, type] of families) if (type === 'counter') expect(name).toMatch(/_total$/);
    const ids = new Set([...SESSION_IDS, 'ada', 'bob', 'cyd', 'rev']);
    for (const sample of m.samples.filter((s) => s.name.startsWith('agora_dialectic_'))) {
      for (const [key, value] of Object.entries(sample.labels)) {
        expect(ALLOWED_LABELS.has(key) ? key : `${sample.name}{${key}}`).toBe(key);
        expect(ids.has(value) ? `${sample.name}{${key}="${value}"}` : value).toBe(value);
      }
    }
    const again = parseExposition(await (await fetch(running.metricsUrl)).text());
    const dialectic = (e: typeof m) => e.samples.filter((s) => s.name.startsWith('agora_dialectic_'));
    expect(dialectic(again)).toEqual(dialectic(m));
  });

  it('counts a resolution whose signature does not verify, or that lacks one, as unverifiable', async () => {
    const ada = (await dialecticSessionsTable.get(context.readSide.db, 'ada-p1'))!;
    const verifiableResolutions = (records: (typeof ada)[]) => dialecticTotals(records).resolutions;
    expect(verifiableResolutions([ada])).toEqual({ resolved: 1, unverifiable: 0 });
    const [first, second] = ada.resolved!.signatures;
    const forged = { ...ada, resolved: { ...ada.resolved!, signatures: [first!, { ...second!, signature: first!.signature }] } };
    expect(verifiableResolutions([forged])).toEqual({ resolved: 1, unverifiable: 1 });
    const unsigned = { ...ada, sessionId: 'ada-p2', resolved: { ...ada.resolved!, signatures: [] } };
    expect(verifiableResolutions([unsigned, ada])).toEqual({ resolved: 2, unverifiable: 1 });
  });
});
