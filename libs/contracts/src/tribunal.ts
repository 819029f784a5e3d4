/**
 * Proposals and their tribunal (seed 000, "Tribunal pattern"): an executive proposes a plan or a
 * frame; reviewers holding orthogonal constitutions (risk, premise, evidence, execution) challenge
 * it in time-boxed rounds; objections block until a revision answers them or their author withdraws
 * them, and are never outvoted; a deadlock goes to a human operator.
 *
 * One aggregate: the stream `proposal-<proposalId>` holds the proposal, its revisions, its review
 * rounds, objections and escalations, so every rule is decided atomically by one decider
 * (libs/domain-tribunal). Two services append to it: `proposal` (the executive's commands) and
 * `tribunal` (rounds, reviews, expiry, escalation decisions).
 *
 * Flow of a round: ProposalSubmitted / ProposalRevised / EscalationDecided(send_back) is followed by
 * ReviewRoundRequested; the tribunal service answers it with OpenReviewRound carrying the reviewer
 * candidates from the registry; the decider selects the reviewers and records them in
 * ReviewRoundOpened (with its `deadlineAt`), or escalates when fewer than `minConstitutions`
 * constitutions can be covered. Reviews (or ReviewDeemedApproved at the deadline) close the round:
 * ReviewRoundClosed, then ProposalApproved, nothing (blocked: the executive must revise), or
 * ProposalEscalated after too many contested rounds.
 */
import { z } from 'zod';
import { AgentId, EntityId, ShortText, Timestamp } from './common.js';
import { defineCommand, defineEvent, defineQuery } from './define.js';
import { Constitution, TrustScore } from './registry.js';

// ---------------------------------------------------------------------------------------------
// Vocabulary and policy
// ---------------------------------------------------------------------------------------------

/** Stream category of proposals: streams are `proposal-<proposalId>`. */
export const PROPOSAL_CATEGORY = 'proposal';

const HOUR_MS = 3_600_000;
const DAY_MS = 24 * HOUR_MS;

export const ProposalClass = z
  .string()
  .regex(/^[a-z][a-z0-9_]{0,31}$/, 'proposal classes are lowercase words, e.g. default, frame, budget')
  .describe('Proposal class: selects the required constitutions and the round deadline in the tribunal policy');

export const ProposalStatus = z
  .enum(['review', 'approved', 'rejected', 'escalated', 'withdrawn'])
  .describe('review: in the tribunal; escalated: waiting for an operator; approved, rejected, withdrawn: final');
export type ProposalStatus = z.infer<typeof ProposalStatus>;

/** `r<round>-<constitution>`: a reviewer covers one constitution per round, so this names one objection. */
export const ObjectionId = z
  .string()
  .regex(/^r[1-9][0-9]{0,3}-[a-z][a-z0-9_]{0,31}$/, 'objection ids are "r<round>-<constitution>", e.g. r1-risk')
  .describe('Objection id `r<round>-<constitution>`, e.g. `r1-risk`');

export const ReviewRoundNumber = z.number().int().min(1).max(9999).describe('Review round, 1 for the first');
export const ProposalRevision = z.number().int().min(1).describe('Revision of the proposal, 1 as submitted');
export const ReviewDeadlineMs = z
  .number()
  .int()
  .min(1000)
  .max(30 * DAY_MS)
  .describe('Milliseconds, 1 s to 30 days');

export const Evidence = z
  .object({
    ref: ShortText(200).describe('Where the evidence is, e.g. a decision id `d/0fd09b4f` or a URL'),
    summary: ShortText(2000).describe('What it says, in a sentence'),
  })
  .strict();
export type Evidence = z.infer<typeof Evidence>;

export const DEFAULT_REQUIRED_CONSTITUTIONS = ['risk', 'premise', 'evidence', 'execution'] as const;
export const MIN_CONSTITUTIONS = 3;

/**
 * The tribunal's rules as data (service configuration). Only SubmitProposal reads it: the rules it
 * resolves for the proposal are copied into ProposalSubmitted (`rules`), and every later decision on
 * that proposal reads them from there, so a replay decides as the original did even after the
 * configuration changed.
 */
export const TribunalPolicy = z
  .object({
    requiredConstitutions: z
      .record(ProposalClass, z.array(Constitution).min(1).max(16))
      .default({ default: [...DEFAULT_REQUIRED_CONSTITUTIONS] })
      .describe('Constitutions that must review, by proposal class; the class `default` must be present; a class not listed is refused'),
    minConstitutions: z
      .number()
      .int()
      .min(MIN_CONSTITUTIONS)
      .max(16)
      .default(MIN_CONSTITUTIONS)
      .describe('A round opens only when at least this many distinct constitutions get a reviewer (never fewer than 3)'),
    roundDeadlineMs: ReviewDeadlineMs.default(DAY_MS).describe('Time-box of a round; silence at the deadline counts as approval'),
    roundDeadlineMsByClass: z.record(ProposalClass, ReviewDeadlineMs).default({}).describe('Round time-box by proposal class, overriding roundDeadlineMs'),
    minRoundDeadlineMs: ReviewDeadlineMs.default(HOUR_MS).describe('Shortest time-box a proposal may ask for (keeps an executive from out-running its reviewers)'),
    maxRoundDeadlineMs: ReviewDeadlineMs.default(7 * DAY_MS).describe('Longest time-box a proposal may ask for'),
    maxRoundsBeforeEscalation: z
      .number()
      .int()
      .min(1)
      .max(20)
      .default(3)
      .describe('Contested rounds (closed with objections) after which the proposal escalates to an operator'),
  })
  .strict()
  .superRefine((p, ctx) => {
    if (!p.requiredConstitutions['default']) ctx.addIssue({ code: 'custom', path: ['requiredConstitutions', 'default'], message: 'the class "default" must be configured' });
    for (const [cls, list] of Object.entries(p.requiredConstitutions)) {
      const distinct = new Set(list).size;
      if (distinct < p.minConstitutions) {
        ctx.addIssue({ code: 'custom', path: ['requiredConstitutions', cls], message: `class ${cls} requires ${distinct} distinct constitutions; at least ${p.minConstitutions} (minConstitutions) are needed` });
      }
    }
    if (p.minRoundDeadlineMs > p.maxRoundDeadlineMs) ctx.addIssue({ code: 'custom', path: ['minRoundDeadlineMs'], message: 'minRoundDeadlineMs exceeds maxRoundDeadlineMs' });
    const deadlines: [string[], number][] = [[['roundDeadlineMs'], p.roundDeadlineMs], ...Object.entries(p.roundDeadlineMsByClass).map(([c, ms]): [string[], number] => [['roundDeadlineMsByClass', c], ms])];
    for (const [path, ms] of deadlines) {
      if (ms < p.minRoundDeadlineMs || ms > p.maxRoundDeadlineMs) ctx.addIssue({ code: 'custom', path, message: `${ms} ms is outside minRoundDeadlineMs..maxRoundDeadlineMs (${p.minRoundDeadlineMs}..${p.maxRoundDeadlineMs})` });
    }
    for (const cls of Object.keys(p.roundDeadlineMsByClass)) {
      if (!p.requiredConstitutions[cls]) ctx.addIssue({ code: 'custom', path: ['roundDeadlineMsByClass', cls], message: `class ${cls} has a deadline but no required constitutions` });
    }
  });
export type TribunalPolicy = z.output<typeof TribunalPolicy>;
export type TribunalPolicyInput = z.input<typeof TribunalPolicy>;

/** The rules that decide one proposal: resolved from the policy at submission and recorded in ProposalSubmitted. */
export const ReviewRules = z.object({
  requiredConstitutions: z.array(Constitution).describe('In priority order: when not all can be covered, the earlier ones are'),
  minConstitutions: z.number().int().min(MIN_CONSTITUTIONS),
  roundDeadlineMs: ReviewDeadlineMs,
  maxRoundsBeforeEscalation: z.number().int().min(1),
});
export type ReviewRules = z.infer<typeof ReviewRules>;

/** A reviewer the registry offers for a round (agents with role `reviewer`). Only `active` ones are selected. */
export const ReviewerCandidate = z
  .object({
    agentId: AgentId,
    constitutions: z.array(Constitution).max(16),
    trustScore: TrustScore,
    status: z.string().min(1).max(32).describe('Registry status; only `active` agents are selected'),
  })
  .strict();
export type ReviewerCandidate = z.infer<typeof ReviewerCandidate>;

export const ReviewAssignment = z.object({ constitution: Constitution, reviewer: AgentId });
export type ReviewAssignment = z.infer<typeof ReviewAssignment>;

export const ReviewVerdict = z.enum(['approve', 'object']);
export const ProposalEscalationReason = z
  .enum(['deadlock', 'insufficient_coverage'])
  .describe('deadlock: maxRoundsBeforeEscalation contested rounds; insufficient_coverage: fewer than minConstitutions constitutions had an eligible reviewer');
export const ProposalEscalationDecision = z.enum(['approve', 'reject', 'send_back']).describe('approve (over open objections), reject, or send_back (a new review round)');
export const ReviewRoundCloseReason = z
  .enum(['all_reviewed', 'deadline', 'revised', 'withdrawn'])
  .describe('all_reviewed: every assigned reviewer answered; deadline: the time-box expired; revised: a revision superseded the round; withdrawn: the proposal was withdrawn');
export const ReviewRoundOutcome = z
  .enum(['approved', 'blocked', 'superseded', 'withdrawn'])
  .describe('approved: every constitution satisfied and no open objection; blocked: open objections remain (the executive must revise); superseded / withdrawn: closed before it concluded');

/** Optional objection parts: left optional (and blank allowed) so that the decider can name exactly what is missing. */
const ObjectionPart = (max: number) => z.string().trim().max(max).optional();

// ---------------------------------------------------------------------------------------------
// Commands: proposal service (the executive)
// ---------------------------------------------------------------------------------------------

export const SubmitProposal = defineCommand({
  type: 'SubmitProposal',
  service: 'proposal',
  aggregate: 'proposal',
  verb: 'submit',
  roles: ['executive'],
  summary: 'Propose a plan or frame for the tribunal to review; the actor becomes its proposer and a first review round is requested',
  payload: z
    .object({
      proposalId: EntityId,
      title: ShortText(200),
      body: ShortText(20_000).describe('The plan or frame'),
      problem: ShortText(5000).describe('The problem it claims to solve'),
      evidence: z.array(Evidence).max(50).default([]).describe('What it rests on'),
      proposalClass: ProposalClass.default('default'),
      reviewDeadlineMs: ReviewDeadlineMs.optional().describe("Time-box of each round for this proposal, within the policy's bounds; default: the class's"),
    })
    .strict(),
});

export const ReviseProposal = defineCommand({
  type: 'ReviseProposal',
  service: 'proposal',
  aggregate: 'proposal',
  verb: 'revise',
  roles: ['executive'],
  summary: 'Revise a proposal in answer to objections (proposer only): the answered objections are resolved, an open round is superseded, and a new round is requested',
  payload: z
    .object({
      proposalId: EntityId,
      body: ShortText(20_000).describe('The revised plan or frame'),
      problem: ShortText(5000).optional().describe('Unchanged when absent'),
      evidence: z.array(Evidence).max(50).optional().describe('Replaces the evidence; unchanged when absent'),
      title: ShortText(200).optional().describe('Unchanged when absent'),
      answers: z.array(ObjectionId).max(100).default([]).describe('The open objections this revision answers; the others stay open'),
    })
    .strict(),
});

export const WithdrawProposal = defineCommand({
  type: 'WithdrawProposal',
  service: 'proposal',
  aggregate: 'proposal',
  verb: 'withdraw',
  roles: ['executive'],
  summary: 'Withdraw a proposal under review or escalated (proposer only); an open round closes',
  payload: z.object({ proposalId: EntityId, reason: ShortText(1000) }).strict(),
});

export const RecordExecution = defineCommand({
  type: 'RecordExecution',
  service: 'proposal',
  aggregate: 'proposal',
  verb: 'record_execution',
  roles: ['executive'],
  summary: "Record that the proposal was executed (proposer only). Unless it was approved, ProceededDespiteObjections is recorded too, and the registry lowers the executive's trust",
  payload: z
    .object({
      proposalId: EntityId,
      summary: ShortText(5000).describe('What was done'),
      ref: ShortText(500).optional().describe('Where to see it (a commit, a run, a ticket)'),
    })
    .strict(),
});

// ---------------------------------------------------------------------------------------------
// Commands: tribunal service
// ---------------------------------------------------------------------------------------------

export const OpenReviewRound = defineCommand({
  type: 'OpenReviewRound',
  service: 'tribunal',
  aggregate: 'proposal',
  verb: 'open_round',
  roles: ['operator'],
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
    .strict(),
});

export const WithdrawObjection = defineCommand({
  type: 'WithdrawObjection',
  service: 'tribunal',
  aggregate: 'proposal',
  verb: 'withdraw_objection',
  roles: ['reviewer'],
  summary: 'Withdraw one of your own objections; when it was the last thing blocking a concluded round, the proposal is approved',
  payload: z.object({ proposalId: EntityId, objectionId: ObjectionId, reason: ShortText(1000) }).strict(),
});

export const ExpireReviewRound = defineCommand({
  type: 'ExpireReviewRound',
  service: 'tribunal',
  aggregate: 'proposal',
  verb: 'expire_round',
  roles: ['operator'],
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
  summary: 'One proposal with its revisions, rounds, reviews, objections, escalations and execution',
  params: z.object({ proposalId: EntityId }).strict(),
  result: ProposalView,
});

export const ListProposals = defineQuery({
  name: 'proposals.list',
  service: 'proposal',
  httpPath: 'proposals',
  summary: 'Proposals, most recently updated first, optionally by status, proposer or class',
  params: z
    .object({
      status: ProposalStatus.optional(),
      proposer: AgentId.optional(),
      proposalClass: ProposalClass.optional(),
      limit: z.coerce.number().int().min(1).max(500).optional().describe('Default 100'),
    })
    .strict(),
  result: z.object({ proposals: z.array(ProposalSummary) }),
});

export const ListAssignments = defineQuery({
  name: 'assignments.list',
  service: 'tribunal',
  httpPath: 'assignments',
  summary: "A reviewer's assignments: the rounds it must review (pending) or all of them",
  params: z.object({ reviewer: AgentId, include: z.enum(['pending', 'all']).optional().describe('Default pending') }).strict(),
  result: z.object({ assignments: z.array(ReviewAssignmentView) }),
});

export const GetTribunalStats = defineQuery({
  name: 'stats',
  service: 'tribunal',
  httpPath: 'stats',
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
  httpPath: 'coverage',
  summary:
    "The seed's coverage measurement (COUNT(DISTINCT constitution) < 3): proposals with at least one closed review round whose explicit reviews cover fewer than `below` distinct constitutions, fewest first",
  params: z.object({ below: z.coerce.number().int().min(1).max(16).default(3).describe('Threshold: proposals covered by fewer constitutions are listed. Default 3') }).strict(),
  result: z.object({ proposals: z.array(UnderCoveredProposal) }),
});

export const proposalCommands = [SubmitProposal, ReviseProposal, WithdrawProposal, RecordExecution] as const;
export const tribunalCommands = [OpenReviewRound, SubmitReview, WithdrawObjection, ExpireReviewRound, DecideEscalation] as const;
export const tribunalEvents = [
  ProposalSubmitted,
  ProposalRevised,
  ProposalWithdrawn,
  ReviewRoundRequested,
  ReviewRoundOpened,
  ReviewSubmitted,
  ObjectionWithdrawn,
  ReviewDeemedApproved,
  ReviewRoundClosed,
  ProposalApproved,
  ProposalRejected,
  ProposalEscalated,
  EscalationDecided,
  ExecutionRecorded,
  ProceededDespiteObjections,
] as const;
export const tribunalQueries = [GetProposal, ListProposals, ListAssignments, GetTribunalStats, ListUnderCoveredProposals] as const;

/** Everything of the proposal and tribunal services, for the catalog. */
export const tribunalContracts = {
  commands: [...proposalCommands, ...tribunalCommands],
  events: tribunalEvents,
  queries: tribunalQueries,
} as const;
