/**
 * The debate decider: one aggregate, `debate-<debateId>`, holds every thread of a debate, so each
 * gate is decided atomically with the move that triggers it.
 *
 *   OpenDebate (a debater or an operator)  -> DebateOpened (every thread in DISCOVERY)
 *   PostDebateMove (a participant)         -> DebateMessagePosted + the move's own event, then
 *       DISCOVERY at min messages with an accepted binary question -> DebateStageAdvanced(CRUX_LOCK)
 *                 at max without one -> DebateStageAdvanced(CRUX_LOCK) with the question the moderator framed
 *       CRUX_LOCK when the lock is due -> CruxLockAttempted, then CruxLocked + DebateStageAdvanced(EVIDENCE)
 *                 or CruxLockFailed (+ DebateStageAdvanced(UNRESOLVED) when no attempt is left)
 *       EVIDENCE at max, or at min once everyone concluded -> ThreadCrystallized + DebateStageAdvanced(CONVERGED)
 *       ACCEPT_QUESTION duplicating another thread's (open or converged) question -> ThreadsMerged (the thread ends there)
 *       PROPOSE_THREAD -> ThreadSpawnProposed; SECOND_THREAD by another participant -> ThreadSpawned
 *       the last thread ending -> DebateCompleted (DCG of each thread, the primary crux, the outcome,
 *                 coalitions and common ground)
 *   ModerateDebate (the debate service)    -> DebateMessagePosted(MODERATOR) + ModeratorIntervened, or
 *       nothing when there is nothing to say (no orbiting, no horizon mismatch, already said)
 *
 * Refusals, in this order: the debate exists and is open, the actor takes part, the thread exists,
 * a pending moderator proposal for the actor (accept or replace it first), the stage allows the
 * move within its budget, then the move's own rules. A refused move writes nothing.
 */
import type { DebateMove, debateContracts, DebateSettings, ModeratorMove, ThreadView } from '@agora/contracts';
import { DEFAULT_DEBATE_SETTINGS, SERVICE_ROLE } from '@agora/contracts';
import { DomainError, eventConstructor, rulesOf, RULES_VERSION, type CommandContext, type CommandsOf, type Decider } from '@agora/decider';
import { coalitionsOf, commonGroundOf } from './aftermath.js';
import { crystallize } from './crystallize.js';
import { framedQuestionFor } from './framing.js';
import { promote } from './dcg.js';
import { evolveDebate, initialDebateState, type Debate, type DebateEvent, type DebateState } from './evolve.js';
import { checkFalsifier } from './falsifiers.js';
import { falsifierIdOf, MODERATOR } from './ids.js';
import { checkLock, steelmanRequirements } from './lock.js';
import { forcedBinaryQuestion, horizonMismatch, lockPromptText, orbitingScore, proposeFalsifiers } from './moderator.js';
import { acceptancesNeeded, binaryQuestionProblem, cruxLockBudgetFor, lockDue, nextStage, requireMoveAllowed } from './stages.js';
import { isFirstAttempt, requireChallengeAllowed } from './steelman.js';
import { duplicateOf, hasEnded, isOpenThread, isThreadMove, MAX_THREADS, spawnedThreadIdOf } from './threads.js';

/** The debate's commands, from its contracts. */
export type DebateCommand = CommandsOf<(typeof debateContracts.commands)[number]>;

const event = eventConstructor<DebateEvent>();

/** Events applied to a working copy as they are emitted, so later rules see earlier events of the same command. */
class Decision {
  readonly events: DebateEvent[] = [];
  constructor(public state: Debate) {}
  emit(e: DebateEvent): this {
    this.events.push(e);
    this.state = evolveDebate(this.state, e) as Debate;
    return this;
  }
  thread(threadId: string): ThreadView {
    return this.state.threads.find((t) => t.threadId === threadId)!;
  }
  nextSeq(): number {
    return (this.state.messages.at(-1)?.seq ?? 0) + 1;
  }
}

/** CRUX_LOCK's budget before it followed from the participants (rules 1): the seed's 6-8. */
const SEED_CRUX_LOCK_BUDGET = { min: 6, max: 8 };

/**
 * The debate's settings: the seed's defaults under what the opener set; CRUX_LOCK's budget, unless
 * set, follows from the participants (under rules 1, before RULES_VERSION 2: the seed's 6-8).
 */
export function settingsOf(partial: Partial<DebateSettings> | undefined, participants: number, rules = RULES_VERSION): DebateSettings {
  const cruxLock = rules < 2 ? SEED_CRUX_LOCK_BUDGET : cruxLockBudgetFor(participants);
  const settings = { ...DEFAULT_DEBATE_SETTINGS, cruxLock, ...(partial ?? {}) };
  for (const name of ['discovery', 'cruxLock', 'evidence'] as const) {
    const b = settings[name];
    if (b.max < b.min) throw new DomainError('invalid_command', `settings.${name}: max ${b.max} is below min ${b.min}`, { setting: name });
  }
  return settings;
}

function existing(state: DebateState, debateId: string): Debate {
  if (state.status === 'unopened') throw new DomainError('not_found', `debate ${debateId} does not exist`, { debateId });
  return state;
}

function requireOpen(s: Debate, toDo: string): void {
  if (s.status === 'open') return;
  throw new DomainError('illegal_state', `cannot ${toDo}: debate ${s.debateId} is complete (${s.outcome})`, { debateId: s.debateId, outcome: s.outcome });
}

function threadOf(s: Debate, threadId: string): ThreadView {
  const t = s.threads.find((x) => x.threadId === threadId);
  if (!t) throw new DomainError('not_found', `debate ${s.debateId} has no thread ${threadId} (threads: ${s.threads.map((x) => x.threadId).join(', ')})`, { debateId: s.debateId, threadId });
  return t;
}

const participantIds = (s: Debate): string[] => s.participants.map((p) => p.agentId);

function requireParticipant(s: Debate, agentId: string, what: string): void {
  if (participantIds(s).includes(agentId)) return;
  throw new DomainError('forbidden', `${what} ${agentId} does not take part in debate ${s.debateId} (participants: ${participantIds(s).join(', ')})`, { debateId: s.debateId, agentId });
}

function requireOpponent(s: Debate, actor: string, target: string, kind: string): void {
  requireParticipant(s, target, `${kind} target`);
  if (target === actor) throw new DomainError('invalid_command', `${kind}: an agent cannot target itself`, { target });
}

function decideOpen(command: Extract<DebateCommand, { type: 'OpenDebate' }>, state: DebateState): DebateEvent[] {
  const p = command.payload;
  if (state.status !== 'unopened') return [];
  const ids = p.participants.map((x) => x.agentId);
  if (new Set(ids).size !== ids.length) throw new DomainError('invalid_command', `a participant is listed twice: ${ids.join(', ')}`, { participants: ids });
  const threads = p.threads ?? [{ threadId: 'main', topic: p.topic }];
  const threadIds = threads.map((t) => t.threadId);
  if (new Set(threadIds).size !== threadIds.length) throw new DomainError('invalid_command', `a thread id is listed twice: ${threadIds.join(', ')}`, { threads: threadIds });
  return [
    event('DebateOpened', {
      debateId: p.debateId,
      topic: p.topic,
      openedBy: command.context.actor,
      participants: p.participants,
      threads,
      settings: settingsOf(p.settings, p.participants.length, rulesOf(command.context)),
      openedAt: command.context.now,
    }),
  ];
}

/** The move's own event(s) after its message; refuses what its rules forbid. */
function moveEvents(d: Decision, t: ThreadView, move: DebateMove, context: CommandContext, seq: number): DebateEvent[] {
  const { actor, now: at } = context;
  const base = { debateId: d.state.debateId, threadId: t.threadId, seq, at };
  switch (move.kind) {
    case 'CLAIM':
    case 'QUESTION':
      return [];
    case 'PROPOSE_QUESTION': {
      const problem = binaryQuestionProblem(move.text);
      if (problem) throw new DomainError('invalid_command', `PROPOSE_QUESTION refused: ${problem}`, { threadId: t.threadId, question: move.text });
      return [event('BinaryQuestionProposed', { ...base, agentId: actor, question: move.text.trim() })];
    }
    case 'ACCEPT_QUESTION': {
      const q = t.questions.find((x) => x.seq === move.questionSeq);
      if (!q) throw new DomainError('not_found', `thread ${t.threadId} has no proposed question at message ${move.questionSeq}`, { threadId: t.threadId, questionSeq: move.questionSeq });
      if (q.acceptedBy.includes(actor)) throw new DomainError('illegal_state', `${actor} already ${q.proposedBy === actor ? 'proposed' : 'accepted'} question ${q.seq}`, { questionSeq: q.seq });
      const accepted = q.acceptedBy.length + 1 >= acceptancesNeeded(d.state.participants.length);
      const events: DebateEvent[] = [event('BinaryQuestionAccepted', { ...base, agentId: actor, questionSeq: q.seq, accepted })];
      // Duplicate detection: a question another thread (open or converged) already takes up merges this thread into it.
      const duplicate = accepted ? duplicateOf(q.text, d.state.threads, t.threadId) : undefined;
      if (duplicate) {
        events.push(event('ThreadsMerged', { ...base, into: duplicate.threadId, similarity: duplicate.similarity, reason: `the accepted question "${q.text}" duplicates thread ${duplicate.threadId}'s "${duplicate.of}"` }));
      }
      return events;
    }
    case 'COMMIT':
      if (t.forcedBinary && move.side === 'UNCERTAIN') {
        throw new DomainError('illegal_state', `COMMIT UNCERTAIN refused in thread ${t.threadId}: the moderator forced binary framing; answer YES or NO to "${t.question}"`, { threadId: t.threadId, allowed: ['YES', 'NO'] });
      }
      return [event('CommitmentMade', { ...base, agentId: actor, side: move.side, confidence: move.confidence, topClaim: move.topClaim })];
    case 'STEELMAN':
      requireOpponent(d.state, actor, move.target, 'STEELMAN');
      return [event('SteelmanAttempted', { ...base, author: actor, target: move.target, text: move.text, firstAttempt: isFirstAttempt(t, actor, move.target) })];
    case 'GRADE_STEELMAN': {
      const s = t.steelmans.find((x) => x.seq === move.steelmanSeq);
      if (!s) throw new DomainError('not_found', `thread ${t.threadId} has no steelman at message ${move.steelmanSeq}`, { threadId: t.threadId, steelmanSeq: move.steelmanSeq });
      if (s.target !== actor) throw new DomainError('forbidden', `only ${s.target}, the target of steelman ${s.seq}, grades it`, { steelmanSeq: s.seq, target: s.target });
      if (s.grade !== null) throw new DomainError('illegal_state', `steelman ${s.seq} was already graded ${s.grade}`, { steelmanSeq: s.seq, grade: s.grade });
      return [event('SteelmanGraded', { ...base, steelmanSeq: s.seq, author: s.author, target: s.target, grade: move.grade, reason: move.text, firstAttempt: s.firstAttempt })];
    }
    case 'DECLARE_FALSIFIER': {
      const checked = checkFalsifier({ metric: move.metric, threshold: move.threshold, deadline: move.deadline, reasoning: move.text }, at);
      if (!checked.falsifier) {
        throw new DomainError('invalid_command', `falsifier refused as vague: ${checked.problems.join('; ')}`, { threadId: t.threadId, problems: checked.problems });
      }
      if (move.replaces !== undefined && !t.proposedFalsifiers.some((x) => x.proposalId === move.replaces && x.forAgent === actor && x.status === 'pending')) {
        throw new DomainError('not_found', `no pending proposal ${move.replaces} for ${actor} to replace`, { proposalId: move.replaces });
      }
      const f = checked.falsifier;
      return [
        event('FalsifierDeclared', {
          ...base,
          falsifierId: falsifierIdOf(t.threadId, seq),
          agentId: actor,
          metric: f.metric,
          threshold: f.threshold,
          deadline: f.deadline,
          reasoning: f.reasoning,
          source: 'agent',
          replaces: move.replaces ?? null,
        }),
      ];
    }
    case 'ACCEPT_FALSIFIER': {
      const p = t.proposedFalsifiers.find((x) => x.proposalId === move.proposalId);
      if (!p) throw new DomainError('not_found', `thread ${t.threadId} has no proposed falsifier ${move.proposalId}`, { proposalId: move.proposalId });
      if (p.forAgent !== actor) throw new DomainError('forbidden', `proposal ${p.proposalId} is for ${p.forAgent}`, { proposalId: p.proposalId, forAgent: p.forAgent });
      if (p.status !== 'pending') throw new DomainError('illegal_state', `proposal ${p.proposalId} is already ${p.status}`, { proposalId: p.proposalId, status: p.status });
      return [
        event('FalsifierDeclared', {
          ...base,
          falsifierId: falsifierIdOf(t.threadId, seq),
          agentId: actor,
          metric: p.metric,
          threshold: p.threshold,
          deadline: p.deadline,
          reasoning: p.reasoning,
          source: 'moderator_proposal',
          replaces: p.proposalId,
        }),
      ];
    }
    case 'CHALLENGE':
      requireOpponent(d.state, actor, move.target, 'CHALLENGE');
      requireChallengeAllowed(t, actor, move.target);
      return [event('ChallengeIssued', { ...base, agentId: actor, target: move.target })];
    case 'PROVIDE_EVIDENCE': {
      if (!t.falsifiers.some((f) => f.falsifierId === move.falsifierId)) {
        throw new DomainError('invalid_command', `evidence must bear on a declared falsifier; thread ${t.threadId} has ${t.falsifiers.map((f) => f.falsifierId).join(', ') || 'none'}, not ${move.falsifierId}`, {
          threadId: t.threadId,
          falsifierId: move.falsifierId,
          falsifiers: t.falsifiers.map((f) => f.falsifierId),
        });
      }
      return [event('EvidenceProvided', { ...base, agentId: actor, falsifierId: move.falsifierId, bearing: move.bearing, source: move.source ?? null })];
    }
    case 'CONCEDE': {
      const current = t.commitments.find((c) => c.agentId === actor)?.topClaim;
      const changed = move.topClaim !== undefined && (current === undefined || move.topClaim.statement !== current.statement || move.topClaim.side !== current.side);
      return [event('ConcessionMade', { ...base, agentId: actor, point: move.text, topClaimChanged: changed, topClaim: move.topClaim ?? null })];
    }
    case 'CONCLUDE':
      if (t.concluded.includes(actor)) throw new DomainError('illegal_state', `${actor} already concluded in thread ${t.threadId}`, { threadId: t.threadId });
      return [event('DebaterConcluded', { ...base, agentId: actor })];
    case 'PROPOSE_THREAD': {
      requireRoomForThread(d.state);
      const duplicate = duplicateOf(move.topic, d.state.threads);
      if (duplicate) {
        throw new DomainError('invalid_command', `PROPOSE_THREAD refused: thread ${duplicate.threadId} already takes it up ("${duplicate.of}", similarity ${duplicate.similarity}); post there`, { threadId: duplicate.threadId, similarity: duplicate.similarity });
      }
      return [event('ThreadSpawnProposed', { ...base, agentId: actor, topic: move.topic.trim() })];
    }
    case 'SECOND_THREAD': {
      const p = t.spawnProposals.find((x) => x.seq === move.proposalSeq);
      if (!p) throw new DomainError('not_found', `thread ${t.threadId} has no proposed thread at message ${move.proposalSeq}`, { threadId: t.threadId, proposalSeq: move.proposalSeq });
      if (p.proposedBy === actor) throw new DomainError('illegal_state', `${actor} proposed thread ${p.seq}: another participant must second it (the second bite)`, { proposalSeq: p.seq });
      if (p.spawnedThreadId !== null) throw new DomainError('illegal_state', `proposal ${p.seq} already spawned thread ${p.spawnedThreadId}`, { proposalSeq: p.seq, threadId: p.spawnedThreadId });
      requireRoomForThread(d.state);
      const duplicate = duplicateOf(p.topic, d.state.threads);
      if (duplicate) throw new DomainError('illegal_state', `SECOND_THREAD refused: thread ${duplicate.threadId} took up "${duplicate.of}" since (similarity ${duplicate.similarity})`, { threadId: duplicate.threadId });
      return [event('ThreadSpawned', { ...base, newThreadId: spawnedThreadIdOf(t.threadId, p.seq), topic: p.topic, proposalSeq: p.seq, proposedBy: p.proposedBy, secondedBy: actor })];
    }
  }
}

function requireRoomForThread(s: Debate): void {
  if (s.threads.length < MAX_THREADS) return;
  throw new DomainError('illegal_state', `debate ${s.debateId} has ${s.threads.length} threads, the most it may hold (${MAX_THREADS})`, { threads: s.threads.length, max: MAX_THREADS });
}

/** A thread's gate after a move: advance, attempt the lock, crystallize; then completes the debate when every thread has ended. */
function applyGates(d: Decision, threadId: string, seq: number, at: string): void {
  const settings = d.state.settings;
  const t = d.thread(threadId);
  if (t.mergedInto !== null) return completeIfEnded(d, at);
  const base = { debateId: d.state.debateId, threadId, seq, at };
  const advance = (to: ThreadView['stage'], reason: string, unresolvedReason: 'lock_attempts_exhausted' | null = null, question?: string) =>
    d.emit(event('DebateStageAdvanced', { ...base, from: d.thread(threadId).stage, to, reason, unresolvedReason, ...(question !== undefined ? { question } : {}) }));
  if (t.stage === 'DISCOVERY') {
    if (t.stageMessages >= settings.discovery.min && t.question !== null) advance(nextStage(t.stage), `${t.stageMessages} messages and the binary question accepted: "${t.question}"`);
    else if (t.stageMessages >= settings.discovery.max) {
      // The budget forces advancement: the moderator frames the question the thread goes on with,
      // unless another thread already takes that question up (then it merges into that one).
      const framed = framedQuestionFor(t);
      const duplicate = duplicateOf(framed.question, d.state.threads, threadId);
      if (duplicate) {
        d.emit(event('ThreadsMerged', { ...base, into: duplicate.threadId, similarity: duplicate.similarity, reason: `the discovery budget is spent and the question the moderator framed, "${framed.question}", duplicates thread ${duplicate.threadId}'s "${duplicate.of}"` }));
      } else {
        advance(nextStage(t.stage), `the discovery budget of ${settings.discovery.max} messages is spent without an accepted question; the moderator framed one from ${framed.from}: "${framed.question}"`, null, framed.question);
      }
    }
  } else if (t.stage === 'CRUX_LOCK') {
    if (!lockDue(t.stageMessages, t.sinceLockAttempt, t.lockAttempts.length, settings)) return;
    const attempt = t.lockAttempts.length + 1;
    const check = checkLock(t, participantIds(d.state));
    d.emit(event('CruxLockAttempted', { ...base, attempt, passed: check.passed, failed: check.failed, missing: check.missing }));
    if (check.passed) {
      const locked = d.thread(threadId);
      // What an auditor replays: the question, the commitments, the ACCURATE steelman of each pair
      // that owed one, and the falsifiers, as they stood when the gate held.
      const steelmans = steelmanRequirements(locked).map(({ author, target }) => locked.steelmans.findLast((x) => x.author === author && x.target === target)!);
      d.emit(
        event('CruxLocked', {
          ...base,
          attempt,
          question: locked.question ?? d.state.topic,
          committed: locked.commitments.map((c) => c.agentId),
          falsifierIds: locked.falsifiers.map((f) => f.falsifierId),
          commitments: locked.commitments,
          steelmans,
          falsifiers: locked.falsifiers,
        }),
      );
      advance('EVIDENCE', `crux locked on attempt ${attempt}`);
    } else {
      const attemptsLeft = Math.max(0, settings.maxLockAttempts - attempt);
      d.emit(event('CruxLockFailed', { ...base, attempt, failed: check.failed, attemptsLeft }));
      if (attemptsLeft === 0) advance('UNRESOLVED', `the crux did not lock in ${attempt} attempts (failed: ${check.failed.join(', ')})`, 'lock_attempts_exhausted');
    }
  } else if (t.stage === 'EVIDENCE') {
    const everyone = d.state.participants.every((p) => t.concluded.includes(p.agentId));
    if (t.stageMessages >= settings.evidence.max || (t.stageMessages >= settings.evidence.min && everyone)) {
      const crux = crystallize(t, d.state);
      d.emit(event('ThreadCrystallized', { ...base, crux, validation: crux.validation }));
      advance('CONVERGED', everyone ? 'every debater concluded' : `the evidence budget of ${settings.evidence.max} messages is spent`);
    }
  }
  completeIfEnded(d, at);
}

function completeIfEnded(d: Decision, at: string): void {
  const s = d.state;
  if (s.status !== 'open' || !s.threads.every(hasEnded)) return;
  const { dcg, primaryThreadId, outcome } = promote(
    s.threads.filter((t) => t.mergedInto === null),
    s.participants.length,
  );
  const crux = primaryThreadId === null ? null : (s.threads.find((t) => t.threadId === primaryThreadId)!.crux ?? null);
  d.emit(
    event('DebateCompleted', {
      debateId: s.debateId,
      at,
      outcome,
      dcg,
      primaryThreadId,
      crux,
      lockAttempts: s.threads.reduce((n, t) => n + t.lockAttempts.length, 0),
      durationMs: Math.max(0, Date.parse(at) - Date.parse(s.openedAt)),
      coalitions: coalitionsOf(s.threads, participantIds(s)),
      commonGround: commonGroundOf(s.threads),
    }),
  );
}

function decideMove(command: Extract<DebateCommand, { type: 'PostDebateMove' }>, state: DebateState): DebateEvent[] {
  const { payload: p, context } = command;
  const s = existing(state, p.debateId);
  requireOpen(s, `post ${p.move.kind}`);
  requireParticipant(s, context.actor, 'debater');
  const t = threadOf(s, p.threadId);
  if (t.mergedInto !== null) {
    throw new DomainError('illegal_state', `${p.move.kind} refused: thread ${t.threadId} was merged into thread ${t.mergedInto} (a duplicate); post there`, { threadId: t.threadId, mergedInto: t.mergedInto });
  }
  const pending = t.proposedFalsifiers.filter((x) => x.forAgent === context.actor && x.status === 'pending');
  if (pending.length > 0 && p.move.kind !== 'ACCEPT_FALSIFIER' && p.move.kind !== 'DECLARE_FALSIFIER') {
    throw new DomainError('illegal_state', `${p.move.kind} refused in stage ${t.stage} of thread ${t.threadId}: accept or replace the moderator's proposed falsifier ${pending.map((x) => x.proposalId).join(', ')} first; allowed now: ACCEPT_FALSIFIER, DECLARE_FALSIFIER`, {
      threadId: t.threadId,
      stage: t.stage,
      move: p.move.kind,
      allowed: ['ACCEPT_FALSIFIER', 'DECLARE_FALSIFIER'],
      proposals: pending.map((x) => x.proposalId),
    });
  }
  // Spawning a thread is allowed in any open thread, outside the stage's moves and budget.
  if (!isThreadMove(p.move.kind) || !isOpenThread(t)) requireMoveAllowed(t.threadId, t.stage, t.stageMessages, s.settings, p.move.kind);
  const d = new Decision(s);
  const seq = d.nextSeq();
  const own = moveEvents(d, t, p.move, context, seq);
  const target = 'target' in p.move ? p.move.target : null;
  d.emit(
    event('DebateMessagePosted', {
      debateId: s.debateId,
      threadId: t.threadId,
      seq,
      at: context.now,
      stage: t.stage,
      agentId: context.actor,
      kind: p.move.kind,
      text: p.move.text,
      target,
      usage: p.usage ?? null,
    }),
  );
  for (const e of own) d.emit(e);
  applyGates(d, t.threadId, seq, context.now);
  return d.events;
}

function decideModerate(command: Extract<DebateCommand, { type: 'ModerateDebate' }>, state: DebateState): DebateEvent[] {
  const { payload: p, context } = command;
  if (!context.actorRoles.includes(SERVICE_ROLE)) {
    throw new DomainError('forbidden', `ModerateDebate is the debate service's own command; ${context.actor} may not send it`, { actor: context.actor });
  }
  const s = existing(state, p.debateId);
  if (s.status !== 'open') return [];
  const t = threadOf(s, p.threadId);
  const said = (kind: ModeratorMove['kind'], ref: number) => t.interventions.some((i) => i.kind === kind && i.ref === ref);
  const m = p.intervention;
  const ref = 'attempt' in m ? m.attempt : m.seq;
  if (said(m.kind, ref)) return [];
  const content = interventionContent(s, t, m, context.now);
  if (!content) return [];
  const d = new Decision(s);
  const seq = d.nextSeq();
  const base = { debateId: s.debateId, threadId: t.threadId, seq, at: context.now };
  d.emit(event('DebateMessagePosted', { ...base, stage: t.stage, agentId: MODERATOR, kind: 'MODERATOR', text: content.text, target: null, usage: null }));
  d.emit(event('ModeratorIntervened', { ...base, kind: m.kind, ref, text: content.text, question: content.question ?? null, proposals: content.proposals ?? [] }));
  return d.events;
}

/** What the moderator says, or undefined when there is nothing to say (the thread moved on, no orbiting, no mismatch). */
function interventionContent(s: Debate, t: ThreadView, m: ModeratorMove, now: string): { text: string; question?: string; proposals?: ReturnType<typeof proposeFalsifiers> } | undefined {
  switch (m.kind) {
    case 'lock_prompt': {
      const attempt = t.lockAttempts.find((a) => a.attempt === m.attempt);
      if (!attempt || attempt.passed || t.stage !== 'CRUX_LOCK') return undefined;
      return { text: lockPromptText(m.attempt, attempt.missing, s.settings.maxLockAttempts - m.attempt) };
    }
    case 'forced_binary': {
      if (t.stage !== 'CRUX_LOCK' || t.forcedBinary) return undefined;
      const question = forcedBinaryQuestion(t.question ?? s.topic);
      const uncertain = t.commitments.filter((c) => c.side === 'UNCERTAIN').map((c) => c.agentId);
      return { question, text: `Two lock attempts failed. ${question} UNCERTAIN is no longer accepted${uncertain.length > 0 ? `; ${uncertain.join(', ')} must commit again` : ''}.` };
    }
    case 'proposed_falsifiers': {
      if (t.stage !== 'CRUX_LOCK') return undefined;
      const proposals = proposeFalsifiers(t, s.messages, m.attempt, now);
      const without = t.commitments.filter((c) => !t.falsifiers.some((f) => f.agentId === c.agentId) && !proposals.some((p) => p.forAgent === c.agentId)).map((c) => c.agentId);
      if (proposals.length === 0 && without.length === 0) return undefined;
      const lines = proposals.map((p) => `${p.forAgent}: ${p.metric} ${p.threshold.text} by ${p.deadline} (${p.proposalId}; ${p.reasoning.startsWith('Paraphrased') ? 'paraphrased: the mirror of an opponent\'s falsifier' : 'quoting its own words'})`);
      return {
        proposals,
        text: `${m.attempt} lock attempts failed. Falsifiers proposed from the dialogue; accept (ACCEPT_FALSIFIER) or replace (DECLARE_FALSIFIER) yours: ${lines.join('; ') || 'none could be derived'}${without.length > 0 ? `. No falsifier could be derived for ${without.join(', ')}: declare one` : ''}.`,
      };
    }
    case 'orbiting': {
      if (t.stage !== 'DISCOVERY' && t.stage !== 'EVIDENCE') return undefined;
      if (t.interventions.some((i) => i.kind === 'orbiting' && m.seq - i.ref < s.settings.orbitingWindow)) return undefined;
      const score = orbitingScore(t, s.messages, m.seq, s.settings);
      if (score === undefined || score <= s.settings.orbitingThreshold) return undefined;
      const next = t.stage === 'DISCOVERY' ? 'propose a binary question (PROPOSE_QUESTION)' : 'bring evidence on a declared falsifier (PROVIDE_EVIDENCE) or conclude';
      return { text: `The last ${s.settings.orbitingWindow} messages are orbiting (keyword repetition ${score.toFixed(2)} > ${s.settings.orbitingThreshold}): ${next}.` };
    }
    case 'horizon_mismatch': {
      if (t.interventions.some((i) => i.kind === 'horizon_mismatch')) return undefined;
      const mismatch = horizonMismatch(t.falsifiers, s.openedAt, s.settings.horizonRatio);
      if (!mismatch) return undefined;
      const [shortAgent, shortDays] = mismatch.shortest;
      const [longAgent, longDays] = mismatch.longest;
      return { text: `Horizon mismatch: ${shortAgent}'s falsifier resolves in ${shortDays} days, ${longAgent}'s in ${longDays}. Argue over the same horizon, or say why the horizons differ.` };
    }
  }
}

export const debateDecider: Decider<DebateCommand, DebateEvent, DebateState> = {
  initialState: initialDebateState,
  evolve: evolveDebate,
  decide(command, state) {
    switch (command.type) {
      case 'OpenDebate':
        return decideOpen(command, state);
      case 'PostDebateMove':
        return decideMove(command, state);
      case 'ModerateDebate':
        return decideModerate(command, state);
    }
  },
};
