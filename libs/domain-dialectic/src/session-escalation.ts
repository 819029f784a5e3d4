// The recovery session decider, after the dialectic: expiry, the escalation ladder (tie-break, quorum, operator), relapse and audit.
import { DomainError, requireRole } from '@agora/decider';
import { requireValidSignature, resolutionDigest } from './resolution.js';
import { Decision, escalate, existing, payloadFor, refuseClosed, refuseLate, requireEscalation, requireStatus, selectionFor, settle } from './session-guards.js';
import { type CommandOf, type DialecticEvent, type DialecticSessionState, event, inDialectic, latestPosition, partyOf } from './session-state.js';

export function expire(command: CommandOf<'ExpireDialecticPhase'>, state: DialecticSessionState): DialecticEvent[] {
  const { payload: p, context } = command;
  requireRole(context, 'service', 'expire a dialectic deadline');
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

export function escalateRecovery(command: CommandOf<'EscalateRecovery'>, state: DialecticSessionState): DialecticEvent[] {
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

export function assignTieBreaker(command: CommandOf<'AssignTieBreaker'>, state: DialecticSessionState): DialecticEvent[] {
  const { payload: p, context } = command;
  requireRole(context, 'service', 'assign a tie-breaker');
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

export function recordTieBreak(command: CommandOf<'RecordTieBreak'>, state: DialecticSessionState): DialecticEvent[] {
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

export function recordQuorumResult(command: CommandOf<'RecordQuorumResult'>, state: DialecticSessionState): DialecticEvent[] {
  const { payload: p, context } = command;
  requireRole(context, 'service', 'record a quorum result');
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

export function decideRecovery(command: CommandOf<'DecideRecovery'>, state: DialecticSessionState): DialecticEvent[] {
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

export function recordRelapse(command: CommandOf<'RecordRelapse'>, state: DialecticSessionState): DialecticEvent[] {
  const { payload: p, context } = command;
  requireRole(context, 'service', 'record a relapse');
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

export function assignAuditor(command: CommandOf<'AssignAuditor'>, state: DialecticSessionState): DialecticEvent[] {
  const { payload: p, context } = command;
  requireRole(context, 'service', 'assign an auditor');
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

export function submitAudit(command: CommandOf<'SubmitAudit'>, state: DialecticSessionState): DialecticEvent[] {
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
