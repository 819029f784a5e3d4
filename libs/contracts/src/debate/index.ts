import { contractsOf } from '../define.js';
import * as debate from './debate.js';

export * from './model.js';
export * from './debate.js';

/** Everything of the debate service, for the catalog. */
export const debateContracts = contractsOf(debate);
export const debateCommands = debateContracts.commands;
export const debateEvents = debateContracts.events;
export const debateQueries = debateContracts.queries;

/**
 * The seed's SSE event type for each debate event (GET /v1/debates/:id/events). Every debate event
 * has one (the record is typed over them all), so a live view of one debate sees all its moves.
 */
export const DEBATE_SSE_TYPES: Readonly<Record<(typeof debateEvents)[number]['type'], string>> = {
  DebateOpened: 'debate_opened',
  DebateMessagePosted: 'message_posted',
  BinaryQuestionProposed: 'question_proposed',
  BinaryQuestionAccepted: 'question_accepted',
  CommitmentMade: 'commitment_made',
  SteelmanAttempted: 'steelman_attempt',
  SteelmanGraded: 'steelman_graded',
  FalsifierDeclared: 'falsifier_declared',
  ChallengeIssued: 'challenge_issued',
  EvidenceProvided: 'evidence_provided',
  ConcessionMade: 'concession_made',
  DebaterConcluded: 'debater_concluded',
  DebateStageAdvanced: 'stage_transition',
  CruxLockAttempted: 'lock_attempted',
  CruxLocked: 'lock_succeeded',
  CruxLockFailed: 'lock_failed',
  ModeratorIntervened: 'moderator_intervened',
  ThreadCrystallized: 'thread_crystallized',
  ThreadSpawnProposed: 'thread_spawn_proposed',
  ThreadSpawned: 'thread_spawned',
  ThreadsMerged: 'threads_merged',
  DebateCompleted: 'debate_complete',
};
