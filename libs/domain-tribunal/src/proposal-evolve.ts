// The proposal decider's evolve: how each event changes a proposal.
import type { ObjectionView, ReviewRoundView } from '@agora/contracts';
import { type Proposal, type ProposalEvent, type ProposalState } from './proposal-state.js';

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
      outcome: null,
      ...(d.toolCall === undefined ? {} : { toolCall: { ...d.toolCall, releasedAt: null, outcome: null, resultDigest: null, completedAt: null } }),
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
    case 'OutcomeReported': {
      const d = e.data;
      return { ...s, outcome: { outcome: d.outcome, note: d.note, reporter: d.reporter, reportedAs: d.reportedAs, reportedAt: d.reportedAt }, updatedAt: d.reportedAt };
    }
    case 'ProposalToolCallReleased':
      return s.toolCall ? { ...s, toolCall: { ...s.toolCall, releasedAt: e.data.releasedAt }, updatedAt: e.data.releasedAt } : s;
    case 'ProposalToolCallResultRecorded': {
      const d = e.data;
      return s.toolCall ? { ...s, toolCall: { ...s.toolCall, outcome: d.outcome, resultDigest: d.resultDigest, completedAt: d.recordedAt }, updatedAt: d.recordedAt } : s;
    }
  }
}
