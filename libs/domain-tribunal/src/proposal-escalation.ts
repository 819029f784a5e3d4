// The proposal decider, after the review: the operator's escalation decision, the execution of a proposal and its outcome.
import { DomainError, requireRole } from '@agora/decider';
import { Decision, existing, requestRound, requireProposer } from './proposal-guards.js';
import { type CommandOf, event, ids, latestRound, openObjections, openRound, type ProposalEvent, type ProposalState, satisfiedConstitutions } from './proposal-state.js';

export function decideEscalation(command: CommandOf<'DecideEscalation'>, state: ProposalState): ProposalEvent[] {
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

export function recordExecution(command: CommandOf<'RecordExecution'>, state: ProposalState): ProposalEvent[] {
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

/**
 * The outcome of an executed proposal, reported by its proposer (as executive) or by an operator:
 * once, final. The same report again (same outcome and note) changes nothing; a different one is
 * refused, so the figures computed from it cannot be rewritten after the fact.
 */
export function reportOutcome(command: CommandOf<'ReportOutcome'>, state: ProposalState): ProposalEvent[] {
  const { payload: p, context } = command;
  const s = existing(state, p.proposalId);
  const asProposer = context.actor === s.proposer && context.actorRoles.includes('executive');
  if (!asProposer && !context.actorRoles.includes('operator')) {
    throw new DomainError('forbidden', `only the proposer ${s.proposer} or an operator may report the outcome of proposal ${s.proposalId}; ${context.actor} is neither`, {
      proposalId: s.proposalId,
      proposer: s.proposer,
      actor: context.actor,
    });
  }
  if (!s.execution) {
    throw new DomainError('illegal_state', `proposal ${s.proposalId} has not been executed: record its execution (RecordExecution) before reporting its outcome`, { proposalId: s.proposalId, status: s.status });
  }
  if (s.outcome) {
    if (s.outcome.outcome === p.outcome && s.outcome.note === p.note) return [];
    throw new DomainError('illegal_state', `the outcome of proposal ${s.proposalId} was already reported (${s.outcome.outcome}) by ${s.outcome.reporter} at ${s.outcome.reportedAt}; a report is final`, {
      proposalId: s.proposalId,
      outcome: s.outcome.outcome,
      reporter: s.outcome.reporter,
      reportedAt: s.outcome.reportedAt,
    });
  }
  return [
    event('OutcomeReported', {
      proposalId: s.proposalId,
      outcome: p.outcome,
      note: p.note,
      reporter: context.actor,
      reportedAs: asProposer ? 'executive' : 'operator',
      revision: s.revision,
      reportedAt: context.now,
    }),
  ];
}
