// Voting contracts: the vocabulary (risk levels, votes, consensus, statuses), the engine's configuration, the validators and the tally.
import { z } from 'zod';
import { AgentId } from '../common.js';
import { Specialization, TrustScore } from '../registry/agents.js';
import { ValidatorCount } from './fields.js';

// ---------------------------------------------------------------------------------------------
// Vocabulary and configuration
// ---------------------------------------------------------------------------------------------

/** Stream category of sessions: `voting_session-<sessionId>` (the session id is the request id). */
export const VOTING_SESSION_CATEGORY = 'voting_session';
/** Stream category of the configuration: one stream, `voting_config-global`. */
export const VOTING_CONFIG_CATEGORY = 'voting_config';
export const VOTING_CONFIG_ID = 'global';

const MINUTE_MS = 60_000;

export const RiskLevel = z.enum(['low', 'medium', 'high', 'critical']).describe('Risk level of the action, as the requester or its gate assessed it');
export type RiskLevel = z.infer<typeof RiskLevel>;

export const VoteDecision = z.enum(['approve', 'deny', 'abstain']);
export type VoteDecision = z.infer<typeof VoteDecision>;

export const ConsensusType = z
  .enum(['unanimous_approve', 'unanimous_deny', 'majority_approve', 'majority_deny', 'split', 'no_quorum'])
  .describe(
    'unanimous_*: every selected validator voted, all the same way (an abstention breaks unanimity); majority_*: more (weighted) approvals than denials or the reverse; split: equal; no_quorum: fewer than minValidators validators selected or votes received',
  );
export type ConsensusType = z.infer<typeof ConsensusType>;
export const CONSENSUS_TYPES = ConsensusType.options;

export const RecommendedDecision = z.enum(['approve', 'deny', 'escalate']).describe('escalate: a human operator decides (requiresHitl)');
export type RecommendedDecision = z.infer<typeof RecommendedDecision>;

export const OperatorVotingDecision = z.enum(['approve', 'deny']);
export type OperatorVotingDecision = z.infer<typeof OperatorVotingDecision>;

export const EscalationReason = z
  .enum(['no_quorum', 'split', 'critical_not_unanimous', 'low_confidence', 'expired', 'person_decides'])
  .describe('Which decision rule sent the session to a human; expired: the timeout passed and the partial votes alone would have decided; person_decides: the session was created for a person to decide (`decider: person`), no validator votes');
export type EscalationReason = z.infer<typeof EscalationReason>;

export const VotingDecider = z
  .enum(['validators', 'person'])
  .describe('validators: selected validators vote (seed 002); person: no validator is selected, the session waits at once for a human operator (DecideVotingEscalation)');
export type VotingDecider = z.infer<typeof VotingDecider>;

export const VotingSessionStatus = z
  .enum(['pending', 'voting', 'decided', 'expired', 'cancelled'])
  .describe('pending: no vote yet; voting: at least one vote; decided: every validator voted (or no quorum at creation); expired: the timeout passed first; cancelled');
export type VotingSessionStatus = z.infer<typeof VotingSessionStatus>;

/**
 * Tiers of the seed, derived from the trust score (0 to 1000) and recorded with each selected
 * validator: UNTRUSTED below 200, PROBATIONARY 200 to 499, STANDARD 500 to 699, TRUSTED 700 to
 * 899, ELITE 900 and above.
 */
export const ValidatorTier = z.enum(['UNTRUSTED', 'PROBATIONARY', 'STANDARD', 'TRUSTED', 'ELITE']);
export type ValidatorTier = z.infer<typeof ValidatorTier>;

export const VotingTimeoutMs = z
  .number()
  .int()
  .min(1000)
  .max(24 * 60 * MINUTE_MS)
  .describe('Milliseconds, 1 s to 24 h');
export const Confidence = z.number().min(0).max(1).describe('0 to 1');

/** The seed's defaults (TribunalConfig). */
export const DEFAULT_VOTING_CONFIG = {
  minValidators: 3,
  maxValidators: 5,
  votingTimeoutMs: 5 * MINUTE_MS,
  requireUnanimousForCritical: true,
  minConfidence: 0.6,
  weightByTrustScore: true,
} as const;

/**
 * The engine's rules (the seed's TribunalConfig). The configuration in force when a session is
 * created is recorded in its VotingSessionCreated (`rules`, with the session's own timeout), and
 * every later decision on the session reads it from there.
 */
export const VotingConfig = z
  .object({
    minValidators: ValidatorCount.describe('Validators required: fewer selected, or fewer votes at the timeout, is no quorum (3 to 25)'),
    maxValidators: ValidatorCount.describe('Validators selected at most (3 to 25, at least minValidators)'),
    votingTimeoutMs: VotingTimeoutMs.describe('Default time a session waits for its votes; a session may ask for its own'),
    requireUnanimousForCritical: z.boolean().describe('A critical action is decided automatically only by a unanimous vote; anything else escalates'),
    minConfidence: Confidence.describe('Aggregate confidence under this escalates'),
    weightByTrustScore: z.boolean().describe('Weight each vote by trustScore/1000 x confidence (else every vote weighs 1)'),
  })
  .strict();
export type VotingConfig = z.infer<typeof VotingConfig>;

/** What a session will be decided by: the configuration in force at its creation, with its own timeout. */
export const VotingRules = VotingConfig;
export type VotingRules = VotingConfig;

/** Validator selection criteria of the seed's `selectValidators`. */
export const SelectionCriteria = z
  .object({
    minTrustScore: TrustScore.default(0).describe('Only validators with at least this trust score'),
    excludeAgents: z.array(AgentId).max(100).default([]).describe('Never selected (conflicted agents); the requesting agent is always excluded'),
    preferredSpecializations: z.array(Specialization).max(16).default([]).describe('Covered first, in this order, each by its most trusted validator; the rest by trust'),
  })
  .strict();
export type SelectionCriteria = z.output<typeof SelectionCriteria>;

/** A validator the registry offers (agents with role `validator`), passed to the decider by the service. Only `active` ones are selected. */
export const ValidatorCandidate = z
  .object({
    agentId: AgentId,
    displayName: z.string(),
    trustScore: TrustScore,
    specializations: z.array(z.string()),
    status: z.string().min(1).max(32).describe('Registry status; only `active` agents are selected'),
  })
  .strict();
export type ValidatorCandidate = z.infer<typeof ValidatorCandidate>;

/** A validator selected for a session, as the registry knew it at selection: its weight comes from this trust score. */
export const SelectedValidator = z.object({
  agentId: AgentId,
  displayName: z.string(),
  trustScore: TrustScore,
  tier: ValidatorTier,
  specializations: z.array(z.string()),
});
export type SelectedValidator = z.infer<typeof SelectedValidator>;

export const VoteTally = z.object({
  validators: z.number().int().min(0).describe('Validators selected'),
  votes: z.number().int().min(0).describe('Votes received, abstentions included'),
  approve: z.number().int().min(0),
  deny: z.number().int().min(0),
  abstain: z.number().int().min(0),
  approveWeight: z.number().min(0),
  denyWeight: z.number().min(0),
  abstainWeight: z.number().min(0),
  quorum: z.number().int().min(0).describe('Votes needed (minValidators)'),
  weighted: z.boolean().describe('Weights are trustScore/1000 x confidence (else 1 each)'),
});
export type VoteTally = z.infer<typeof VoteTally>;

export const Recommendation = z.object({
  decision: RecommendedDecision,
  consensus: ConsensusType,
  confidence: Confidence.describe('Aggregate confidence (see the top of the voting contracts)'),
  reasoning: z.array(z.string()).describe('The rule that decided, then the reasoning of the prevailing votes'),
  dissent: z.array(z.string()).describe('The reasoning of the votes against the prevailing side'),
  requiresHitl: z.boolean().describe('A human operator must decide (DecideVotingEscalation); true exactly when decision is escalate'),
  escalationReason: EscalationReason.nullable(),
});
export type Recommendation = z.infer<typeof Recommendation>;

// ---------------------------------------------------------------------------------------------
// Governed tool calls (an MCP proxy's call put to a vote, docs/decisions/0014-a-governed-tool-call-is-a-decision.md)
// ---------------------------------------------------------------------------------------------

export const Sha256Hex = z.string().regex(/^[0-9a-f]{64}$/, 'sha256, 64 lowercase hex digits');

/** The one tool call a session decides: the approval is bound to it and released for it once. */
export const ToolCallBinding = z
  .object({
    server: z.string().min(1).max(200).describe("The upstream MCP server's name"),
    tool: z.string().min(1).max(200).describe('The tool called'),
    callDigest: Sha256Hex.describe('sha256 of the RFC 8785 canonical JSON of {server, tool, arguments, caller}: the exact call the decision is bound to'),
  })
  .strict()
  .describe('A governed MCP tool call: the session decides this call alone');
export type ToolCallBinding = z.infer<typeof ToolCallBinding>;

export const ToolCallOutcome = z.enum(['ok', 'tool_error', 'failed']).describe("ok: the tool answered; tool_error: it answered with isError; failed: the upstream did not answer (an error or a lost connection)");
export type ToolCallOutcome = z.infer<typeof ToolCallOutcome>;

/** What became of a governed call, on its session's view. */
export const ToolCallView = ToolCallBinding.extend({
  releasedAt: z.string().nullable().describe('When the approval was used for the call (once); null until then'),
  outcome: ToolCallOutcome.nullable(),
  resultDigest: Sha256Hex.nullable().describe('sha256 of the RFC 8785 canonical JSON of the tool result'),
  completedAt: z.string().nullable(),
});
export type ToolCallView = z.infer<typeof ToolCallView>;
