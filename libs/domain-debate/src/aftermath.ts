/**
 * After the debate (seed 004, v1 "scale to 3-5 agents"): coalition detection and common-ground
 * extraction, recorded in DebateCompleted.
 *
 * - Coalitions: two debaters agree on a thread when both committed YES or both NO there (UNCERTAIN
 *   agrees with no one). Their agreement is the share of the threads where both committed YES or
 *   NO on which they agree. Debaters are joined (single link) when their agreement is at least
 *   COALITION_AGREEMENT (2/3) over at least one shared thread; each group of 2 or more is a
 *   coalition, with its threads (those every member committed on) and its agreement (the lowest
 *   pairwise one). Merged threads do not count.
 * - Common ground: questions on which every committed agent (2 or more) took the same side;
 *   concessions (a point conceded is a point the opponent made and the conceder accepts); metrics
 *   named in falsifiers by agents of opposite sides (they agree on what would settle it).
 */
import type { Coalition, CommonGround, ThreadView } from '@agora/contracts';

export const COALITION_AGREEMENT = 2 / 3;

type Thread = Pick<ThreadView, 'threadId' | 'mergedInto' | 'commitments'>;

const sideOn = (t: Thread, agentId: string): 'YES' | 'NO' | undefined => {
  const side = t.commitments.find((c) => c.agentId === agentId)?.side;
  return side === 'YES' || side === 'NO' ? side : undefined;
};

/** Pairwise agreement of two debaters over the threads where both committed YES or NO. */
export function agreementOf(threads: readonly Thread[], a: string, b: string): { shared: number; agree: number } {
  let shared = 0;
  let agree = 0;
  for (const t of threads) {
    if (t.mergedInto !== null) continue;
    const x = sideOn(t, a);
    const y = sideOn(t, b);
    if (x === undefined || y === undefined) continue;
    shared++;
    if (x === y) agree++;
  }
  return { shared, agree };
}

export function coalitionsOf(threads: readonly Thread[], participants: readonly string[]): Coalition[] {
  const linked = new Map(participants.map((p) => [p, p]));
  const root = (p: string): string => (linked.get(p) === p ? p : root(linked.get(p)!));
  const rate = (a: string, b: string) => {
    const { shared, agree } = agreementOf(threads, a, b);
    return shared === 0 ? undefined : agree / shared;
  };
  for (const [i, a] of participants.entries()) for (const b of participants.slice(i + 1)) if ((rate(a, b) ?? 0) >= COALITION_AGREEMENT) linked.set(root(b), root(a));
  const groups = new Map<string, string[]>();
  for (const p of participants) groups.set(root(p), [...(groups.get(root(p)) ?? []), p]);
  return [...groups.values()]
    .filter((members) => members.length >= 2)
    .map((members) => {
      const pairs = members.flatMap((a, i) => members.slice(i + 1).map((b) => rate(a, b)).filter((r): r is number => r !== undefined));
      return {
        members,
        threads: threads.filter((t) => t.mergedInto === null && members.every((m) => sideOn(t, m) !== undefined)).map((t) => t.threadId),
        agreement: Math.round(Math.min(...pairs) * 10_000) / 10_000,
      };
    });
}

export function commonGroundOf(threads: readonly Pick<ThreadView, 'threadId' | 'mergedInto' | 'commitments' | 'question' | 'topic' | 'concessions' | 'falsifiers'>[]): CommonGround {
  const live = threads.filter((t) => t.mergedInto === null);
  const agreedQuestions = live.flatMap((t) => {
    const committed = t.commitments.filter((c) => c.side !== 'UNCERTAIN');
    const sides = new Set(committed.map((c) => c.side));
    if (committed.length < 2 || sides.size !== 1 || committed.length !== t.commitments.length) return [];
    return [{ threadId: t.threadId, question: t.question ?? t.topic, side: committed[0]!.side, agents: committed.map((c) => c.agentId) }];
  });
  const concessions = live.flatMap((t) => t.concessions.map((c) => ({ threadId: t.threadId, agentId: c.agentId, point: c.point })));
  const byMetric = new Map<string, { metric: string; agents: Set<string>; sides: Set<string> }>();
  for (const t of live) {
    for (const f of t.falsifiers) {
      const side = t.commitments.find((c) => c.agentId === f.agentId)?.side;
      const key = f.metric.trim().toLowerCase();
      const entry = byMetric.get(key) ?? { metric: f.metric.trim(), agents: new Set<string>(), sides: new Set<string>() };
      entry.agents.add(f.agentId);
      if (side === 'YES' || side === 'NO') entry.sides.add(side);
      byMetric.set(key, entry);
    }
  }
  const sharedMetrics = [...byMetric.values()].filter((m) => m.sides.size === 2).map((m) => ({ metric: m.metric, agents: [...m.agents] }));
  return { agreedQuestions, concessions, sharedMetrics };
}
