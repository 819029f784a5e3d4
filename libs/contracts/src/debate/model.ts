/**
 * Crux debate (seed 004): the vocabulary and the shape of a debate as it is folded from its log.
 * The commands, events and queries are in debate.ts.
 *
 * A debate (`debate-<debateId>`) has 2 to 5 participants (agents with the role `debater`) and 1 to
 * 4 threads. Each thread goes through the stages DISCOVERY -> CRUX_LOCK -> EVIDENCE -> CONVERGED,
 * or ends UNRESOLVED (with its reason) when its crux never locks. Every thread crystallizes a
 * ThreadCrux; the debate completes when every thread has ended, and its primary crux is the
 * validated crux with the highest Disagreement Compression Gain (DCG).
 */
import { z } from 'zod';
import { AgentId, EntityId, ShortText, Timestamp } from '../common.js';

/** Stream category of debates: streams are `debate-<debateId>`. */
export const DEBATE_CATEGORY = 'debate';

export const DebateStage = z.enum(['DISCOVERY', 'CRUX_LOCK', 'EVIDENCE', 'CONVERGED', 'UNRESOLVED']);
export type DebateStage = z.infer<typeof DebateStage>;

export const MoveKind = z
  .enum([
    'CLAIM',
    'QUESTION',
    'PROPOSE_QUESTION',
    'ACCEPT_QUESTION',
    'COMMIT',
    'STEELMAN',
    'GRADE_STEELMAN',
    'DECLARE_FALSIFIER',
    'ACCEPT_FALSIFIER',
    'CHALLENGE',
    'PROVIDE_EVIDENCE',
    'CONCEDE',
    'CONCLUDE',
    'PROPOSE_THREAD',
    'SECOND_THREAD',
  ])
  .describe('A debater move; each stage allows some of them, and PROPOSE_THREAD / SECOND_THREAD (spawning a thread) are allowed in any open thread (see docs/protocols/debate.md)');
export type MoveKind = z.infer<typeof MoveKind>;

export const CommitSide = z.enum(['YES', 'NO', 'UNCERTAIN']);
export type CommitSide = z.infer<typeof CommitSide>;
export const ClaimSide = z.enum(['YES', 'NO', 'NUANCED']);
export type ClaimSide = z.infer<typeof ClaimSide>;
export const SteelmanGrade = z.enum(['ACCURATE', 'INCOMPLETE', 'WRONG']);
export type SteelmanGrade = z.infer<typeof SteelmanGrade>;
export const DebateConfidence = z.number().min(0).max(1).describe('0 to 1');

/** The four crux-lock criteria of the seed, in its order. */
export const LockCriterion = z
  .enum(['two_committed', 'yes_and_no', 'steelmans_accurate', 'falsifiers_declared'])
  .describe(
    'two_committed: at least 2 agents committed (YES/NO/UNCERTAIN); yes_and_no: both YES and NO present; steelmans_accurate: every pair of opposing committed agents steelmanned each other, graded ACCURATE both ways; falsifiers_declared: every committed agent has a structured falsifier',
  );
export type LockCriterion = z.infer<typeof LockCriterion>;

export const InterventionKind = z
  .enum(['lock_prompt', 'forced_binary', 'proposed_falsifiers', 'orbiting', 'horizon_mismatch'])
  .describe(
    'lock_prompt: after a failed lock, what is missing; forced_binary: after 2 failed locks, the question restated as YES/NO (UNCERTAIN refused from then on); proposed_falsifiers: after 3, falsifiers from the dialogue that the agents must accept or replace; orbiting: keyword repetition above the threshold; horizon_mismatch: falsifier deadlines too far apart',
  );
export type InterventionKind = z.infer<typeof InterventionKind>;

export const UnresolvedReason = z.enum(['lock_attempts_exhausted']).describe('lock_attempts_exhausted: the crux never locked within maxLockAttempts');
export type UnresolvedReason = z.infer<typeof UnresolvedReason>;

export const DebateOutcome = z
  .enum(['converged', 'unvalidated', 'unresolved'])
  .describe('converged: a validated primary crux; unvalidated: threads converged but no crux passed validation; unresolved: no thread converged');
export type DebateOutcome = z.infer<typeof DebateOutcome>;

const Budget = z
  .object({ min: z.number().int().min(1).max(100), max: z.number().int().min(1).max(200) })
  .strict()
  .refine((b) => b.max >= b.min, { message: 'a budget needs max >= min' });

/** Per-debate settings; every field has the seed's default. */
export const DebateSettings = z
  .object({
    discovery: Budget.describe("Messages in DISCOVERY: advances at min once a binary question is accepted; at max, without one, the moderator frames the question from the thread's messages and the thread advances with it (or merges into a thread already on that question)"),
    cruxLock: Budget.describe('Messages in CRUX_LOCK: the lock is attempted at min, then every (max - min, at least 1) messages after a failed attempt. Unless set, it follows from the n participants: min = 2n + 4 * floor(n/2) * ceil(n/2) (the fewest moves a lock can pass with: commitments, falsifiers, and a graded steelman each way between opponents at the most even split), max = min + 2 (two agents: 8-10; three: 14-16)'),
    evidence: Budget.describe('Messages in EVIDENCE: crystallizes at min once every agent has sent CONCLUDE, and at max in any case'),
    maxLockAttempts: z.number().int().min(1).max(10).describe('Failed lock attempts before the thread is UNRESOLVED'),
    orbitingThreshold: z.number().min(1).max(10).describe('Keyword repetition (occurrences / distinct keywords over the window) above which the moderator calls orbiting'),
    orbitingWindow: z.number().int().min(2).max(50).describe('Messages of a stage the orbiting measure looks at'),
    horizonRatio: z.number().min(1).max(100).describe('Falsifier horizons (deadline minus now) differing by more than this factor are a horizon mismatch'),
  })
  .strict();
export type DebateSettings = z.infer<typeof DebateSettings>;

/**
 * The seed's defaults. `cruxLock` is two agents' (the seed's 6-8 could not lock: two agents need 8
 * moves); a debate's own follows from its participants (see DebateSettings.cruxLock).
 */
export const DEFAULT_DEBATE_SETTINGS: DebateSettings = {
  discovery: { min: 6, max: 10 },
  cruxLock: { min: 8, max: 10 },
  evidence: { min: 12, max: 16 },
  maxLockAttempts: 4,
  orbitingThreshold: 2.0,
  orbitingWindow: 6,
  horizonRatio: 3,
};

/** What OpenDebate's `settings` says of its defaults: written from DEFAULT_DEBATE_SETTINGS, so it cannot drift from them. */
export function debateSettingsDefaults(d: DebateSettings = DEFAULT_DEBATE_SETTINGS): string {
  return `Defaults: DISCOVERY ${d.discovery.min}-${d.discovery.max} messages, CRUX_LOCK from the participants (see cruxLock), EVIDENCE ${d.evidence.min}-${d.evidence.max}, ${d.maxLockAttempts} lock attempts, orbiting above ${d.orbitingThreshold.toFixed(1)} over ${d.orbitingWindow} messages, horizon ratio ${d.horizonRatio}`;
}

export const TopClaim = z
  .object({
    statement: ShortText(500).describe('What the agent is really arguing'),
    side: ClaimSide,
    confidence: DebateConfidence,
    flipsIfCruxFlips: z.boolean().describe('Whether this TopClaim would flip if the crux answer flipped (the counterfactual)'),
  })
  .strict();
export type TopClaim = z.infer<typeof TopClaim>;

export const Comparator = z.enum(['>=', '>', '<=', '<', '=']);
export type Comparator = z.infer<typeof Comparator>;

export const Threshold = z.object({ comparator: Comparator, value: z.number(), unit: z.string().min(1).max(40), text: z.string() }).strict();
export type Threshold = z.infer<typeof Threshold>;

export const FalsifierView = z.object({
  falsifierId: z.string().describe('`<threadId>.f<seq>`'),
  agentId: AgentId,
  metric: z.string(),
  threshold: Threshold,
  deadline: z.string().describe('YYYY-MM-DD, after the debate'),
  reasoning: z.string(),
  seq: z.number().int(),
  source: z.enum(['agent', 'moderator_proposal']),
});
export type FalsifierView = z.infer<typeof FalsifierView>;

export const ProposedFalsifierView = z.object({
  proposalId: z.string(),
  forAgent: AgentId,
  metric: z.string(),
  threshold: Threshold,
  deadline: z.string(),
  reasoning: z.string(),
  status: z.enum(['pending', 'accepted', 'replaced']),
});
export type ProposedFalsifierView = z.infer<typeof ProposedFalsifierView>;

export const MessageView = z.object({
  seq: z.number().int().min(1).describe('Order of the message in the debate (all threads)'),
  threadId: EntityId,
  stage: DebateStage,
  agentId: z.string().describe('The debater, or `moderator` for an intervention'),
  kind: z.union([MoveKind, z.literal('MODERATOR')]),
  text: z.string(),
  target: AgentId.nullable(),
  at: Timestamp,
});
export type MessageView = z.infer<typeof MessageView>;

export const SteelmanView = z.object({
  seq: z.number().int(),
  author: AgentId,
  target: AgentId,
  text: z.string(),
  firstAttempt: z.boolean().describe("The author's first steelman of this target"),
  grade: SteelmanGrade.nullable(),
  reason: z.string().nullable(),
});
export type SteelmanView = z.infer<typeof SteelmanView>;

export const CommitmentView = z.object({ agentId: AgentId, side: CommitSide, confidence: DebateConfidence, topClaim: TopClaim, seq: z.number().int() });
export type CommitmentView = z.infer<typeof CommitmentView>;

export const QuestionView = z.object({ seq: z.number().int(), text: z.string(), proposedBy: AgentId, acceptedBy: z.array(AgentId), accepted: z.boolean() });
export type QuestionView = z.infer<typeof QuestionView>;

export const LockAttemptView = z.object({ attempt: z.number().int().min(1), at: Timestamp, passed: z.boolean(), failed: z.array(LockCriterion), missing: z.array(z.string()) });
export type LockAttemptView = z.infer<typeof LockAttemptView>;

export const InterventionView = z.object({ kind: InterventionKind, ref: z.number().int(), text: z.string(), at: Timestamp, seq: z.number().int() });
export type InterventionView = z.infer<typeof InterventionView>;

export const ConcessionView = z.object({ seq: z.number().int(), agentId: AgentId, point: z.string(), topClaimChanged: z.boolean() });
export type ConcessionView = z.infer<typeof ConcessionView>;

export const EvidenceView = z.object({ seq: z.number().int(), agentId: AgentId, falsifierId: z.string(), text: z.string(), source: z.string().nullable(), bearing: z.enum(['supports', 'undermines']) });
export type EvidenceView = z.infer<typeof EvidenceView>;

export const CruxValidation = z.object({
  realDisagreement: z.boolean().describe('YES and NO both present among the final positions'),
  concreteFalsifiers: z.boolean().describe('At least one falsifier, every one structured (comparator, number, unit, future date, no hedge words)'),
  decisionRelevant: z.boolean().describe("At least 2 agents whose TopClaim would flip if the crux flipped"),
  resolutionCriteria: z.boolean().describe('Resolution criteria derived from the falsifiers'),
  failures: z.array(z.string()).describe('One sentence per failed check; empty when validated'),
});
export type CruxValidation = z.infer<typeof CruxValidation>;

/** The seed's ThreadCrux (Milestone 5 output). */
export const ThreadCrux = z.object({
  question: z.string(),
  positions: z.record(z.string(), z.object({ side: CommitSide, confidence: DebateConfidence, topClaim: z.string(), topClaimSide: ClaimSide })),
  falsifiers: z.array(z.object({ agentId: AgentId, metric: z.string(), threshold: z.string(), deadline: z.string(), reasoning: z.string() })),
  counterfactual: z.record(z.string(), z.object({ topClaim: z.string(), flipsIfCruxFlips: z.boolean() })),
  resolutionCriteria: z.array(z.string()),
  validated: z.boolean(),
  validation: CruxValidation,
});
export type ThreadCrux = z.infer<typeof ThreadCrux>;

export const DcgScore = z.object({
  threadId: EntityId,
  coverage: z.number().min(0).max(1),
  polarity: z.number().min(0).max(1),
  impact: z.number().min(0).max(1),
  score: z.number().min(0).max(1),
});
export type DcgScore = z.infer<typeof DcgScore>;

/** A proposal to spawn a thread (the "second bite"): it spawns once another participant seconds it. */
export const SpawnProposalView = z.object({
  seq: z.number().int().describe('The PROPOSE_THREAD message'),
  topic: z.string(),
  proposedBy: AgentId,
  secondedBy: AgentId.nullable(),
  spawnedThreadId: EntityId.nullable(),
});
export type SpawnProposalView = z.infer<typeof SpawnProposalView>;

/** After the debate: agents that took the same side on the threads they both committed on. */
export const Coalition = z.object({
  members: z.array(AgentId).min(2),
  threads: z.array(EntityId).describe('Threads on which every member committed'),
  agreement: z.number().min(0).max(1).describe('Share of those threads on which the members took the same side (1: all)'),
});
export type Coalition = z.infer<typeof Coalition>;

/** After the debate: what the participants agree on, whatever their cruxes. */
export const CommonGround = z.object({
  agreedQuestions: z.array(z.object({ threadId: EntityId, question: z.string(), side: CommitSide, agents: z.array(AgentId) })).describe('Questions on which every committed agent (2 or more) took the same side'),
  concessions: z.array(z.object({ threadId: EntityId, agentId: AgentId, point: z.string() })).describe("Points conceded to an opponent: the conceder accepts them, the opponent made them"),
  sharedMetrics: z.array(z.object({ metric: z.string(), agents: z.array(AgentId) })).describe('Metrics that agents of opposite sides both named in a falsifier: they agree on what would settle it'),
});
export type CommonGround = z.infer<typeof CommonGround>;

export const ThreadView = z.object({
  threadId: EntityId,
  topic: z.string(),
  parentThreadId: EntityId.nullable().describe('The thread it was spawned from (null: opened with the debate)'),
  mergedInto: EntityId.nullable().describe('Merged as a duplicate into this thread: it ended there'),
  spawnProposals: z.array(SpawnProposalView).describe('Proposals to spawn a thread, made in this thread'),
  stage: DebateStage,
  unresolvedReason: UnresolvedReason.nullable(),
  stageMessages: z.number().int().describe('Messages in the current stage'),
  sinceLockAttempt: z.number().int().describe('CRUX_LOCK messages since the last lock attempt'),
  questions: z.array(QuestionView),
  question: z.string().nullable().describe('The accepted binary question'),
  forcedBinary: z.boolean().describe('The moderator forced binary framing: UNCERTAIN commitments are refused'),
  commitments: z.array(CommitmentView),
  steelmans: z.array(SteelmanView),
  falsifiers: z.array(FalsifierView),
  proposedFalsifiers: z.array(ProposedFalsifierView),
  lockAttempts: z.array(LockAttemptView),
  interventions: z.array(InterventionView),
  evidence: z.array(EvidenceView),
  concessions: z.array(ConcessionView),
  concluded: z.array(AgentId),
  crux: ThreadCrux.nullable(),
});
export type ThreadView = z.infer<typeof ThreadView>;

export const Participant = z.object({ agentId: AgentId, persona: ShortText(500).describe('Who the debater plays, e.g. "Michael Saylor: Bitcoin maximalist"') }).strict();
export type Participant = z.infer<typeof Participant>;

export const Usage = z
  .object({
    model: z.string().max(100).optional(),
    costUsd: z.number().min(0),
    inputTokens: z.number().int().min(0),
    outputTokens: z.number().int().min(0),
    latencyMs: z.number().int().min(0),
  })
  .strict()
  .describe('What producing the move cost (a model call); summed per debate');
export type Usage = z.infer<typeof Usage>;

export const DebateView = z.object({
  status: z.enum(['open', 'complete']),
  debateId: EntityId,
  topic: z.string(),
  openedBy: AgentId,
  participants: z.array(Participant),
  settings: DebateSettings,
  threads: z.array(ThreadView),
  messages: z.array(MessageView),
  openedAt: Timestamp,
  updatedAt: Timestamp,
  completedAt: Timestamp.nullable(),
  outcome: DebateOutcome.nullable(),
  primaryThreadId: EntityId.nullable(),
  dcg: z.array(DcgScore),
  usage: z.object({ calls: z.number().int(), costUsd: z.number(), inputTokens: z.number().int(), outputTokens: z.number().int(), latencyMs: z.number().int() }),
  streamRevision: z.number().int().describe('Revision of the debate stream this view reflects'),
});
export type DebateView = z.infer<typeof DebateView>;

export const DebateSummary = z.object({
  debateId: EntityId,
  topic: z.string(),
  status: z.enum(['open', 'complete']),
  participants: z.array(AgentId),
  stages: z.array(z.object({ threadId: EntityId, stage: DebateStage })),
  outcome: DebateOutcome.nullable(),
  openedAt: Timestamp,
  completedAt: Timestamp.nullable(),
});
export type DebateSummary = z.infer<typeof DebateSummary>;
