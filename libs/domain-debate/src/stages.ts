/**
 * Stage gates (seed 004, Milestones 1 and 2): which moves each stage allows, its message budget,
 * and the refusal that names the stage and the moves allowed.
 *
 * - DISCOVERY (budget 6-10): explore, ask, propose a binary question, accept one. It advances to
 *   CRUX_LOCK once it has had `min` messages AND a binary question was proposed and accepted. The
 *   budget forces advancement: at `max` messages without an accepted question, the moderator frames
 *   one (framedQuestionFor: the most accepted proposal, else the topic) and the thread goes on to
 *   CRUX_LOCK with it, so question moves end there.
 * - CRUX_LOCK: commit, steelman, grade, declare or accept a falsifier, claim, ask. The lock is
 *   attempted at `min` messages, then after every `max - min` (at least 1) further messages while it
 *   fails; a round never exceeds its budget because the attempt closes it. Unless the debate sets
 *   it, the budget follows from the participants (cruxLockBudgetFor): `min` is the fewest moves a
 *   lock can pass with at the most demanding split, `max` leaves room for one steelman retry.
 * - EVIDENCE (budget 12-16): evidence tied to a falsifier, challenge (after an ACCURATE steelman),
 *   steelman and grade, concede, re-commit, claim, ask, conclude. It crystallizes once it has had
 *   `min` messages and every debater has sent CONCLUDE, and at `max` in any case.
 * - CONVERGED and UNRESOLVED allow nothing.
 */
import type { DebateSettings, DebateStage, MoveKind } from '@agora/contracts';
import { DomainError } from '@agora/decider';
import { binaryFrame, isEitherOr } from './framing.js';

export const STAGE_ORDER: readonly DebateStage[] = ['DISCOVERY', 'CRUX_LOCK', 'EVIDENCE', 'CONVERGED'];

export const ALLOWED_MOVES: Readonly<Record<DebateStage, readonly MoveKind[]>> = {
  DISCOVERY: ['CLAIM', 'QUESTION', 'PROPOSE_QUESTION', 'ACCEPT_QUESTION'],
  CRUX_LOCK: ['COMMIT', 'STEELMAN', 'GRADE_STEELMAN', 'DECLARE_FALSIFIER', 'ACCEPT_FALSIFIER', 'CLAIM', 'QUESTION'],
  EVIDENCE: ['PROVIDE_EVIDENCE', 'CHALLENGE', 'STEELMAN', 'GRADE_STEELMAN', 'CONCEDE', 'COMMIT', 'CLAIM', 'QUESTION', 'CONCLUDE'],
  CONVERGED: [],
  UNRESOLVED: [],
};

export type BudgetName = 'discovery' | 'cruxLock' | 'evidence';

export function budgetOf(stage: DebateStage, settings: DebateSettings): { min: number; max: number } | undefined {
  if (stage === 'DISCOVERY') return settings.discovery;
  if (stage === 'CRUX_LOCK') return settings.cruxLock;
  if (stage === 'EVIDENCE') return settings.evidence;
  return undefined;
}

/** The moves a thread allows now: its stage's while its budget lasts (CRUX_LOCK's rounds close with a lock attempt; DISCOVERY advances at its max). */
export function movesAllowed(stage: DebateStage, stageMessages: number, settings: DebateSettings): readonly MoveKind[] {
  const budget = budgetOf(stage, settings);
  if (stage !== 'CRUX_LOCK' && budget !== undefined && stageMessages >= budget.max) return [];
  return ALLOWED_MOVES[stage];
}

/**
 * Refuses a move its stage does not allow, or one over the stage's budget, with a message and
 * details that name the stage and the moves allowed (what an agent needs to try again).
 */
export function requireMoveAllowed(threadId: string, stage: DebateStage, stageMessages: number, settings: DebateSettings, kind: MoveKind): void {
  const allowed = movesAllowed(stage, stageMessages, settings);
  if (allowed.includes(kind)) return;
  const budget = budgetOf(stage, settings);
  const overBudget = ALLOWED_MOVES[stage].includes(kind) && budget !== undefined && stageMessages >= budget.max;
  const why = overBudget
    ? `its budget of ${budget.max} messages is spent`
    : stage === 'CONVERGED' || stage === 'UNRESOLVED'
      ? 'the thread has ended'
      : `${kind} is not a move of this stage`;
  throw new DomainError('illegal_state', `${kind} refused in stage ${stage} of thread ${threadId}: ${why}; allowed now: ${allowed.length === 0 ? 'none' : allowed.join(', ')}`, {
    threadId,
    stage,
    move: kind,
    allowed: [...allowed],
    stageMessages,
    budget: budget ?? null,
    reason: overBudget ? 'over_budget' : 'not_allowed',
  });
}

/** A steelman retried and graded again: the two moves between lock attempts (the seed's 6-8 for two agents). */
export const LOCK_RETRY_MESSAGES = 2;

/**
 * The fewest CRUX_LOCK moves with which a lock among `participants` agents can pass, at the most
 * demanding split (as even as it gets): each agent commits and declares a falsifier (2n), and each
 * ordered pair of opponents is steelmanned and graded (2 moves x 2 x YES x NO). Two agents: 8;
 * 1 YES against 2 NO: 14; 2 against 2: 24; 2 against 3: 34.
 */
export function lockMovesNeeded(participants: number): number {
  const yes = Math.floor(participants / 2);
  return 2 * participants + 4 * yes * (participants - yes);
}

/** CRUX_LOCK's budget for a debate of `participants` agents: the first attempt when a lock can first pass, a retry round after. */
export function cruxLockBudgetFor(participants: number): { min: number; max: number } {
  const min = lockMovesNeeded(participants);
  return { min, max: min + LOCK_RETRY_MESSAGES };
}

export const nextStage = (stage: DebateStage): DebateStage => {
  const i = STAGE_ORDER.indexOf(stage);
  return i < 0 || i === STAGE_ORDER.length - 1 ? stage : STAGE_ORDER[i + 1]!;
};

/** When CRUX_LOCK attempts its lock: at `min` messages of the stage first, then every `max - min` (at least 1) after a failure. */
export function lockDue(stageMessages: number, sinceLastAttempt: number, attempts: number, settings: DebateSettings): boolean {
  const { min, max } = settings.cruxLock;
  if (attempts === 0) return stageMessages >= min;
  return sinceLastAttempt >= Math.max(1, max - min);
}

const AUXILIARIES = /^(is|are|was|were|will|would|does|do|did|can|could|should|has|have|had|must|may|might|shall)\b/i;
const OPEN_WORDS = /^(what|how|why|which|when|where|who|whom|whose)\b/i;

/** Whether a question can be answered YES or NO: it starts with an auxiliary verb and ends with "?". Undefined when it can, else why not. */
export function binaryQuestionProblem(text: string): string | undefined {
  const q = text.trim();
  if (!q.endsWith('?')) return 'a binary question ends with "?"';
  if (OPEN_WORDS.test(q)) return `an open question (starting "${q.split(/\s/)[0]}") cannot be answered YES or NO; ask "Is/Will/Does ...?"`;
  if (!AUXILIARIES.test(q)) return 'a binary question starts with a verb such as Is, Will, Does, Can or Should, so that YES and NO answer it';
  if (isEitherOr(q)) return `an either/or question: YES or NO would not say which; propose one alternative, e.g. "${binaryFrame(q)}"`;
  return undefined;
}

/** Acceptances a question needs: a majority of the participants, the proposer included. */
export const acceptancesNeeded = (participants: number): number => Math.floor(participants / 2) + 1;
