/**
 * The projections service over a real embedded store and the in-process transport, fed with real
 * proposal events (the proposal decider through handleCommand): the live read model against a
 * rebuild from scratch, /metrics scraped over HTTP, and the stats and coverage queries against the
 * pure functions.
 */
import { randomUUID } from 'node:crypto';
import { isDeepStrictEqual } from 'node:util';
import { GetReviewerCalibration, GetTribunalStats, ListUnderCoveredProposals, RecordLogCheckpoint, TribunalStats, VerifyReadModels } from '@agora/contracts';
import { createSignedCommand, generateKeyPair, type KeyPair } from '@agora/identity';
import { constitutionalCoverage, outcomeCounts, reviewerCalibration, tribunalStats } from '@agora/domain-tribunal';
import { ProjectionRunner } from '@agora/eventsourcing';
import { proposalsProjection, proposalsTable, type ProposalsModel } from '@agora/read-models';
import type { ProposalView } from '@agora/contracts';
import type { ServiceContext } from '@agora/runtime';
import { QUIET_PROJECTIONS, waitFor } from '@agora/testing';
import { Registry } from 'prom-client';
import { startProjectionsService, type RunningProjections } from '../src/projections-service.js';
import { parseExposition, valueOf, type Exposition } from './support/exposition.js';
import { ACTORS, FLEET_IDS, writeFleet } from './support/fleet.js';
import { startProjectionsOver, type ProjectionsOver } from './support/service.js';

/** Label names the tribunal metrics may carry: statuses, outcomes, decisions, stages, histogram buckets. Never an id. */
const ALLOWED_LABELS = new Set(['stage', 'status', 'outcome', 'decided_by', 'decision', 'consensus', 'reason', 'tier', 'verdict', 'result', 'kind', 'le', 'service', 'type', 'code', 'adapter', 'reactor', 'scheduler', 'connection']);

describe('projections service (in-process transport, embedded store)', () => {
  let context: ServiceContext;
  let root: KeyPair;
  let running: RunningProjections;
  let request: ProjectionsOver['request'];
  let close: ProjectionsOver['close'];
  const rebuild = (): Promise<ProposalsModel> => ProjectionRunner.rebuild(context.store, proposalsProjection);
  const table = () => proposalsInTable(context);
  const scrape = async (): Promise<{ text: string; exposition: Exposition; contentType: string | null }> => {
    const response = await fetch(running.metricsUrl);
    expect(response.status).toBe(200);
    const text = await response.text();
    return { text, exposition: parseExposition(text), contentType: response.headers.get('content-type') };
  };

  beforeAll(async () => {
    // Three proposals are history when the service starts; two arrive live.
    ({ context, root, running, request, close } = await startProjectionsOver('projections', (store) => writeFleet(store, FLEET_IDS.slice(0, 3))));
    expect((await table()).size).toBe(3);
    await writeFleet(context.store, FLEET_IDS.slice(3));
    const rebuilt = await rebuild();
    await waitFor(async () => isDeepStrictEqual(await table(), rebuilt), 'the tables to catch up with the log');
  });

  afterAll(() => close?.());

  it('(a) keeps the tables equal to the model rebuilt from scratch; a new instance reads them as they are', async () => {
    const rebuilt = await rebuild();
    expect([...rebuilt.keys()].sort()).toEqual([...FLEET_IDS].sort());
    expect(await table()).toEqual(rebuilt);
    expect(rebuilt.get('p4-deadlock')).toMatchObject({ status: 'rejected', execution: { despiteObjections: true } });

    // A second instance in the same process: the process's registry already has the first one's figures.
    const second = await startProjectionsService(context, { ...QUIET_PROJECTIONS, registry: new Registry() });
    try {
      expect(second.proposals.position).toEqual(running.proposals.position);
      expect(second.metricsUrl).not.toBe(running.metricsUrl);
    } finally {
      await second.close();
    }

    // On demand, asked by an operator (a signed VerifyReadModels): every read model rebuilt from scratch equals the live one.
    // Nobody else may make the service replay the log: not over HTTP, not an agent without the operator role.
    expect((await fetch(running.metricsUrl.replace(/\/metrics$/, '/verify'))).status).toBe(404);
    const observer = generateKeyPair();
    expect(await request(VerifyReadModels.subject, createSignedCommand({ type: VerifyReadModels.type, actor: 'root', payload: {}, secretKey: observer.secretKey }))).toMatchObject({ ok: false, error: { code: 'bad_signature' } });
    const verify = await request<{ ok: boolean; readModels: { name: string; equal: boolean; events: number }[] }>(VerifyReadModels.subject, createSignedCommand({ type: VerifyReadModels.type, actor: 'root', payload: {}, secretKey: root.secretKey }));
    expect(verify.ok).toBe(true);
    const report = (verify as { result: { ok: boolean; readModels: { name: string; equal: boolean; events: number }[] } }).result;
    expect(report.ok).toBe(true);
    expect(report.readModels.map((r) => [r.name, r.equal])).toEqual([
      ['tables:proposals', true],
      ['tables:voting_sessions', true],
      ['tables:dialectic_sessions', true],
      ['tables:chamber_sessions', true],
      ['tables:chamber_records', true],
      ['tables:chamber_ledgers', true],
      ['tables:debates', true],
    ]);
    // The tables were folded again from the log, up to where they stood.
    expect(report.readModels.find((r) => r.name === 'tables:proposals')!.events).toBeGreaterThan(0);
  });

  it('(b) serves /metrics computed from the read model at scrape time, with no id as a label', async () => {
    const { exposition: m, contentType } = await scrape();
    expect(contentType).toMatch(/^text\/plain; version=0\.0\.4/);

    expect(valueOf(m, 'agora_tribunal_window_seconds')).toBe(30 * 86_400);
    expect(valueOf(m, 'agora_tribunal_challenge_rate_ratio')).toBeCloseTo(0.4, 12);
    expect(valueOf(m, 'agora_tribunal_window_proposals', { stage: 'submitted' })).toBe(5);
    expect(valueOf(m, 'agora_tribunal_window_proposals', { stage: 'reviewed' })).toBe(5);
    expect(valueOf(m, 'agora_tribunal_window_proposals', { stage: 'challenged' })).toBe(2);
    expect(valueOf(m, 'agora_tribunal_rubber_stamping')).toBe(0);
    expect(valueOf(m, 'agora_tribunal_overhead')).toBe(0);
    expect(valueOf(m, 'agora_tribunal_under_covered_proposals')).toBe(1);
    expect(valueOf(m, 'agora_tribunal_open_objections')).toBe(0);
    expect(Object.fromEntries(['review', 'escalated', 'approved', 'rejected', 'withdrawn'].map((status) => [status, valueOf(m, 'agora_tribunal_proposals', { status })]))).toEqual({
      review: 1,
      escalated: 0,
      approved: 3,
      rejected: 1,
      withdrawn: 0,
    });
    expect(valueOf(m, 'agora_tribunal_deemed_approvals_total')).toBe(2);
    expect(valueOf(m, 'agora_tribunal_deadlocks_escalated_total')).toBe(1);
    expect(valueOf(m, 'agora_tribunal_coverage_escalations_total')).toBe(0);
    expect(valueOf(m, 'agora_tribunal_proceeded_despite_objections_total')).toBe(1);
    expect(valueOf(m, 'agora_tribunal_decisions_total', { outcome: 'approved', decided_by: 'tribunal' })).toBe(3);
    expect(valueOf(m, 'agora_tribunal_decisions_total', { outcome: 'approved', decided_by: 'operator' })).toBe(0);
    expect(valueOf(m, 'agora_tribunal_decisions_total', { outcome: 'rejected', decided_by: 'operator' })).toBe(1);
    expect(valueOf(m, 'agora_tribunal_decisions_total', { outcome: 'withdrawn', decided_by: 'proposer' })).toBe(0);
    expect(valueOf(m, 'agora_tribunal_operator_decisions_total', { decision: 'reject' })).toBe(1);
    expect(valueOf(m, 'agora_tribunal_operator_decisions_total', { decision: 'approve' })).toBe(0);
    // rounds of the resolved proposals: p1 1, p2 2, p3 1, p4 3
    const bucket = (le: string) => valueOf(m, 'agora_tribunal_resolution_rounds_bucket', { le });
    expect([bucket('0'), bucket('1'), bucket('2'), bucket('3'), bucket('+Inf')]).toEqual([0, 2, 3, 4, 4]);
    expect(valueOf(m, 'agora_tribunal_resolution_rounds_count')).toBe(4);
    expect(valueOf(m, 'agora_tribunal_resolution_rounds_sum')).toBe(7);
    // default process metrics, in the process's registry
    expect(m.types.get('process_cpu_user_seconds_total')).toBe('counter');
    expect(m.types.get('nodejs_heap_size_used_bytes')).toBe('gauge');

    // Naming: agora_<area>_*, counters end in _total, every family says what it is (the read-model
    // figures, and the platform's metrics of the process's registry).
    const families = [...m.types.entries()].filter(([name]) => name.startsWith('agora_'));
    expect(families.length).toBeGreaterThanOrEqual(15);
    for (const [name, type] of families) {
      expect(name).toMatch(/^agora_(tribunal|voting|dialectic|chamber|debate|commands|store|reactor|deadline|lease|nats)_[a-z_]+$/);
      if (type === 'counter') expect(name).toMatch(/_total$/);
      expect(m.help.get(name)?.length ?? 0).toBeGreaterThan(30);
    }
    // No id, no actor, anywhere in a label; but the calibration gauges name the reviewer (one series
    // per reviewer, constitution and fate or verdict, never per proposal).
    const forbidden = new Set([...FLEET_IDS, ...ACTORS]);
    const reviewers = new Set(['harbinger', 'heretic', 'sentinel', 'zealot']);
    for (const sample of m.samples.filter((s) => s.name.startsWith('agora_'))) {
      const calibration = sample.name.startsWith('agora_tribunal_reviewer_');
      for (const [key, value] of Object.entries(sample.labels)) {
        expect(ALLOWED_LABELS.has(key) || (calibration && ['reviewer', 'constitution', 'fate'].includes(key)) ? key : `${sample.name}{${key}}`).toBe(key);
        expect(forbidden.has(value) && !(calibration && key === 'reviewer' && reviewers.has(value)) ? `${sample.name}{${key}="${value}"}` : value).toBe(value);
      }
    }
    // The calibration figures of the fleet (no outcome reported): p2's two objections were upheld by
    // its revision, p4's three by none yet (pending), p5's one approval so far.
    const objections = (reviewer: string, constitution: string, fate: string) => valueOf(m, 'agora_tribunal_reviewer_objections', { reviewer, constitution, fate });
    expect(objections('harbinger', 'risk', 'upheld_by_revision')).toBe(3);
    expect(objections('heretic', 'premise', 'upheld_by_revision')).toBe(1);
    expect(objections('harbinger', 'risk', 'pending')).toBe(1);
    expect(valueOf(m, 'agora_tribunal_reviewer_verdicts', { reviewer: 'zealot', constitution: 'execution', verdict: 'deemed' })).toBe(1);
    expect(valueOf(m, 'agora_tribunal_executed_proposals')).toBe(1);
    expect(valueOf(m, 'agora_tribunal_outcomes_total', { outcome: 'failed' })).toBe(0);

    // Scraping again counts nothing twice.
    const again = await scrape();
    const tribunal = (e: Exposition) => e.samples.filter((s) => s.name.startsWith('agora_'));
    expect(tribunal(again.exposition)).toEqual(tribunal(m));
  });

  it('(c) answers the stats and coverage queries with the figures of the pure functions over the read model', async () => {
    const records = [...(await rebuild()).values()];

    const stats = await request<TribunalStats>(GetTribunalStats.subject, {});
    if (!stats.ok) throw new Error(JSON.stringify(stats.error));
    expect(TribunalStats.parse(stats.result)).toEqual(stats.result);
    // The service used the real clock: the same figures at the instant it reported.
    expect(stats.result).toEqual(tribunalStats(records, stats.result.window.to, 30));
    expect(Math.abs(Date.parse(stats.result.window.to) - Date.now())).toBeLessThan(10_000);
    expect(stats.result).toMatchObject({
      proposals: { submitted: 5, reviewed: 5, challenged: 2 },
      challengeRate: 0.4,
      deemedApprovals: 2,
      deadlocksEscalated: 1,
      proceededDespiteObjections: 1,
      outcomes: { review: 1, approved: 3, rejected: 1 },
      meanRoundsToApproval: 4 / 3,
    });

    const week = await request<TribunalStats>(GetTribunalStats.subject, { windowDays: '1' });
    if (!week.ok) throw new Error(JSON.stringify(week.error));
    expect(week.result.window.days).toBe(1);
    expect(week.result).toEqual(tribunalStats(records, week.result.window.to, 1));
    // submitted two days ago: out of a one-day window
    expect(week.result.proposals.submitted).toBe(0);

    const coverage = await request<{ proposals: unknown[] }>(ListUnderCoveredProposals.subject, {});
    expect(coverage).toEqual({ ok: true, result: { proposals: [{ proposalId: 'p3-silent', constitutionalCoverage: 2 }] } });
    expect(coverage.ok && ListUnderCoveredProposals.result.parse(coverage.result)).toEqual({ proposals: constitutionalCoverage(records) });
    const wider = await request<{ proposals: unknown[] }>(ListUnderCoveredProposals.subject, { below: 5 });
    expect(wider).toEqual({ ok: true, result: { proposals: constitutionalCoverage(records, 5) } });
    expect(wider.ok && wider.result.proposals).toHaveLength(4);
    // Paged like every list: one a page, following nextCursor, gives the same four in the same order.
    const walked: unknown[] = [];
    let cursor: string | undefined;
    do {
      const page = await request<{ proposals: unknown[]; nextCursor?: string }>(ListUnderCoveredProposals.subject, { below: 5, limit: 1, ...(cursor === undefined ? {} : { cursor }) });
      if (!page.ok) throw new Error(JSON.stringify(page.error));
      walked.push(...page.result.proposals);
      cursor = page.result.nextCursor;
    } while (cursor !== undefined);
    expect(walked).toEqual(constitutionalCoverage(records, 5));

    expect(await request(ListUnderCoveredProposals.subject, { below: 0 })).toMatchObject({ ok: false, error: { code: 'invalid_command' } });
    expect(await request(GetTribunalStats.subject, { windowDays: 400 })).toMatchObject({ ok: false, error: { code: 'invalid_command' } });
  });

  it('refuses RecordLogCheckpoint on its subject, from an operator too (service-only: only its own signed checkpoints enter the log)', async () => {
    const reply = await request(RecordLogCheckpoint.subject, { commandId: randomUUID(), type: 'RecordLogCheckpoint', actor: 'root', issuedAt: new Date().toISOString(), payload: { count: 1, position: '1', hash: 'a'.repeat(64), algorithm: 'sha256-chain-v1' }, signature: 'x'.repeat(86) });
    expect(reply).toMatchObject({ ok: false, error: { code: 'service_only', message: expect.stringContaining('service:projections') } });
  });

  it('answers /health, and 404 or 405 elsewhere', async () => {
    const base = running.metricsUrl.replace(/\/metrics$/, '');
    const health = await fetch(`${base}/health`);
    expect(health.status).toBe(200);
    expect(await health.json()).toMatchObject({ status: 'ok', service: 'projections', readModels: { proposals: 5 } });
    expect((await fetch(`${base}/nope`)).status).toBe(404);
    expect((await fetch(running.metricsUrl, { method: 'POST' })).status).toBe(405);
  });
});

// The figures are sums moved by each update's difference: on both engines of the read side.
describe.each(['sqlite', 'postgres'] as const)('projections service on a log that grows from nothing (read side on %s)', (readSide) => {
  let context: ServiceContext;
  let running: RunningProjections;
  let close: ProjectionsOver['close'];

  beforeAll(async () => {
    ({ context, running, close } = await startProjectionsOver('projections-empty', undefined, { windowDays: 7, readSide }));
  });

  afterAll(() => close?.());

  const scrape = async () => parseExposition(await (await fetch(running.metricsUrl)).text());
  /** Appends the scenarios, then waits for the live model to have applied all of the log. */
  const grow = async (ids: string[]) => {
    await writeFleet(context.store, ids);
    const rebuilt = await ProjectionRunner.rebuild(context.store, proposalsProjection);
    await waitFor(async () => isDeepStrictEqual(await proposalsInTable(context), rebuilt), `the tables to catch up with ${ids.join(', ')}`);
  };
  const bands = (m: Exposition) => ({
    rate: valueOf(m, 'agora_tribunal_challenge_rate_ratio'),
    rubberStamping: valueOf(m, 'agora_tribunal_rubber_stamping'),
    overhead: valueOf(m, 'agora_tribunal_overhead'),
  });

  it('exports every series from the start (NaN challenge rate, bands at 0), then follows the bands as proposals arrive', async () => {
    const empty = await scrape();
    expect(bands(empty)).toEqual({ rate: Number.NaN, rubberStamping: 0, overhead: 0 });
    expect(valueOf(empty, 'agora_tribunal_window_seconds')).toBe(7 * 86_400);
    expect(valueOf(empty, 'agora_tribunal_resolution_rounds_count')).toBe(0);
    expect(valueOf(empty, 'agora_tribunal_resolution_rounds_bucket', { le: '+Inf' })).toBe(0);
    expect(valueOf(empty, 'agora_tribunal_decisions_total', { outcome: 'approved', decided_by: 'tribunal' })).toBe(0);
    const stats = await context.client.request<TribunalStats>(GetTribunalStats.subject, {}, { timeoutMs: 5_000 });
    expect(stats).toMatchObject({ ok: true, result: { window: { days: 7 }, challengeRate: null, meanRoundsToApproval: null } });

    // One reviewed, none challenged: rubber-stamping.
    await grow(['p1-clean']);
    expect(bands(await scrape())).toEqual({ rate: 0, rubberStamping: 1, overhead: 0 });
    // One of two challenged: healthy.
    await grow(['p2-challenged']);
    expect(bands(await scrape())).toEqual({ rate: 0.5, rubberStamping: 0, overhead: 0 });
    // Two of three: overhead.
    await grow(['p4-deadlock']);
    const m = await scrape();
    expect(bands(m)).toEqual({ rate: 2 / 3, rubberStamping: 0, overhead: 1 });
    expect(valueOf(m, 'agora_tribunal_resolution_rounds_count')).toBe(3);
    expect(valueOf(m, 'agora_tribunal_proceeded_despite_objections_total')).toBe(1);

    // The sums moved update by update give what the pure functions give over the records.
    const records = [...(await ProjectionRunner.rebuild(context.store, proposalsProjection)).values()];
    const grown = await context.client.request<TribunalStats>(GetTribunalStats.subject, {}, { timeoutMs: 5_000 });
    if (!grown.ok) throw new Error(JSON.stringify(grown.error));
    expect(grown.result).toEqual(tribunalStats(records, grown.result.window.to, 7));
    const calibration = await context.client.request<{ outcomes: unknown; reviewers: unknown[] }>(GetReviewerCalibration.subject, { limit: 100 }, { timeoutMs: 5_000 });
    expect(calibration).toEqual({ ok: true, result: { outcomes: outcomeCounts(records), reviewers: reviewerCalibration(records) } });
    expect(calibration.ok && calibration.result.reviewers.length).toBeGreaterThan(3);
  });
});

/** Every proposal in the proposals read model's table, by id (as the in-memory projection keys them). */
async function proposalsInTable(context: ServiceContext): Promise<ProposalsModel> {
  const rows = await context.readSide.db.all<{ doc: string }>(`SELECT doc FROM ${proposalsTable.table}`);
  return new Map(rows.map((r) => JSON.parse(r.doc) as ProposalView).map((p) => [p.proposalId, p]));
}
