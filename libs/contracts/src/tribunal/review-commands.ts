// Tribunal contracts: the commands of the tribunal service (review rounds, reviews, objections, expiry, escalation decisions).
import { z } from 'zod';
import { EntityId, ShortText } from '../common.js';
import { defineCommand } from '../define.js';
import { Constitution } from '../registry/agents.js';
import { Evidence, ObjectionId, ProposalEscalationDecision, ReviewerCandidate, ReviewRoundNumber, ReviewVerdict } from './policy.js';

/** Optional objection parts: left optional (and blank allowed) so that the decider can name exactly what is missing. */
const ObjectionPart = (max: number) => z.string().trim().max(max).optional();
/** JSON Schema for "present" objection parts (something besides whitespace) and blank ones. */
const NOT_BLANK = { pattern: '\\S' };
const BLANK = { pattern: '^\\s*$' };

// ---------------------------------------------------------------------------------------------
// Commands: tribunal service
// ---------------------------------------------------------------------------------------------

export const OpenReviewRound = defineCommand({
  type: 'OpenReviewRound',
  service: 'tribunal',
  aggregate: 'proposal',
  verb: 'open_round',
  roles: [],
  issuers: ['tribunal'],
  summary:
    'Open the requested review round with the reviewer candidates from the registry (issued by the tribunal service on ReviewRoundRequested, under its operator identity). Selects and records the reviewers, or escalates when fewer than minConstitutions constitutions can be covered. A request already answered or superseded changes nothing',
  payload: z
    .object({
      proposalId: EntityId,
      round: ReviewRoundNumber.describe('The round of the ReviewRoundRequested event being answered'),
      candidates: z.array(ReviewerCandidate).max(2000).describe('Agents with role reviewer, as the registry knows them now'),
    })
    .strict(),
});

export const SubmitReview = defineCommand({
  type: 'SubmitReview',
  service: 'tribunal',
  aggregate: 'proposal',
  verb: 'review',
  roles: ['reviewer'],
  relation: 'a reviewer assigned in the current round',
  summary:
    'Approve or object to a proposal in an open round, for the constitution the reviewer was assigned. An objection must name the violated constitutional constraint, a concrete scenario in which the proposal fails, and a suggested revision or the reason to reject outright',
  payload: z
    .object({
      proposalId: EntityId,
      round: ReviewRoundNumber,
      constitution: Constitution.describe('The constitution the reviewer was assigned in this round'),
      verdict: ReviewVerdict,
      reasoning: ShortText(5000),
      citations: z.array(Evidence).max(50).default([]).describe('Evidence the review relies on'),
      constraint: ObjectionPart(1000).describe('Objection: the constitutional constraint the proposal violates'),
      scenario: ObjectionPart(5000).describe('Objection: a concrete scenario in which the proposal fails'),
      suggestedRevision: ObjectionPart(5000).describe('Objection: the revision that would answer it (or give rejectReason)'),
      rejectReason: ObjectionPart(5000).describe('Objection: why the proposal should be rejected outright (or give suggestedRevision)'),
    })
    .strict()
    // What the decider refuses, said in the schema so that any JSON Schema validator refuses it too.
    .meta({
      allOf: [
        {
          description: 'An objection names the constraint, a scenario, and a suggested revision or a reason to reject (none of them blank)',
          if: { properties: { verdict: { const: 'object' } }, required: ['verdict'] },
          then: {
            required: ['constraint', 'scenario'],
            properties: { constraint: NOT_BLANK, scenario: NOT_BLANK },
            anyOf: [
              { required: ['suggestedRevision'], properties: { suggestedRevision: NOT_BLANK } },
              { required: ['rejectReason'], properties: { rejectReason: NOT_BLANK } },
            ],
          },
        },
        {
          description: 'An approval carries no objection parts (blank ones are ignored)',
          if: { properties: { verdict: { const: 'approve' } }, required: ['verdict'] },
          then: { properties: { constraint: BLANK, scenario: BLANK, suggestedRevision: BLANK, rejectReason: BLANK } },
        },
      ],
    }),
});

export const WithdrawObjection = defineCommand({
  type: 'WithdrawObjection',
  service: 'tribunal',
  aggregate: 'proposal',
  verb: 'withdraw_objection',
  roles: ['reviewer'],
  relation: 'the reviewer that raised the objection',
  summary: 'Withdraw one of your own objections; when it was the last thing blocking a concluded round, the proposal is approved',
  payload: z.object({ proposalId: EntityId, objectionId: ObjectionId, reason: ShortText(1000) }).strict(),
});

export const ExpireReviewRound = defineCommand({
  type: 'ExpireReviewRound',
  service: 'tribunal',
  aggregate: 'proposal',
  verb: 'expire_round',
  roles: [],
  issuers: ['tribunal'],
  summary:
    "Close a round at its deadline (issued by the tribunal's scheduler at the due time): every assigned reviewer still silent is recorded as ReviewDeemedApproved, then the round closes. Refused before the deadline; nothing happens when the round is already closed",
  payload: z.object({ proposalId: EntityId, round: ReviewRoundNumber }).strict(),
});

export const DecideEscalation = defineCommand({
  type: 'DecideEscalation',
  service: 'tribunal',
  aggregate: 'proposal',
  verb: 'decide_escalation',
  roles: ['operator'],
  summary: 'A human operator decides an escalated proposal: approve (over open objections), reject, or send_back (a new review round), with a reason',
  payload: z
    .object({
      proposalId: EntityId,
      escalation: z.number().int().min(1).describe('The escalation decided (ProposalEscalated.escalation): a stale decision is refused'),
      decision: ProposalEscalationDecision,
      reason: ShortText(2000),
    })
    .strict(),
});
