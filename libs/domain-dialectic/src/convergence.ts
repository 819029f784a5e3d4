/**
 * Convergence (seed 001): BOTH parties agree, in their latest messages, on the same root cause and
 * the same conditions, and have set `agrees` in a synthesis message.
 */
import type { Condition, Party } from '@agora/contracts';
import { canonicalConditions, sameConditions, sameRootCause } from './conditions.js';

/** The part of a message convergence reads (a DialecticMessageView fits). */
export interface MessageLike {
  kind: 'thesis' | 'antithesis' | 'synthesis';
  party: Party;
  rootCause: string | null;
  conditions: readonly Condition[] | null;
  agrees: boolean | null;
}

export type Convergence =
  | { converged: true; rootCause: string; conditions: Condition[] }
  | { converged: false; reason: 'awaiting_synthesis' | 'not_agreed' | 'different_root_cause' | 'different_conditions' };

/**
 * Whether the transcript has converged, and on what: the latest message of each party must be a
 * synthesis with `agrees`, and the two must name the same root cause (compared without case or
 * extra whitespace) and the same set of conditions (in any order). The resolution takes the root
 * cause as worded in the earlier of the two messages (the proposal the other accepted) and the
 * conditions in canonical order.
 */
export function converged(messages: readonly MessageLike[]): Convergence {
  const latest = (party: Party): { message: MessageLike; index: number } | undefined => {
    for (let i = messages.length - 1; i >= 0; i--) if (messages[i]!.party === party) return { message: messages[i]!, index: i };
    return undefined;
  };
  const agent = latest('agent');
  const reviewer = latest('reviewer');
  if (!agent || !reviewer || agent.message.kind !== 'synthesis' || reviewer.message.kind !== 'synthesis') return { converged: false, reason: 'awaiting_synthesis' };
  if (agent.message.agrees !== true || reviewer.message.agrees !== true) return { converged: false, reason: 'not_agreed' };
  const [first, second] = agent.index < reviewer.index ? [agent.message, reviewer.message] : [reviewer.message, agent.message];
  if (!sameRootCause(first.rootCause ?? '', second.rootCause ?? '')) return { converged: false, reason: 'different_root_cause' };
  if (!sameConditions(first.conditions ?? [], second.conditions ?? [])) return { converged: false, reason: 'different_conditions' };
  return { converged: true, rootCause: first.rootCause ?? '', conditions: canonicalConditions(first.conditions ?? []) };
}
