/**
 * The proposal decider: one aggregate, the stream `proposal-<proposalId>`, holds a proposal, its
 * revisions, its review rounds, the objections and the escalations, so every rule of the tribunal
 * (seed 000) is decided atomically here. Both services append to it: `proposal` (SubmitProposal,
 * ReviseProposal, WithdrawProposal, RecordExecution) and `tribunal` (OpenReviewRound, SubmitReview,
 * WithdrawObjection, ExpireReviewRound, DecideEscalation).
 *
 * Lifecycle
 *
 *   SubmitProposal ─> ProposalSubmitted (rules resolved from the policy) + ReviewRoundRequested
 *   OpenReviewRound (candidates from the registry) ─> ReviewRoundOpened (assignments, deadlineAt)
 *                                                  or ProposalEscalated(insufficient_coverage)
 *   SubmitReview ─> ReviewSubmitted; the last one closes the round
 *   ExpireReviewRound (at deadlineAt) ─> ReviewDeemedApproved per silent reviewer, round closes
 *   round closes ─> ReviewRoundClosed, then
 *       no open objection ─> ProposalApproved
 *       open objections   ─> blocked: the proposer revises (ReviseProposal ─> new round) or the
 *                            authors withdraw them; after `maxRoundsBeforeEscalation` contested
 *                            rounds ─> ProposalEscalated(deadlock)
 *   DecideEscalation (operator) ─> EscalationDecided + ProposalApproved | ProposalRejected |
 *                                  ReviewRoundRequested (send_back)
 *   RecordExecution ─> ExecutionRecorded (+ ProceededDespiteObjections unless approved)
 *
 * Rules worth knowing
 * - Objections are never outvoted: one open objection blocks approval, whatever the others say. An
 *   objection is resolved only by a revision that names it in `answers`, or by its author
 *   withdrawing it (or overridden by an operator approving an escalated proposal).
 * - A constitution is satisfied in a round by an approval, a deemed approval (silence at the
 *   deadline), or an objection its author withdrew.
 * - A round is contested when it closes without approval while objections were raised in it or
 *   remain open (a round superseded by a revision after drawing objections counts: revising on
 *   every objection cannot loop forever). Contested rounds count towards escalation; an operator's
 *   send_back resets the count.
 * - Roles are checked here as well as by the service (context.actorRoles): executive to propose,
 *   reviewer to review, operator to open or expire rounds and to decide escalations.
 * - Time comes from context.now only. A repeated command that is already satisfied returns [].
 */
import type {
  DataOf,
  DecideEscalation,
  EscalationDecided,
  ExecutionRecorded,
  ExpireReviewRound,
  ObjectionView,
  ObjectionWithdrawn,
  OpenReviewRound,
  PayloadOf,
  ProceededDespiteObjections,
  ProposalApproved,
  ProposalEscalated,
  ProposalRecord,
  ProposalRejected,
  ProposalRevised,
  ProposalSubmitted,
  ProposalWithdrawn,
  RecordExecution,
  ReviewDeemedApproved,
  ReviewRoundClosed,
  ReviewRoundOpened,
  ReviewRoundRequested,
  ReviewSubmitted,
  ReviseProposal,
  Role,
  ReviewRoundView,
  SubmitProposal,
  SubmitReview,
  WithdrawObjection,
  WithdrawProposal,
} from '@agora/contracts';
import { DomainError, type Command, type CommandContext, type Decider, type DomainEvent } from '@agora/decider';
import { DEFAULT_TRIBUNAL_POLICY, rulesFor, type TribunalPolicy } from './policy.js';
import { selectReviewers } from './selection.js';

export type ProposalEvent =
  | DomainEvent<'ProposalSubmitted', DataOf<typeof ProposalSubmitted>>
  | DomainEvent<'ProposalRevised', DataOf<typeof ProposalRevised>>
  | DomainEvent<'ProposalWithdrawn', DataOf<typeof ProposalWithdrawn>>
  | DomainEvent<'ReviewRoundRequested', DataOf<typeof ReviewRoundRequested>>
  | DomainEvent<'ReviewRoundOpened', DataOf<typeof ReviewRoundOpened>>
  | DomainEvent<'ReviewSubmitted', DataOf<typeof ReviewSubmitted>>
  | DomainEvent<'ObjectionWithdrawn', DataOf<typeof ObjectionWithdrawn>>
  | DomainEvent<'ReviewDeemedApproved', DataOf<typeof ReviewDeemedApproved>>
  | DomainEvent<'ReviewRoundClosed', DataOf<typeof ReviewRoundClosed>>
  | DomainEvent<'ProposalApproved', DataOf<typeof ProposalApproved>>
  | DomainEvent<'ProposalRejected', DataOf<typeof ProposalRejected>>
  | DomainEvent<'ProposalEscalated', DataOf<typeof ProposalEscalated>>
  | DomainEvent<'EscalationDecided', DataOf<typeof EscalationDecided>>
  | DomainEvent<'ExecutionRecorded', DataOf<typeof ExecutionRecorded>>
  | DomainEvent<'ProceededDespiteObjections', DataOf<typeof ProceededDespiteObjections>>;

export type ProposalCommand =
  | Command<'SubmitProposal', PayloadOf<typeof SubmitProposal>>
  | Command<'ReviseProposal', PayloadOf<typeof ReviseProposal>>
  | Command<'WithdrawProposal', PayloadOf<typeof WithdrawProposal>>
  | Command<'RecordExecution', PayloadOf<typeof RecordExecution>>
  | Command<'OpenReviewRound', PayloadOf<typeof OpenReviewRound>>
  | Command<'SubmitReview', PayloadOf<typeof SubmitReview>>
  | Command<'WithdrawObjection', PayloadOf<typeof WithdrawObjection>>
  | Command<'ExpireReviewRound', PayloadOf<typeof ExpireReviewRound>>
  | Command<'DecideEscalation', PayloadOf<typeof DecideEscalation>>;

/** A proposal with its whole review history (the ProposalRecord contract: a read model can be this state). */
export type Proposal = ProposalRecord;
export type ProposalState = { status: 'unsubmitted' } | Proposal;

type EventType = ProposalEvent['type'];
type EventOf<T extends EventType> = Extract<ProposalEvent, { type: T }>;
type CommandOf<T extends ProposalCommand['type']> = Extract<ProposalCommand, { type: T }>;

const event = <T extends EventType>(type: T, data: EventOf<T>['data']): EventOf<T> => ({ type, data }) as EventOf<T>;

// ---------------------------------------------------------------------------------------------
// Reading the state
// ---------------------------------------------------------------------------------------------

export const isFinal = (status: string): boolean => status === 'approved' || status === 'rejected' || status === 'withdrawn';
export const openObjections = (p: Proposal): ObjectionView[] => p.objections.filter((o) => o.status === 'open');
export const openRound = (p: Proposal): ReviewRoundView | undefined => p.rounds.find((r) => r.status === 'open');
export const latestRound = (p: Proposal): ReviewRoundView | undefined => p.rounds.at(-1);

/** Assigned constitutions satisfied in a round: approved, deemed approved, or objected and withdrawn by the author. */
export function satisfiedConstitutions(p: Proposal, round: ReviewRoundView): string[] {
  return round.assignments
    .filter(({ constitution }) => {
      const review = round.reviews.find((r) => r.constitution === constitution);
      if (!review) return false;
      if (review.verdict === 'approve') return true;
      return p.objections.find((o) => o.objectionId === review.objectionId)?.status === 'withdrawn';
    })
    .map((a) => a.constitution);
}

/** `r<round>-<constitution>` */
export const objectionIdOf = (round: number, constitution: string): string => `r${round}-${constitution}`;

const ids = (objections: readonly ObjectionView[]) => objections.map((o) => o.objectionId);
const listOf = (items: readonly string[]) => (items.length === 0 ? 'none' : items.join(', '));

function timeAfter(now: string, ms: number): string {
  const start = Date.parse(now);
  if (Number.isNaN(start)) throw new DomainError('invalid_command', `command time ${JSON.stringify(now)} is not an ISO-8601 time`, { now });
  return new Date(start + ms).toISOString();
}

// ---------------------------------------------------------------------------------------------
// Guards
// ---------------------------------------------------------------------------------------------

function requireRole(context: CommandContext, role: Role, toDo: string): void {
  if (context.actorRoles.includes(role)) return;
  throw new DomainError('forbidden', `${context.actor} may not ${toDo}: that needs the role ${role}, and ${context.actor} has ${listOf(context.actorRoles)}`, {
    actor: context.actor,
    requiredRole: role,
    actorRoles: [...context.actorRoles],
  });
}

function existing(state: ProposalState, proposalId: string): Proposal {
  if (state.status === 'unsubmitted') throw new DomainError('not_found', `proposal ${proposalId} does not exist`, { proposalId });
  return state;
}

function requireProposer(p: Proposal, context: CommandContext, toDo: string): void {
  if (context.actor === p.proposer) return;
  throw new DomainError('forbidden', `only the proposer ${p.proposer} may ${toDo} proposal ${p.proposalId}; ${context.actor} is not its proposer`, {
    proposalId: p.proposalId,
    proposer: p.proposer,
    actor: context.actor,
  });
}

function refuseFinal(p: Proposal, toDo: string): void {
  if (!isFinal(p.status)) return;
  throw new DomainError('illegal_state', `cannot ${toDo}: proposal ${p.proposalId} is ${p.status}`, { proposalId: p.proposalId, status: p.status });
}

function refuseEscalated(p: Proposal, toDo: string): void {
  if (p.status !== 'escalated') return;
  const pending = p.escalations.at(-1);
  throw new DomainError('illegal_state', `cannot ${toDo}: proposal ${p.proposalId} is escalated and waits for an operator's decision (escalation ${pending?.escalation ?? '?'})`, {
    proposalId: p.proposalId,
    status: p.status,
    escalation: pending?.escalation,
  });
}

// ---------------------------------------------------------------------------------------------
// Building a decision: events are applied to a working copy as they are emitted, so that later
// rules see the effect of earlier events of the same command.
// ---------------------------------------------------------------------------------------------

class Decision {
  readonly events: ProposalEvent[] = [];
  constructor(public state: Proposal) {}
  emit(e: ProposalEvent): this {
    this.events.push(e);
    this.state = evolveProposal(this.state, e) as Proposal;
    return this;
  }
}

function requestRound(d: Decision, reason: DataOf<typeof ReviewRoundRequested>['reason'], now: string): void {
  const s = d.state;
  d.emit(
    event('ReviewRoundRequested', {
      proposalId: s.proposalId,
      round: s.rounds.length + 1,
      revision: s.revision,
      reason,
      requiredConstitutions: [...s.rules.requiredConstitutions],
      exclude: [s.proposer],
      requestedAt: now,
    }),
  );
}

function escalate(d: Decision, reason: DataOf<typeof ProposalEscalated>['reason'], round: number, uncovered: string[], now: string): void {
  const s = d.state;
  d.emit(
    event('ProposalEscalated', {
      proposalId: s.proposalId,
      escalation: s.escalations.length + 1,
      reason,
      revision: s.revision,
      round,
      contestedRounds: s.contestedRounds,
      openObjections: ids(openObjections(s)),
      uncovered,
      escalatedAt: now,
    }),
  );
}

function approveByTribunal(d: Decision, round: ReviewRoundView, now: string): void {
  const s = d.state;
  d.emit(
    event('ProposalApproved', {
      proposalId: s.proposalId,
      revision: s.revision,
      round: round.round,
      decidedBy: 'tribunal',
      operator: null,
      satisfied: satisfiedConstitutions(s, round),
      deemed: round.reviews.filter((r) => r.deemed).map((r) => r.constitution),
      overriddenObjections: [],
      approvedAt: now,
    }),
  );
}

/** Closes a round and draws its consequence: approval, nothing (blocked), or escalation after too many contested rounds. */
function closeRound(d: Decision, roundNumber: number, reason: DataOf<typeof ReviewRoundClosed>['reason'], now: string): void {
  const s = d.state;
  const round = s.rounds.find((r) => r.round === roundNumber)!;
  const open = ids(openObjections(s));
  const raised = s.objections.filter((o) => o.round === roundNumber).map((o) => o.objectionId);
  const satisfied = satisfiedConstitutions(s, round);
  const outcome =
    reason === 'revised' ? 'superseded' : reason === 'withdrawn' ? 'withdrawn' : open.length === 0 && satisfied.length === round.assignments.length ? 'approved' : 'blocked';
  const contested = (outcome === 'blocked' || outcome === 'superseded') && (raised.length > 0 || open.length > 0);
  d.emit(
    event('ReviewRoundClosed', {
      proposalId: s.proposalId,
      round: roundNumber,
      revision: round.revision,
      reason,
      outcome,
      satisfied,
      deemed: round.reviews.filter((r) => r.deemed).map((r) => r.constitution),
      raisedObjections: raised,
      openObjections: open,
      contested,
      closedAt: now,
    }),
  );
  if (outcome === 'approved') approveByTribunal(d, d.state.rounds.find((r) => r.round === roundNumber)!, now);
  else if (contested && d.state.contestedRounds >= d.state.rules.maxRoundsBeforeEscalation) escalate(d, 'deadlock', roundNumber, [], now);
}

// ---------------------------------------------------------------------------------------------
// Commands
// ---------------------------------------------------------------------------------------------

const sameEvidence = (a: readonly { ref: string; summary: string }[], b: readonly { ref: string; summary: string }[]) =>
  a.length === b.length && a.every((e, i) => e.ref === b[i]!.ref && e.summary === b[i]!.summary);

function submit(command: CommandOf<'SubmitProposal'>, state: ProposalState, policy: TribunalPolicy): ProposalEvent[] {
  const { payload: p, context } = command;
  requireRole(context, 'executive', 'submit a proposal');
  if (state.status !== 'unsubmitted') {
    const first = state.revisions[0]!;
    const same =
      state.proposer === context.actor &&
      state.proposalClass === p.proposalClass &&
      first.title === p.title &&
      first.body === p.body &&
      first.problem === p.problem &&
      sameEvidence(first.evidence, p.evidence) &&
      (p.reviewDeadlineMs === undefined || p.reviewDeadlineMs === state.rules.roundDeadlineMs);
    if (same) return [];
    throw new DomainError('illegal_state', `proposal ${p.proposalId} already exists (submitted by ${state.proposer} at ${state.submittedAt}); choose another id`, {
      proposalId: p.proposalId,
      proposer: state.proposer,
    });
  }
  const rules = rulesFor(policy, { proposalClass: p.proposalClass, reviewDeadlineMs: p.reviewDeadlineMs });
  const submitted = event('ProposalSubmitted', {
    proposalId: p.proposalId,
    proposer: context.actor,
    title: p.title,
    body: p.body,
    problem: p.problem,
    evidence: p.evidence.map((e) => ({ ref: e.ref, summary: e.summary })),
    proposalClass: p.proposalClass,
    rules,
    submittedAt: context.now,
  });
  const d = new Decision(evolveProposal({ status: 'unsubmitted' }, submitted) as Proposal);
  d.events.push(submitted); // applied just above: the decision starts from the new proposal
  requestRound(d, 'submitted', context.now);
  return d.events;
}

function revise(command: CommandOf<'ReviseProposal'>, state: ProposalState): ProposalEvent[] {
  const { payload: p, context } = command;
  requireRole(context, 'executive', 'revise a proposal');
  const s = existing(state, p.proposalId);
  requireProposer(s, context, 'revise');
  const content = { title: p.title ?? s.title, body: p.body, problem: p.problem ?? s.problem, evidence: p.evidence ?? s.evidence };
  const answers = [...new Set(p.answers)];
  const unchanged = content.title === s.title && content.body === s.body && content.problem === s.problem && sameEvidence(content.evidence, s.evidence);
  if (unchanged) {
    // The same revision again: it is already recorded (as the latest revision, with these answers).
    const latest = s.revisions.at(-1)!;
    if (s.revision > 1 && answers.every((id) => latest.answers.includes(id))) return [];
    throw new DomainError('invalid_command', `the revision changes nothing: title, body, problem and evidence are those of revision ${s.revision}`, {
      proposalId: s.proposalId,
      revision: s.revision,
    });
  }
  refuseFinal(s, 'revise');
  refuseEscalated(s, 'revise');
  const unknown = answers.filter((id) => !s.objections.some((o) => o.objectionId === id));
  if (unknown.length > 0) {
    throw new DomainError('invalid_command', `the revision answers objections that do not exist: ${unknown.join(', ')}`, { proposalId: s.proposalId, unknownObjections: unknown });
  }
  const notOpen = s.objections.filter((o) => answers.includes(o.objectionId) && o.status !== 'open');
  if (notOpen.length > 0) {
    throw new DomainError('illegal_state', `the revision answers objections that are no longer open: ${notOpen.map((o) => `${o.objectionId} (${o.status})`).join(', ')}`, {
      proposalId: s.proposalId,
      notOpen: notOpen.map((o) => ({ objectionId: o.objectionId, status: o.status })),
    });
  }
  const d = new Decision(s).emit(
    event('ProposalRevised', {
      proposalId: s.proposalId,
      revision: s.revision + 1,
      title: content.title,
      body: content.body,
      problem: content.problem,
      evidence: content.evidence.map((e) => ({ ref: e.ref, summary: e.summary })),
      answers,
      revisedAt: context.now,
    }),
  );
  const current = openRound(d.state);
  if (current) closeRound(d, current.round, 'revised', context.now);
  // A round already requested and not opened yet will review this revision: no second request.
  if (d.state.status === 'review' && d.state.pendingRound === null) requestRound(d, 'revised', context.now);
  return d.events;
}

function withdraw(command: CommandOf<'WithdrawProposal'>, state: ProposalState): ProposalEvent[] {
  const { payload: p, context } = command;
  requireRole(context, 'executive', 'withdraw a proposal');
  const s = existing(state, p.proposalId);
  requireProposer(s, context, 'withdraw');
  if (s.status === 'withdrawn') return [];
  refuseFinal(s, 'withdraw it');
  const d = new Decision(s).emit(event('ProposalWithdrawn', { proposalId: s.proposalId, revision: s.revision, reason: p.reason, withdrawnAt: context.now }));
  const current = openRound(d.state);
  if (current) closeRound(d, current.round, 'withdrawn', context.now);
  return d.events;
}

function recordExecution(command: CommandOf<'RecordExecution'>, state: ProposalState): ProposalEvent[] {
  const { payload: p, context } = command;
  requireRole(context, 'executive', 'record the execution of a proposal');
  const s = existing(state, p.proposalId);
  requireProposer(s, context, 'record the execution of');
  const ref = p.ref ?? null;
  if (s.execution) {
    if (s.execution.summary === p.summary && s.execution.ref === ref) return [];
    throw new DomainError('illegal_state', `the execution of proposal ${s.proposalId} was already recorded at ${s.execution.recordedAt}`, {
      proposalId: s.proposalId,
      recordedAt: s.execution.recordedAt,
    });
  }
  const events: ProposalEvent[] = [
    event('ExecutionRecorded', { proposalId: s.proposalId, executive: context.actor, revision: s.revision, status: s.status, summary: p.summary, ref, recordedAt: context.now }),
  ];
  if (s.status !== 'approved') {
    const current = openRound(s);
    events.push(
      event('ProceededDespiteObjections', {
        proposalId: s.proposalId,
        executive: context.actor,
        revision: s.revision,
        status: s.status,
        round: latestRound(s)?.round ?? null,
        openObjections: openObjections(s).map((o) => ({ objectionId: o.objectionId, constitution: o.constitution, reviewer: o.reviewer, constraint: o.constraint })),
        unheard: current ? current.assignments.filter((a) => !current.reviews.some((r) => r.constitution === a.constitution)).map((a) => a.constitution) : [],
        recordedAt: context.now,
      }),
    );
  }
  return events;
}

function openReviewRound(command: CommandOf<'OpenReviewRound'>, state: ProposalState): ProposalEvent[] {
  const { payload: p, context } = command;
  requireRole(context, 'operator', 'open a review round');
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

function submitReview(command: CommandOf<'SubmitReview'>, state: ProposalState): ProposalEvent[] {
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

function withdrawObjection(command: CommandOf<'WithdrawObjection'>, state: ProposalState): ProposalEvent[] {
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

function expireReviewRound(command: CommandOf<'ExpireReviewRound'>, state: ProposalState): ProposalEvent[] {
  const { payload: p, context } = command;
  requireRole(context, 'operator', 'expire a review round');
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

function decideEscalation(command: CommandOf<'DecideEscalation'>, state: ProposalState): ProposalEvent[] {
  const { payload: p, context } = command;
  requireRole(context, 'operator', 'decide an escalation');
  const s = existing(state, p.proposalId);
  const escalation = s.escalations.find((e) => e.escalation === p.escalation);
  if (!escalation) {
    throw new DomainError('not_found', `proposal ${s.proposalId} has no escalation ${p.escalation} (it has had ${s.escalations.length})`, { proposalId: s.proposalId, escalation: p.escalation });
  }
  if (escalation.decision !== null) {
    if (escalation.decision === p.decision && escalation.decisionReason === p.reason) return [];
    throw new DomainError('illegal_state', `escalation ${p.escalation} of proposal ${s.proposalId} was already decided: ${escalation.decision} by ${escalation.operator} at ${escalation.decidedAt}`, {
      proposalId: s.proposalId,
      escalation: p.escalation,
      decision: escalation.decision,
    });
  }
  if (s.status !== 'escalated') {
    throw new DomainError('illegal_state', `proposal ${s.proposalId} is ${s.status}: escalation ${p.escalation} can no longer be decided`, { proposalId: s.proposalId, status: s.status });
  }
  const open = ids(openObjections(s));
  const d = new Decision(s).emit(
    event('EscalationDecided', { proposalId: s.proposalId, escalation: p.escalation, decision: p.decision, operator: context.actor, reason: p.reason, openObjections: open, decidedAt: context.now }),
  );
  switch (p.decision) {
    case 'approve': {
      const last = latestRound(d.state);
      d.emit(
        event('ProposalApproved', {
          proposalId: s.proposalId,
          revision: s.revision,
          round: last?.round ?? null,
          decidedBy: 'operator',
          operator: context.actor,
          satisfied: last ? satisfiedConstitutions(d.state, last) : [],
          deemed: last ? last.reviews.filter((r) => r.deemed).map((r) => r.constitution) : [],
          overriddenObjections: open,
          approvedAt: context.now,
        }),
      );
      break;
    }
    case 'reject':
      d.emit(event('ProposalRejected', { proposalId: s.proposalId, revision: s.revision, escalation: p.escalation, operator: context.actor, reason: p.reason, rejectedAt: context.now }));
      break;
    case 'send_back':
      requestRound(d, 'sent_back', context.now);
      break;
  }
  return d.events;
}

// ---------------------------------------------------------------------------------------------
// Evolve
// ---------------------------------------------------------------------------------------------

const mapRound = (p: Proposal, round: number, change: (r: ReviewRoundView) => ReviewRoundView): ReviewRoundView[] => p.rounds.map((r) => (r.round === round ? change(r) : r));
const mapObjection = (p: Proposal, id: string, change: (o: ObjectionView) => ObjectionView): ObjectionView[] => p.objections.map((o) => (o.objectionId === id ? change(o) : o));

export function evolveProposal(state: ProposalState, e: ProposalEvent): ProposalState {
  if (e.type === 'ProposalSubmitted') {
    const d = e.data;
    return {
      proposalId: d.proposalId,
      proposer: d.proposer,
      status: 'review',
      proposalClass: d.proposalClass,
      rules: d.rules,
      title: d.title,
      body: d.body,
      problem: d.problem,
      evidence: d.evidence,
      revision: 1,
      revisions: [{ revision: 1, title: d.title, body: d.body, problem: d.problem, evidence: d.evidence, answers: [], at: d.submittedAt }],
      pendingRound: null,
      rounds: [],
      contestedRounds: 0,
      objections: [],
      escalations: [],
      execution: null,
      submittedAt: d.submittedAt,
      updatedAt: d.submittedAt,
    };
  }
  if (state.status === 'unsubmitted') return state;
  const s = state;
  switch (e.type) {
    case 'ProposalRevised': {
      const d = e.data;
      return {
        ...s,
        title: d.title,
        body: d.body,
        problem: d.problem,
        evidence: d.evidence,
        revision: d.revision,
        revisions: [...s.revisions, { revision: d.revision, title: d.title, body: d.body, problem: d.problem, evidence: d.evidence, answers: d.answers, at: d.revisedAt }],
        objections: s.objections.map((o) =>
          o.status === 'open' && d.answers.includes(o.objectionId) ? { ...o, status: 'answered', resolvedAt: d.revisedAt, answeredByRevision: d.revision } : o,
        ),
        updatedAt: d.revisedAt,
      };
    }
    case 'ProposalWithdrawn':
      return { ...s, status: 'withdrawn', pendingRound: null, updatedAt: e.data.withdrawnAt };
    case 'ReviewRoundRequested':
      return { ...s, pendingRound: e.data.round, updatedAt: e.data.requestedAt };
    case 'ReviewRoundOpened': {
      const d = e.data;
      const round: ReviewRoundView = {
        round: d.round,
        revision: d.revision,
        status: 'open',
        assignments: d.assignments,
        uncovered: d.uncovered,
        reviews: [],
        openedAt: d.openedAt,
        deadlineAt: d.deadlineAt,
        closedAt: null,
        closeReason: null,
        outcome: null,
        contested: false,
      };
      return { ...s, rounds: [...s.rounds, round], pendingRound: null, updatedAt: d.openedAt };
    }
    case 'ReviewSubmitted': {
      const d = e.data;
      const review = {
        constitution: d.constitution,
        reviewer: d.reviewer,
        verdict: d.verdict,
        deemed: false,
        reasoning: d.reasoning,
        citations: d.citations,
        objectionId: d.objection?.objectionId ?? null,
        at: d.submittedAt,
      };
      const objections: ObjectionView[] = d.objection
        ? [
            ...s.objections,
            {
              ...d.objection,
              round: d.round,
              revision: d.revision,
              constitution: d.constitution,
              reviewer: d.reviewer,
              status: 'open',
              raisedAt: d.submittedAt,
              resolvedAt: null,
              answeredByRevision: null,
              withdrawalReason: null,
            },
          ]
        : s.objections;
      return { ...s, rounds: mapRound(s, d.round, (r) => ({ ...r, reviews: [...r.reviews, review] })), objections, updatedAt: d.submittedAt };
    }
    case 'ObjectionWithdrawn': {
      const d = e.data;
      return { ...s, objections: mapObjection(s, d.objectionId, (o) => ({ ...o, status: 'withdrawn', resolvedAt: d.withdrawnAt, withdrawalReason: d.reason })), updatedAt: d.withdrawnAt };
    }
    case 'ReviewDeemedApproved': {
      const d = e.data;
      const review = { constitution: d.constitution, reviewer: d.reviewer, verdict: 'approve' as const, deemed: true, reasoning: null, citations: [], objectionId: null, at: d.deemedAt };
      return { ...s, rounds: mapRound(s, d.round, (r) => ({ ...r, reviews: [...r.reviews, review] })), updatedAt: d.deemedAt };
    }
    case 'ReviewRoundClosed': {
      const d = e.data;
      return {
        ...s,
        rounds: mapRound(s, d.round, (r) => ({ ...r, status: 'closed', closedAt: d.closedAt, closeReason: d.reason, outcome: d.outcome, contested: d.contested })),
        contestedRounds: s.contestedRounds + (d.contested ? 1 : 0),
        updatedAt: d.closedAt,
      };
    }
    case 'ProposalApproved': {
      const d = e.data;
      const overridden = new Set(d.overriddenObjections);
      return {
        ...s,
        status: 'approved',
        pendingRound: null,
        objections: s.objections.map((o) => (overridden.has(o.objectionId) && o.status === 'open' ? { ...o, status: 'overridden', resolvedAt: d.approvedAt } : o)),
        updatedAt: d.approvedAt,
      };
    }
    case 'ProposalRejected':
      return { ...s, status: 'rejected', pendingRound: null, updatedAt: e.data.rejectedAt };
    case 'ProposalEscalated': {
      const d = e.data;
      return {
        ...s,
        status: 'escalated',
        pendingRound: null,
        escalations: [
          ...s.escalations,
          {
            escalation: d.escalation,
            reason: d.reason,
            round: d.round,
            revision: d.revision,
            openObjections: d.openObjections,
            uncovered: d.uncovered,
            escalatedAt: d.escalatedAt,
            decision: null,
            decisionReason: null,
            operator: null,
            decidedAt: null,
          },
        ],
        updatedAt: d.escalatedAt,
      };
    }
    case 'EscalationDecided': {
      const d = e.data;
      const escalations = s.escalations.map((x) => (x.escalation === d.escalation ? { ...x, decision: d.decision, decisionReason: d.reason, operator: d.operator, decidedAt: d.decidedAt } : x));
      // send_back: back to review with a fresh budget of contested rounds; approve and reject are followed by their own event.
      return d.decision === 'send_back' ? { ...s, status: 'review', contestedRounds: 0, escalations, updatedAt: d.decidedAt } : { ...s, escalations, updatedAt: d.decidedAt };
    }
    case 'ExecutionRecorded': {
      const d = e.data;
      return {
        ...s,
        execution: { executive: d.executive, summary: d.summary, ref: d.ref, statusAtExecution: d.status, despiteObjections: d.status !== 'approved', recordedAt: d.recordedAt },
        updatedAt: d.recordedAt,
      };
    }
    case 'ProceededDespiteObjections':
      return s.execution ? { ...s, execution: { ...s.execution, despiteObjections: true }, updatedAt: e.data.recordedAt } : s;
  }
}

// ---------------------------------------------------------------------------------------------
// The decider
// ---------------------------------------------------------------------------------------------

/**
 * The proposal decider under a tribunal policy. The policy is read only by SubmitProposal, which
 * records the resolved rules in ProposalSubmitted; every other decision reads the proposal's own rules.
 */
export function createProposalDecider(policy: TribunalPolicy = DEFAULT_TRIBUNAL_POLICY): Decider<ProposalCommand, ProposalEvent, ProposalState> {
  return {
    initialState: () => ({ status: 'unsubmitted' }),
    evolve: evolveProposal,
    decide(command, state) {
      switch (command.type) {
        case 'SubmitProposal':
          return submit(command, state, policy);
        case 'ReviseProposal':
          return revise(command, state);
        case 'WithdrawProposal':
          return withdraw(command, state);
        case 'RecordExecution':
          return recordExecution(command, state);
        case 'OpenReviewRound':
          return openReviewRound(command, state);
        case 'SubmitReview':
          return submitReview(command, state);
        case 'WithdrawObjection':
          return withdrawObjection(command, state);
        case 'ExpireReviewRound':
          return expireReviewRound(command, state);
        case 'DecideEscalation':
          return decideEscalation(command, state);
      }
    },
  };
}

/** The proposal decider under the default tribunal policy. */
export const proposalDecider = createProposalDecider();
