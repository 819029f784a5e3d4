// Tribunal contracts: the events of a proposal stream.
import { z } from 'zod';
import { AgentId, EntityId, Timestamp } from '../common.js';
import { defineEvent } from '../define.js';
import { Constitution } from '../registry/agents.js';
import { Sha256Hex, ToolCallBinding, ToolCallOutcome } from '../voting/vocabulary.js';
import { Evidence, ObjectionId, PROPOSAL_CATEGORY, ProposalClass, ProposalEscalationDecision, ProposalEscalationReason, ProposalOutcome, ProposalRevision, ProposalStatus, ReviewAssignment, ReviewRoundCloseReason, ReviewRoundNumber, ReviewRoundOutcome, ReviewRules, ReviewVerdict } from './policy.js';

// ---------------------------------------------------------------------------------------------
// Events (category `proposal`, stream `proposal-<proposalId>`)
// ---------------------------------------------------------------------------------------------

const base = { proposalId: EntityId };

export const ProposalSubmitted = defineEvent({
  type: 'ProposalSubmitted',
  category: PROPOSAL_CATEGORY,
  summary: 'An executive submitted a proposal (revision 1); `rules` are the tribunal rules that decide it',
  data: z.object({
    ...base,
    proposer: AgentId,
    title: z.string(),
    body: z.string(),
    problem: z.string(),
    evidence: z.array(Evidence),
    proposalClass: ProposalClass,
    rules: ReviewRules,
    toolCall: ToolCallBinding.optional().describe('A governed tool call: the exact call this proposal decides'),
    submittedAt: Timestamp,
  }),
});

export const ProposalRevised = defineEvent({
  type: 'ProposalRevised',
  category: PROPOSAL_CATEGORY,
  summary: 'The proposer revised the proposal (full new content); `answers` are the objections it resolves',
  data: z.object({
    ...base,
    revision: ProposalRevision,
    title: z.string(),
    body: z.string(),
    problem: z.string(),
    evidence: z.array(Evidence),
    answers: z.array(ObjectionId),
    revisedAt: Timestamp,
  }),
});

export const ProposalWithdrawn = defineEvent({
  type: 'ProposalWithdrawn',
  category: PROPOSAL_CATEGORY,
  summary: 'The proposer withdrew the proposal (final)',
  data: z.object({ ...base, revision: ProposalRevision, reason: z.string(), withdrawnAt: Timestamp }),
});

export const ReviewRoundRequested = defineEvent({
  type: 'ReviewRoundRequested',
  category: PROPOSAL_CATEGORY,
  summary: 'A review round is needed (after submission, revision or an operator sending it back): the tribunal service answers with OpenReviewRound',
  data: z.object({
    ...base,
    round: ReviewRoundNumber,
    revision: ProposalRevision,
    reason: z.enum(['submitted', 'revised', 'sent_back']),
    requiredConstitutions: z.array(Constitution),
    exclude: z.array(AgentId).describe('Agents that may not review it (the proposer)'),
    requestedAt: Timestamp,
  }),
});

export const ReviewRoundOpened = defineEvent({
  type: 'ReviewRoundOpened',
  category: PROPOSAL_CATEGORY,
  summary: 'A review round opened with the selected reviewers, one per constitution; `deadlineAt` is its time-box (a replay never re-selects)',
  data: z.object({
    ...base,
    round: ReviewRoundNumber,
    revision: ProposalRevision,
    assignments: z.array(ReviewAssignment),
    uncovered: z.array(Constitution).describe('Required constitutions no eligible reviewer could cover in this round'),
    openedAt: Timestamp,
    deadlineAt: Timestamp,
  }),
});

export const ObjectionDetails = z.object({
  objectionId: ObjectionId,
  constraint: z.string(),
  scenario: z.string(),
  suggestedRevision: z.string().nullable(),
  rejectReason: z.string().nullable(),
});

export const ReviewSubmitted = defineEvent({
  type: 'ReviewSubmitted',
  category: PROPOSAL_CATEGORY,
  summary: 'A reviewer approved or objected for its constitution; an objection blocks until answered by a revision or withdrawn by its author',
  data: z.object({
    ...base,
    round: ReviewRoundNumber,
    revision: ProposalRevision,
    constitution: Constitution,
    reviewer: AgentId,
    verdict: ReviewVerdict,
    reasoning: z.string(),
    citations: z.array(Evidence),
    objection: ObjectionDetails.nullable().describe('Present when the verdict is object'),
    submittedAt: Timestamp,
  }),
});

export const ObjectionWithdrawn = defineEvent({
  type: 'ObjectionWithdrawn',
  category: PROPOSAL_CATEGORY,
  summary: 'The author of an objection withdrew it',
  data: z.object({ ...base, objectionId: ObjectionId, round: ReviewRoundNumber, constitution: Constitution, reviewer: AgentId, reason: z.string(), withdrawnAt: Timestamp }),
});

export const ReviewDeemedApproved = defineEvent({
  type: 'ReviewDeemedApproved',
  category: PROPOSAL_CATEGORY,
  summary: 'An assigned reviewer stayed silent until the deadline: silence counts as approval, recorded explicitly',
  data: z.object({ ...base, round: ReviewRoundNumber, revision: ProposalRevision, constitution: Constitution, reviewer: AgentId, deadlineAt: Timestamp, deemedAt: Timestamp }),
});

export const ReviewRoundClosed = defineEvent({
  type: 'ReviewRoundClosed',
  category: PROPOSAL_CATEGORY,
  summary: 'A review round closed; `contested` rounds count towards escalation',
  data: z.object({
    ...base,
    round: ReviewRoundNumber,
    revision: ProposalRevision,
    reason: ReviewRoundCloseReason,
    outcome: ReviewRoundOutcome,
    satisfied: z.array(Constitution).describe('Assigned constitutions that approved (explicitly, deemed, or by withdrawing their objection)'),
    deemed: z.array(Constitution).describe('Of those, the ones approved by silence'),
    raisedObjections: z.array(ObjectionId).describe('Objections raised in this round'),
    openObjections: z.array(ObjectionId).describe('Objections open at close, from any round'),
    contested: z.boolean().describe('Closed without approval while objections were raised in it or still open: counts towards maxRoundsBeforeEscalation'),
    closedAt: Timestamp,
  }),
});

export const ProposalApproved = defineEvent({
  type: 'ProposalApproved',
  category: PROPOSAL_CATEGORY,
  summary: 'The proposal was approved: by the tribunal (every constitution satisfied, no open objection) or by an operator deciding an escalation',
  data: z.object({
    ...base,
    revision: ProposalRevision,
    round: ReviewRoundNumber.nullable().describe('The round that concluded it (the last round, for an operator)'),
    decidedBy: z.enum(['tribunal', 'operator']),
    operator: AgentId.nullable(),
    satisfied: z.array(Constitution),
    deemed: z.array(Constitution),
    overriddenObjections: z.array(ObjectionId).describe('Open objections an operator approved over'),
    approvedAt: Timestamp,
  }),
});

export const ProposalRejected = defineEvent({
  type: 'ProposalRejected',
  category: PROPOSAL_CATEGORY,
  summary: 'An operator rejected the proposal (final)',
  data: z.object({ ...base, revision: ProposalRevision, escalation: z.number().int().min(1), operator: AgentId, reason: z.string(), rejectedAt: Timestamp }),
});

export const ProposalEscalated = defineEvent({
  type: 'ProposalEscalated',
  category: PROPOSAL_CATEGORY,
  summary: 'The proposal waits for a human operator: the tribunal deadlocked, or too few constitutions could review it. Nothing proceeds until DecideEscalation',
  data: z.object({
    ...base,
    escalation: z.number().int().min(1).describe('1 for the first escalation of this proposal'),
    reason: ProposalEscalationReason,
    revision: ProposalRevision,
    round: ReviewRoundNumber.describe('The last contested round (deadlock) or the round that could not open (insufficient_coverage)'),
    contestedRounds: z.number().int().min(0),
    openObjections: z.array(ObjectionId),
    uncovered: z.array(Constitution).describe('insufficient_coverage: the required constitutions without an eligible reviewer'),
    escalatedAt: Timestamp,
  }),
});

export const EscalationDecided = defineEvent({
  type: 'EscalationDecided',
  category: PROPOSAL_CATEGORY,
  summary: "An operator decided an escalation; ProposalApproved, ProposalRejected or ReviewRoundRequested follows",
  data: z.object({
    ...base,
    escalation: z.number().int().min(1),
    decision: ProposalEscalationDecision,
    operator: AgentId,
    reason: z.string(),
    openObjections: z.array(ObjectionId).describe('Objections open when the operator decided'),
    decidedAt: Timestamp,
  }),
});

export const ExecutionRecorded = defineEvent({
  type: 'ExecutionRecorded',
  category: PROPOSAL_CATEGORY,
  summary: 'The proposer recorded that the proposal was executed; `status` is the proposal status at that time',
  data: z.object({
    ...base,
    executive: AgentId,
    revision: ProposalRevision,
    status: ProposalStatus,
    summary: z.string(),
    ref: z.string().nullable(),
    recordedAt: Timestamp,
  }),
});

export const OpenObjectionSummary = z.object({ objectionId: ObjectionId, constitution: Constitution, reviewer: AgentId, constraint: z.string() });

export const ProceededDespiteObjections = defineEvent({
  type: 'ProceededDespiteObjections',
  category: PROPOSAL_CATEGORY,
  summary:
    "The executive executed a proposal that was not approved (under review, escalated, rejected or withdrawn): the audit trail of a constitutional violation. The registry lowers the executive's trust in answer. `openObjections` may be empty when it proceeded before the tribunal finished",
  data: z.object({
    ...base,
    executive: AgentId,
    revision: ProposalRevision,
    status: ProposalStatus,
    round: ReviewRoundNumber.nullable().describe('The latest round, if any'),
    openObjections: z.array(OpenObjectionSummary),
    unheard: z.array(Constitution).describe('Constitutions assigned in an open round that had not answered yet'),
    recordedAt: Timestamp,
  }),
});

export const OutcomeReported = defineEvent({
  type: 'OutcomeReported',
  category: PROPOSAL_CATEGORY,
  summary: 'The proposer or an operator reported whether the executed proposal worked or failed (once per proposal): what the calibration figures compare reviews with',
  data: z.object({
    ...base,
    outcome: ProposalOutcome,
    note: z.string(),
    reporter: AgentId,
    reportedAs: z.enum(['executive', 'operator']).describe('executive: the proposer itself; operator: an operator (a human)'),
    revision: ProposalRevision.describe('The revision current when the outcome was reported'),
    reportedAt: Timestamp,
  }),
});

export const ProposalToolCallReleased = defineEvent({
  type: 'ProposalToolCallReleased',
  category: PROPOSAL_CATEGORY,
  summary: "The approved proposal's verdict was used for the tool call it is bound to (the call is forwarded next); it cannot be used again",
  data: z.object({ ...base, server: z.string(), tool: z.string(), callDigest: Sha256Hex, releasedBy: AgentId, releasedAt: Timestamp }),
});

export const ProposalToolCallResultRecorded = defineEvent({
  type: 'ProposalToolCallResultRecorded',
  category: PROPOSAL_CATEGORY,
  summary: 'What became of a tool call released by a proposal: its outcome and the digest of its result',
  data: z.object({ ...base, callDigest: Sha256Hex, outcome: ToolCallOutcome, resultDigest: Sha256Hex, recordedBy: AgentId, recordedAt: Timestamp }),
});
