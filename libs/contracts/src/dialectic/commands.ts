// Dialectic contracts: the commands, of the registry's circuit breaker and of the dialectic service by phase.
import { z } from 'zod';
import { AgentId, EntityId, type Role, ShortText, Timestamp } from '../common.js';
import { defineCommand } from '../define.js';
import { EventCause, Unit } from '../registry/agents.js';
import { session, signedBy } from './fields.js';
import { Condition, Conditions, DecidedBy, IssueTag, ObservedMetrics, RecoveryCandidate, RiskThreshold } from './vocabulary.js';

/** Every role: the gate lets any registered agent through, the decider checks who it is (the paused agent, its reviewer...). */
const ANY_ROLE: Role[] = ['executive', 'reviewer', 'validator', 'operator', 'observer'];

// ---------------------------------------------------------------------------------------------
// Commands: registry (circuit breaker)
// ---------------------------------------------------------------------------------------------

export const ReportHealth = defineCommand({
  type: 'ReportHealth',
  service: 'registry',
  aggregate: 'agent',
  verb: 'report_health',
  roles: ANY_ROLE,
  relation: 'the agent itself, or an operator',
  whilePaused: true,
  summary:
    "Report an agent's health and risk (the agent itself, or an operator's monitor). A risk at or above the agent's threshold (default 0.60) trips its circuit breaker: AgentPaused is recorded with the report, a recovery session is opened, and the agent's commands to other services are refused with forbidden until it resumes. A report that trips nothing is recorded only when it differs from the last recorded one (health or risk moved by 0.05 or more, other tags, a note), once a minute per agent as a sample, and always while the agent is paused or on probation; otherwise it is answered with no events (nothing written)",
  payload: z
    .object({
      agentId: AgentId,
      health: Unit.describe('0 to 1, 1 = healthy'),
      risk: Unit.describe('0 to 1, 0 = no risk'),
      tags: z.array(IssueTag).max(16).default([]).describe('What the report is about (used to find reviewers who handled similar issues)'),
      metrics: ObservedMetrics.default({}),
      note: ShortText(1000).optional(),
    })
    .strict(),
});

// ---------------------------------------------------------------------------------------------
// Commands: dialectic service
// ---------------------------------------------------------------------------------------------

export const OpenRecovery = defineCommand({
  type: 'OpenRecovery',
  service: 'dialectic',
  aggregate: 'session',
  verb: 'open',
  roles: [],
  issuers: ['dialectic'],
  summary:
    'Open the recovery session of a pause (issued by the dialectic service on AgentPaused, under its operator identity, with the candidates from the registry and a seed). Draws the reviewer by authority and records the draw; escalates to an operator when nobody is eligible. The same pause again changes nothing',
  payload: z
    .object({
      ...session,
      agentId: AgentId,
      pause: z.number().int().min(1).describe('AgentPaused.pause; the session id must be `<agentId>-p<pause>`'),
      reason: ShortText(1000),
      risk: Unit,
      health: Unit,
      threshold: RiskThreshold,
      tags: z.array(IssueTag).max(16).default([]),
      pausedAt: Timestamp,
      seed: z.number().int().min(0).max(0xffffffff).describe('Seed of the draws of this session (seedFrom(event id) of the AgentPaused)'),
      candidates: z.array(RecoveryCandidate).max(500),
    })
    .strict(),
});

export const SubmitThesis = defineCommand({
  type: 'SubmitThesis',
  service: 'dialectic',
  aggregate: 'session',
  verb: 'thesis',
  roles: ANY_ROLE,
  relation: 'the paused agent of this recovery',
  whilePaused: true,
  summary: 'The paused agent says what it did and what it thinks happened: its root cause, the conditions it proposes, and its reasoning',
  payload: z
    .object({
      ...session,
      rootCause: ShortText(2000),
      proposedConditions: Conditions,
      reasoning: ShortText(5000),
    })
    .strict(),
});

export const SubmitAntithesis = defineCommand({
  type: 'SubmitAntithesis',
  service: 'dialectic',
  aggregate: 'session',
  verb: 'antithesis',
  roles: ANY_ROLE,
  relation: 'the reviewer drawn for this recovery',
  summary: 'The reviewer answers the thesis: what it observes (metrics), its concerns and reasoning, and optionally a counter-proposal (root cause and conditions)',
  payload: z
    .object({
      ...session,
      observedMetrics: ObservedMetrics,
      concerns: z.array(ShortText(1000)).min(1).max(20),
      reasoning: ShortText(5000),
      counterProposal: z.object({ rootCause: ShortText(2000), proposedConditions: Conditions }).strict().optional(),
    })
    .strict(),
});

export const SubmitSynthesis = defineCommand({
  type: 'SubmitSynthesis',
  service: 'dialectic',
  aggregate: 'session',
  verb: 'synthesis',
  roles: ANY_ROLE,
  relation: 'a party of this recovery (the paused agent or its reviewer)',
  whilePaused: true,
  summary:
    "A synthesis round: the parties alternate, the paused agent on odd rounds and the reviewer on even ones, up to maxSynthesisRounds (default 5). Convergence: both parties' latest messages agree (agrees) on the same root cause and the same conditions; the resolution is then checked against the hard limits and put to both for signature",
  payload: z
    .object({
      ...session,
      round: z.number().int().min(1).max(20).describe('The round this message is for: the next one'),
      rootCause: ShortText(2000),
      proposedConditions: Conditions,
      reasoning: ShortText(5000),
      agrees: z.boolean().describe('Ready to sign this root cause and these conditions'),
    })
    .strict(),
});

export const SignResolution = defineCommand({
  type: 'SignResolution',
  service: 'dialectic',
  aggregate: 'session',
  verb: 'sign',
  roles: ANY_ROLE,
  signs: 'resolution',
  relation: 'a party of this recovery, with its registered key',
  whilePaused: true,
  summary: 'A party signs the proposed resolution (its canonical payload, with its own id). Once both signatures verify, the recovery is resolved and the registry resumes the agent',
  payload: z.object({ ...session, ...signedBy }).strict(),
});

export const ExpireDialecticPhase = defineCommand({
  type: 'ExpireDialecticPhase',
  service: 'dialectic',
  aggregate: 'session',
  verb: 'expire',
  roles: [],
  issuers: ['dialectic'],
  summary:
    "Expire the session's pending deadline (issued by the dialectic service's scheduler at the due time): the party that was due timed out, and the recovery escalates. Refused before the deadline; nothing happens when the session has moved on",
  payload: z.object({ ...session, deadlineAt: Timestamp.describe('The deadline that fell due (a moved deadline makes this one stale)') }).strict(),
});

export const EscalateRecovery = defineCommand({
  type: 'EscalateRecovery',
  service: 'dialectic',
  aggregate: 'session',
  verb: 'escalate',
  roles: ANY_ROLE,
  relation: 'a party of this recovery; straight to an operator: an operator',
  whilePaused: true,
  summary: 'Give up on the current step and climb the ladder: a party during the dialectic, or an operator at any open step (an operator may go straight to tier 3)',
  payload: z
    .object({
      ...session,
      reason: ShortText(2000),
      toOperator: z.boolean().default(false).describe('Operators only: skip the tiers in between'),
    })
    .strict(),
});

export const AssignTieBreaker = defineCommand({
  type: 'AssignTieBreaker',
  service: 'dialectic',
  aggregate: 'session',
  verb: 'assign_tie_breaker',
  roles: [],
  issuers: ['dialectic'],
  summary:
    'Draw the tie-breaker of a tie_break escalation from the candidates (issued by the dialectic service on RecoveryEscalated). Nobody eligible climbs to the next tier. An escalation already answered changes nothing',
  payload: z.object({ ...session, escalation: z.number().int().min(1), candidates: z.array(RecoveryCandidate).max(500) }).strict(),
});

export const RecordTieBreak = defineCommand({
  type: 'RecordTieBreak',
  service: 'dialectic',
  aggregate: 'session',
  verb: 'tie_break',
  roles: ANY_ROLE,
  signs: 'resolution',
  relation: 'the tie-breaker drawn for this escalation',
  summary:
    "The tie-breaker sides with the paused agent's or the reviewer's latest position (signing the resolution it makes), or with neither (the recovery climbs to the next tier)",
  payload: z
    .object({
      ...session,
      escalation: z.number().int().min(1),
      side: z.enum(['agent', 'reviewer', 'neither']),
      reasoning: ShortText(5000),
      publicKey: signedBy.publicKey.optional().describe('Required unless side is neither'),
      signature: signedBy.signature.optional().describe('Required unless side is neither'),
    })
    .strict()
    .meta({ allOf: [{ if: { properties: { side: { enum: ['agent', 'reviewer'] } }, required: ['side'] }, then: { required: ['publicKey', 'signature'] } }] }),
});

export const QuorumDecision = z.enum(['approve', 'deny', 'escalate']).describe("The voting session's final decision (or its recommendation when a human had to decide and has not)");

export const RecordQuorumResult = defineCommand({
  type: 'RecordQuorumResult',
  service: 'dialectic',
  aggregate: 'session',
  verb: 'quorum_result',
  roles: [],
  issuers: ['dialectic'],
  summary:
    "Record the outcome of the quorum's voting session (issued by the dialectic service on the voting service's VotingSessionDecided, VotingSessionExpired or VotingEscalationResolved). Approved by at least quorumSize votes: resolved with the position put to the vote; otherwise the recovery goes to an operator",
  payload: z
    .object({
      ...session,
      escalation: z.number().int().min(1),
      votingSessionId: EntityId,
      decision: QuorumDecision,
      votes: z.number().int().min(0).describe('Votes received, abstentions included'),
      approve: z.number().int().min(0),
      deny: z.number().int().min(0),
      reason: ShortText(2000),
    })
    .strict(),
});

export const DecideRecovery = defineCommand({
  type: 'DecideRecovery',
  service: 'dialectic',
  aggregate: 'session',
  verb: 'decide',
  roles: ['operator'],
  signs: 'resolution',
  relation: 'an operator, on a recovery escalated to the operator tier',
  summary:
    'A human operator decides a recovery at tier 3: resume the agent under a root cause and conditions (signing the resolution; the hard limits still apply), or keep it paused. A paused outcome can later be reversed by a resume',
  payload: z
    .object({
      ...session,
      decision: z.enum(['resume', 'stay_paused']),
      reasoning: ShortText(5000),
      rootCause: ShortText(2000).optional().describe('resume: required'),
      conditions: Conditions.optional().describe('resume: required (may be empty)'),
      publicKey: signedBy.publicKey.optional().describe('resume: required'),
      signature: signedBy.signature.optional().describe('resume: required'),
    })
    .strict()
    .meta({ allOf: [{ if: { properties: { decision: { const: 'resume' } }, required: ['decision'] }, then: { required: ['rootCause', 'conditions', 'publicKey', 'signature'] } }] }),
});

export const RecordRelapse = defineCommand({
  type: 'RecordRelapse',
  service: 'dialectic',
  aggregate: 'session',
  verb: 'relapse',
  roles: [],
  issuers: ['dialectic'],
  summary:
    "Record that the agent this session resumed paused again (issued by the dialectic service on an AgentPaused naming this session as the previous resume). Within the session's relapseWindowMs it is a relapse (a failure for the reviewer's track record); later, nothing is recorded",
  payload: z.object({ ...session, pause: z.number().int().min(2).describe('The new pause'), risk: Unit, pausedAt: Timestamp }).strict(),
});

export const AssignAuditor = defineCommand({
  type: 'AssignAuditor',
  service: 'dialectic',
  aggregate: 'session',
  verb: 'assign_auditor',
  roles: [],
  issuers: ['dialectic'],
  summary: 'Draw the second reviewer of a resolution the audit sample picked (issued by the dialectic service on RecoveryResolved with audit.sampled). Already assigned: nothing',
  payload: z.object({ ...session, candidates: z.array(RecoveryCandidate).max(500) }).strict(),
});

export const SubmitAudit = defineCommand({
  type: 'SubmitAudit',
  service: 'dialectic',
  aggregate: 'session',
  verb: 'audit',
  roles: ANY_ROLE,
  relation: 'the auditor drawn for this resolution',
  summary: "The auditor's verdict on a resolution: sound, or unsound (which counts against the reviewer's track record)",
  payload: z.object({ ...session, verdict: z.enum(['sound', 'unsound']), reasoning: ShortText(5000) }).strict(),
});

/** Recorded by the registry itself in answer to RecoveryResolved (never by an agent). */
export const ResumeAgent = defineCommand({
  type: 'ResumeAgent',
  service: 'registry',
  aggregate: 'agent',
  verb: 'resume',
  roles: [],
  issuers: ['registry'],
  summary: "Resume a paused agent under the conditions of its recovery's resolution",
  payload: z
    .object({
      agentId: AgentId,
      pause: z.number().int().min(1),
      sessionId: EntityId,
      decidedBy: DecidedBy,
      conditions: z.array(Condition),
      riskThreshold: RiskThreshold.nullable(),
      cause: EventCause,
    })
    .strict(),
});
