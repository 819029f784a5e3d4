// Tribunal contracts: the vocabulary of proposals and reviews, and the tribunal policy.
import { z } from 'zod';
import { AgentId, ShortText } from '../common.js';
import { Constitution, TrustScore } from '../registry/agents.js';

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
export const ProposalOutcome = z.enum(['worked', 'failed']).describe('What became of an executed proposal, as its proposer or an operator reported it');
export type ProposalOutcome = z.infer<typeof ProposalOutcome>;
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
