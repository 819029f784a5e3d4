// The recovery session decider's guards, and how a decision is built (escalating, resolving, settling).
import type { Condition, EscalationTier, EscalationView, OpenRecovery, Party, PayloadOf, Position, RecoveryEscalationReason, ResolutionPayload, ResolutionSignatureView } from '@agora/contracts';
import { type CommandContext, DomainError, timeAfter } from '@agora/decider';
import { checkHardLimits, riskThresholdOf, sameConditions } from './conditions.js';
import { quorumVotingSessionId } from './ids.js';
import { auditSample } from './audit-sample.js';
import { resolutionPayload } from './resolution.js';
import { selectCandidate, type Selection } from './selection.js';
import { evolveSession } from './session-evolve.js';
import { type DialecticEvent, type DialecticSession, type DialecticSessionState, event, highestTier, isClosed, latestPosition, partyOf, quorumProposal, TIER_RANK } from './session-state.js';

// ---------------------------------------------------------------------------------------------
// Guards
// ---------------------------------------------------------------------------------------------

export function existing(state: DialecticSessionState, sessionId: string): DialecticSession {
  if (state.status === 'unopened') throw new DomainError('not_found', `recovery session ${sessionId} does not exist`, { sessionId });
  return state;
}

export function requireParty(s: DialecticSession, context: CommandContext, toDo: string): Party {
  const party = partyOf(s, context.actor);
  if (party) return party;
  throw new DomainError('forbidden', `${context.actor} may not ${toDo} in session ${s.sessionId}: only the paused agent ${s.agentId} and its reviewer ${s.reviewer ?? '(none)'} take part`, {
    sessionId: s.sessionId,
    actor: context.actor,
    agentId: s.agentId,
    reviewer: s.reviewer,
  });
}

export function refuseClosed(s: DialecticSession, toDo: string): void {
  if (!isClosed(s.status)) return;
  throw new DomainError('illegal_state', `cannot ${toDo}: session ${s.sessionId} is ${s.status}`, { sessionId: s.sessionId, status: s.status });
}

export function requireStatus(s: DialecticSession, status: DialecticSession['status'], toDo: string, why = ''): void {
  if (s.status === status) return;
  throw new DomainError('illegal_state', `cannot ${toDo}: session ${s.sessionId} is ${s.status}, not ${status}${why}`, { sessionId: s.sessionId, status: s.status, expected: status });
}

export function refuseLate(s: DialecticSession, now: string, toDo: string): void {
  if (s.deadlineAt === null || Date.parse(now) < Date.parse(s.deadlineAt)) return;
  throw new DomainError('illegal_state', `cannot ${toDo}: the deadline of session ${s.sessionId} passed at ${s.deadlineAt}; it escalates at expiry`, {
    sessionId: s.sessionId,
    status: s.status,
    deadlineAt: s.deadlineAt,
  });
}

export function requireEscalation(s: DialecticSession, escalation: number, tier: EscalationTier): EscalationView {
  const found = s.escalations.find((e) => e.escalation === escalation);
  if (!found) throw new DomainError('not_found', `session ${s.sessionId} has no escalation ${escalation} (it has had ${s.escalations.length})`, { sessionId: s.sessionId, escalation });
  if (found.tier !== tier) {
    throw new DomainError('illegal_state', `escalation ${escalation} of session ${s.sessionId} is at tier ${found.tier}, not ${tier}`, { sessionId: s.sessionId, escalation, tier: found.tier });
  }
  return found;
}

export const samePosition = (a: { rootCause: string | null; conditions: readonly Condition[] | null }, b: Position): boolean =>
  a.rootCause === b.rootCause && a.conditions !== null && sameConditions(a.conditions, b.conditions);

// ---------------------------------------------------------------------------------------------
// Building a decision: events are applied to a working copy as they are emitted, so that later
// rules see the effect of earlier events of the same command.
// ---------------------------------------------------------------------------------------------

export class Decision {
  readonly events: DialecticEvent[] = [];
  constructor(public state: DialecticSession) {}
  emit(e: DialecticEvent): this {
    this.events.push(e);
    this.state = evolveSession(this.state, e) as DialecticSession;
    return this;
  }
}

interface EscalateOptions {
  requestedBy?: string | null;
  note?: string | null;
  toOperator?: boolean;
}

/**
 * Climbs to the next tier that can do something: tie_break (enabled, and a position to side with),
 * quorum (enabled, and a position within the hard limits to vote on), else operator. A hard-limit
 * violation, or an operator asking, goes straight to the operator tier.
 */
export function escalate(d: Decision, reason: RecoveryEscalationReason, now: string, options: EscalateOptions = {}): void {
  const s = d.state;
  if (s.status === 'awaiting_operator' || isClosed(s.status)) return;
  const reached = highestTier(s);
  const { escalation: rules, hardLimits } = s.rules;
  const proposal = quorumProposal(s);
  let tier: EscalationTier = 'operator';
  if (reason !== 'hard_limit_violation' && !options.toOperator) {
    if (reached < TIER_RANK.tie_break && rules.tieBreak && (latestPosition(s, 'agent') || latestPosition(s, 'reviewer'))) tier = 'tie_break';
    else if (reached < TIER_RANK.quorum && rules.quorum && proposal && checkHardLimits(proposal.conditions, hardLimits).length === 0) tier = 'quorum';
  }
  const escalation = s.escalations.length + 1;
  d.emit(
    event('RecoveryEscalated', {
      sessionId: s.sessionId,
      escalation,
      tier,
      reason,
      requestedBy: options.requestedBy ?? null,
      note: options.note ?? null,
      proposal: tier === 'quorum' ? proposal : null,
      votingSessionId: tier === 'quorum' ? quorumVotingSessionId(s.sessionId, escalation) : null,
      quorumSize: tier === 'quorum' ? rules.quorumSize : null,
      escalatedAt: now,
      deadlineAt: tier === 'tie_break' ? timeAfter(now, rules.tieBreakTimeoutMs) : tier === 'quorum' ? timeAfter(now, rules.quorumTimeoutMs) : null,
    }),
  );
}

export function resolve(d: Decision, resolution: ResolutionPayload, signatures: ResolutionSignatureView[], now: string): void {
  const s = d.state;
  d.emit(
    event('RecoveryResolved', {
      sessionId: s.sessionId,
      agentId: s.agentId,
      pause: s.pause,
      resolution,
      signatures,
      riskThreshold: riskThresholdOf(resolution.conditions),
      audit: auditSample(s.seed, s.rules.auditRate),
      resolvedAt: now,
    }),
  );
}

/** A resolution decided above the dialectic (tie-break, quorum, operator): resolved, or blocked by the hard limits. */
export function settle(d: Decision, resolution: ResolutionPayload, signatures: ResolutionSignatureView[], now: string): void {
  const violations = checkHardLimits(resolution.conditions, d.state.rules.hardLimits);
  if (violations.length === 0) return resolve(d, resolution, signatures, now);
  d.emit(event('ResolutionBlocked', { sessionId: d.state.sessionId, resolution, violations, blockedAt: now }));
  escalate(d, 'hard_limit_violation', now);
}

export function payloadFor(s: DialecticSession, position: Position, decidedBy: ResolutionPayload['decidedBy'], escalation: number | null, decider: string | null): ResolutionPayload {
  return resolutionPayload({ sessionId: s.sessionId, agentId: s.agentId, reviewer: s.reviewer, pause: s.pause, rootCause: position.rootCause, conditions: position.conditions, decidedBy, escalation, decider });
}

export function selectionFor(s: DialecticSession, candidates: PayloadOf<typeof OpenRecovery>['candidates'], purpose: string, parties: readonly string[], now: string): Selection {
  return selectCandidate(candidates, { seed: s.seed, purpose, now, tags: s.tags, agentId: s.agentId, parties, rules: s.rules.selection });
}
