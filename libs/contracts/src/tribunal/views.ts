// Tribunal contracts: the read model (the proposal record and its views), the statistics and the queries.
import { z } from 'zod';
import { AgentId, EntityId, Timestamp } from '../common.js';
import { NextCursor, pageParams } from '../paging.js';
import { access, defineQuery } from '../define.js';
import { Constitution } from '../registry/agents.js';
import { ToolCallView } from '../voting/vocabulary.js';
import { Evidence, ObjectionId, ProposalClass, ProposalEscalationDecision, ProposalEscalationReason, ProposalOutcome, ProposalRevision, ProposalStatus, ReviewAssignment, ReviewRoundCloseReason, ReviewRoundNumber, ReviewRoundOutcome, ReviewRules, ReviewVerdict } from './policy.js';

// ---------------------------------------------------------------------------------------------
// Read model (the decider's state is this record; a projection can fold with the decider)
// ---------------------------------------------------------------------------------------------

export const ReviewView = z.object({
  constitution: Constitution,
  reviewer: AgentId,
  verdict: ReviewVerdict,
  deemed: z.boolean().describe('Approved by silence at the deadline'),
  reasoning: z.string().nullable(),
  citations: z.array(Evidence),
  objectionId: ObjectionId.nullable(),
  at: Timestamp,
});

export const ReviewRoundView = z.object({
  round: ReviewRoundNumber,
  revision: ProposalRevision,
  status: z.enum(['open', 'closed']),
  assignments: z.array(ReviewAssignment),
  uncovered: z.array(Constitution),
  reviews: z.array(ReviewView),
  openedAt: Timestamp,
  deadlineAt: Timestamp,
  closedAt: Timestamp.nullable(),
  closeReason: ReviewRoundCloseReason.nullable(),
  outcome: ReviewRoundOutcome.nullable(),
  contested: z.boolean(),
});
export type ReviewRoundView = z.infer<typeof ReviewRoundView>;

export const ObjectionView = z.object({
  objectionId: ObjectionId,
  round: ReviewRoundNumber,
  revision: ProposalRevision,
  constitution: Constitution,
  reviewer: AgentId,
  constraint: z.string(),
  scenario: z.string(),
  suggestedRevision: z.string().nullable(),
  rejectReason: z.string().nullable(),
  status: z.enum(['open', 'answered', 'withdrawn', 'overridden']).describe('answered: by a revision; withdrawn: by its author; overridden: an operator approved over it'),
  raisedAt: Timestamp,
  resolvedAt: Timestamp.nullable(),
  answeredByRevision: ProposalRevision.nullable(),
  withdrawalReason: z.string().nullable(),
});
export type ObjectionView = z.infer<typeof ObjectionView>;

export const ProposalEscalationView = z.object({
  escalation: z.number().int().min(1),
  reason: ProposalEscalationReason,
  round: ReviewRoundNumber,
  revision: ProposalRevision,
  openObjections: z.array(ObjectionId),
  uncovered: z.array(Constitution),
  escalatedAt: Timestamp,
  decision: ProposalEscalationDecision.nullable(),
  decisionReason: z.string().nullable(),
  operator: AgentId.nullable(),
  decidedAt: Timestamp.nullable(),
});
export type ProposalEscalationView = z.infer<typeof ProposalEscalationView>;

export const ProposalRevisionView = z.object({
  revision: ProposalRevision,
  title: z.string(),
  body: z.string(),
  problem: z.string(),
  evidence: z.array(Evidence),
  answers: z.array(ObjectionId),
  at: Timestamp,
});

export const ProposalExecutionView = z.object({
  executive: AgentId,
  summary: z.string(),
  ref: z.string().nullable(),
  statusAtExecution: ProposalStatus,
  despiteObjections: z.boolean().describe('true when it was executed without approval (ProceededDespiteObjections)'),
  recordedAt: Timestamp,
});

export const ProposalOutcomeView = z.object({
  outcome: ProposalOutcome,
  note: z.string(),
  reporter: AgentId,
  reportedAs: z.enum(['executive', 'operator']),
  reportedAt: Timestamp,
});
export type ProposalOutcomeView = z.infer<typeof ProposalOutcomeView>;

/** A proposal with its whole review history: the state of the proposal decider. */
export const ProposalRecord = z.object({
  proposalId: EntityId,
  proposer: AgentId,
  status: ProposalStatus,
  proposalClass: ProposalClass,
  rules: ReviewRules,
  title: z.string(),
  body: z.string(),
  problem: z.string(),
  evidence: z.array(Evidence),
  revision: ProposalRevision.describe('Current revision (1 as submitted)'),
  revisions: z.array(ProposalRevisionView),
  pendingRound: ReviewRoundNumber.nullable().describe('A round requested and not opened yet'),
  rounds: z.array(ReviewRoundView),
  contestedRounds: z.number().int().min(0).describe('Contested rounds since submission or the last send_back'),
  objections: z.array(ObjectionView),
  escalations: z.array(ProposalEscalationView),
  execution: ProposalExecutionView.nullable(),
  outcome: ProposalOutcomeView.nullable().optional().describe('What became of it once executed (OutcomeReported); null until reported'),
  toolCall: ToolCallView.optional().describe('A governed tool call: the call the proposal decides, and whether it was released and ran'),
  submittedAt: Timestamp,
  updatedAt: Timestamp,
});
export type ProposalRecord = z.infer<typeof ProposalRecord>;

export const ProposalView = ProposalRecord.extend({ streamRevision: z.number().int().describe('Revision of the proposal stream the view reflects') });
export type ProposalView = z.infer<typeof ProposalView>;

export const ProposalSummary = z.object({
  proposalId: EntityId,
  proposer: AgentId,
  title: z.string(),
  proposalClass: ProposalClass,
  status: ProposalStatus,
  revision: ProposalRevision,
  round: ReviewRoundNumber.nullable().describe('Latest round'),
  openObjections: z.number().int().min(0),
  submittedAt: Timestamp,
  updatedAt: Timestamp,
});
export type ProposalSummary = z.infer<typeof ProposalSummary>;

export const ReviewAssignmentView = z.object({
  proposalId: EntityId,
  title: z.string(),
  proposer: AgentId,
  round: ReviewRoundNumber,
  revision: ProposalRevision,
  constitution: Constitution,
  deadlineAt: Timestamp,
  state: z.enum(['pending', 'reviewed', 'deemed', 'closed']).describe('pending: the round is open and the reviewer has not answered'),
  verdict: ReviewVerdict.nullable(),
});
export type ReviewAssignmentView = z.infer<typeof ReviewAssignmentView>;

const Count = z.number().int().min(0);

export const TribunalStats = z.object({
  window: z.object({ from: Timestamp, to: Timestamp, days: z.number().int().min(1) }),
  proposals: z
    .object({
      submitted: Count.describe('Proposals submitted in the window'),
      reviewed: Count.describe('Of those, proposals with at least one review round'),
      challenged: Count.describe('Of those, proposals that drew at least one objection'),
    })
    .describe('Counts over proposals submitted in the window'),
  challengeRate: z.number().min(0).max(1).nullable().describe('challenged / reviewed; null when none were reviewed. Healthy: 0.2 to 0.4; near 0: rubber-stamping; above 0.6: too much overhead'),
  reviewedWithFewerThanMinConstitutions: Count.describe('Proposals decided with fewer than 3 (minConstitutions) distinct constitutions approving in their last round, explicitly or deemed'),
  deemedApprovals: Count.describe('ReviewDeemedApproved events in the window (silence at a deadline)'),
  deadlocksEscalated: Count.describe('ProposalEscalated with reason deadlock in the window'),
  coverageEscalations: Count.describe('ProposalEscalated with reason insufficient_coverage in the window'),
  proceededDespiteObjections: Count.describe('ProceededDespiteObjections events in the window'),
  outcomes: z
    .object({ review: Count, escalated: Count, approved: Count, approvedByOperator: Count, rejected: Count, withdrawn: Count })
    .describe('Current status of the proposals submitted in the window; approvedByOperator is included in approved'),
  operatorDecisions: z.object({ approve: Count, reject: Count, send_back: Count }).describe('EscalationDecided events in the window, by decision'),
  meanRoundsToApproval: z.number().min(0).nullable().describe('Mean number of rounds of the proposals approved in the window; healthy: objections resolved within 2 to 3 rounds'),
});
export type TribunalStats = z.infer<typeof TribunalStats>;

// ---------------------------------------------------------------------------------------------
// Queries
// ---------------------------------------------------------------------------------------------

export const GetProposal = defineQuery({
  name: 'proposals.get',
  service: 'proposal',
  httpPath: 'proposals/:proposalId',
  visibility: { agent: access.party('proposer', 'rounds.assignments.reviewer', 'rounds.reviews.reviewer'), observer: access.none },
  summary: 'One proposal with its revisions, rounds, reviews, objections, escalations and execution',
  params: z.object({ proposalId: EntityId }).strict(),
  result: ProposalView,
});

export const ListProposals = defineQuery({
  name: 'proposals.list',
  service: 'proposal',
  httpPath: 'proposals',
  visibility: { agent: access.own('proposer'), observer: access.none },
  summary: 'Proposals, most recently updated first (then by id), paged, optionally by status, proposer or class',
  params: z
    .object({
      status: ProposalStatus.optional(),
      proposer: AgentId.optional(),
      proposalClass: ProposalClass.optional(),
      ...pageParams,
    })
    .strict(),
  result: z.object({ proposals: z.array(ProposalSummary), nextCursor: NextCursor }),
});

export const ListAssignments = defineQuery({
  name: 'assignments.list',
  service: 'tribunal',
  httpPath: 'assignments',
  visibility: { agent: access.own('reviewer'), observer: access.none },
  summary: "A reviewer's assignments, latest deadline first: the rounds it must review (pending) or all of them; paged",
  params: z.object({ reviewer: AgentId, include: z.enum(['pending', 'all']).optional().describe('Default pending'), ...pageParams }).strict(),
  result: z.object({ assignments: z.array(ReviewAssignmentView), nextCursor: NextCursor }),
});

export const GetTribunalStats = defineQuery({
  name: 'stats',
  service: 'tribunal',
  servedBy: 'projections',
  httpPath: 'stats',
  visibility: { agent: access.all, observer: access.all },
  summary: "The fleet's tribunal health: challenge rate, coverage, deemed approvals, deadlocks, outcomes",
  params: z.object({ windowDays: z.coerce.number().int().min(1).max(365).optional().describe('Default 30') }).strict(),
  result: TribunalStats,
});

export const UnderCoveredProposal = z.object({
  proposalId: EntityId,
  constitutionalCoverage: z.number().int().min(0).describe('Distinct constitutions that reviewed the proposal explicitly (approve or object), over all its rounds; deemed approvals do not count'),
});

export const ListUnderCoveredProposals = defineQuery({
  name: 'coverage',
  service: 'tribunal',
  servedBy: 'projections',
  httpPath: 'coverage',
  visibility: { agent: access.none, observer: access.none },
  summary:
    "The seed's coverage measurement (COUNT(DISTINCT constitution) < 3): proposals with at least one closed review round whose explicit reviews cover fewer than `below` distinct constitutions, fewest first, then by id; paged",
  params: z.object({ below: z.coerce.number().int().min(1).max(16).default(3).describe('Threshold: proposals covered by fewer constitutions are listed. Default 3'), ...pageParams }).strict(),
  result: z.object({ proposals: z.array(UnderCoveredProposal), nextCursor: NextCursor }),
});
