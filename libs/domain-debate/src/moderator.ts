/**
 * The moderator (seed 004, Milestone 3 and v1): what it says and proposes. Its moves are issued by
 * the debate service (ModerateDebate, in answer to events); the decider asks these functions.
 *
 * - After a failed lock: a prompt naming what is missing (the lock check's `missing`).
 * - After 2 failed locks: forced binary framing, the question restated as YES/NO; UNCERTAIN
 *   commitments are refused from then on.
 * - After 3: falsifiers proposed from the dialogue, one for each committed agent without one,
 *   which that agent must accept or replace before any other move.
 * - Orbiting: keyword repetition over the last `orbitingWindow` messages of the stage above
 *   `orbitingThreshold` (2.0): total occurrences of keywords divided by distinct keywords.
 * - Horizon mismatch: falsifier horizons (deadline minus the debate's time) of different agents
 *   differing by more than `horizonRatio`.
 */
import type { CruxLockFailed, DataOf, DebateSettings, FalsifierView, MessageView, ModeratorMove, ProposedFalsifierView, ThreadView } from '@agora/contracts';
import { invertComparator, parseThreshold } from './falsifiers.js';
import { proposalIdOf } from './ids.js';

const STOPWORDS = new Set(
  'that this with from have will would there their they them than then what when which while where about into over under more most less very much such only also just been being were your yours ours because could should might must does doesn done make makes made like even still into onto upon those these each other some many well both either neither here yes not nor and the for are but was its'.split(' '),
);

/** Content words of a text: lowercase, 4 letters or more, no stopwords. */
export function keywordsOf(text: string): string[] {
  return (text.toLowerCase().match(/[a-z][a-z'-]{3,}/g) ?? []).map((w) => w.replace(/'s$/, '')).filter((w) => !STOPWORDS.has(w));
}

/** Keyword repetition of messages: occurrences of keywords / distinct keywords (1 when nothing repeats). 0 without keywords. */
export function keywordRepetition(texts: readonly string[]): number {
  const words = texts.flatMap(keywordsOf);
  if (words.length === 0) return 0;
  return words.length / new Set(words).size;
}

/** The orbiting measure after message `seq`: the repetition of the stage's last `orbitingWindow` debater messages, or undefined while the window is not full. */
export function orbitingScore(t: Pick<ThreadView, 'threadId'>, messages: readonly MessageView[], seq: number, settings: DebateSettings): number | undefined {
  const at = messages.find((m) => m.seq === seq && m.threadId === t.threadId);
  if (!at) return undefined;
  const window = messages.filter((m) => m.threadId === t.threadId && m.stage === at.stage && m.kind !== 'MODERATOR' && m.seq <= seq).slice(-settings.orbitingWindow);
  if (window.length < settings.orbitingWindow) return undefined;
  return keywordRepetition(window.map((m) => m.text));
}

const DAY_MS = 86_400_000;

/** Horizons in days (deadline minus `now`) of each agent's latest falsifier. */
export function horizonsOf(falsifiers: readonly FalsifierView[], now: string): Map<string, number> {
  const out = new Map<string, number>();
  for (const f of falsifiers) out.set(f.agentId, Math.max(1, Math.round((Date.parse(`${f.deadline}T00:00:00Z`) - Date.parse(now)) / DAY_MS)));
  return out;
}

/** A horizon mismatch: the longest horizon over the shortest, when above `ratio`, with both agents. */
export function horizonMismatch(falsifiers: readonly FalsifierView[], now: string, ratio: number): { shortest: [string, number]; longest: [string, number] } | undefined {
  const horizons = [...horizonsOf(falsifiers, now)].sort((a, b) => a[1] - b[1]);
  if (horizons.length < 2) return undefined;
  const shortest = horizons[0]!;
  const longest = horizons.at(-1)!;
  return longest[1] / shortest[1] > ratio ? { shortest, longest } : undefined;
}

/** The moderator's moves a lock failure calls for: a prompt every time, forced binary framing after the 2nd, proposed falsifiers after the 3rd and later. */
export function moderatorMovesForLockFailure(failure: DataOf<typeof CruxLockFailed>): ModeratorMove[] {
  if (failure.attemptsLeft === 0) return [];
  const moves: ModeratorMove[] = [{ kind: 'lock_prompt', attempt: failure.attempt }];
  if (failure.attempt === 2) moves.push({ kind: 'forced_binary', attempt: failure.attempt });
  if (failure.attempt >= 3) moves.push({ kind: 'proposed_falsifiers', attempt: failure.attempt });
  return moves;
}

export const lockPromptText = (attempt: number, missing: readonly string[], attemptsLeft: number): string =>
  `Lock attempt ${attempt} failed (${attemptsLeft} left). Still needed: ${missing.join('; ')}.`;

export const forcedBinaryQuestion = (question: string): string => `Answer YES or NO: ${question.replace(/^Answer YES or NO:\s*/, '')}`;

/**
 * A metric, a comparator, a number and its whole unit as a debater wrote them: "Spot ETF AUM >= 100
 * USD bn", "hashrate > 700 EH/s", "drawdown > 50 %". The unit is one word (letters, currency signs,
 * "/") and, when the next word is a multiplier or a unit in capitals ("USD bn", "bn USD"), that one
 * too; never a trailing "by", "would" or the like. Group 2 is the threshold exactly as written.
 */
const THRESHOLD_IN_TEXT =
  /([A-Za-z][A-Za-z0-9 '/-]{2,60}?)\s*((?:>=|<=|≥|≤|>|<)\s*[$€£]?\s*\d+(?:[.,]\d+)*(?:\s*%|\s*[A-Za-z$€£][A-Za-z$€£/]*(?:\s+(?:k|m|b|bn|t|thousand|million|billion|trillion|[A-Z][A-Z/]+)\b(?![a-z]))?)?)/;
const DATE_IN_TEXT = /\b(\d{4}-\d{2}-\d{2})\b/;

function oneYearAfter(now: string): string {
  const d = new Date(now);
  d.setUTCFullYear(d.getUTCFullYear() + 1);
  return d.toISOString().slice(0, 10);
}

/**
 * Falsifiers proposed from the dialogue for each committed agent without one: an opponent's
 * falsifier turned round (the same metric and deadline, the comparator inverted), else a metric,
 * comparator, number and unit the agent itself wrote in the debate, quoted exactly (with a date it
 * wrote, or a year after the debate). A mirror says it is the moderator's paraphrase; a proposal
 * from the agent's words quotes them verbatim, its threshold text as written. An agent with
 * neither gets no proposal (the prompt says so).
 */
export function proposeFalsifiers(t: Pick<ThreadView, 'threadId' | 'commitments' | 'falsifiers'>, messages: readonly MessageView[], attempt: number, now: string): ProposedFalsifierView[] {
  const out: ProposedFalsifierView[] = [];
  for (const c of t.commitments) {
    if (t.falsifiers.some((f) => f.agentId === c.agentId)) continue;
    const proposalId = proposalIdOf(t.threadId, attempt, c.agentId);
    const opposing = t.falsifiers.find((f) => t.commitments.some((o) => o.agentId === f.agentId && o.side !== c.side && o.side !== 'UNCERTAIN'));
    if (opposing) {
      const comparator = invertComparator(opposing.threshold.comparator);
      // The opponent's own threshold with the comparator turned round: "< $100B" from ">= $100B".
      const text = `${comparator} ${opposing.threshold.text.replace(/^(>=|<=|=>|=<|==|≥|≤|>|<|=)\s*/, '')}`;
      out.push({
        proposalId,
        forAgent: c.agentId,
        metric: opposing.metric,
        threshold: { ...opposing.threshold, comparator, text },
        deadline: opposing.deadline,
        reasoning: `Paraphrased by the moderator, the mirror of ${opposing.agentId}'s falsifier: if ${opposing.metric} ${text} by ${opposing.deadline}, ${c.agentId}'s ${c.side} fails.`,
        status: 'pending',
      });
      continue;
    }
    for (const m of [...messages].reverse()) {
      if (m.agentId !== c.agentId || m.threadId !== t.threadId) continue;
      const found = THRESHOLD_IN_TEXT.exec(m.text);
      if (!found) continue;
      const parsed = parseThreshold(found[2]!);
      if ('problem' in parsed) continue;
      const date = DATE_IN_TEXT.exec(m.text)?.[1];
      out.push({
        proposalId,
        forAgent: c.agentId,
        metric: found[1]!.trim(),
        threshold: parsed.threshold,
        deadline: date !== undefined && date > now.slice(0, 10) ? date : oneYearAfter(now),
        reasoning: `From ${c.agentId}'s own message ${m.seq}: "${found[0].trim()}".`,
        status: 'pending',
      });
      break;
    }
  }
  return out;
}

/**
 * What the moderator is asked to look at after an event of the debate (the service's reactor issues
 * one ModerateDebate per answer; the decider says nothing when there is nothing to say): lock
 * failures, every debater message in DISCOVERY or EVIDENCE (orbiting), every falsifier (horizons).
 */
export function moderatorMovesFor(e: { type: string; data: unknown }): { threadId: string; move: ModeratorMove }[] {
  const data = e.data as { threadId: string; seq: number; kind?: string; stage?: string };
  switch (e.type) {
    case 'CruxLockFailed':
      return moderatorMovesForLockFailure(e.data as DataOf<typeof CruxLockFailed>).map((move) => ({ threadId: data.threadId, move }));
    case 'DebateMessagePosted':
      if (data.kind === 'MODERATOR' || (data.stage !== 'DISCOVERY' && data.stage !== 'EVIDENCE')) return [];
      return [{ threadId: data.threadId, move: { kind: 'orbiting', seq: data.seq } }];
    case 'FalsifierDeclared':
      return [{ threadId: data.threadId, move: { kind: 'horizon_mismatch', seq: data.seq } }];
    default:
      return [];
  }
}
