/**
 * Who reviews a paused agent (and who breaks a tie, and who audits): the seed's authority score and
 * its weighted random selection from the healthy pool, made replayable. The pool, every exclusion,
 * the seed and the draw are returned as a SelectionRecord for the event to carry, so a replay reads
 * the choice and an auditor can redo it (`pickFromPool(record.pool, record.draw)`).
 */
import { DEFAULT_AUTHORITY_WEIGHTS, type AuthorityBreakdown, type RecoveryCandidate, type SelectionRecord } from '@agora/contracts';
import { drawOf } from '@agora/domain-common';
import { round6 } from '@agora/decider';

export const DAY_MS = 86_400_000;

/** The part of a candidate the authority score reads. */
export type AuthorityInput = Pick<RecoveryCandidate, 'risk' | 'lastReportAt' | 'trackRecord' | 'expertise'>;

export interface AuthorityRules {
  weights: { health: number; trackRecord: number; expertise: number; freshness: number };
  freshnessWindowMs: number;
}

export const DEFAULT_AUTHORITY_RULES: AuthorityRules = { weights: { ...DEFAULT_AUTHORITY_WEIGHTS }, freshnessWindowMs: DAY_MS };

/** The seed's health component: risk under 0.30 scores 1.0, 0.30 to 0.60 scores 0.7, above 0.60 scores 0.3. */
export function healthScore(risk: number): number {
  if (risk < 0.3) return 1;
  if (risk <= 0.6) return 0.7;
  return 0.3;
}

/** successful / reviews of the settled reviews; 0.5 (no evidence either way) without any. */
export function trackRecordScore(counts: { reviews: number; successful: number }): number {
  if (counts.reviews <= 0) return 0.5;
  return Math.min(1, Math.max(0, counts.successful / counts.reviews));
}

/** Share of the session's distinct tags the candidate has handled; 0 when the session has no tags. */
export function expertiseScore(expertise: readonly string[], tags: readonly string[]): number {
  const wanted = new Set(tags);
  if (wanted.size === 0) return 0;
  const handled = new Set(expertise);
  let overlap = 0;
  for (const tag of wanted) if (handled.has(tag)) overlap++;
  return overlap / wanted.size;
}

/** 1 when the last health report is less than `windowMs` old (the seed: under 24 h), else 0. */
export function freshnessScore(lastReportAt: string | null, now: string, windowMs = DAY_MS): number {
  if (lastReportAt === null) return 0;
  const age = Date.parse(now) - Date.parse(lastReportAt);
  return Number.isFinite(age) && age < windowMs ? 1 : 0;
}

/**
 * The seed's authority score (0 to 1) of a candidate for a session with these tags, at `now`:
 * health 40 %, track record 30 %, domain expertise 20 %, freshness 10 % (the weights are the
 * policy's). Each component is returned with the total, as the event records them.
 */
export function authorityScore(candidate: AuthorityInput, now: string, tags: readonly string[], rules: AuthorityRules = DEFAULT_AUTHORITY_RULES): AuthorityBreakdown {
  const health = healthScore(candidate.risk);
  const trackRecord = round6(trackRecordScore(candidate.trackRecord));
  const expertise = round6(expertiseScore(candidate.expertise, tags));
  const freshness = freshnessScore(candidate.lastReportAt, now, rules.freshnessWindowMs);
  const w = rules.weights;
  const authority = round6(w.health * health + w.trackRecord * trackRecord + w.expertise * expertise + w.freshness * freshness);
  return { health, trackRecord, expertise, freshness, authority };
}

export type ExclusionReason = SelectionRecord['excluded'][number]['reason'];

export interface ExclusionRules {
  /** Risk at or above this excludes (the seed: 0.40). */
  maxReviewerRisk: number;
  /** Reviewed the paused agent within this window: excluded (the seed: 24 h). */
  recentReviewWindowMs: number;
}

export interface SelectionRequest {
  /** The session's seed; the draw is `drawOf(seed, purpose)`. */
  seed: number;
  /** `reviewer`, `tie_breaker:<escalation>` or `auditor`. */
  purpose: string;
  now: string;
  /** The session's issue tags (expertise). */
  tags: readonly string[];
  /** The paused agent: never selected, and the subject of `lastReviewedAgentAt`. */
  agentId: string;
  /** Agents already part of the session (reviewer, tie-breaker...): never selected. */
  parties?: readonly string[];
  rules: ExclusionRules & AuthorityRules;
}

export interface Selection {
  /** The agent drawn, or null when every candidate was excluded. */
  selected: string | null;
  record: SelectionRecord;
}

/** Why a candidate may not be drawn, or null when it may. The first reason that applies, in the order of the ExclusionReason enum. */
export function exclusionOf(candidate: RecoveryCandidate, request: Pick<SelectionRequest, 'agentId' | 'parties' | 'now' | 'rules'>): ExclusionReason | null {
  if (candidate.agentId === request.agentId) return 'self';
  if (request.parties?.includes(candidate.agentId)) return 'party';
  if (candidate.status !== 'active') return 'inactive';
  if (candidate.paused) return 'paused';
  if (candidate.risk >= request.rules.maxReviewerRisk) return 'unhealthy';
  if (candidate.lastReviewedAgentAt !== null && Date.parse(request.now) - Date.parse(candidate.lastReviewedAgentAt) < request.rules.recentReviewWindowMs) return 'recently_reviewed';
  if (candidate.collusionFlagged) return 'collusion_flagged';
  return null;
}

const byId = (a: { agentId: string }, b: { agentId: string }): number => (a.agentId < b.agentId ? -1 : a.agentId > b.agentId ? 1 : 0);

/**
 * Weighted pick: the pool in id order, each agent owning a slice of [0, total) as wide as its
 * authority; the agent whose slice holds `draw × total`. Null for an empty pool.
 */
export function pickFromPool(pool: readonly { agentId: string; authority: number }[], draw: number): string | null {
  const ordered = [...pool].sort(byId);
  const total = ordered.reduce((sum, c) => sum + c.authority, 0);
  if (ordered.length === 0) return null;
  if (total <= 0) return ordered[Math.min(ordered.length - 1, Math.floor(draw * ordered.length))]!.agentId;
  const target = draw * total;
  let cumulative = 0;
  for (const c of ordered) {
    cumulative += c.authority;
    if (target < cumulative) return c.agentId;
  }
  return ordered.at(-1)!.agentId;
}

/**
 * Draws one agent from the candidates: the exclusions of the seed (the paused agent, the session's
 * parties, inactive or paused agents, risk at or above maxReviewerRisk, anyone who reviewed the
 * agent within recentReviewWindowMs, a pair flagged for collusion), then a weighted random pick
 * by authority with the seeded draw. Pure and deterministic, whatever the order of `candidates`; a
 * duplicate agent id counts once (its first entry).
 */
export function selectCandidate(candidates: readonly RecoveryCandidate[], request: SelectionRequest): Selection {
  const seen = new Set<string>();
  const pool: SelectionRecord['pool'] = [];
  const excluded: SelectionRecord['excluded'] = [];
  for (const candidate of [...candidates].sort(byId)) {
    const reason = seen.has(candidate.agentId) ? 'duplicate' : exclusionOf(candidate, request);
    seen.add(candidate.agentId);
    if (reason !== null) excluded.push({ agentId: candidate.agentId, reason });
    else pool.push({ agentId: candidate.agentId, ...authorityScore(candidate, request.now, request.tags, request.rules) });
  }
  const draw = drawOf(request.seed, request.purpose);
  return { selected: pickFromPool(pool, draw), record: { seed: request.seed, draw, candidates: candidates.length, pool, excluded } };
}
