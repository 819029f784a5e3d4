// The proposal decider, the tribunal's review rounds: opening a round, reviews and objections, withdrawing an objection, the round's deadline.
import type { DataOf, PayloadOf, ReviewSubmitted, SubmitReview } from '@agora/contracts';
import { DomainError, requireRole, timeAfter } from '@agora/decider';
import { approveByTribunal, closeRound, Decision, escalate, existing, refuseFinal } from './proposal-guards.js';
import { type CommandOf, event, latestRound, objectionIdOf, openObjections, type ProposalEvent, type ProposalState, satisfiedConstitutions } from './proposal-state.js';
import { sameEvidence } from './proposal-submission.js';
import { selectReviewers } from './selection.js';

export function openReviewRound(command: CommandOf<'OpenReviewRound'>, state: ProposalState): ProposalEvent[] {
  const { payload: p, context } = command;
  requireRole(context, 'service', 'open a review round');
  const s = existing(state, p.proposalId);
  if (s.rounds.some((r) => r.round === p.round)) return []; // opened already
  const next = s.rounds.length + 1;
  if (p.round > next) {
    throw new DomainError('illegal_state', `round ${p.round} cannot open: proposal ${s.proposalId} has had ${s.rounds.length} rounds, the next is ${next}`, {
      proposalId: s.proposalId,
      round: p.round,
      nextRound: next,
    });
  }
  // The request was superseded (the proposal was withdrawn, or escalated for coverage): nothing to open.
  if (s.pendingRound !== p.round) return [];

  const { assignments, uncovered } = selectReviewers(p.candidates, s.rules.requiredConstitutions, [s.proposer]);
  const d = new Decision(s);
  if (assignments.length < s.rules.minConstitutions) {
    // Never a silent round with too little coverage: an operator decides (send_back once reviewers are registered).
    escalate(d, 'insufficient_coverage', p.round, uncovered, context.now);
    return d.events;
  }
  d.emit(
    event('ReviewRoundOpened', {
      proposalId: s.proposalId,
      round: p.round,
      revision: s.revision,
      assignments,
      uncovered,
      openedAt: context.now,
      deadlineAt: timeAfter(context.now, s.rules.roundDeadlineMs),
    }),
  );
  return d.events;
}

const present = (value: string | undefined): value is string => value !== undefined && value.trim().length > 0;

const OBJECTION_PARTS = {
  constraint: 'the violated constitutional constraint (constraint)',
  scenario: 'a concrete scenario in which the proposal fails (scenario)',
  'suggestedRevision or rejectReason': 'a suggested revision or the reason to reject outright (suggestedRevision or rejectReason)',
} as const;

type ReviewPayload = PayloadOf<typeof SubmitReview>;

/** The objection a review carries, or the refusal naming exactly what is missing (the seed's "vague disagreement"). */
function objectionOf(p: ReviewPayload, reviewer: string): DataOf<typeof ReviewSubmitted>['objection'] {
  if (p.verdict === 'approve') {
    const stray = (['constraint', 'scenario', 'suggestedRevision', 'rejectReason'] as const).filter((k) => present(p[k]));
    if (stray.length > 0) {
      throw new DomainError('invalid_command', `an approval carries no objection, yet this one has ${stray.join(', ')}: object instead, or leave them out`, {
        verdict: 'approve',
        unexpected: stray,
      });
    }
    return null;
  }
  const missing: (keyof typeof OBJECTION_PARTS)[] = [];
  if (!present(p.constraint)) missing.push('constraint');
  if (!present(p.scenario)) missing.push('scenario');
  if (!present(p.suggestedRevision) && !present(p.rejectReason)) missing.push('suggestedRevision or rejectReason');
  if (missing.length > 0) {
    throw new DomainError(
      'invalid_command',
      `objection by ${reviewer} lacks ${missing.map((m) => OBJECTION_PARTS[m]).join(' and ')}. An objection must name the violated constraint, a concrete failure scenario, and a suggested revision or the reason to reject outright: vague disagreement blocks nothing`,
      { verdict: 'object', missing },
    );
  }
  return {
    objectionId: objectionIdOf(p.round, p.constitution),
    constraint: p.constraint!.trim(),
    scenario: p.scenario!.trim(),
    suggestedRevision: present(p.suggestedRevision) ? p.suggestedRevision.trim() : null,
    rejectReason: present(p.rejectReason) ? p.rejectReason.trim() : null,
  };
}

export function submitReview(command: CommandOf<'SubmitReview'>, state: ProposalState): ProposalEvent[] {
  const { payload: p, context } = command;
  const reviewer = context.actor;
  requireRole(context, 'reviewer', 'review a proposal');
  const s = existing(state, p.proposalId);
  if (reviewer === s.proposer) {
    throw new DomainError('forbidden', `${reviewer} may not review proposal ${s.proposalId}: it is its own proposal`, { proposalId: s.proposalId, reviewer });
  }
  const round = s.rounds.find((r) => r.round === p.round);
  if (!round) throw new DomainError('not_found', `proposal ${s.proposalId} has no round ${p.round} (it has had ${s.rounds.length})`, { proposalId: s.proposalId, round: p.round });
  const assignment = round.assignments.find((a) => a.reviewer === reviewer);
  if (!assignment) {
    throw new DomainError('forbidden', `${reviewer} is not a reviewer of round ${p.round} of proposal ${s.proposalId} (assigned: ${round.assignments.map((a) => `${a.constitution} ${a.reviewer}`).join(', ')})`, {
      proposalId: s.proposalId,
      round: p.round,
      reviewer,
    });
  }
  if (assignment.constitution !== p.constitution) {
    throw new DomainError('forbidden', `${reviewer} reviews ${assignment.constitution} in round ${p.round} of proposal ${s.proposalId}, not ${p.constitution}`, {
      proposalId: s.proposalId,
      round: p.round,
      assigned: assignment.constitution,
      constitution: p.constitution,
    });
  }
  const objection = objectionOf(p, reviewer);
  const earlier = round.reviews.find((r) => r.constitution === p.constitution);
  if (earlier && !earlier.deemed) {
    const earlierObjection = s.objections.find((o) => o.objectionId === earlier.objectionId);
    const same =
      earlier.verdict === p.verdict &&
      earlier.reasoning === p.reasoning &&
      sameEvidence(earlier.citations, p.citations) &&
      (objection === null
        ? earlierObjection === undefined
        : earlierObjection !== undefined &&
          earlierObjection.constraint === objection.constraint &&
          earlierObjection.scenario === objection.scenario &&
          earlierObjection.suggestedRevision === objection.suggestedRevision &&
          earlierObjection.rejectReason === objection.rejectReason);
    if (same) return [];
    throw new DomainError('illegal_state', `${reviewer} already reviewed round ${p.round} of proposal ${s.proposalId} (${earlier.verdict} at ${earlier.at}); a reviewer reviews once per round`, {
      proposalId: s.proposalId,
      round: p.round,
      verdict: earlier.verdict,
    });
  }
  if (round.status === 'closed') {
    const why = earlier?.deemed ? `; ${reviewer} stayed silent until the deadline, which counted as approval` : '';
    throw new DomainError('illegal_state', `round ${p.round} of proposal ${s.proposalId} is closed (${round.closeReason})${why}`, {
      proposalId: s.proposalId,
      round: p.round,
      closeReason: round.closeReason,
    });
  }
  if (Date.parse(context.now) >= Date.parse(round.deadlineAt)) {
    throw new DomainError('illegal_state', `round ${p.round} of proposal ${s.proposalId} timed out at ${round.deadlineAt}: it closes at expiry, where silence counts as approval`, {
      proposalId: s.proposalId,
      round: p.round,
      deadlineAt: round.deadlineAt,
    });
  }
  const d = new Decision(s).emit(
    event('ReviewSubmitted', {
      proposalId: s.proposalId,
      round: p.round,
      revision: round.revision,
      constitution: p.constitution,
      reviewer,
      verdict: p.verdict,
      reasoning: p.reasoning,
      citations: p.citations.map((e) => ({ ref: e.ref, summary: e.summary })),
      objection,
      submittedAt: context.now,
    }),
  );
  const after = d.state.rounds.find((r) => r.round === p.round)!;
  if (after.assignments.every((a) => after.reviews.some((r) => r.constitution === a.constitution))) closeRound(d, p.round, 'all_reviewed', context.now);
  return d.events;
}

export function withdrawObjection(command: CommandOf<'WithdrawObjection'>, state: ProposalState): ProposalEvent[] {
  const { payload: p, context } = command;
  requireRole(context, 'reviewer', 'withdraw an objection');
  const s = existing(state, p.proposalId);
  const objection = s.objections.find((o) => o.objectionId === p.objectionId);
  if (!objection) throw new DomainError('not_found', `proposal ${s.proposalId} has no objection ${p.objectionId}`, { proposalId: s.proposalId, objectionId: p.objectionId });
  if (objection.reviewer !== context.actor) {
    throw new DomainError('forbidden', `only its author ${objection.reviewer} may withdraw objection ${p.objectionId}; objections are never outvoted`, {
      proposalId: s.proposalId,
      objectionId: p.objectionId,
      author: objection.reviewer,
      actor: context.actor,
    });
  }
  if (objection.status !== 'open') return []; // withdrawn, answered or overridden: it blocks nothing already
  refuseFinal(s, `withdraw objection ${p.objectionId}`);
  const d = new Decision(s).emit(
    event('ObjectionWithdrawn', {
      proposalId: s.proposalId,
      objectionId: objection.objectionId,
      round: objection.round,
      constitution: objection.constitution,
      reviewer: objection.reviewer,
      reason: p.reason,
      withdrawnAt: context.now,
    }),
  );
  // A concluded round that was blocked only by open objections is approved once none is left.
  // An escalated proposal waits for its operator; an open round concludes when it closes.
  const last = latestRound(d.state);
  if (d.state.status === 'review' && d.state.pendingRound === null && last?.status === 'closed' && last.outcome === 'blocked' && openObjections(d.state).length === 0) {
    if (satisfiedConstitutions(d.state, last).length === last.assignments.length) approveByTribunal(d, last, context.now);
  }
  return d.events;
}

export function expireReviewRound(command: CommandOf<'ExpireReviewRound'>, state: ProposalState): ProposalEvent[] {
  const { payload: p, context } = command;
  requireRole(context, 'service', 'expire a review round');
  const s = existing(state, p.proposalId);
  const round = s.rounds.find((r) => r.round === p.round);
  if (!round) throw new DomainError('not_found', `proposal ${s.proposalId} has no round ${p.round}`, { proposalId: s.proposalId, round: p.round });
  if (round.status === 'closed') return [];
  if (Date.parse(context.now) < Date.parse(round.deadlineAt)) {
    throw new DomainError('illegal_state', `round ${p.round} of proposal ${s.proposalId} is due at ${round.deadlineAt}, not yet at ${context.now}`, {
      proposalId: s.proposalId,
      round: p.round,
      deadlineAt: round.deadlineAt,
      now: context.now,
    });
  }
  const d = new Decision(s);
  for (const { constitution, reviewer } of round.assignments) {
    if (round.reviews.some((r) => r.constitution === constitution)) continue;
    d.emit(event('ReviewDeemedApproved', { proposalId: s.proposalId, round: p.round, revision: round.revision, constitution, reviewer, deadlineAt: round.deadlineAt, deemedAt: context.now }));
  }
  closeRound(d, p.round, 'deadline', context.now);
  return d.events;
}
