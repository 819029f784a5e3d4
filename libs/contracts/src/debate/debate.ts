/**
 * Crux debate (seed 004): commands, events and queries. The vocabulary and the debate's folded
 * shape are in debate-model.ts; the rules in libs/domain-debate.
 *
 * Subjects: `agora.cmd.debate.debate.open` (OpenDebate), `agora.cmd.debate.debate.move`
 * (PostDebateMove, every debater move), `agora.qry.debate.debates.get|list`. ModerateDebate
 * (`agora.cmd.debate.debate.moderate`) is service-only: the debate service issues it on its own
 * behalf (the moderator), signed with its key; the gate answers any agent's `service_only`.
 */
import { z } from 'zod';
import { AgentId, EntityId, ShortText, Timestamp } from '../common.js';
import { NextCursor, pageParams } from '../paging.js';
import {
  Coalition,
  CommitmentView,
  CommitSide,
  CommonGround,
  CruxValidation,
  DEBATE_CATEGORY,
  DebateConfidence,
  DebateOutcome,
  DebateSettings,
  debateSettingsDefaults,
  DebateStage,
  DebateSummary,
  DebateView,
  DcgScore,
  FalsifierView,
  InterventionKind,
  LockCriterion,
  MoveKind,
  Participant,
  ProposedFalsifierView,
  SteelmanGrade,
  SteelmanView,
  Threshold,
  ThreadCrux,
  TopClaim,
  UnresolvedReason,
  Usage,
} from './model.js';
import { access, defineCommand, defineEvent, defineQuery } from '../define.js';

const Text = ShortText(4000);
const ThreadId = EntityId.describe('A thread of the debate (default `main`)');

// ---------------------------------------------------------------------------------------------
// Commands
// ---------------------------------------------------------------------------------------------

export const DebateMove = z.discriminatedUnion('kind', [
  z.object({ kind: z.literal('CLAIM'), text: Text }).strict(),
  z.object({ kind: z.literal('QUESTION'), text: Text }).strict(),
  z.object({ kind: z.literal('PROPOSE_QUESTION'), text: Text.describe('A binary (YES/NO) question, e.g. "Will Bitcoin ...?"') }).strict(),
  z.object({ kind: z.literal('ACCEPT_QUESTION'), questionSeq: z.number().int().min(1).describe('The seq of the PROPOSE_QUESTION message'), text: Text }).strict(),
  z.object({ kind: z.literal('COMMIT'), side: CommitSide, confidence: DebateConfidence, topClaim: TopClaim, text: Text }).strict(),
  z.object({ kind: z.literal('STEELMAN'), target: AgentId, text: Text.describe("The opponent's position, as strongly as the author can put it") }).strict(),
  z.object({ kind: z.literal('GRADE_STEELMAN'), steelmanSeq: z.number().int().min(1), grade: SteelmanGrade, text: Text.describe('The reason for the grade') }).strict(),
  z
    .object({
      kind: z.literal('DECLARE_FALSIFIER'),
      metric: ShortText(300).describe('What is measured, e.g. "Spot BTC ETF AUM"'),
      threshold: ShortText(100).describe('Comparator, number and unit, e.g. ">= 100 USD bn", ">= $100B", "> 50 %"'),
      deadline: ShortText(40).describe('A date after the debate, YYYY-MM-DD'),
      text: Text.describe('Why this would change the author\'s mind'),
      replaces: z.string().max(100).optional().describe('A pending moderator proposal this falsifier replaces'),
    })
    .strict(),
  z.object({ kind: z.literal('ACCEPT_FALSIFIER'), proposalId: z.string().min(1).max(100), text: Text }).strict(),
  z.object({ kind: z.literal('CHALLENGE'), target: AgentId, text: Text }).strict(),
  z
    .object({
      kind: z.literal('PROVIDE_EVIDENCE'),
      falsifierId: z.string().min(1).max(100).describe('The declared falsifier the evidence bears on'),
      bearing: z.enum(['supports', 'undermines']).describe("Whether it supports or undermines the falsifier's owner"),
      source: z.string().max(500).optional(),
      text: Text,
    })
    .strict(),
  z.object({ kind: z.literal('CONCEDE'), text: Text.describe('The point conceded'), topClaim: TopClaim.optional().describe('The TopClaim after the concession; unchanged or absent is a cheap concession') }).strict(),
  z.object({ kind: z.literal('CONCLUDE'), text: Text }).strict(),
  z.object({ kind: z.literal('PROPOSE_THREAD'), topic: ShortText(500).describe('The sub-dispute a new thread would take up'), text: Text.describe('Why it deserves its own thread') }).strict(),
  z.object({ kind: z.literal('SECOND_THREAD'), proposalSeq: z.number().int().min(1).describe('The seq of the PROPOSE_THREAD message (in this thread)'), text: Text }).strict(),
]);
export type DebateMove = z.infer<typeof DebateMove>;

export const OpenDebate = defineCommand({
  type: 'OpenDebate',
  service: 'debate',
  aggregate: 'debate',
  verb: 'open',
  roles: ['debater', 'operator'],
  summary: 'Open a crux debate between 2 to 5 debaters on 1 to 4 threads, with the seed\'s budgets unless settings say otherwise. Opening an existing debate again changes nothing',
  payload: z
    .object({
      debateId: EntityId,
      topic: ShortText(500),
      participants: z.array(Participant).min(2).max(5),
      threads: z
        .array(z.object({ threadId: ThreadId, topic: ShortText(500) }).strict())
        .min(1)
        .max(4)
        .optional()
        .describe('Default one thread `main` on the topic'),
      settings: DebateSettings.partial().optional().describe(debateSettingsDefaults()),
    })
    .strict(),
});

export const PostDebateMove = defineCommand({
  type: 'PostDebateMove',
  service: 'debate',
  aggregate: 'debate',
  verb: 'move',
  roles: ['debater'],
  relation: "a participant of the debate (GRADE_STEELMAN: the steelman's target; ACCEPT_FALSIFIER: the agent it was proposed for)",
  summary:
    'A debater\'s move in a thread. Refused (illegal_state) when the stage does not allow it or its budget is spent, naming the stage and the moves allowed; a CHALLENGE before the challenger\'s steelman of the target was graded ACCURATE; a vague falsifier (hedge words, no comparator, number or unit, no date, a past deadline)',
  payload: z.object({ debateId: EntityId, threadId: ThreadId.default('main'), move: DebateMove, usage: Usage.optional() }).strict(),
});

export const ModeratorMove = z.discriminatedUnion('kind', [
  z.object({ kind: z.literal('lock_prompt'), attempt: z.number().int().min(1) }).strict(),
  z.object({ kind: z.literal('forced_binary'), attempt: z.number().int().min(1) }).strict(),
  z.object({ kind: z.literal('proposed_falsifiers'), attempt: z.number().int().min(1) }).strict(),
  z.object({ kind: z.literal('orbiting'), seq: z.number().int().min(1).describe('The message after which orbiting is checked') }).strict(),
  z.object({ kind: z.literal('horizon_mismatch'), seq: z.number().int().min(1).describe('The falsifier message after which horizons are compared') }).strict(),
]);
export type ModeratorMove = z.infer<typeof ModeratorMove>;

export const ModerateDebate = defineCommand({
  type: 'ModerateDebate',
  service: 'debate',
  aggregate: 'debate',
  verb: 'moderate',
  roles: [],
  issuers: ['debate'],
  summary: "The moderator's intervention, issued by the debate service itself (signed with its key) in answer to a failed lock, orbiting or a horizon mismatch; no agent may send it",
  payload: z.object({ debateId: EntityId, threadId: ThreadId, intervention: ModeratorMove }).strict(),
});

// ---------------------------------------------------------------------------------------------
// Events
// ---------------------------------------------------------------------------------------------

const base = { debateId: EntityId, threadId: ThreadId, seq: z.number().int().min(1), at: Timestamp };

export const DebateOpened = defineEvent({
  type: 'DebateOpened',
  category: DEBATE_CATEGORY,
  summary: 'A debate opened: its participants, threads (each starts in DISCOVERY) and settings',
  data: z.object({
    debateId: EntityId,
    topic: z.string(),
    openedBy: AgentId,
    participants: z.array(Participant),
    threads: z.array(z.object({ threadId: ThreadId, topic: z.string() })),
    settings: DebateSettings,
    openedAt: Timestamp,
  }),
});

export const DebateMessagePosted = defineEvent({
  type: 'DebateMessagePosted',
  category: DEBATE_CATEGORY,
  summary: 'A message of the transcript: a debater move or a moderator intervention (the move\'s own event follows for structured moves)',
  data: z.object({
    ...base,
    stage: DebateStage,
    agentId: z.string(),
    kind: z.union([MoveKind, z.literal('MODERATOR')]),
    text: z.string(),
    target: AgentId.nullable(),
    usage: Usage.nullable(),
  }),
});

export const BinaryQuestionProposed = defineEvent({
  type: 'BinaryQuestionProposed',
  category: DEBATE_CATEGORY,
  summary: 'A debater proposed the binary question of a thread',
  data: z.object({ ...base, agentId: AgentId, question: z.string() }),
});

export const BinaryQuestionAccepted = defineEvent({
  type: 'BinaryQuestionAccepted',
  category: DEBATE_CATEGORY,
  summary: 'A debater accepted a proposed question; `accepted` once a majority of the participants (the proposer included) have',
  data: z.object({ ...base, agentId: AgentId, questionSeq: z.number().int(), accepted: z.boolean() }),
});

export const CommitmentMade = defineEvent({
  type: 'CommitmentMade',
  category: DEBATE_CATEGORY,
  summary: 'A debater committed YES / NO / UNCERTAIN on the question, with its confidence and TopClaim',
  data: z.object({ ...base, agentId: AgentId, side: CommitSide, confidence: DebateConfidence, topClaim: TopClaim }),
});

export const SteelmanAttempted = defineEvent({
  type: 'SteelmanAttempted',
  category: DEBATE_CATEGORY,
  summary: "A debater stated an opponent's position; the opponent grades it",
  data: z.object({ ...base, author: AgentId, target: AgentId, text: z.string(), firstAttempt: z.boolean() }),
});

export const SteelmanGraded = defineEvent({
  type: 'SteelmanGraded',
  category: DEBATE_CATEGORY,
  summary: 'The target graded a steelman ACCURATE, INCOMPLETE or WRONG, with its reason',
  data: z.object({ ...base, steelmanSeq: z.number().int(), author: AgentId, target: AgentId, grade: SteelmanGrade, reason: z.string(), firstAttempt: z.boolean() }),
});

export const FalsifierDeclared = defineEvent({
  type: 'FalsifierDeclared',
  category: DEBATE_CATEGORY,
  summary: 'A structured falsifier (metric, threshold, deadline, reasoning), declared by a debater or accepted from the moderator\'s proposal',
  data: z.object({
    ...base,
    falsifierId: z.string(),
    agentId: AgentId,
    metric: z.string(),
    threshold: Threshold,
    deadline: z.string(),
    reasoning: z.string(),
    source: z.enum(['agent', 'moderator_proposal']),
    replaces: z.string().nullable(),
  }),
});

export const ChallengeIssued = defineEvent({
  type: 'ChallengeIssued',
  category: DEBATE_CATEGORY,
  summary: 'A debater challenged an opponent it had steelmanned ACCURATE',
  data: z.object({ ...base, agentId: AgentId, target: AgentId }),
});

export const EvidenceProvided = defineEvent({
  type: 'EvidenceProvided',
  category: DEBATE_CATEGORY,
  summary: 'Evidence tied to a declared falsifier',
  data: z.object({ ...base, agentId: AgentId, falsifierId: z.string(), bearing: z.enum(['supports', 'undermines']), source: z.string().nullable() }),
});

export const ConcessionMade = defineEvent({
  type: 'ConcessionMade',
  category: DEBATE_CATEGORY,
  summary: "A debater conceded a point; topClaimChanged false is the seed's cheap concession",
  data: z.object({ ...base, agentId: AgentId, point: z.string(), topClaimChanged: z.boolean(), topClaim: TopClaim.nullable() }),
});

export const DebaterConcluded = defineEvent({
  type: 'DebaterConcluded',
  category: DEBATE_CATEGORY,
  summary: 'A debater rested its case in EVIDENCE',
  data: z.object({ ...base, agentId: AgentId }),
});

export const DebateStageAdvanced = defineEvent({
  type: 'DebateStageAdvanced',
  category: DEBATE_CATEGORY,
  summary: 'A thread moved to its next stage (or to UNRESOLVED, with the reason)',
  data: z.object({
    ...base,
    from: DebateStage,
    to: DebateStage,
    reason: z.string(),
    unresolvedReason: UnresolvedReason.nullable(),
    question: z.string().optional().describe("DISCOVERY's budget spent without an accepted question: the question the moderator framed, which the thread carries into CRUX_LOCK"),
  }),
});

export const CruxLockAttempted = defineEvent({
  type: 'CruxLockAttempted',
  category: DEBATE_CATEGORY,
  summary: 'The crux-lock gate was checked: the criteria that failed and what is missing, by agent',
  data: z.object({ ...base, attempt: z.number().int().min(1), passed: z.boolean(), failed: z.array(LockCriterion), missing: z.array(z.string()) }),
});

export const CruxLocked = defineEvent({
  type: 'CruxLocked',
  category: DEBATE_CATEGORY,
  summary: 'The lock succeeded: the question, commitments, steelmans and falsifiers it locked',
  data: z.object({
    ...base,
    attempt: z.number().int(),
    question: z.string(),
    committed: z.array(AgentId),
    falsifierIds: z.array(z.string()),
    commitments: z.array(CommitmentView).optional().describe('The commitments it locked (side, confidence, TopClaim); absent in events recorded before it was added'),
    steelmans: z.array(SteelmanView).optional().describe('The ACCURATE steelman of each pair of opponents it locked, the one that satisfied the gate'),
    falsifiers: z.array(FalsifierView).optional().describe('The falsifiers it locked, in full'),
  }),
});

export const CruxLockFailed = defineEvent({
  type: 'CruxLockFailed',
  category: DEBATE_CATEGORY,
  summary: 'The lock failed; the moderator intervenes (a prompt, then forced binary framing, then proposed falsifiers)',
  data: z.object({ ...base, attempt: z.number().int(), failed: z.array(LockCriterion), attemptsLeft: z.number().int().min(0) }),
});

export const ModeratorIntervened = defineEvent({
  type: 'ModeratorIntervened',
  category: DEBATE_CATEGORY,
  summary: "The moderator's intervention, issued by the debate service",
  data: z.object({
    ...base,
    kind: InterventionKind,
    ref: z.number().int().describe('What it answers: the lock attempt (lock_prompt, forced_binary, proposed_falsifiers) or the message seq (orbiting, horizon_mismatch)'),
    text: z.string(),
    question: z.string().nullable().describe('forced_binary: the question as restated'),
    proposals: z.array(ProposedFalsifierView).describe('proposed_falsifiers: what each agent must accept or replace'),
  }),
});

export const ThreadCrystallized = defineEvent({
  type: 'ThreadCrystallized',
  category: DEBATE_CATEGORY,
  summary: 'The thread\'s ThreadCrux and its validation (failures recorded, never hidden)',
  data: z.object({ ...base, crux: ThreadCrux, validation: CruxValidation }),
});

export const ThreadSpawnProposed = defineEvent({
  type: 'ThreadSpawnProposed',
  category: DEBATE_CATEGORY,
  summary: 'A debater proposed a new thread for a sub-dispute (the "second bite"); it spawns when another participant seconds it',
  data: z.object({ ...base, agentId: AgentId, topic: z.string() }),
});

export const ThreadSpawned = defineEvent({
  type: 'ThreadSpawned',
  category: DEBATE_CATEGORY,
  summary: 'A second participant seconded a proposal: the new thread starts in DISCOVERY (threadId is where it was proposed)',
  data: z.object({ ...base, newThreadId: ThreadId, topic: z.string(), proposalSeq: z.number().int(), proposedBy: AgentId, secondedBy: AgentId }),
});

export const ThreadsMerged = defineEvent({
  type: 'ThreadsMerged',
  category: DEBATE_CATEGORY,
  summary: 'Duplicate detection: the thread (threadId) accepted a question another thread (open, or converged) already takes up, and was merged into it; it ends there',
  data: z.object({ ...base, into: ThreadId, similarity: z.number().min(0).max(1), reason: z.string() }),
});

export const DebateCompleted = defineEvent({
  type: 'DebateCompleted',
  category: DEBATE_CATEGORY,
  summary: 'Every thread ended: the outcome, the DCG of each thread and the primary crux',
  data: z.object({
    debateId: EntityId,
    at: Timestamp,
    outcome: DebateOutcome,
    dcg: z.array(DcgScore),
    primaryThreadId: ThreadId.nullable(),
    crux: ThreadCrux.nullable(),
    lockAttempts: z.number().int(),
    durationMs: z.number().int().min(0),
    coalitions: z.array(Coalition).optional().describe('After the debate: agents that sided together (absent in events recorded before it was added)'),
    commonGround: CommonGround.optional().describe('After the debate: what the participants agree on'),
  }),
});

// ---------------------------------------------------------------------------------------------
// Queries
// ---------------------------------------------------------------------------------------------

export const GetDebate = defineQuery({
  name: 'debates.get',
  service: 'debate',
  httpPath: 'debates/:debateId',
  visibility: { agent: access.party('openedBy', 'participants.agentId'), observer: access.none },
  summary: 'One debate: its threads with their stage, transcript, steelmans, commitments, falsifiers, lock attempts, interventions and crux',
  params: z.object({ debateId: EntityId }).strict(),
  result: DebateView,
});

export const ListDebates = defineQuery({
  name: 'debates.list',
  service: 'debate',
  httpPath: 'debates',
  visibility: { agent: access.own('participant'), observer: access.none },
  summary: 'Debates, most recently opened first (then by id); paged',
  params: z
    .object({
      status: z.enum(['open', 'complete']).optional(),
      participant: AgentId.optional(),
      ...pageParams,
    })
    .strict(),
  result: z.object({ debates: z.array(DebateSummary), nextCursor: NextCursor }),
});
