// Tribunal contracts: the calibration figures, how each reviewer's verdicts compare with what became of the proposals.
import { z } from 'zod';
import { AgentId } from '../common.js';
import { access, defineQuery } from '../define.js';
import { NextCursor, pageParams } from '../paging.js';
import { Constitution } from '../registry/agents.js';

const Count = z.number().int().min(0);

/**
 * One reviewer under one constitution, over every proposal it reviewed (docs/protocols/tribunal.md,
 * "Calibration"). Objections are counted one by one and each has exactly one fate; approvals are
 * compared with outcomes through the reviewer's final explicit verdict on a proposal.
 */
export const ReviewerCalibration = z.object({
  reviewer: AgentId,
  constitution: Constitution,
  approvals: Count.describe('Explicit approvals (ReviewSubmitted, verdict approve), every round'),
  deemedApprovals: Count.describe('Approvals by silence at a deadline (ReviewDeemedApproved); never compared with outcomes'),
  objections: Count.describe('Objections raised (ReviewSubmitted, verdict object): upheldByRevision + upheldByOutcome + notUpheld + pending'),
  upheldByRevision: Count.describe('Objections a later revision answered (named in its `answers`)'),
  upheldByOutcome: Count.describe('Objections no revision answered (withdrawn, overridden, or open at execution) on proposals reported failed'),
  notUpheld: Count.describe('Objections no revision answered on proposals reported worked'),
  pending: Count.describe('Objections no revision answered on proposals with no reported outcome (yet)'),
  withdrawn: Count.describe('Objections its author withdrew (also counted in one of the four fates above)'),
  overridden: Count.describe('Objections an operator approved over (also counted in one of the four fates above)'),
  upheldRate: z.number().min(0).max(1).nullable().describe('(upheldByRevision + upheldByOutcome) / (objections - pending); null when no objection has a fate yet'),
  approvalsWorked: Count.describe('Proposals reported worked on which its final explicit verdict (last round it reviewed) was approve'),
  approvalsFailed: Count.describe('Proposals reported failed on which its final explicit verdict was approve: approvals of proposals that failed'),
  objectionsFailed: Count.describe('Proposals reported failed on which its final explicit verdict was object'),
  objectionsWorked: Count.describe('Proposals reported worked on which its final explicit verdict was object'),
});
export type ReviewerCalibration = z.infer<typeof ReviewerCalibration>;

export const OutcomeCounts = z.object({
  executed: Count.describe('Proposals whose execution is recorded'),
  worked: Count.describe('Of those, reported worked'),
  failed: Count.describe('Of those, reported failed'),
});
export type OutcomeCounts = z.infer<typeof OutcomeCounts>;

export const GetReviewerCalibration = defineQuery({
  name: 'calibration',
  service: 'tribunal',
  servedBy: 'projections',
  httpPath: 'calibration',
  visibility: { agent: access.own('reviewer'), observer: access.none },
  summary: "Per reviewer and constitution (in that order): how its verdicts compare with what became of the proposals (objections upheld by a revision or by a failed outcome, approvals of proposals that failed); paged",
  params: z.object({ reviewer: AgentId.optional(), constitution: Constitution.optional(), ...pageParams }).strict(),
  result: z.object({ outcomes: OutcomeCounts, reviewers: z.array(ReviewerCalibration), nextCursor: NextCursor }),
});
