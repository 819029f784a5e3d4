/**
 * What a model playing a debater is shown and asked for, one move at a time: its persona and the
 * protocol, a stage-aware context (the stage and its budget, the moves allowed now, what the gate
 * still needs, what is due from this debater), a per-move guide, the recent transcript, and a
 * structured answer (one move) checked by the debate service like any agent's move. Shared by the
 * debate service's LLM runner and the fleet's debater participant.
 */
import type { DebateMove, DebateView, MoveKind, Participant, ThreadView } from '@agora/contracts';
import { attentionOf, budgetOf, checkLock, hasAccurateSteelman, isOpenThread, MAX_THREADS, movesAllowed, threadsSeenBy } from '@agora/domain-debate';
import { z } from 'zod';

/** The moves a model may answer with: every move, the thread moves (PROPOSE_THREAD, SECOND_THREAD) included when threadMovesOffered offers them. */
export type ModelMoveKind = MoveKind;

/** The seed's per-move prompts (Milestone 4), one line each. */
export const MOVE_GUIDE: Record<ModelMoveKind, string> = {
  CLAIM: 'State a claim that moves the debate forward (not a repetition).',
  QUESTION: 'Ask your opponent a pointed question.',
  PROPOSE_QUESTION: 'Propose the binary question the disagreement turns on: it starts with Is/Will/Does/Can/Should and ends with "?".',
  ACCEPT_QUESTION: 'Accept a proposed binary question (questionSeq = its message number) if it captures the disagreement.',
  COMMIT: 'Commit YES, NO or UNCERTAIN on the question with a confidence (0-1), and your TopClaim (statement, side YES/NO/NUANCED, confidence, and whether it would flip if the crux answer flipped).',
  STEELMAN: "Represent your opponent's position as strongly and accurately as you can (target = the opponent).",
  GRADE_STEELMAN: 'Grade a steelman of your position (steelmanSeq = its message number): ACCURATE, INCOMPLETE or WRONG, with the reason in text. Be critical: grade ACCURATE only if nothing important is missing.',
  DECLARE_FALSIFIER: 'What evidence would change your mind? metric (what is measured), threshold (comparator, number and unit, e.g. "> 50 %"), deadline (YYYY-MM-DD, after today), and why in text. No hedge words (probably, about, significant...).',
  ACCEPT_FALSIFIER: "Accept the moderator's proposed falsifier for you (proposalId), or replace it with DECLARE_FALSIFIER.",
  CHALLENGE: 'Challenge an opponent you have steelmanned ACCURATE (target), with your strongest objection.',
  PROVIDE_EVIDENCE: 'Present data tied to a declared falsifier (falsifierId), saying whether it supports or undermines its owner (bearing) and its source.',
  CONCEDE: 'Concede a point honestly; give your TopClaim after the concession if it changed.',
  CONCLUDE: 'Rest your case in one sentence.',
  PROPOSE_THREAD:
    'Only when a sub-dispute deserves its own thread (a different question from every thread open): propose it (topic) and say why in text. It starts only once another debater seconds it (the second bite); a topic that duplicates a thread is refused.',
  SECOND_THREAD: "Second another debater's proposed thread (proposalSeq = its message number) if the sub-dispute deserves its own thread: that starts it. You cannot second your own.",
};

/** The answer a model gives: one move, every field present (null when the move does not use it), so strict JSON-schema modes accept it. */
export const ModelMove = z.object({
  kind: z.enum(Object.keys(MOVE_GUIDE) as [ModelMoveKind, ...ModelMoveKind[]]),
  text: z.string().describe('The message itself'),
  target: z.string().nullable().describe('STEELMAN, CHALLENGE: the opponent'),
  questionSeq: z.number().int().nullable().describe('ACCEPT_QUESTION: message number of the proposed question'),
  steelmanSeq: z.number().int().nullable().describe('GRADE_STEELMAN: message number of the steelman'),
  grade: z.enum(['ACCURATE', 'INCOMPLETE', 'WRONG']).nullable(),
  side: z.enum(['YES', 'NO', 'UNCERTAIN']).nullable().describe('COMMIT'),
  confidence: z.number().min(0).max(1).nullable().describe('COMMIT'),
  topClaim: z
    .object({ statement: z.string(), side: z.enum(['YES', 'NO', 'NUANCED']), confidence: z.number().min(0).max(1), flipsIfCruxFlips: z.boolean() })
    .nullable()
    .describe('COMMIT; CONCEDE when it changed'),
  metric: z.string().nullable().describe('DECLARE_FALSIFIER'),
  threshold: z.string().nullable().describe('DECLARE_FALSIFIER: comparator, number and unit'),
  deadline: z.string().nullable().describe('DECLARE_FALSIFIER: YYYY-MM-DD'),
  falsifierId: z.string().nullable().describe('PROVIDE_EVIDENCE'),
  bearing: z.enum(['supports', 'undermines']).nullable().describe('PROVIDE_EVIDENCE'),
  source: z.string().nullable().describe('PROVIDE_EVIDENCE'),
  proposalId: z.string().nullable().describe('ACCEPT_FALSIFIER'),
  topic: z.string().nullable().describe('PROPOSE_THREAD: the sub-dispute the new thread takes up'),
  proposalSeq: z.number().int().nullable().describe('SECOND_THREAD: message number of the proposed thread'),
});
export type ModelMove = z.infer<typeof ModelMove>;

/** The protocol move of a model's answer; what a move needs and is missing is left for the service to refuse (with its reason). */
export function toDebateMove(m: ModelMove): DebateMove {
  const text = m.text.trim() || '(no text)';
  switch (m.kind) {
    case 'CLAIM':
    case 'QUESTION':
    case 'PROPOSE_QUESTION':
    case 'CONCLUDE':
      return { kind: m.kind, text };
    case 'ACCEPT_QUESTION':
      return { kind: m.kind, questionSeq: m.questionSeq ?? 0, text };
    case 'COMMIT':
      return { kind: m.kind, side: m.side ?? 'UNCERTAIN', confidence: m.confidence ?? 0.5, topClaim: m.topClaim ?? { statement: text, side: 'NUANCED', confidence: 0.5, flipsIfCruxFlips: false }, text };
    case 'STEELMAN':
    case 'CHALLENGE':
      return { kind: m.kind, target: m.target ?? '', text };
    case 'GRADE_STEELMAN':
      return { kind: m.kind, steelmanSeq: m.steelmanSeq ?? 0, grade: m.grade ?? 'INCOMPLETE', text };
    case 'DECLARE_FALSIFIER':
      return { kind: m.kind, metric: m.metric ?? '', threshold: m.threshold ?? '', deadline: m.deadline ?? '', text, ...(m.proposalId ? { replaces: m.proposalId } : {}) };
    case 'ACCEPT_FALSIFIER':
      return { kind: m.kind, proposalId: m.proposalId ?? '', text };
    case 'PROVIDE_EVIDENCE':
      return { kind: m.kind, falsifierId: m.falsifierId ?? '', bearing: m.bearing ?? 'supports', ...(m.source ? { source: m.source } : {}), text };
    case 'CONCEDE':
      return { kind: m.kind, text, ...(m.topClaim ? { topClaim: m.topClaim } : {}) };
    case 'PROPOSE_THREAD':
      return { kind: m.kind, topic: m.topic ?? '', text };
    case 'SECOND_THREAD':
      return { kind: m.kind, proposalSeq: m.proposalSeq ?? 0, text };
  }
}

/**
 * The thread moves offered to `agentId` in an open thread, where the second bite allows them:
 * PROPOSE_THREAD while the debate has room for another thread (MAX_THREADS), SECOND_THREAD while
 * another debater's proposal in this thread awaits its second (and there is room). None in a thread that has ended.
 */
export function threadMovesOffered(d: DebateView, t: ThreadView, agentId: string): ModelMoveKind[] {
  if (!isOpenThread(t) || d.threads.length >= MAX_THREADS) return [];
  return secondable(t, agentId).length > 0 ? ['PROPOSE_THREAD', 'SECOND_THREAD'] : ['PROPOSE_THREAD'];
}

/** Proposals in the thread that `agentId` may second: another debater's, not spawned yet. */
const secondable = (t: ThreadView, agentId: string) => t.spawnProposals.filter((p) => p.proposedBy !== agentId && p.spawnedThreadId === null);

/** What is due from `agentId` in the thread now, most pressing first: what the gates wait for. */
export function obligationsOf(d: DebateView, t: ThreadView, agentId: string): string[] {
  const out: string[] = [];
  const others = d.participants.map((p) => p.agentId).filter((a) => a !== agentId);
  for (const p of t.proposedFalsifiers) if (p.forAgent === agentId && p.status === 'pending') out.push(`ACCEPT_FALSIFIER ${p.proposalId} (or replace it with DECLARE_FALSIFIER): you may do nothing else before`);
  for (const s of t.steelmans) if (s.target === agentId && s.grade === null) out.push(`GRADE_STEELMAN #${s.seq} by ${s.author}`);
  const budget = budgetOf(t.stage, d.settings);
  if (t.stage === 'DISCOVERY') {
    const open = t.questions.filter((q) => !q.accepted && !q.acceptedBy.includes(agentId));
    for (const q of open) out.push(`ACCEPT_QUESTION #${q.seq} if it captures the disagreement: "${q.text}"`);
    if (t.questions.length === 0 && budget && t.stageMessages >= budget.min - 2) out.push('PROPOSE_QUESTION: the stage needs a binary question proposed and accepted');
  } else if (t.stage === 'CRUX_LOCK') {
    const mine = t.commitments.find((c) => c.agentId === agentId);
    if (!mine || (t.forcedBinary && mine.side === 'UNCERTAIN')) out.push(`COMMIT${t.forcedBinary ? ' YES or NO (forced binary framing)' : ''}`);
    for (const c of t.commitments) {
      if (!mine || c.agentId === agentId || c.side === mine.side || c.side === 'UNCERTAIN' || mine.side === 'UNCERTAIN') continue;
      const pending = t.steelmans.some((s) => s.author === agentId && s.target === c.agentId && s.grade === null);
      if (!hasAccurateSteelman(t, agentId, c.agentId) && !pending) out.push(`STEELMAN ${c.agentId}`);
    }
    if (mine && !t.falsifiers.some((f) => f.agentId === agentId)) out.push('DECLARE_FALSIFIER');
  } else if (t.stage === 'EVIDENCE') {
    const opposing = t.falsifiers.filter((f) => f.agentId !== agentId);
    if (!t.evidence.some((e) => e.agentId === agentId) && opposing.length > 0) out.push(`PROVIDE_EVIDENCE on ${opposing.map((f) => `${f.falsifierId} (${f.agentId})`).join(' or ')}`);
    const challengeable = others.filter((o) => hasAccurateSteelman(t, agentId, o));
    if (challengeable.length > 0 && !d.messages.some((m) => m.threadId === t.threadId && m.kind === 'CHALLENGE' && m.agentId === agentId)) out.push(`CHALLENGE ${challengeable.join(' or ')}`);
    if (budget && t.stageMessages >= budget.min - d.participants.length && !t.concluded.includes(agentId)) out.push('CONCLUDE: the evidence stage is nearly over');
  }
  if (threadMovesOffered(d, t, agentId).includes('SECOND_THREAD')) for (const p of secondable(t, agentId)) out.push(`SECOND_THREAD #${p.seq} by ${p.proposedBy} if it deserves its own thread: "${p.topic}"`);
  return out;
}

/** What the thread's gate still needs (the crux-lock criteria that fail, the budget, the question). */
export function gateNeeds(d: DebateView, t: ThreadView): string[] {
  const budget = budgetOf(t.stage, d.settings);
  if (t.stage === 'DISCOVERY') return [`${Math.max(0, (budget?.min ?? 0) - t.stageMessages)} more messages`, ...(t.question ? [] : ['a binary question proposed and accepted by a majority'])];
  if (t.stage === 'CRUX_LOCK') return checkLock(t, d.participants.map((p) => p.agentId)).missing;
  if (t.stage === 'EVIDENCE') return [`${Math.max(0, (budget?.min ?? 0) - t.stageMessages)} more messages, and every debater's CONCLUDE (or ${budget?.max} messages in all)`];
  return [];
}

export const systemPromptOf = (p: Participant, d: Pick<DebateView, 'topic'>): string =>
  `You are ${p.agentId}, playing ${p.persona}, in a structured crux debate on "${d.topic}". Stay in character and argue honestly.
The debate has stages: DISCOVERY (explore, then propose and accept a binary question), CRUX_LOCK (commit YES/NO/UNCERTAIN, steelman each opponent and grade their steelmans of you, declare a falsifier), EVIDENCE (evidence tied to falsifiers, challenges, concessions, conclude), then the crux is crystallized.
A debate holds up to ${MAX_THREADS} threads. In any open thread, whatever its stage, a debater may propose a new thread for a sub-dispute that deserves its own (PROPOSE_THREAD); it starts only when another debater seconds it (SECOND_THREAD: the second bite). A thread whose accepted question duplicates another thread's is merged into that thread.
Every message is one move. A move the stage does not allow, or a vague falsifier, is refused with the reason. Answer with exactly one move as JSON; fields a move does not use are null.`;

/** The per-move prompt: the stage-aware context and what to do now. */
export function movePromptOf(d: DebateView, threadId: string, agentId: string, options: { refusal?: string; transcript?: number } = {}): string {
  const t = d.threads.find((x) => x.threadId === threadId) ?? d.threads[0]!;
  const budget = budgetOf(t.stage, d.settings);
  const allowed = [...movesAllowed(t.stage, t.stageMessages, d.settings).filter((k): k is ModelMoveKind => k in MOVE_GUIDE), ...threadMovesOffered(d, t, agentId)];
  const due = obligationsOf(d, t, agentId);
  const recent = d.messages.filter((m) => m.threadId === t.threadId).slice(-(options.transcript ?? 12));
  const lines = [
    `Debate: ${d.topic} (thread ${t.threadId}). Today: ${d.updatedAt.slice(0, 10)}.`,
    `Threads: ${d.threads.map((x) => `${x.threadId} "${x.question ?? x.topic}" (${x.mergedInto ? `merged into ${x.mergedInto}` : x.stage})`).join('; ')}; ${d.threads.length} of at most ${MAX_THREADS}.`,
    `Debaters: ${d.participants.map((p) => `${p.agentId} (${p.persona})`).join('; ')}. You are ${agentId}.`,
    `Stage: ${t.stage}${budget ? `, ${t.stageMessages} messages of a budget of ${budget.min}-${budget.max}` : ''}.`,
    `Question: ${t.question ?? '(none accepted yet)'}${t.forcedBinary ? ' (forced binary: answer YES or NO)' : ''}`,
    `Moves allowed now: ${allowed.join(', ')}.`,
    `The gate still needs: ${gateNeeds(d, t).join('; ') || 'nothing'}.`,
    `Due from you now, most pressing first: ${due.join('; ') || 'nothing in particular: move the debate forward'}.`,
    ...(t.questions.length > 0 ? [`Proposed questions: ${t.questions.map((q) => `#${q.seq} by ${q.proposedBy} "${q.text}"${q.accepted ? ' (accepted)' : ''}`).join('; ')}`] : []),
    ...(t.spawnProposals.length > 0 ? [`Proposed threads: ${t.spawnProposals.map((p) => `#${p.seq} by ${p.proposedBy} "${p.topic}" (${p.spawnedThreadId ? `spawned as ${p.spawnedThreadId}` : 'awaiting a second'})`).join('; ')}`] : []),
    ...(t.commitments.length > 0 ? [`Commitments: ${t.commitments.map((c) => `${c.agentId} ${c.side} (${c.confidence})`).join('; ')}`] : []),
    ...(t.falsifiers.length > 0 ? [`Falsifiers: ${t.falsifiers.map((f) => `${f.falsifierId} (${f.agentId}): ${f.metric} ${f.threshold.text} by ${f.deadline}`).join('; ')}`] : []),
    ...(t.steelmans.length > 0 ? [`Steelmans: ${t.steelmans.map((s) => `#${s.seq} ${s.author} of ${s.target}: ${s.grade ?? 'awaiting its grade'}`).join('; ')}`] : []),
    'Recent messages:',
    ...recent.map((m) => `#${m.seq} [${m.kind}] ${m.agentId}${m.target ? ` -> ${m.target}` : ''}: ${m.text}`),
    'How to make each allowed move:',
    ...allowed.map((k) => `- ${k}: ${MOVE_GUIDE[k]}`),
    ...(options.refusal ? [`Your previous answer was refused: ${options.refusal}. Make a move that is allowed.`] : []),
    'Your move:',
  ];
  return lines.join('\n');
}

/**
 * Where a debater speaks this turn: the first thread, by its attention, in which a move is due from
 * it (the others wait on it there); else the thread it attends to most (threadsSeenBy).
 */
export function threadFor(d: DebateView, agentId: string): string {
  const seen = threadsSeenBy(d, agentId);
  const open = attentionOf(d, agentId)
    .filter((s) => s.score > 0)
    .sort((a, b) => b.score - a.score)
    .map((s) => d.threads.find((t) => t.threadId === s.threadId)!);
  const owed = open.find((t) => obligationsOf(d, t, agentId).length > 0);
  return owed?.threadId ?? seen[0] ?? d.threads[0]!.threadId;
}
