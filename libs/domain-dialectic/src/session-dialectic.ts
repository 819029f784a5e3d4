// The recovery session decider, opening and dialectic: OpenRecovery, the thesis, antithesis and synthesis rounds, and the signatures.
import type { DialecticMessageView } from '@agora/contracts';
import { DomainError, requireRole, timeAfter } from '@agora/decider';
import { checkHardLimits } from './conditions.js';
import { converged } from './convergence.js';
import { recoverySessionId } from '@agora/domain-common';
import type { DialecticPolicy } from './policy.js';
import { requireValidSignature, resolutionDigest } from './resolution.js';
import { evolveSession } from './session-evolve.js';
import { Decision, escalate, existing, payloadFor, refuseClosed, refuseLate, requireParty, requireStatus, resolve, samePosition, selectionFor } from './session-guards.js';
import { type CommandOf, type DialecticEvent, type DialecticSession, type DialecticSessionState, event, partyId, phaseDeadline, turnOf } from './session-state.js';

// ---------------------------------------------------------------------------------------------
// Commands
// ---------------------------------------------------------------------------------------------

export function open(command: CommandOf<'OpenRecovery'>, state: DialecticSessionState, policy: DialecticPolicy): DialecticEvent[] {
  const { payload: p, context } = command;
  requireRole(context, 'service', 'open a recovery session');
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

export function thesis(command: CommandOf<'SubmitThesis'>, state: DialecticSessionState): DialecticEvent[] {
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

export function antithesis(command: CommandOf<'SubmitAntithesis'>, state: DialecticSessionState): DialecticEvent[] {
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

export function synthesis(command: CommandOf<'SubmitSynthesis'>, state: DialecticSessionState): DialecticEvent[] {
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

export function signResolution(command: CommandOf<'SignResolution'>, state: DialecticSessionState): DialecticEvent[] {
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
