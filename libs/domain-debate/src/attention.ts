/**
 * Attention and agenda (seed 004, v1: "attention scorer (keyword-based)", "agenda manager: track
 * 1-2 active disputes, boost attention to hot topics"). Pure: the LLM runner asks them which
 * thread each debater looks at; a view can show them.
 *
 * - Heat of an open thread: its debater messages among the debate's last HEAT_WINDOW messages,
 *   plus 2 when its commitments hold both YES and NO (a live dispute), plus 1 per CHALLENGE among
 *   those messages. Ended threads have none.
 * - Agenda: the open threads with the most heat (ties: the earlier thread), AGENDA_SIZE at most,
 *   those with no heat left off unless nothing has any (then the first open thread).
 * - Attention of a debater to an open thread: the share of the thread's keywords (topic,
 *   question, its last HEAT_WINDOW messages) that are also the debater's (persona and its own last
 *   HEAT_WINDOW messages), plus a floor of 0.05 (every open thread can be seen), times
 *   (1 + AGENDA_BOOST) when the thread is on the agenda. Ended threads: 0.
 * - Who sees which thread: a debater sees the open threads whose attention is at least half its
 *   best one's; it speaks in the one it attends to most (ties: the earlier thread).
 */
import type { DebateView, MessageView, Participant, ThreadView } from '@agora/contracts';
import { isOpenThread, keywordSet } from './threads.js';

export const HEAT_WINDOW = 12;
export const AGENDA_SIZE = 2;
export const AGENDA_BOOST = 0.5;
const FLOOR = 0.05;

type Debate = Pick<DebateView, 'threads' | 'messages' | 'participants'>;

const recent = (messages: readonly MessageView[]): MessageView[] => messages.filter((m) => m.kind !== 'MODERATOR').slice(-HEAT_WINDOW);

/** The heat of each thread (see the header). */
export function threadHeat(threads: readonly ThreadView[], messages: readonly MessageView[]): Map<string, number> {
  const window = recent(messages);
  const heat = new Map<string, number>();
  for (const t of threads) {
    if (!isOpenThread(t)) {
      heat.set(t.threadId, 0);
      continue;
    }
    const mine = window.filter((m) => m.threadId === t.threadId);
    const sides = new Set(t.commitments.map((c) => c.side));
    heat.set(t.threadId, mine.length + (sides.has('YES') && sides.has('NO') ? 2 : 0) + mine.filter((m) => m.kind === 'CHALLENGE').length);
  }
  return heat;
}

/** The active disputes: at most AGENDA_SIZE open threads, hottest first. */
export function agendaOf(d: Pick<Debate, 'threads' | 'messages'>): { active: string[]; heat: Record<string, number> } {
  const heat = threadHeat(d.threads, d.messages);
  const open = d.threads.filter(isOpenThread);
  const ranked = open.map((t, i) => ({ id: t.threadId, heat: heat.get(t.threadId)!, i })).sort((a, b) => b.heat - a.heat || a.i - b.i);
  const hot = ranked.filter((r) => r.heat > 0).slice(0, AGENDA_SIZE).map((r) => r.id);
  return { active: hot.length > 0 ? hot : ranked.slice(0, 1).map((r) => r.id), heat: Object.fromEntries(heat) };
}

/** A debater's attention to every thread (see the header), in thread order. */
export function attentionOf(d: Debate, agentId: string): { threadId: string; score: number }[] {
  const persona = d.participants.find((p: Participant) => p.agentId === agentId)?.persona ?? '';
  const own = recent(d.messages.filter((m) => m.agentId === agentId));
  const mine = keywordSet([persona, ...own.map((m) => m.text)].join(' '));
  const { active } = agendaOf(d);
  return d.threads.map((t) => {
    if (!isOpenThread(t)) return { threadId: t.threadId, score: 0 };
    const words = keywordSet([t.topic, t.question ?? '', ...recent(d.messages.filter((m) => m.threadId === t.threadId)).map((m) => m.text)].join(' '));
    let shared = 0;
    for (const w of words) if (mine.has(w)) shared++;
    const overlap = words.size === 0 ? 0 : shared / words.size;
    const score = (overlap + FLOOR) * (active.includes(t.threadId) ? 1 + AGENDA_BOOST : 1);
    return { threadId: t.threadId, score: Math.round(score * 10_000) / 10_000 };
  });
}

/** The threads a debater sees (attention at least half its best), most attended first; the first is where it speaks. */
export function threadsSeenBy(d: Debate, agentId: string): string[] {
  const scores = attentionOf(d, agentId).filter((s) => s.score > 0);
  const best = Math.max(0, ...scores.map((s) => s.score));
  return scores
    .map((s, i) => ({ ...s, i }))
    .filter((s) => s.score >= best / 2)
    .sort((a, b) => b.score - a.score || a.i - b.i)
    .map((s) => s.threadId);
}
