/**
 * The voting session decider: one aggregate, the stream `voting_session-<sessionId>`, where the
 * session id is the action request's id (one session per request, enforced by the stream).
 *
 * Lifecycle
 *
 *   CreateVotingSession (+ validator candidates and the configuration, from the service)
 *     ─> VotingSessionCreated (validators selected, rules, deadlineAt)          status pending
 *        + VotingSessionDecided(no_quorum) when fewer than minValidators qualified: decided
 *        + VotingSessionDecided(person_decides) for `decider: person` (no validators): decided,
 *          waiting for a human operator at once
 *   CastValidatorVote ─> ValidatorVoteReceived                                   status voting
 *     the last one ─> + VotingConsensusReached + VotingSessionDecided           status decided
 *   ExpireVotingSession (scheduler, at deadlineAt) ─> VotingSessionExpired       status expired
 *   CancelVotingSession ─> VotingSessionCancelled (pending or voting, or waiting for a person) status cancelled
 *   DecideVotingEscalation (operator) on a decided or expired session whose recommendation
 *     requires a human ─> VotingEscalationResolved: the final decision; the session is closed
 *   A session created for a governed tool call (`toolCall`: the call's digest), once its final
 *   decision is approve: ReleaseToolCall ─> ToolCallReleased (once, the digest must match), then
 *   RecordToolCallResult ─> ToolCallResultRecorded (the outcome and the result's digest)
 *
 * Rules worth knowing
 * - Only the selected validators vote, once each. The same vote again is already recorded ([]); a
 *   different one (a changed mind) is refused: the first vote stands.
 * - Votes are refused once the session is decided, expired or cancelled, and from the deadline on
 *   (the expiry decides on the votes in by then).
 * - The requesting agent is never a validator. An executive creates sessions for its own requests
 *   and may cancel them; an operator may name any requesting agent and cancel any session.
 * - Time comes from context.now only. Roles are checked here as well as by the service's gate.
 */
import type { CreateVotingSession, PayloadOf, ValidatorCandidate, VOTING_SESSION_CATEGORY, VotingConfig, votingContracts, VotingSessionRecord } from '@agora/contracts';
import { DomainError, eventConstructor, listOf, requireRole, timeAfter, type Command, type CommandContext, type CommandsOf, type Decider, type EventsOf, type OfType } from '@agora/decider';
import { recommend, voteWeight } from './consensus.js';
import { selectValidators } from './selection.js';

/** The session's events, from the voting contracts (the configuration's are another aggregate's). */
export type VotingSessionEvent = EventsOf<Extract<(typeof votingContracts.events)[number], { category: typeof VOTING_SESSION_CATEGORY }>>;

/**
 * What the voting service adds to CreateVotingSession before deciding it: the registry's validators
 * (agents with role validator, as it knows them now) and the configuration in force (the state of
 * `voting_config-global`, at stream revision `configRevision`, -1 for the defaults).
 */
export interface SessionEnrichment {
  candidates: ValidatorCandidate[];
  config: VotingConfig;
  configRevision: number;
}

export type CreateVotingSessionPayload = PayloadOf<typeof CreateVotingSession> & SessionEnrichment;

/** The session's commands, from the voting contracts; CreateVotingSession as the service enriches it. */
export type VotingSessionCommand = Exclude<CommandsOf<Extract<(typeof votingContracts.commands)[number], { aggregate: 'session' }>>, { type: 'CreateVotingSession' }> | Command<'CreateVotingSession', CreateVotingSessionPayload>;

export type VotingSession = VotingSessionRecord;
export type VotingSessionState = { status: 'none' } | VotingSession;

type CommandOf<T extends VotingSessionCommand['type']> = OfType<VotingSessionCommand, T>;
const event = eventConstructor<VotingSessionEvent>();

/** Streams are `voting_session-<sessionId>`; the session id is the request id. */
export const votingSessionStreamId = (sessionId: string): string => `voting_session-${sessionId}`;
export const sessionIdOfRequest = (requestId: string): string => requestId;

/** Still collecting votes. */
export const isOpenForVotes = (status: string): boolean => status === 'pending' || status === 'voting';

const ms = (t: string) => Date.parse(t);

function existing(state: VotingSessionState, sessionId: string): VotingSession {
  if (state.status === 'none') throw new DomainError('not_found', `voting session ${sessionId} does not exist`, { sessionId });
  return state;
}

function refuseClosedToVotes(s: VotingSession, toDo: string): void {
  if (isOpenForVotes(s.status)) return;
  throw new DomainError('illegal_state', `cannot ${toDo}: voting session ${s.sessionId} is ${s.status}`, { sessionId: s.sessionId, status: s.status });
}

// ---------------------------------------------------------------------------------------------
// Commands
// ---------------------------------------------------------------------------------------------

function create(command: CommandOf<'CreateVotingSession'>, state: VotingSessionState): VotingSessionEvent[] {
  const { payload: p, context } = command;
  requireRole(context, ['executive', 'operator', 'service'], 'create a voting session');
  // One session per request: the first one stands, whatever this request says. Its requesting
  // agent (or an operator, or the service) is answered with it; anyone else is refused, so that a
  // request id says nothing of a session the sender may not read (the gate conceals it as any refusal).
  if (state.status !== 'none') {
    if (state.requestingAgent === context.actor || context.actorRoles.includes('operator') || context.actorRoles.includes('service')) return [];
    throw new DomainError('illegal_state', `voting session ${state.sessionId} exists already: a new request needs a request id of its own`, { sessionId: state.sessionId });
  }
  const requestingAgent = p.requestingAgent ?? context.actor;
  if (requestingAgent !== context.actor && !context.actorRoles.includes('operator') && !context.actorRoles.includes('service')) {
    throw new DomainError('forbidden', `${context.actor} may only put its own action requests to a vote; only an operator (or the dialectic service, for a quorum) may name another requesting agent (${requestingAgent})`, {
      actor: context.actor,
      requestingAgent,
    });
  }
  const config = p.config;
  const rules: VotingConfig = { ...config, votingTimeoutMs: p.votingTimeoutMs ?? config.votingTimeoutMs };
  const criteria = {
    minTrustScore: p.criteria.minTrustScore,
    excludeAgents: [...new Set(p.criteria.excludeAgents)],
    preferredSpecializations: [...new Set(p.criteria.preferredSpecializations)],
  };
  // Never the requesting agent, nor whoever created the session for it.
  const exclude = [...new Set([...criteria.excludeAgents, requestingAgent, context.actor])];
  // A session for a person selects nobody: it waits at once for a human operator.
  const person = p.decider === 'person';
  const validators = person ? [] : selectValidators(p.candidates, { ...criteria, excludeAgents: exclude }, rules.maxValidators);
  const sessionId = sessionIdOfRequest(p.requestId);
  const created = event('VotingSessionCreated', {
    sessionId,
    requestId: p.requestId,
    requestingAgent,
    createdBy: context.actor,
    actionType: p.actionType,
    riskLevel: p.riskLevel,
    critical: p.critical ?? p.riskLevel === 'critical',
    summary: p.summary ?? null,
    criteria,
    rules,
    configRevision: p.configRevision,
    candidates: p.candidates.length,
    validators,
    createdAt: context.now,
    deadlineAt: timeAfter(context.now, rules.votingTimeoutMs),
    ...(p.toolCall === undefined ? {} : { toolCall: p.toolCall }),
    ...(person ? { decider: 'person' as const } : {}),
  });
  const events: VotingSessionEvent[] = [created];
  if (person || validators.length < rules.minValidators) {
    const session = evolveVotingSession({ status: 'none' }, created) as VotingSession;
    const { recommendation, tally } = recommend(session, { person });
    events.push(event('VotingSessionDecided', { sessionId, trigger: person ? 'person_decides' : 'no_quorum_at_creation', recommendation, tally, votingTimeMs: 0, decidedAt: context.now }));
  }
  return events;
}

function castVote(command: CommandOf<'CastValidatorVote'>, state: VotingSessionState): VotingSessionEvent[] {
  const { payload: p, context } = command;
  const validator = context.actor;
  requireRole(context, ['validator'], 'vote in a voting session');
  const s = existing(state, p.sessionId);
  const selected = s.validators.find((v) => v.agentId === validator);
  if (!selected) {
    throw new DomainError('forbidden', `${validator} was not selected to vote on session ${s.sessionId} (validators: ${listOf(s.validators.map((v) => v.agentId))})`, {
      sessionId: s.sessionId,
      validator,
      validators: s.validators.map((v) => v.agentId),
    });
  }
  if (!(p.confidence >= 0 && p.confidence <= 1)) {
    throw new DomainError('invalid_command', `confidence ${String(p.confidence)} is outside 0..1`, { field: 'confidence', confidence: p.confidence });
  }
  const riskAssessment = p.riskAssessment ?? null;
  const earlier = s.votes.find((v) => v.validator === validator);
  if (earlier) {
    if (earlier.decision === p.decision && earlier.reasoning === p.reasoning && earlier.confidence === p.confidence && earlier.riskAssessment === riskAssessment) return [];
    throw new DomainError('illegal_state', `${validator} already voted ${earlier.decision} on session ${s.sessionId} at ${earlier.votedAt}; a vote is cast once, and a changed mind is not a second vote`, {
      sessionId: s.sessionId,
      validator,
      reason: 'already_voted',
      vote: earlier.decision,
      votedAt: earlier.votedAt,
    });
  }
  refuseClosedToVotes(s, `vote on it`);
  if (ms(context.now) >= ms(s.deadlineAt)) {
    throw new DomainError('illegal_state', `voting session ${s.sessionId} timed out at ${s.deadlineAt}: it is decided on the votes received by then`, {
      sessionId: s.sessionId,
      deadlineAt: s.deadlineAt,
      reason: 'timed_out',
    });
  }
  const received = event('ValidatorVoteReceived', {
    sessionId: s.sessionId,
    validator,
    validatorName: selected.displayName,
    decision: p.decision,
    reasoning: p.reasoning,
    confidence: p.confidence,
    riskAssessment,
    trustScore: selected.trustScore,
    weight: voteWeight(selected.trustScore, p.confidence, s.rules.weightByTrustScore),
    votedAt: context.now,
  });
  const events: VotingSessionEvent[] = [received];
  const after = evolveVotingSession(s, received) as VotingSession;
  if (after.votes.length === after.validators.length) {
    const { recommendation, tally } = recommend(after);
    events.push(
      event('VotingConsensusReached', { sessionId: s.sessionId, consensus: recommendation.consensus, tally, reachedAt: context.now }),
      event('VotingSessionDecided', {
        sessionId: s.sessionId,
        trigger: 'all_voted',
        recommendation,
        tally,
        votingTimeMs: Math.max(0, ms(context.now) - ms(s.createdAt)),
        decidedAt: context.now,
      }),
    );
  }
  return events;
}

function cancel(command: CommandOf<'CancelVotingSession'>, state: VotingSessionState): VotingSessionEvent[] {
  const { payload: p, context } = command;
  requireRole(context, ['executive', 'operator'], 'cancel a voting session');
  const s = existing(state, p.sessionId);
  if (!context.actorRoles.includes('operator') && context.actor !== s.requestingAgent) {
    throw new DomainError('forbidden', `only an operator or the requesting agent ${s.requestingAgent} may cancel voting session ${s.sessionId}`, {
      sessionId: s.sessionId,
      requestingAgent: s.requestingAgent,
      actor: context.actor,
    });
  }
  if (s.status === 'cancelled') return [];
  // A session still waiting for a person (escalated, or created for one) may be withdrawn too: the
  // request is moot (a governed tool call its agent gave up on), and it leaves the operator's inbox.
  if (!(s.awaitingOperator && s.resolution === null)) refuseClosedToVotes(s, 'cancel it');
  return [event('VotingSessionCancelled', { sessionId: s.sessionId, reason: p.reason, cancelledBy: context.actor, votesReceived: s.votes.length, cancelledAt: context.now })];
}

function expire(command: CommandOf<'ExpireVotingSession'>, state: VotingSessionState): VotingSessionEvent[] {
  const { payload: p, context } = command;
  requireRole(context, ['service'], 'expire a voting session');
  const s = existing(state, p.sessionId);
  if (!isOpenForVotes(s.status)) return []; // decided, expired or cancelled already
  if (ms(context.now) < ms(s.deadlineAt)) {
    throw new DomainError('illegal_state', `voting session ${s.sessionId} times out at ${s.deadlineAt}, not yet at ${context.now}`, {
      sessionId: s.sessionId,
      deadlineAt: s.deadlineAt,
      now: context.now,
    });
  }
  const { recommendation, tally } = recommend(s, { expired: true });
  const voted = new Set(s.votes.map((v) => v.validator));
  return [
    event('VotingSessionExpired', {
      sessionId: s.sessionId,
      recommendation,
      tally,
      missing: s.validators.map((v) => v.agentId).filter((id) => !voted.has(id)),
      deadlineAt: s.deadlineAt,
      votingTimeMs: Math.max(0, ms(context.now) - ms(s.createdAt)),
      expiredAt: context.now,
    }),
  ];
}

function decideEscalation(command: CommandOf<'DecideVotingEscalation'>, state: VotingSessionState): VotingSessionEvent[] {
  const { payload: p, context } = command;
  requireRole(context, ['operator'], "decide a voting session's escalation");
  const s = existing(state, p.sessionId);
  if (s.resolution) {
    if (s.resolution.decision === p.decision && s.resolution.reason === p.reason) return [];
    throw new DomainError('illegal_state', `voting session ${s.sessionId} was already decided by ${s.resolution.operator}: ${s.resolution.decision} at ${s.resolution.resolvedAt}`, {
      sessionId: s.sessionId,
      decision: s.resolution.decision,
      operator: s.resolution.operator,
    });
  }
  if (!s.awaitingOperator) {
    const why = isOpenForVotes(s.status) ? 'it is still collecting votes' : s.status === 'cancelled' ? 'it was cancelled' : `its recommendation (${s.recommendation?.decision}) needs no human`;
    throw new DomainError('illegal_state', `voting session ${s.sessionId} is not waiting for an operator: ${why}`, { sessionId: s.sessionId, status: s.status });
  }
  return [
    event('VotingEscalationResolved', {
      sessionId: s.sessionId,
      decision: p.decision,
      operator: context.actor,
      reason: p.reason,
      escalationReason: s.recommendation?.escalationReason ?? null,
      resolvedAt: context.now,
    }),
  ];
}

// ---------------------------------------------------------------------------------------------
// Evolve
// ---------------------------------------------------------------------------------------------

function concluded(s: VotingSession, status: 'decided' | 'expired', d: { recommendation: VotingSession['recommendation'] & object; tally: VotingSession['tally'] & object }, at: string): VotingSession {
  const { recommendation, tally } = d;
  const final = recommendation.decision === 'escalate' ? null : recommendation.decision;
  return {
    ...s,
    status,
    consensus: recommendation.consensus,
    tally,
    recommendation,
    awaitingOperator: recommendation.requiresHitl,
    finalDecision: final,
    concludedAt: at,
    closedAt: recommendation.requiresHitl ? null : at,
    updatedAt: at,
  };
}

export function evolveVotingSession(state: VotingSessionState, e: VotingSessionEvent): VotingSessionState {
  if (e.type === 'VotingSessionCreated') {
    const d = e.data;
    return {
      sessionId: d.sessionId,
      requestId: d.requestId,
      requestingAgent: d.requestingAgent,
      createdBy: d.createdBy,
      actionType: d.actionType,
      riskLevel: d.riskLevel,
      critical: d.critical,
      summary: d.summary,
      criteria: d.criteria,
      rules: d.rules,
      configRevision: d.configRevision,
      validators: d.validators,
      votes: [],
      status: 'pending',
      consensus: null,
      tally: null,
      recommendation: null,
      awaitingOperator: false,
      resolution: null,
      finalDecision: null,
      cancellation: null,
      createdAt: d.createdAt,
      deadlineAt: d.deadlineAt,
      concludedAt: null,
      closedAt: null,
      updatedAt: d.createdAt,
      ...(d.toolCall === undefined ? {} : { toolCall: { ...d.toolCall, releasedAt: null, outcome: null, resultDigest: null, completedAt: null } }),
    };
  }
  if (state.status === 'none') return state;
  const s = state;
  switch (e.type) {
    case 'ValidatorVoteReceived': {
      const { sessionId: _, ...vote } = e.data;
      return { ...s, status: 'voting', votes: [...s.votes, vote], updatedAt: vote.votedAt };
    }
    case 'VotingConsensusReached':
      return { ...s, consensus: e.data.consensus, tally: e.data.tally, updatedAt: e.data.reachedAt };
    case 'VotingSessionDecided':
      return concluded(s, 'decided', e.data, e.data.decidedAt);
    case 'VotingSessionExpired':
      return concluded(s, 'expired', e.data, e.data.expiredAt);
    case 'VotingSessionCancelled': {
      const d = e.data;
      return { ...s, status: 'cancelled', awaitingOperator: false, cancellation: { reason: d.reason, cancelledBy: d.cancelledBy, cancelledAt: d.cancelledAt }, closedAt: d.cancelledAt, updatedAt: d.cancelledAt };
    }
    case 'VotingEscalationResolved': {
      const d = e.data;
      return {
        ...s,
        awaitingOperator: false,
        resolution: { decision: d.decision, operator: d.operator, reason: d.reason, resolvedAt: d.resolvedAt },
        finalDecision: d.decision,
        closedAt: d.resolvedAt,
        updatedAt: d.resolvedAt,
      };
    }
    case 'ToolCallReleased':
      return s.toolCall ? { ...s, toolCall: { ...s.toolCall, releasedAt: e.data.releasedAt }, updatedAt: e.data.releasedAt } : s;
    case 'ToolCallResultRecorded': {
      const d = e.data;
      return s.toolCall ? { ...s, toolCall: { ...s.toolCall, outcome: d.outcome, resultDigest: d.resultDigest, completedAt: d.recordedAt }, updatedAt: d.recordedAt } : s;
    }
  }
}

// ---------------------------------------------------------------------------------------------
// Governed tool calls: an approval bound to one call's digest, released once
// ---------------------------------------------------------------------------------------------

function requireRequester(context: CommandContext, s: VotingSession, toDo: string): void {
  if (context.actor === s.requestingAgent) return;
  throw new DomainError('forbidden', `${context.actor} may not ${toDo}: only the requesting agent ${s.requestingAgent} may`, { actor: context.actor, requestingAgent: s.requestingAgent });
}

function releaseToolCall(command: CommandOf<'ReleaseToolCall'>, state: VotingSessionState): VotingSessionEvent[] {
  const { payload: p, context } = command;
  const s = existing(state, p.sessionId);
  requireRequester(context, s, 'release its tool call');
  const call = s.toolCall;
  if (call === undefined) throw new DomainError('illegal_state', `voting session ${s.sessionId} was not created for a tool call`, { sessionId: s.sessionId });
  if (p.callDigest !== call.callDigest) {
    throw new DomainError('illegal_state', `voting session ${s.sessionId} decided another call (${call.server}/${call.tool}, digest ${call.callDigest}), not ${p.callDigest}`, { sessionId: s.sessionId, callDigest: call.callDigest });
  }
  if (s.finalDecision !== 'approve') {
    throw new DomainError('illegal_state', `voting session ${s.sessionId} has not approved the call (status ${s.status}, final decision ${s.finalDecision ?? 'none'})`, { sessionId: s.sessionId, status: s.status, finalDecision: s.finalDecision });
  }
  if (call.releasedAt !== null) throw new DomainError('illegal_state', `the approval of voting session ${s.sessionId} was already used, at ${call.releasedAt}: an approval releases its call once`, { sessionId: s.sessionId, releasedAt: call.releasedAt });
  return [event('ToolCallReleased', { sessionId: s.sessionId, server: call.server, tool: call.tool, callDigest: call.callDigest, releasedBy: context.actor, releasedAt: context.now })];
}

function recordToolCallResult(command: CommandOf<'RecordToolCallResult'>, state: VotingSessionState): VotingSessionEvent[] {
  const { payload: p, context } = command;
  const s = existing(state, p.sessionId);
  requireRequester(context, s, 'record its tool call\'s result');
  const call = s.toolCall;
  if (call === undefined || call.releasedAt === null) throw new DomainError('illegal_state', `voting session ${s.sessionId} released no tool call`, { sessionId: s.sessionId });
  if (call.outcome !== null) {
    if (call.outcome === p.outcome && call.resultDigest === p.resultDigest) return [];
    throw new DomainError('illegal_state', `the result of voting session ${s.sessionId}'s tool call is recorded already (${call.outcome}, ${call.resultDigest})`, { sessionId: s.sessionId, outcome: call.outcome, resultDigest: call.resultDigest });
  }
  return [event('ToolCallResultRecorded', { sessionId: s.sessionId, callDigest: call.callDigest, outcome: p.outcome, resultDigest: p.resultDigest, recordedBy: context.actor, recordedAt: context.now })];
}

// ---------------------------------------------------------------------------------------------
// The decider
// ---------------------------------------------------------------------------------------------

export const votingSessionDecider: Decider<VotingSessionCommand, VotingSessionEvent, VotingSessionState> = {
  initialState: () => ({ status: 'none' }),
  evolve: evolveVotingSession,
  decide(command, state) {
    switch (command.type) {
      case 'CreateVotingSession':
        return create(command, state);
      case 'CastValidatorVote':
        return castVote(command, state);
      case 'CancelVotingSession':
        return cancel(command, state);
      case 'DecideVotingEscalation':
        return decideEscalation(command, state);
      case 'ExpireVotingSession':
        return expire(command, state);
      case 'ReleaseToolCall':
        return releaseToolCall(command, state);
      case 'RecordToolCallResult':
        return recordToolCallResult(command, state);
    }
  },
};
