/**
 * The recovery session decider: one aggregate, the stream `dialectic_session-<sessionId>`, holds a
 * paused agent's recovery (seed 001), so every rule of the dialectic is decided atomically here.
 *
 * Lifecycle
 *
 *   OpenRecovery (service, on AgentPaused) ─> RecoveryOpened + ReviewerSelected (seed, draw, pool)
 *                                          or NoCandidateEligible + RecoveryEscalated(operator)
 *   SubmitThesis (the paused agent)  ─> ThesisSubmitted           awaiting_thesis ─> awaiting_antithesis
 *   SubmitAntithesis (the reviewer)  ─> AntithesisSubmitted       ─> synthesis
 *   SubmitSynthesis (agent on odd rounds, reviewer on even ones) ─> SynthesisSubmitted, then
 *       converged ─> ResolutionProposed (awaiting_signatures)
 *                    or ResolutionBlocked + RecoveryEscalated(operator) when it breaks a hard limit
 *       last round, not converged ─> RecoveryEscalated(no_convergence)
 *   SignResolution (each party) ─> ResolutionSigned; the second ─> RecoveryResolved (resolved)
 *   ExpireDialecticPhase (at deadlineAt) ─> DialecticPhaseExpired + RecoveryEscalated
 *   EscalateRecovery (a party, or an operator) ─> RecoveryEscalated
 *   The ladder, climbing only, each tier an event, tiers 1 and 2 as the rules enable them:
 *     tie_break: AssignTieBreaker ─> TieBreakerSelected; RecordTieBreak ─> TieBreakRecorded, then
 *                RecoveryResolved on the side's latest position, or the next tier
 *     quorum:    the service runs a voting session on `proposal`; RecordQuorumResult ─>
 *                QuorumResultRecorded, then RecoveryResolved or the operator tier
 *     operator:  no deadline, the agent stays paused; DecideRecovery ─> RecoveryDecided, then
 *                RecoveryResolved (resume) or stayed_paused
 *   RecordRelapse ─> RecoveryRelapsed (the resumed agent paused again within relapseWindowMs)
 *   RecoveryResolved with audit.sampled ─> AssignAuditor ─> AuditorAssigned; SubmitAudit ─> AuditSubmitted
 *
 * Rules worth knowing
 * - Identity first: only the paused agent submits the thesis, only its reviewer the antithesis,
 *   only those two the synthesis and the signatures (forbidden otherwise); then the phase and the
 *   turn (illegal_state): a refused command writes nothing.
 * - A tier is entered only when it can do something: the tie-breaker needs a position to side
 *   with, the quorum a position that passes the hard limits to vote on. A resolution that breaks a
 *   hard limit goes straight to an operator. The operator tier is always there: the strict default.
 * - Every phase has a deadline (capped by the session limit during the dialectic); the session
 *   keeps one pending deadline, recorded in the event that opened the phase.
 * - Time comes from context.now only; draws from the session's seed only. A repeated command that
 *   is already satisfied returns [].
 */
import type {
  AntithesisSubmitted,
  AssignAuditor,
  AssignTieBreaker,
  AuditorAssigned,
  AuditSubmitted,
  Condition,
  DataOf,
  DecideRecovery,
  DialecticMessageView,
  DialecticPhaseExpired,
  DialecticSessionRecord,
  EscalateRecovery,
  EscalationTier,
  EscalationView,
  ExpireDialecticPhase,
  NoCandidateEligible,
  OpenRecovery,
  Party,
  PayloadOf,
  Position,
  QuorumResultRecorded,
  RecordQuorumResult,
  RecordRelapse,
  RecordTieBreak,
  RecoveryDecided,
  RecoveryEscalated,
  RecoveryEscalationReason,
  RecoveryOpened,
  RecoveryRelapsed,
  RecoveryResolved,
  ResolutionBlocked,
  ResolutionPayload,
  ResolutionProposed,
  ResolutionSignatureView,
  ResolutionSigned,
  ReviewerSelected,
  SignResolution,
  SubmitAntithesis,
  SubmitAudit,
  SubmitSynthesis,
  SubmitThesis,
  SynthesisSubmitted,
  ThesisSubmitted,
  TieBreakerSelected,
  TieBreakRecorded,
} from '@agora/contracts';
import { DomainError, type Command, type CommandContext, type Decider, type DomainEvent } from '@agora/decider';
import { checkHardLimits, riskThresholdOf, sameConditions } from './conditions.js';
import { converged } from './convergence.js';
import { quorumVotingSessionId, recoverySessionId } from './ids.js';
import { DEFAULT_DIALECTIC_POLICY, type DialecticPolicy } from './policy.js';
import { auditSample } from './random.js';
import { requireValidSignature, resolutionDigest, resolutionPayload } from './resolution.js';
import { selectCandidate, type Selection } from './selection.js';

export type DialecticEvent =
  | DomainEvent<'RecoveryOpened', DataOf<typeof RecoveryOpened>>
  | DomainEvent<'ReviewerSelected', DataOf<typeof ReviewerSelected>>
  | DomainEvent<'NoCandidateEligible', DataOf<typeof NoCandidateEligible>>
  | DomainEvent<'ThesisSubmitted', DataOf<typeof ThesisSubmitted>>
  | DomainEvent<'AntithesisSubmitted', DataOf<typeof AntithesisSubmitted>>
  | DomainEvent<'SynthesisSubmitted', DataOf<typeof SynthesisSubmitted>>
  | DomainEvent<'ResolutionProposed', DataOf<typeof ResolutionProposed>>
  | DomainEvent<'ResolutionBlocked', DataOf<typeof ResolutionBlocked>>
  | DomainEvent<'ResolutionSigned', DataOf<typeof ResolutionSigned>>
  | DomainEvent<'RecoveryResolved', DataOf<typeof RecoveryResolved>>
  | DomainEvent<'DialecticPhaseExpired', DataOf<typeof DialecticPhaseExpired>>
  | DomainEvent<'RecoveryEscalated', DataOf<typeof RecoveryEscalated>>
  | DomainEvent<'TieBreakerSelected', DataOf<typeof TieBreakerSelected>>
  | DomainEvent<'TieBreakRecorded', DataOf<typeof TieBreakRecorded>>
  | DomainEvent<'QuorumResultRecorded', DataOf<typeof QuorumResultRecorded>>
  | DomainEvent<'RecoveryDecided', DataOf<typeof RecoveryDecided>>
  | DomainEvent<'RecoveryRelapsed', DataOf<typeof RecoveryRelapsed>>
  | DomainEvent<'AuditorAssigned', DataOf<typeof AuditorAssigned>>
  | DomainEvent<'AuditSubmitted', DataOf<typeof AuditSubmitted>>;

export type DialecticCommand =
  | Command<'OpenRecovery', PayloadOf<typeof OpenRecovery>>
  | Command<'SubmitThesis', PayloadOf<typeof SubmitThesis>>
  | Command<'SubmitAntithesis', PayloadOf<typeof SubmitAntithesis>>
  | Command<'SubmitSynthesis', PayloadOf<typeof SubmitSynthesis>>
  | Command<'SignResolution', PayloadOf<typeof SignResolution>>
  | Command<'ExpireDialecticPhase', PayloadOf<typeof ExpireDialecticPhase>>
  | Command<'EscalateRecovery', PayloadOf<typeof EscalateRecovery>>
  | Command<'AssignTieBreaker', PayloadOf<typeof AssignTieBreaker>>
  | Command<'RecordTieBreak', PayloadOf<typeof RecordTieBreak>>
  | Command<'RecordQuorumResult', PayloadOf<typeof RecordQuorumResult>>
  | Command<'DecideRecovery', PayloadOf<typeof DecideRecovery>>
  | Command<'RecordRelapse', PayloadOf<typeof RecordRelapse>>
  | Command<'AssignAuditor', PayloadOf<typeof AssignAuditor>>
  | Command<'SubmitAudit', PayloadOf<typeof SubmitAudit>>;

/** A recovery with its whole transcript (the DialecticSessionRecord contract: a read model can be this state). */
export type DialecticSession = DialecticSessionRecord;
export type DialecticSessionState = { status: 'unopened' } | DialecticSession;

type EventType = DialecticEvent['type'];
type EventOf<T extends EventType> = Extract<DialecticEvent, { type: T }>;
type CommandOf<T extends DialecticCommand['type']> = Extract<DialecticCommand, { type: T }>;

const event = <T extends EventType>(type: T, data: EventOf<T>['data']): EventOf<T> => ({ type, data }) as EventOf<T>;

// ---------------------------------------------------------------------------------------------
// Reading the state
// ---------------------------------------------------------------------------------------------

export const isClosed = (status: string): boolean => status === 'resolved' || status === 'stayed_paused';
const DIALECTIC_PHASES = new Set(['awaiting_thesis', 'awaiting_antithesis', 'synthesis', 'awaiting_signatures']);
/** The dialectic itself (thesis to signatures), before any escalation. */
export const inDialectic = (status: string): boolean => DIALECTIC_PHASES.has(status);

/** Whose round it is: the paused agent on odd rounds, the reviewer on even ones. */
export const turnOf = (round: number): Party => (round % 2 === 1 ? 'agent' : 'reviewer');

export function partyOf(s: DialecticSession, agentId: string): Party | undefined {
  if (agentId === s.agentId) return 'agent';
  if (s.reviewer !== null && agentId === s.reviewer) return 'reviewer';
  return undefined;
}

const partyId = (s: DialecticSession, party: Party): string => (party === 'agent' ? s.agentId : (s.reviewer ?? ''));

/** A party's latest position (root cause and conditions): the agent's thesis or synthesis; the reviewer's counter-proposal or synthesis. */
export function latestPosition(s: DialecticSession, party: Party): Position | null {
  for (let i = s.messages.length - 1; i >= 0; i--) {
    const m = s.messages[i]!;
    if (m.party === party && m.rootCause !== null && m.conditions !== null) return { rootCause: m.rootCause, conditions: m.conditions };
  }
  return null;
}

/** What a quorum votes on: the reviewer's latest position (the safety side), else the paused agent's. */
export const quorumProposal = (s: DialecticSession): Position | null => latestPosition(s, 'reviewer') ?? latestPosition(s, 'agent');

const TIER_RANK: Record<EscalationTier, number> = { tie_break: 1, quorum: 2, operator: 3 };
/** The highest tier reached: 0 before any escalation. The ladder only climbs. */
export const highestTier = (s: DialecticSession): number => s.escalations.reduce((max, e) => Math.max(max, TIER_RANK[e.tier]), 0);
/** The escalation waiting for its outcome, if any. */
export const pendingEscalation = (s: DialecticSession): EscalationView | undefined => s.escalations.findLast((e) => e.outcome === null);

const listOf = (items: readonly string[]) => (items.length === 0 ? 'none' : items.join(', '));

function timeAfter(now: string, ms: number): string {
  const start = Date.parse(now);
  if (Number.isNaN(start)) throw new DomainError('invalid_command', `command time ${JSON.stringify(now)} is not an ISO-8601 time`, { now });
  return new Date(start + ms).toISOString();
}

const earlier = (a: string, b: string): string => (Date.parse(a) <= Date.parse(b) ? a : b);
/** A dialectic phase's deadline: its own time-box, capped by the session limit. */
const phaseDeadline = (s: DialecticSession, now: string, ms: number): string => earlier(timeAfter(now, ms), s.sessionDeadlineAt);

// ---------------------------------------------------------------------------------------------
// Guards
// ---------------------------------------------------------------------------------------------

function requireRole(context: CommandContext, role: string, toDo: string): void {
  if (context.actorRoles.includes(role)) return;
  throw new DomainError('forbidden', `${context.actor} may not ${toDo}: that needs the role ${role}, and ${context.actor} has ${listOf(context.actorRoles)}`, {
    actor: context.actor,
    requiredRole: role,
    actorRoles: [...context.actorRoles],
  });
}

function existing(state: DialecticSessionState, sessionId: string): DialecticSession {
  if (state.status === 'unopened') throw new DomainError('not_found', `recovery session ${sessionId} does not exist`, { sessionId });
  return state;
}

function requireParty(s: DialecticSession, context: CommandContext, toDo: string): Party {
  const party = partyOf(s, context.actor);
  if (party) return party;
  throw new DomainError('forbidden', `${context.actor} may not ${toDo} in session ${s.sessionId}: only the paused agent ${s.agentId} and its reviewer ${s.reviewer ?? '(none)'} take part`, {
    sessionId: s.sessionId,
    actor: context.actor,
    agentId: s.agentId,
    reviewer: s.reviewer,
  });
}

function refuseClosed(s: DialecticSession, toDo: string): void {
  if (!isClosed(s.status)) return;
  throw new DomainError('illegal_state', `cannot ${toDo}: session ${s.sessionId} is ${s.status}`, { sessionId: s.sessionId, status: s.status });
}

function requireStatus(s: DialecticSession, status: DialecticSession['status'], toDo: string, why = ''): void {
  if (s.status === status) return;
  throw new DomainError('illegal_state', `cannot ${toDo}: session ${s.sessionId} is ${s.status}, not ${status}${why}`, { sessionId: s.sessionId, status: s.status, expected: status });
}

function refuseLate(s: DialecticSession, now: string, toDo: string): void {
  if (s.deadlineAt === null || Date.parse(now) < Date.parse(s.deadlineAt)) return;
  throw new DomainError('illegal_state', `cannot ${toDo}: the deadline of session ${s.sessionId} passed at ${s.deadlineAt}; it escalates at expiry`, {
    sessionId: s.sessionId,
    status: s.status,
    deadlineAt: s.deadlineAt,
  });
}

function requireEscalation(s: DialecticSession, escalation: number, tier: EscalationTier): EscalationView {
  const found = s.escalations.find((e) => e.escalation === escalation);
  if (!found) throw new DomainError('not_found', `session ${s.sessionId} has no escalation ${escalation} (it has had ${s.escalations.length})`, { sessionId: s.sessionId, escalation });
  if (found.tier !== tier) {
    throw new DomainError('illegal_state', `escalation ${escalation} of session ${s.sessionId} is at tier ${found.tier}, not ${tier}`, { sessionId: s.sessionId, escalation, tier: found.tier });
  }
  return found;
}

const samePosition = (a: { rootCause: string | null; conditions: readonly Condition[] | null }, b: Position): boolean =>
  a.rootCause === b.rootCause && a.conditions !== null && sameConditions(a.conditions, b.conditions);

// ---------------------------------------------------------------------------------------------
// Building a decision: events are applied to a working copy as they are emitted, so that later
// rules see the effect of earlier events of the same command.
// ---------------------------------------------------------------------------------------------

class Decision {
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
function escalate(d: Decision, reason: RecoveryEscalationReason, now: string, options: EscalateOptions = {}): void {
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

function resolve(d: Decision, resolution: ResolutionPayload, signatures: ResolutionSignatureView[], now: string): void {
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
function settle(d: Decision, resolution: ResolutionPayload, signatures: ResolutionSignatureView[], now: string): void {
  const violations = checkHardLimits(resolution.conditions, d.state.rules.hardLimits);
  if (violations.length === 0) return resolve(d, resolution, signatures, now);
  d.emit(event('ResolutionBlocked', { sessionId: d.state.sessionId, resolution, violations, blockedAt: now }));
  escalate(d, 'hard_limit_violation', now);
}

function payloadFor(s: DialecticSession, position: Position, decidedBy: ResolutionPayload['decidedBy'], escalation: number | null, decider: string | null): ResolutionPayload {
  return resolutionPayload({ sessionId: s.sessionId, agentId: s.agentId, reviewer: s.reviewer, pause: s.pause, rootCause: position.rootCause, conditions: position.conditions, decidedBy, escalation, decider });
}

function selectionFor(s: DialecticSession, candidates: PayloadOf<typeof OpenRecovery>['candidates'], purpose: string, parties: readonly string[], now: string): Selection {
  return selectCandidate(candidates, { seed: s.seed, purpose, now, tags: s.tags, agentId: s.agentId, parties, rules: s.rules.selection });
}

// ---------------------------------------------------------------------------------------------
// Commands
// ---------------------------------------------------------------------------------------------

function open(command: CommandOf<'OpenRecovery'>, state: DialecticSessionState, policy: DialecticPolicy): DialecticEvent[] {
  const { payload: p, context } = command;
  requireRole(context, 'operator', 'open a recovery session');
  if (state.status !== 'unopened') {
    if (state.agentId === p.agentId && state.pause === p.pause) return [];
    throw new DomainError('illegal_state', `recovery session ${p.sessionId} already exists (agent ${state.agentId}, pause ${state.pause})`, { sessionId: p.sessionId });
  }
  const expected = recoverySessionId(p.agentId, p.pause);
  if (p.sessionId !== expected) {
    throw new DomainError('invalid_command', `the recovery session of pause ${p.pause} of ${p.agentId} is ${expected}, not ${p.sessionId}`, { field: 'sessionId', sessionId: p.sessionId, expected });
  }
  const opened = event('RecoveryOpened', {
    sessionId: p.sessionId,
    agentId: p.agentId,
    pause: p.pause,
    reason: p.reason,
    trigger: { risk: p.risk, health: p.health, threshold: p.threshold },
    tags: [...new Set(p.tags)],
    rules: policy,
    seed: p.seed,
    pausedAt: p.pausedAt,
    openedAt: context.now,
    sessionDeadlineAt: timeAfter(context.now, policy.sessionTimeoutMs),
  });
  const d = new Decision(evolveSession({ status: 'unopened' }, opened) as DialecticSession);
  d.events.push(opened); // applied just above: the decision starts from the new session
  const s = d.state;
  const { selected, record } = selectionFor(s, p.candidates, 'reviewer', [], context.now);
  if (selected === null) {
    d.emit(event('NoCandidateEligible', { sessionId: s.sessionId, purpose: 'reviewer', selection: record, at: context.now }));
    escalate(d, 'no_reviewer', context.now);
    return d.events;
  }
  d.emit(event('ReviewerSelected', { sessionId: s.sessionId, reviewer: selected, selection: record, selectedAt: context.now, deadlineAt: phaseDeadline(s, context.now, s.rules.thesisTimeoutMs) }));
  return d.events;
}

function thesis(command: CommandOf<'SubmitThesis'>, state: DialecticSessionState): DialecticEvent[] {
  const { payload: p, context } = command;
  const s = existing(state, p.sessionId);
  if (context.actor !== s.agentId) {
    throw new DomainError('forbidden', `only the paused agent ${s.agentId} submits the thesis of session ${s.sessionId}; ${context.actor} is not it`, {
      sessionId: s.sessionId,
      agentId: s.agentId,
      actor: context.actor,
    });
  }
  const earlier = s.messages.find((m) => m.kind === 'thesis');
  if (earlier) {
    if (samePosition(earlier, { rootCause: p.rootCause, conditions: p.proposedConditions }) && earlier.reasoning === p.reasoning) return [];
    throw new DomainError('illegal_state', `${s.agentId} already submitted the thesis of session ${s.sessionId} at ${earlier.at}; say more in the synthesis`, { sessionId: s.sessionId, at: earlier.at });
  }
  refuseClosed(s, 'submit a thesis');
  requireStatus(s, 'awaiting_thesis', 'submit a thesis');
  refuseLate(s, context.now, 'submit a thesis');
  return [
    event('ThesisSubmitted', {
      sessionId: s.sessionId,
      author: context.actor,
      rootCause: p.rootCause,
      conditions: p.proposedConditions,
      reasoning: p.reasoning,
      violations: checkHardLimits(p.proposedConditions, s.rules.hardLimits),
      submittedAt: context.now,
      deadlineAt: phaseDeadline(s, context.now, s.rules.antithesisTimeoutMs),
    }),
  ];
}

function antithesis(command: CommandOf<'SubmitAntithesis'>, state: DialecticSessionState): DialecticEvent[] {
  const { payload: p, context } = command;
  const s = existing(state, p.sessionId);
  if (s.reviewer === null || context.actor !== s.reviewer) {
    throw new DomainError('forbidden', `only the reviewer ${s.reviewer ?? '(none was drawn)'} submits the antithesis of session ${s.sessionId}; ${context.actor} is not it`, {
      sessionId: s.sessionId,
      reviewer: s.reviewer,
      actor: context.actor,
    });
  }
  const counter = p.counterProposal ? { rootCause: p.counterProposal.rootCause, conditions: p.counterProposal.proposedConditions } : null;
  const earlier = s.messages.find((m) => m.kind === 'antithesis');
  if (earlier) {
    const sameCounter = counter === null ? earlier.rootCause === null : samePosition(earlier, counter);
    if (sameCounter && earlier.reasoning === p.reasoning && JSON.stringify(earlier.concerns) === JSON.stringify(p.concerns)) return [];
    throw new DomainError('illegal_state', `${s.reviewer} already submitted the antithesis of session ${s.sessionId} at ${earlier.at}; say more in the synthesis`, { sessionId: s.sessionId, at: earlier.at });
  }
  refuseClosed(s, 'submit an antithesis');
  requireStatus(s, 'awaiting_antithesis', 'submit an antithesis', s.status === 'awaiting_thesis' ? `: the antithesis answers the thesis, and ${s.agentId} has not submitted it yet` : '');
  refuseLate(s, context.now, 'submit an antithesis');
  return [
    event('AntithesisSubmitted', {
      sessionId: s.sessionId,
      author: context.actor,
      observedMetrics: p.observedMetrics,
      concerns: p.concerns,
      reasoning: p.reasoning,
      counterProposal: counter,
      violations: counter ? checkHardLimits(counter.conditions, s.rules.hardLimits) : [],
      submittedAt: context.now,
      deadlineAt: phaseDeadline(s, context.now, s.rules.synthesisRoundTimeoutMs),
    }),
  ];
}

function synthesis(command: CommandOf<'SubmitSynthesis'>, state: DialecticSessionState): DialecticEvent[] {
  const { payload: p, context } = command;
  const s = existing(state, p.sessionId);
  const party = requireParty(s, context, 'submit a synthesis');
  const max = s.rules.maxSynthesisRounds;
  const previous = s.messages.find((m) => m.kind === 'synthesis' && m.round === p.round);
  if (previous) {
    if (previous.author === context.actor && samePosition(previous, { rootCause: p.rootCause, conditions: p.proposedConditions }) && previous.reasoning === p.reasoning && previous.agrees === p.agrees) return [];
    throw new DomainError('illegal_state', `round ${p.round} of session ${s.sessionId} was already submitted by ${previous.author} at ${previous.at}`, { sessionId: s.sessionId, round: p.round, author: previous.author });
  }
  refuseClosed(s, 'submit a synthesis');
  if (p.round > max || (s.status !== 'synthesis' && s.round >= max)) {
    throw new DomainError('illegal_state', `the synthesis of session ${s.sessionId} is over: it is capped at ${max} rounds${s.round >= max ? ', all used' : ''}`, {
      sessionId: s.sessionId,
      round: p.round,
      maxSynthesisRounds: max,
      status: s.status,
    });
  }
  const why = s.status === 'awaiting_thesis' || s.status === 'awaiting_antithesis' ? ': the synthesis follows the thesis and the antithesis' : '';
  requireStatus(s, 'synthesis', 'submit a synthesis', why);
  const next = s.round + 1;
  if (p.round !== next) {
    throw new DomainError('illegal_state', `session ${s.sessionId} is at synthesis round ${next}, not ${p.round}`, { sessionId: s.sessionId, round: p.round, nextRound: next });
  }
  const due = turnOf(next);
  if (due !== party) {
    throw new DomainError('illegal_state', `out of turn: round ${next} of session ${s.sessionId} is ${partyId(s, due)}'s (${due}); the parties alternate, the paused agent first`, {
      sessionId: s.sessionId,
      round: next,
      turn: partyId(s, due),
      actor: context.actor,
    });
  }
  refuseLate(s, context.now, 'submit a synthesis');

  const message: DialecticMessageView = {
    kind: 'synthesis',
    round: next,
    author: context.actor,
    party,
    rootCause: p.rootCause,
    conditions: p.proposedConditions,
    reasoning: p.reasoning,
    observedMetrics: null,
    concerns: null,
    agrees: p.agrees,
    violations: [],
    at: context.now,
  };
  const convergence = converged([...s.messages, message]);
  const ends = convergence.converged || next === max;
  const d = new Decision(s).emit(
    event('SynthesisSubmitted', {
      sessionId: s.sessionId,
      round: next,
      author: context.actor,
      party,
      rootCause: p.rootCause,
      conditions: p.proposedConditions,
      reasoning: p.reasoning,
      agrees: p.agrees,
      violations: checkHardLimits(p.proposedConditions, s.rules.hardLimits),
      submittedAt: context.now,
      deadlineAt: ends ? null : phaseDeadline(s, context.now, s.rules.synthesisRoundTimeoutMs),
    }),
  );
  if (convergence.converged) {
    const resolution = payloadFor(d.state, convergence, 'dialectic', null, null);
    const violations = checkHardLimits(resolution.conditions, s.rules.hardLimits);
    if (violations.length > 0) {
      d.emit(event('ResolutionBlocked', { sessionId: s.sessionId, resolution, violations, blockedAt: context.now }));
      escalate(d, 'hard_limit_violation', context.now);
    } else {
      d.emit(
        event('ResolutionProposed', {
          sessionId: s.sessionId,
          resolution,
          digest: resolutionDigest(resolution),
          proposedAt: context.now,
          deadlineAt: phaseDeadline(s, context.now, s.rules.signatureTimeoutMs),
        }),
      );
    }
  } else if (next === max) {
    escalate(d, 'no_convergence', context.now);
  }
  return d.events;
}

function signResolution(command: CommandOf<'SignResolution'>, state: DialecticSessionState): DialecticEvent[] {
  const { payload: p, context } = command;
  const s = existing(state, p.sessionId);
  const party = requireParty(s, context, 'sign the resolution');
  const earlier = s.proposed?.signatures.find((x) => x.signer === context.actor);
  if (earlier) {
    if (earlier.signature === p.signature && earlier.publicKey === p.publicKey) return [];
    throw new DomainError('illegal_state', `${context.actor} already signed the resolution of session ${s.sessionId} at ${earlier.signedAt}`, { sessionId: s.sessionId, signer: context.actor });
  }
  refuseClosed(s, 'sign a resolution');
  const why = s.status === 'synthesis' ? ': the parties have not converged yet' : '';
  requireStatus(s, 'awaiting_signatures', 'sign the resolution', why);
  refuseLate(s, context.now, 'sign the resolution');
  const proposed = s.proposed!;
  requireValidSignature(proposed.payload, { signer: context.actor, publicKey: p.publicKey, signature: p.signature });
  const d = new Decision(s).emit(event('ResolutionSigned', { sessionId: s.sessionId, signer: context.actor, party, publicKey: p.publicKey, signature: p.signature, signedAt: context.now }));
  const signatures = d.state.proposed!.signatures;
  if (signatures.length === 2) resolve(d, proposed.payload, signatures, context.now);
  return d.events;
}

function expire(command: CommandOf<'ExpireDialecticPhase'>, state: DialecticSessionState): DialecticEvent[] {
  const { payload: p, context } = command;
  requireRole(context, 'operator', 'expire a dialectic deadline');
  const s = existing(state, p.sessionId);
  // Stale: the phase moved on (its deadline moved or was cancelled) since this deadline was set.
  if (s.deadlineAt === null || Date.parse(s.deadlineAt) !== Date.parse(p.deadlineAt)) return [];
  if (Date.parse(context.now) < Date.parse(s.deadlineAt)) {
    throw new DomainError('illegal_state', `the deadline of session ${s.sessionId} is due at ${s.deadlineAt}, not yet at ${context.now}`, {
      sessionId: s.sessionId,
      deadlineAt: s.deadlineAt,
      now: context.now,
    });
  }
  const sessionLimit = inDialectic(s.status) && s.deadlineAt === s.sessionDeadlineAt;
  const d = new Decision(s).emit(event('DialecticPhaseExpired', { sessionId: s.sessionId, status: s.status, late: [...s.awaiting], sessionLimit, deadlineAt: s.deadlineAt, expiredAt: context.now }));
  escalate(d, sessionLimit ? 'session_timeout' : 'timeout', context.now);
  return d.events;
}

function escalateRecovery(command: CommandOf<'EscalateRecovery'>, state: DialecticSessionState): DialecticEvent[] {
  const { payload: p, context } = command;
  const s = existing(state, p.sessionId);
  const operator = context.actorRoles.includes('operator');
  const party = partyOf(s, context.actor);
  if (!operator && (!party || !inDialectic(s.status))) {
    const why = party ? `the dialectic is over (${s.status}); only an operator may escalate further` : `only its parties (${s.agentId}, ${s.reviewer ?? 'no reviewer'}) or an operator may`;
    throw new DomainError('forbidden', `${context.actor} may not escalate session ${s.sessionId}: ${why}`, { sessionId: s.sessionId, actor: context.actor, status: s.status });
  }
  if (p.toOperator && !operator) {
    throw new DomainError('forbidden', `${context.actor} may not send session ${s.sessionId} straight to an operator: that needs the role operator`, { sessionId: s.sessionId, actor: context.actor });
  }
  refuseClosed(s, 'escalate');
  if (s.status === 'awaiting_operator') {
    throw new DomainError('illegal_state', `session ${s.sessionId} already waits for an operator (tier 3, the last)`, { sessionId: s.sessionId, status: s.status });
  }
  const d = new Decision(s);
  escalate(d, 'requested', context.now, { requestedBy: context.actor, note: p.reason, toOperator: p.toOperator });
  return d.events;
}

function assignTieBreaker(command: CommandOf<'AssignTieBreaker'>, state: DialecticSessionState): DialecticEvent[] {
  const { payload: p, context } = command;
  requireRole(context, 'operator', 'assign a tie-breaker');
  const s = existing(state, p.sessionId);
  const escalation = requireEscalation(s, p.escalation, 'tie_break');
  // Answered already, or settled otherwise (expired, superseded): nothing to assign.
  if (escalation.tieBreaker !== null || escalation.outcome !== null) return [];
  const { selected, record } = selectionFor(s, p.candidates, `tie_breaker:${p.escalation}`, s.reviewer === null ? [] : [s.reviewer], context.now);
  const d = new Decision(s);
  if (selected === null) {
    d.emit(event('NoCandidateEligible', { sessionId: s.sessionId, purpose: 'tie_breaker', selection: record, at: context.now }));
    escalate(d, 'no_tie_breaker', context.now);
    return d.events;
  }
  d.emit(event('TieBreakerSelected', { sessionId: s.sessionId, escalation: p.escalation, tieBreaker: selected, selection: record, selectedAt: context.now }));
  return d.events;
}

function recordTieBreak(command: CommandOf<'RecordTieBreak'>, state: DialecticSessionState): DialecticEvent[] {
  const { payload: p, context } = command;
  const s = existing(state, p.sessionId);
  const escalation = requireEscalation(s, p.escalation, 'tie_break');
  if (escalation.tieBreaker === null || escalation.tieBreaker !== context.actor) {
    throw new DomainError('forbidden', `only the tie-breaker of escalation ${p.escalation} (${escalation.tieBreaker ?? 'not drawn yet'}) decides it; ${context.actor} is not it`, {
      sessionId: s.sessionId,
      escalation: p.escalation,
      tieBreaker: escalation.tieBreaker,
      actor: context.actor,
    });
  }
  if (escalation.tieBreak) {
    if (escalation.tieBreak.side === p.side && escalation.tieBreak.reasoning === p.reasoning) return [];
    throw new DomainError('illegal_state', `the tie-breaker already sided with ${escalation.tieBreak.side} at ${escalation.tieBreak.decidedAt}`, { sessionId: s.sessionId, escalation: p.escalation });
  }
  if (escalation.outcome !== null) {
    throw new DomainError('illegal_state', `escalation ${p.escalation} of session ${s.sessionId} is over (${escalation.outcome})`, { sessionId: s.sessionId, escalation: p.escalation, outcome: escalation.outcome });
  }
  refuseLate(s, context.now, 'break the tie');
  const recorded = event('TieBreakRecorded', { sessionId: s.sessionId, escalation: p.escalation, tieBreaker: context.actor, side: p.side, reasoning: p.reasoning, decidedAt: context.now });
  if (p.side === 'neither') {
    const d = new Decision(s).emit(recorded);
    escalate(d, 'tie_break_declined', context.now);
    return d.events;
  }
  const position = latestPosition(s, p.side);
  if (!position) {
    throw new DomainError('illegal_state', `the ${p.side} of session ${s.sessionId} has no position to side with`, { sessionId: s.sessionId, side: p.side });
  }
  if (p.publicKey === undefined || p.signature === undefined) {
    throw new DomainError('invalid_command', 'siding with a party resolves the recovery: sign its resolution (publicKey and signature)', { missing: ['publicKey', 'signature'].filter((k) => p[k as 'publicKey'] === undefined) });
  }
  const resolution = payloadFor(s, position, 'tie_break', p.escalation, context.actor);
  requireValidSignature(resolution, { signer: context.actor, publicKey: p.publicKey, signature: p.signature });
  const d = new Decision(s).emit(recorded);
  settle(d, resolution, [{ signer: context.actor, role: 'tie_breaker', publicKey: p.publicKey, signature: p.signature, signedAt: context.now }], context.now);
  return d.events;
}

function recordQuorumResult(command: CommandOf<'RecordQuorumResult'>, state: DialecticSessionState): DialecticEvent[] {
  const { payload: p, context } = command;
  requireRole(context, 'operator', 'record a quorum result');
  const s = existing(state, p.sessionId);
  const escalation = requireEscalation(s, p.escalation, 'quorum');
  if (escalation.votingSessionId !== p.votingSessionId) {
    throw new DomainError('invalid_command', `escalation ${p.escalation} of session ${s.sessionId} is voted in ${escalation.votingSessionId}, not ${p.votingSessionId}`, {
      field: 'votingSessionId',
      expected: escalation.votingSessionId,
    });
  }
  // Recorded already, or the escalation was settled otherwise (expired, superseded): a late result changes nothing.
  if (escalation.quorumResult !== null || escalation.outcome !== null) return [];
  const size = escalation.quorumSize ?? s.rules.escalation.quorumSize;
  const approved = p.decision === 'approve' && p.votes >= size && p.approve > p.deny;
  const d = new Decision(s).emit(
    event('QuorumResultRecorded', {
      sessionId: s.sessionId,
      escalation: p.escalation,
      votingSessionId: p.votingSessionId,
      decision: p.decision,
      votes: p.votes,
      approve: p.approve,
      deny: p.deny,
      approved,
      reason: p.reason,
      recordedAt: context.now,
    }),
  );
  if (approved && escalation.proposal) settle(d, payloadFor(s, escalation.proposal, 'quorum', p.escalation, p.votingSessionId), [], context.now);
  else escalate(d, 'quorum_not_approved', context.now);
  return d.events;
}

function decideRecovery(command: CommandOf<'DecideRecovery'>, state: DialecticSessionState): DialecticEvent[] {
  const { payload: p, context } = command;
  requireRole(context, 'operator', 'decide a recovery');
  const s = existing(state, p.sessionId);
  const last = s.escalations.at(-1);
  const decided = event('RecoveryDecided', { sessionId: s.sessionId, escalation: last?.escalation ?? null, operator: context.actor, decision: p.decision, reasoning: p.reasoning, decidedAt: context.now });
  if (p.decision === 'stay_paused') {
    if (s.status === 'stayed_paused') return [];
    requireStatus(s, 'awaiting_operator', 'keep the agent paused', inDialectic(s.status) || s.status === 'tie_break' || s.status === 'quorum' ? ': an operator decides at tier 3 (EscalateRecovery with toOperator first)' : '');
    return [decided];
  }
  const missing = (['rootCause', 'conditions', 'publicKey', 'signature'] as const).filter((k) => p[k] === undefined);
  if (missing.length > 0) throw new DomainError('invalid_command', `resuming the agent needs ${missing.join(', ')}: the operator signs the resolution it decides`, { missing });
  const resolution = payloadFor(s, { rootCause: p.rootCause!, conditions: p.conditions! }, 'operator', last?.escalation ?? null, context.actor);
  if (s.status === 'resolved') {
    if (s.resolved?.resolution.decidedBy === 'operator' && s.resolved.resolution.decider === context.actor && resolutionDigest(s.resolved.resolution) === resolutionDigest(resolution)) return [];
    throw new DomainError('illegal_state', `session ${s.sessionId} is already resolved (${s.resolved?.resolution.decidedBy})`, { sessionId: s.sessionId, status: s.status });
  }
  if (s.status !== 'stayed_paused') {
    requireStatus(s, 'awaiting_operator', 'resume the agent', inDialectic(s.status) || s.status === 'tie_break' || s.status === 'quorum' ? ': an operator decides at tier 3 (EscalateRecovery with toOperator first)' : '');
  }
  requireValidSignature(resolution, { signer: context.actor, publicKey: p.publicKey!, signature: p.signature! });
  const d = new Decision(s).emit(decided);
  settle(d, resolution, [{ signer: context.actor, role: 'operator', publicKey: p.publicKey!, signature: p.signature!, signedAt: context.now }], context.now);
  return d.events;
}

function recordRelapse(command: CommandOf<'RecordRelapse'>, state: DialecticSessionState): DialecticEvent[] {
  const { payload: p, context } = command;
  requireRole(context, 'operator', 'record a relapse');
  const s = existing(state, p.sessionId);
  if (p.pause <= s.pause) throw new DomainError('invalid_command', `pause ${p.pause} is not after pause ${s.pause} that session ${s.sessionId} recovered`, { field: 'pause', pause: p.pause, sessionPause: s.pause });
  if (s.relapse !== null) return []; // the first relapse is the one that counts
  if (s.status !== 'resolved' || s.resolved === null) {
    throw new DomainError('illegal_state', `session ${s.sessionId} did not resume its agent (${s.status}): there is nothing to relapse from`, { sessionId: s.sessionId, status: s.status });
  }
  const afterMs = Date.parse(p.pausedAt) - Date.parse(s.resolved.resolvedAt);
  if (!(afterMs >= 0 && afterMs <= s.rules.relapseWindowMs)) return []; // outside the window: not a relapse of this recovery
  return [event('RecoveryRelapsed', { sessionId: s.sessionId, agentId: s.agentId, pause: p.pause, risk: p.risk, resumedAt: s.resolved.resolvedAt, relapsedAt: p.pausedAt, afterMs })];
}

function assignAuditor(command: CommandOf<'AssignAuditor'>, state: DialecticSessionState): DialecticEvent[] {
  const { payload: p, context } = command;
  requireRole(context, 'operator', 'assign an auditor');
  const s = existing(state, p.sessionId);
  if (s.audit === null) {
    throw new DomainError('illegal_state', `session ${s.sessionId} has no audit to assign: ${s.status === 'resolved' ? 'the audit sample did not draw it' : `it is ${s.status}, not resolved`}`, {
      sessionId: s.sessionId,
      status: s.status,
    });
  }
  if (s.audit.auditor !== null || s.audit.noCandidate) return [];
  const deciders = s.escalations.flatMap((e) => (e.tieBreaker ? [e.tieBreaker] : []));
  if (s.operatorDecision) deciders.push(s.operatorDecision.operator);
  const parties = [...(s.reviewer === null ? [] : [s.reviewer]), ...deciders];
  const { selected, record } = selectionFor(s, p.candidates, 'auditor', parties, context.now);
  if (selected === null) return [event('NoCandidateEligible', { sessionId: s.sessionId, purpose: 'auditor', selection: record, at: context.now })];
  return [event('AuditorAssigned', { sessionId: s.sessionId, auditor: selected, selection: record, assignedAt: context.now })];
}

function submitAudit(command: CommandOf<'SubmitAudit'>, state: DialecticSessionState): DialecticEvent[] {
  const { payload: p, context } = command;
  const s = existing(state, p.sessionId);
  if (s.audit?.auditor !== context.actor) {
    throw new DomainError('forbidden', `only the auditor of session ${s.sessionId} (${s.audit?.auditor ?? 'none'}) submits its audit; ${context.actor} is not it`, {
      sessionId: s.sessionId,
      auditor: s.audit?.auditor ?? null,
      actor: context.actor,
    });
  }
  if (s.audit.verdict !== null) {
    if (s.audit.verdict === p.verdict && s.audit.reasoning === p.reasoning) return [];
    throw new DomainError('illegal_state', `the audit of session ${s.sessionId} was already submitted (${s.audit.verdict})`, { sessionId: s.sessionId, verdict: s.audit.verdict });
  }
  return [event('AuditSubmitted', { sessionId: s.sessionId, auditor: context.actor, verdict: p.verdict, reasoning: p.reasoning, submittedAt: context.now })];
}

// ---------------------------------------------------------------------------------------------
// Evolve
// ---------------------------------------------------------------------------------------------

const mapEscalation = (s: DialecticSession, escalation: number, change: (e: EscalationView) => EscalationView): EscalationView[] =>
  s.escalations.map((e) => (e.escalation === escalation ? change(e) : e));

/** Settles the pending escalation (if any) with an outcome. */
function settlePending(s: DialecticSession, outcome: NonNullable<EscalationView['outcome']>, at: string, onlyTiers: readonly EscalationTier[] = ['tie_break', 'quorum', 'operator']): EscalationView[] {
  const pending = pendingEscalation(s);
  if (!pending || !onlyTiers.includes(pending.tier)) return s.escalations;
  return mapEscalation(s, pending.escalation, (e) => ({ ...e, outcome, outcomeAt: at }));
}

function message(kind: DialecticMessageView['kind'], party: Party, d: { author: string; reasoning: string; violations: DialecticMessageView['violations']; submittedAt: string }, rest: Partial<DialecticMessageView>): DialecticMessageView {
  return {
    kind,
    round: null,
    author: d.author,
    party,
    rootCause: null,
    conditions: null,
    reasoning: d.reasoning,
    observedMetrics: null,
    concerns: null,
    agrees: null,
    violations: d.violations,
    at: d.submittedAt,
    ...rest,
  };
}

export function evolveSession(state: DialecticSessionState, e: DialecticEvent): DialecticSessionState {
  if (e.type === 'RecoveryOpened') {
    const d = e.data;
    return {
      sessionId: d.sessionId,
      agentId: d.agentId,
      pause: d.pause,
      reason: d.reason,
      trigger: d.trigger,
      tags: d.tags,
      rules: d.rules,
      seed: d.seed,
      status: 'awaiting_thesis',
      reviewer: null,
      reviewerSelection: null,
      messages: [],
      round: 0,
      awaiting: [],
      deadlineAt: null,
      sessionDeadlineAt: d.sessionDeadlineAt,
      proposed: null,
      blocked: [],
      escalations: [],
      expiries: [],
      operatorDecision: null,
      resolved: null,
      relapse: null,
      audit: null,
      pausedAt: d.pausedAt,
      openedAt: d.openedAt,
      closedAt: null,
      updatedAt: d.openedAt,
    };
  }
  if (state.status === 'unopened') return state;
  const s = state;
  switch (e.type) {
    case 'ReviewerSelected': {
      const d = e.data;
      return { ...s, reviewer: d.reviewer, reviewerSelection: d.selection, awaiting: [s.agentId], deadlineAt: d.deadlineAt, updatedAt: d.selectedAt };
    }
    case 'NoCandidateEligible': {
      const d = e.data;
      if (d.purpose === 'reviewer') return { ...s, reviewerSelection: d.selection, updatedAt: d.at };
      if (d.purpose === 'tie_breaker') {
        const pending = pendingEscalation(s);
        const escalations = pending ? mapEscalation(s, pending.escalation, (x) => ({ ...x, tieBreakerSelection: d.selection, outcome: 'no_candidate', outcomeAt: d.at })) : s.escalations;
        return { ...s, escalations, updatedAt: d.at };
      }
      return { ...s, audit: s.audit && { ...s.audit, noCandidate: true, selection: d.selection }, updatedAt: d.at };
    }
    case 'ThesisSubmitted': {
      const d = e.data;
      const m = message('thesis', 'agent', d, { rootCause: d.rootCause, conditions: d.conditions });
      return { ...s, status: 'awaiting_antithesis', messages: [...s.messages, m], awaiting: s.reviewer === null ? [] : [s.reviewer], deadlineAt: d.deadlineAt, updatedAt: d.submittedAt };
    }
    case 'AntithesisSubmitted': {
      const d = e.data;
      const m = message('antithesis', 'reviewer', d, {
        rootCause: d.counterProposal?.rootCause ?? null,
        conditions: d.counterProposal?.conditions ?? null,
        observedMetrics: d.observedMetrics,
        concerns: d.concerns,
      });
      return { ...s, status: 'synthesis', messages: [...s.messages, m], awaiting: [s.agentId], deadlineAt: d.deadlineAt, updatedAt: d.submittedAt };
    }
    case 'SynthesisSubmitted': {
      const d = e.data;
      const m = message('synthesis', d.party, d, { round: d.round, rootCause: d.rootCause, conditions: d.conditions, agrees: d.agrees });
      const awaiting = d.deadlineAt === null ? [] : [partyId(s, turnOf(d.round + 1))];
      return { ...s, messages: [...s.messages, m], round: d.round, awaiting, deadlineAt: d.deadlineAt, updatedAt: d.submittedAt };
    }
    case 'ResolutionProposed': {
      const d = e.data;
      return {
        ...s,
        status: 'awaiting_signatures',
        proposed: { payload: d.resolution, digest: d.digest, proposedAt: d.proposedAt, signatures: [] },
        awaiting: [s.agentId, ...(s.reviewer === null ? [] : [s.reviewer])],
        deadlineAt: d.deadlineAt,
        updatedAt: d.proposedAt,
      };
    }
    case 'ResolutionBlocked': {
      const d = e.data;
      return {
        ...s,
        blocked: [...s.blocked, { resolution: d.resolution, violations: d.violations, blockedAt: d.blockedAt }],
        escalations: settlePending(s, 'blocked', d.blockedAt, ['tie_break', 'quorum']),
        updatedAt: d.blockedAt,
      };
    }
    case 'ResolutionSigned': {
      const d = e.data;
      if (!s.proposed) return s;
      const signature = { signer: d.signer, role: d.party, publicKey: d.publicKey, signature: d.signature, signedAt: d.signedAt };
      return { ...s, proposed: { ...s.proposed, signatures: [...s.proposed.signatures, signature] }, awaiting: s.awaiting.filter((a) => a !== d.signer), updatedAt: d.signedAt };
    }
    case 'RecoveryResolved': {
      const d = e.data;
      const escalations = d.resolution.escalation === null ? s.escalations : mapEscalation(s, d.resolution.escalation, (x) => ({ ...x, outcome: 'resolved', outcomeAt: d.resolvedAt }));
      const audit = d.audit.sampled ? { auditor: null, selection: null, noCandidate: false, verdict: null, reasoning: null, assignedAt: null, submittedAt: null } : null;
      return {
        ...s,
        status: 'resolved',
        resolved: { resolution: d.resolution, signatures: d.signatures, riskThreshold: d.riskThreshold, audit: d.audit, resolvedAt: d.resolvedAt },
        escalations,
        audit,
        awaiting: [],
        deadlineAt: null,
        closedAt: d.resolvedAt,
        updatedAt: d.resolvedAt,
      };
    }
    case 'DialecticPhaseExpired': {
      const d = e.data;
      const expiry = { status: d.status, late: d.late, sessionLimit: d.sessionLimit, deadlineAt: d.deadlineAt, expiredAt: d.expiredAt };
      return { ...s, expiries: [...s.expiries, expiry], escalations: settlePending(s, 'expired', d.expiredAt), awaiting: [], deadlineAt: null, updatedAt: d.expiredAt };
    }
    case 'RecoveryEscalated': {
      const d = e.data;
      const view: EscalationView = {
        escalation: d.escalation,
        tier: d.tier,
        reason: d.reason,
        requestedBy: d.requestedBy,
        note: d.note,
        escalatedAt: d.escalatedAt,
        deadlineAt: d.deadlineAt,
        proposal: d.proposal,
        votingSessionId: d.votingSessionId,
        quorumSize: d.quorumSize,
        tieBreaker: null,
        tieBreakerSelection: null,
        tieBreak: null,
        quorumResult: null,
        outcome: null,
        outcomeAt: null,
      };
      const status = d.tier === 'tie_break' ? 'tie_break' : d.tier === 'quorum' ? 'quorum' : 'awaiting_operator';
      return { ...s, status, escalations: [...settlePending(s, 'superseded', d.escalatedAt), view], awaiting: [], deadlineAt: d.deadlineAt, updatedAt: d.escalatedAt };
    }
    case 'TieBreakerSelected': {
      const d = e.data;
      return { ...s, escalations: mapEscalation(s, d.escalation, (x) => ({ ...x, tieBreaker: d.tieBreaker, tieBreakerSelection: d.selection })), awaiting: [d.tieBreaker], updatedAt: d.selectedAt };
    }
    case 'TieBreakRecorded': {
      const d = e.data;
      const tieBreak = { side: d.side, reasoning: d.reasoning, decidedAt: d.decidedAt };
      const escalations = mapEscalation(s, d.escalation, (x) => ({ ...x, tieBreak, ...(d.side === 'neither' ? { outcome: 'declined' as const, outcomeAt: d.decidedAt } : {}) }));
      return { ...s, escalations, awaiting: [], updatedAt: d.decidedAt };
    }
    case 'QuorumResultRecorded': {
      const d = e.data;
      const quorumResult = { decision: d.decision, votes: d.votes, approve: d.approve, deny: d.deny, approved: d.approved, reason: d.reason, recordedAt: d.recordedAt };
      const escalations = mapEscalation(s, d.escalation, (x) => ({ ...x, quorumResult, ...(d.approved ? {} : { outcome: 'not_approved' as const, outcomeAt: d.recordedAt }) }));
      return { ...s, escalations, updatedAt: d.recordedAt };
    }
    case 'RecoveryDecided': {
      const d = e.data;
      const operatorDecision = { operator: d.operator, decision: d.decision, reasoning: d.reasoning, decidedAt: d.decidedAt };
      if (d.decision === 'resume') return { ...s, status: 'awaiting_operator', operatorDecision, closedAt: null, updatedAt: d.decidedAt };
      return { ...s, status: 'stayed_paused', operatorDecision, escalations: settlePending(s, 'stayed_paused', d.decidedAt), awaiting: [], deadlineAt: null, closedAt: d.decidedAt, updatedAt: d.decidedAt };
    }
    case 'RecoveryRelapsed': {
      const d = e.data;
      return { ...s, relapse: { pause: d.pause, risk: d.risk, relapsedAt: d.relapsedAt, afterMs: d.afterMs }, updatedAt: d.relapsedAt };
    }
    case 'AuditorAssigned': {
      const d = e.data;
      const audit = { auditor: d.auditor, selection: d.selection, noCandidate: false, verdict: null, reasoning: null, assignedAt: d.assignedAt, submittedAt: null };
      return { ...s, audit, awaiting: [d.auditor], updatedAt: d.assignedAt };
    }
    case 'AuditSubmitted': {
      const d = e.data;
      return { ...s, audit: s.audit && { ...s.audit, verdict: d.verdict, reasoning: d.reasoning, submittedAt: d.submittedAt }, awaiting: [], updatedAt: d.submittedAt };
    }
  }
}

// ---------------------------------------------------------------------------------------------
// The decider
// ---------------------------------------------------------------------------------------------

/**
 * The recovery session decider under a dialectic policy. The policy is read only by OpenRecovery,
 * which records it in RecoveryOpened (`rules`); every other decision reads the session's own rules.
 */
export function createDialecticDecider(policy: DialecticPolicy = DEFAULT_DIALECTIC_POLICY): Decider<DialecticCommand, DialecticEvent, DialecticSessionState> {
  return {
    initialState: () => ({ status: 'unopened' }),
    evolve: evolveSession,
    decide(command, state) {
      switch (command.type) {
        case 'OpenRecovery':
          return open(command, state, policy);
        case 'SubmitThesis':
          return thesis(command, state);
        case 'SubmitAntithesis':
          return antithesis(command, state);
        case 'SubmitSynthesis':
          return synthesis(command, state);
        case 'SignResolution':
          return signResolution(command, state);
        case 'ExpireDialecticPhase':
          return expire(command, state);
        case 'EscalateRecovery':
          return escalateRecovery(command, state);
        case 'AssignTieBreaker':
          return assignTieBreaker(command, state);
        case 'RecordTieBreak':
          return recordTieBreak(command, state);
        case 'RecordQuorumResult':
          return recordQuorumResult(command, state);
        case 'DecideRecovery':
          return decideRecovery(command, state);
        case 'RecordRelapse':
          return recordRelapse(command, state);
        case 'AssignAuditor':
          return assignAuditor(command, state);
        case 'SubmitAudit':
          return submitAudit(command, state);
      }
    },
  };
}

/** The recovery session decider under the default dialectic policy. */
export const dialecticDecider = createDialecticDecider();
