/**
 * The Bot Tribunal voting engine (seed 002): a high-risk action request is put to 3 to 5 validators
 * chosen from the registry; each votes approve, deny or abstain with its reasoning and a confidence;
 * the votes make a consensus, and the decision rules turn it into a recommendation (approve, deny or
 * escalate to a human). A session that is not decided by its timeout is decided on its partial votes
 * and always goes to a human.
 *
 * Two aggregates:
 * - `voting_session-<sessionId>`: one session. The session id IS the request id, so the stream
 *   itself enforces "one session per request" (a second CreateVotingSession finds the stream and
 *   changes nothing). Its first event records the validators selected and the rules in force, so a
 *   replay never re-selects and decides with the rules of the day.
 * - `voting_config-global`: the engine's configuration (the seed's TribunalConfig), changed only by
 *   an operator's UpdateVotingConfig and recorded in VotingConfigUpdated.
 *
 * Consensus (libs/domain-voting/src/consensus.ts is the one implementation):
 * - weight of a vote: `trustScore / 1000 × confidence` when `weightByTrustScore`, else 1;
 * - quorum: at least `minValidators` validators selected and at least `minValidators` votes received,
 *   abstentions included; otherwise `no_quorum`;
 * - `unanimous_approve` / `unanimous_deny`: EVERY selected validator voted, and all the same way.
 *   An abstention is not an approval: 2 approve + 1 abstain is `majority_approve`, never unanimous;
 * - otherwise the weighted sums of approve and deny decide `majority_approve`, `majority_deny`, or
 *   `split` when they are equal (within 1e-9), including when every vote is an abstention;
 * - aggregate confidence: the mean confidence of the votes on the prevailing side, weighted by trust
 *   score when `weightByTrustScore` (by 1 otherwise); for split and no quorum, of every vote cast.
 * Decision rules, in this order: no quorum, split -> escalate; critical and not unanimous (when
 * `requireUnanimousForCritical`) -> escalate; confidence below `minConfidence` -> escalate; else the
 * prevailing side. Escalate always means `requiresHitl`, and the reverse.
 */
import { z } from 'zod';
import { AgentId, EntityId, ShortText, Timestamp } from '../common.js';
import { defineCommand, defineEvent } from '../define.js';
import { TrustScore } from '../registry/agents.js';
import { Confidence, ConsensusType, EscalationReason, OperatorVotingDecision, Recommendation, RiskLevel, SelectedValidator, SelectionCriteria, Sha256Hex, ToolCallBinding, ToolCallOutcome, VoteDecision, VoteTally, VOTING_CONFIG_CATEGORY, VOTING_SESSION_CATEGORY, VotingConfig, VotingDecider, VotingRules, VotingTimeoutMs } from './vocabulary.js';
import { ValidatorCount } from './fields.js';


// ---------------------------------------------------------------------------------------------
// Commands
// ---------------------------------------------------------------------------------------------

export const CreateVotingSession = defineCommand({
  type: 'CreateVotingSession',
  service: 'voting',
  aggregate: 'session',
  verb: 'create',
  roles: ['executive', 'operator'],
  issuers: ['dialectic'],
  relation: 'its own action request; an operator, or service:dialectic for a quorum escalation, may name any requesting agent',
  summary:
    'Put a high-risk action request to a tribunal vote. The session id is the request id: a second create for the same request changes nothing (the first session stands). The requesting agent is the actor unless an operator names another; it is never a validator. The service selects 3 to 5 validators from the registry; fewer than minValidators qualified decides the session at once as no_quorum (escalate, human required)',
  payload: z
    .object({
      requestId: EntityId.describe('The action request; also the session id'),
      requestingAgent: AgentId.optional().describe('The agent asking to act; default the actor. Only an operator may name another agent'),
      actionType: ShortText(100).describe('What the agent wants to do, e.g. `deploy_production`'),
      riskLevel: RiskLevel,
      critical: z.boolean().optional().describe('Default: riskLevel is critical'),
      summary: ShortText(5000).optional().describe('The request, for the validators'),
      criteria: SelectionCriteria.default({ minTrustScore: 0, excludeAgents: [], preferredSpecializations: [] }),
      votingTimeoutMs: VotingTimeoutMs.optional().describe("This session's timeout; default the configuration's votingTimeoutMs"),
      toolCall: ToolCallBinding.optional().describe('For a governed tool call (agora mcp-proxy): the exact call this session decides; an approval is released for it once (ReleaseToolCall)'),
      decider: VotingDecider.optional().describe('Who decides; default validators. person: no validator is selected and the session waits at once in the operator\'s inbox'),
    })
    .strict(),
});

export const CastValidatorVote = defineCommand({
  type: 'CastValidatorVote',
  service: 'voting',
  aggregate: 'session',
  verb: 'vote',
  roles: ['validator'],
  relation: 'a validator selected for this session',
  summary:
    'Vote on a session you were selected for: approve, deny or abstain, with reasoning and a confidence from 0 to 1. Once per validator: the same vote again changes nothing, a different one (a changed mind) is refused. The last vote decides the session',
  payload: z
    .object({
      sessionId: EntityId,
      decision: VoteDecision,
      reasoning: ShortText(5000),
      confidence: Confidence,
      riskAssessment: ShortText(2000).optional(),
    })
    .strict(),
});

export const CancelVotingSession = defineCommand({
  type: 'CancelVotingSession',
  service: 'voting',
  aggregate: 'session',
  verb: 'cancel',
  roles: ['executive', 'operator'],
  relation: 'the requesting agent, or an operator',
  summary: 'Cancel a session still collecting votes (an operator, or the requesting agent itself)',
  payload: z.object({ sessionId: EntityId, reason: ShortText(1000) }).strict(),
});

export const DecideVotingEscalation = defineCommand({
  type: 'DecideVotingEscalation',
  service: 'voting',
  aggregate: 'session',
  verb: 'decide',
  roles: ['operator'],
  summary: "A human operator decides a session whose recommendation requires a human (escalated, or expired): approve or deny, with a reason. Closes the session",
  payload: z.object({ sessionId: EntityId, decision: OperatorVotingDecision, reason: ShortText(2000) }).strict(),
});

export const ExpireVotingSession = defineCommand({
  type: 'ExpireVotingSession',
  service: 'voting',
  aggregate: 'session',
  verb: 'expire',
  roles: [],
  issuers: ['voting'],
  summary:
    "Close a session at its timeout (issued by the voting service's durable scheduler at the due time): the partial votes make the recommendation and a human must decide. Refused before the deadline; nothing happens on a session already closed",
  payload: z.object({ sessionId: EntityId }).strict(),
});

export const UpdateVotingConfig = defineCommand({
  type: 'UpdateVotingConfig',
  service: 'voting',
  aggregate: 'config',
  verb: 'update',
  roles: ['operator'],
  summary: 'Change the voting configuration (the fields given); sessions created from then on are decided by it, sessions already created keep the rules they recorded',
  payload: z
    .object({
      minValidators: ValidatorCount.optional(),
      maxValidators: ValidatorCount.optional(),
      votingTimeoutMs: VotingTimeoutMs.optional(),
      requireUnanimousForCritical: z.boolean().optional(),
      minConfidence: Confidence.optional(),
      weightByTrustScore: z.boolean().optional(),
    })
    .strict()
    .refine((p) => Object.keys(p).length > 0, { message: 'name at least one setting to change' })
    .meta({ minProperties: 1 }),
});

export const ReleaseToolCall = defineCommand({
  type: 'ReleaseToolCall',
  service: 'voting',
  aggregate: 'session',
  verb: 'release',
  roles: ['executive'],
  relation: 'the requesting agent of a session created for a tool call',
  summary:
    "Use an approved session's decision for the tool call it was created for, before the call is forwarded: the digest must be the session's, the final decision approve, and the approval unused. Once: a second release is refused",
  payload: z.object({ sessionId: EntityId, callDigest: Sha256Hex }).strict(),
});

export const RecordToolCallResult = defineCommand({
  type: 'RecordToolCallResult',
  service: 'voting',
  aggregate: 'session',
  verb: 'record_result',
  roles: ['executive'],
  relation: 'the requesting agent, after releasing the call',
  summary: 'Record what became of a released tool call: its outcome and the sha256 of its result (the result itself stays with the agent). Once; the same record again changes nothing',
  payload: z.object({ sessionId: EntityId, outcome: ToolCallOutcome, resultDigest: Sha256Hex.describe('sha256 of the RFC 8785 canonical JSON of the tool result (of the error message when failed)') }).strict(),
});

// ---------------------------------------------------------------------------------------------
// Events (category `voting_session`, stream `voting_session-<sessionId>`; and `voting_config`)
// ---------------------------------------------------------------------------------------------

const base = { sessionId: EntityId };

export const VotingSessionCreated = defineEvent({
  type: 'VotingSessionCreated',
  category: VOTING_SESSION_CATEGORY,
  summary: 'A session was created for an action request, with the validators selected and the rules that will decide it (a replay never re-selects); `deadlineAt` is its timeout',
  data: z.object({
    ...base,
    requestId: EntityId,
    requestingAgent: AgentId,
    createdBy: AgentId,
    actionType: z.string(),
    riskLevel: RiskLevel,
    critical: z.boolean(),
    summary: z.string().nullable(),
    criteria: SelectionCriteria,
    rules: VotingRules,
    configRevision: z.number().int().min(-1).describe('Revision of the voting_config-global stream the rules came from; -1: the defaults'),
    candidates: z.number().int().min(0).describe('Validators the registry offered'),
    validators: z.array(SelectedValidator),
    createdAt: Timestamp,
    deadlineAt: Timestamp,
    toolCall: ToolCallBinding.optional().describe('A governed tool call: the exact call this session decides'),
    decider: VotingDecider.optional().describe('person: created for a human operator to decide, no validators; absent: validators'),
  }),
});

export const ValidatorVoteReceived = defineEvent({
  type: 'ValidatorVoteReceived',
  category: VOTING_SESSION_CATEGORY,
  summary: 'A selected validator voted; `weight` is what the vote counts for in the consensus',
  data: z.object({
    ...base,
    validator: AgentId,
    validatorName: z.string(),
    decision: VoteDecision,
    reasoning: z.string(),
    confidence: Confidence,
    riskAssessment: z.string().nullable(),
    trustScore: TrustScore.describe('As recorded at selection'),
    weight: z.number().min(0),
    votedAt: Timestamp,
  }),
});

export const VotingConsensusReached = defineEvent({
  type: 'VotingConsensusReached',
  category: VOTING_SESSION_CATEGORY,
  summary: "Every selected validator has voted: the consensus of the votes (the seed's consensus:reached); VotingSessionDecided follows in the same commit",
  data: z.object({ ...base, consensus: ConsensusType, tally: VoteTally, reachedAt: Timestamp }),
});

export const VotingSessionDecided = defineEvent({
  type: 'VotingSessionDecided',
  category: VOTING_SESSION_CATEGORY,
  summary: 'The session is decided: every validator voted, or too few validators qualified at creation (no_quorum). An escalated recommendation waits for DecideVotingEscalation',
  data: z.object({
    ...base,
    trigger: z.enum(['all_voted', 'no_quorum_at_creation', 'person_decides']),
    recommendation: Recommendation,
    tally: VoteTally,
    votingTimeMs: z.number().int().min(0).describe('From creation to decision'),
    decidedAt: Timestamp,
  }),
});

export const VotingSessionExpired = defineEvent({
  type: 'VotingSessionExpired',
  category: VOTING_SESSION_CATEGORY,
  summary: 'The timeout passed before every validator voted: the partial votes made the recommendation, and a human operator must decide (requiresHitl)',
  data: z.object({
    ...base,
    recommendation: Recommendation,
    tally: VoteTally,
    missing: z.array(AgentId).describe('Selected validators that had not voted'),
    deadlineAt: Timestamp,
    votingTimeMs: z.number().int().min(0).describe('From creation to expiry'),
    expiredAt: Timestamp,
  }),
});

export const VotingSessionCancelled = defineEvent({
  type: 'VotingSessionCancelled',
  category: VOTING_SESSION_CATEGORY,
  summary: 'The session was cancelled before it was decided',
  data: z.object({ ...base, reason: z.string(), cancelledBy: AgentId, votesReceived: z.number().int().min(0), cancelledAt: Timestamp }),
});

export const VotingEscalationResolved = defineEvent({
  type: 'VotingEscalationResolved',
  category: VOTING_SESSION_CATEGORY,
  summary: "A human operator decided a session that required one: the final decision; the session is closed",
  data: z.object({
    ...base,
    decision: OperatorVotingDecision,
    operator: AgentId,
    reason: z.string(),
    escalationReason: EscalationReason.nullable(),
    resolvedAt: Timestamp,
  }),
});

export const VotingConfigUpdated = defineEvent({
  type: 'VotingConfigUpdated',
  category: VOTING_CONFIG_CATEGORY,
  summary: 'An operator changed the voting configuration: `config` is the whole configuration from now on, `changed` the settings that changed',
  data: z.object({ config: VotingConfig, changed: z.array(z.string()), updatedBy: AgentId, updatedAt: Timestamp }),
});

export const ToolCallReleased = defineEvent({
  type: 'ToolCallReleased',
  category: VOTING_SESSION_CATEGORY,
  summary: "The session's approval was used for the tool call it is bound to (the call is forwarded next); it cannot be used again",
  data: z.object({ ...base, server: z.string(), tool: z.string(), callDigest: Sha256Hex, releasedBy: AgentId, releasedAt: Timestamp }),
});

export const ToolCallResultRecorded = defineEvent({
  type: 'ToolCallResultRecorded',
  category: VOTING_SESSION_CATEGORY,
  summary: 'What became of a released tool call: its outcome and the digest of its result',
  data: z.object({ ...base, callDigest: Sha256Hex, outcome: ToolCallOutcome, resultDigest: Sha256Hex, recordedBy: AgentId, recordedAt: Timestamp }),
});

