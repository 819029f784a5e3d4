// The recovery session decider's types, and the readings of a session's state shared by its rules.
import type { DIALECTIC_SESSION_CATEGORY, dialecticContracts, DialecticSessionRecord, EscalationTier, EscalationView, Party, Position } from '@agora/contracts';
import { type CommandsOf, eventConstructor, type EventsOf, type OfType, timeAfter } from '@agora/decider';

/** The session's events and commands, from the dialectic contracts (the breaker's are the registry decider's). */
export type DialecticEvent = EventsOf<Extract<(typeof dialecticContracts.events)[number], { category: typeof DIALECTIC_SESSION_CATEGORY }>>;
export type DialecticCommand = CommandsOf<Extract<(typeof dialecticContracts.commands)[number], { service: 'dialectic' }>>;

/** A recovery with its whole transcript (the DialecticSessionRecord contract: a read model can be this state). */
export type DialecticSession = DialecticSessionRecord;
export type DialecticSessionState = { status: 'unopened' } | DialecticSession;

export type CommandOf<T extends DialecticCommand['type']> = OfType<DialecticCommand, T>;
export const event = eventConstructor<DialecticEvent>();

// ---------------------------------------------------------------------------------------------
// Reading the state
// ---------------------------------------------------------------------------------------------

export const isClosed = (status: string): boolean => status === 'resolved' || status === 'stayed_paused';
const DIALECTIC_PHASES = new Set(['awaiting_thesis', 'awaiting_antithesis', 'synthesis', 'awaiting_signatures']);
/** The dialectic itself (thesis to signatures), before any escalation. */
export const inDialectic = (status: string): boolean => DIALECTIC_PHASES.has(status);

/** Whose round it is: the paused agent on odd rounds, the reviewer on even ones. */
export const turnOf = (round: number): Party => (round % 2 === 1 ? 'agent' : 'reviewer');

export function partyOf(s: DialecticSession, agentId: string): Party | undefined {
  if (agentId === s.agentId) return 'agent';
  if (s.reviewer !== null && agentId === s.reviewer) return 'reviewer';
  return undefined;
}

export const partyId = (s: DialecticSession, party: Party): string => (party === 'agent' ? s.agentId : (s.reviewer ?? ''));

/** A party's latest position (root cause and conditions): the agent's thesis or synthesis; the reviewer's counter-proposal or synthesis. */
export function latestPosition(s: DialecticSession, party: Party): Position | null {
  for (let i = s.messages.length - 1; i >= 0; i--) {
    const m = s.messages[i]!;
    if (m.party === party && m.rootCause !== null && m.conditions !== null) return { rootCause: m.rootCause, conditions: m.conditions };
  }
  return null;
}

/** What a quorum votes on: the reviewer's latest position (the safety side), else the paused agent's. */
export const quorumProposal = (s: DialecticSession): Position | null => latestPosition(s, 'reviewer') ?? latestPosition(s, 'agent');

export const TIER_RANK: Record<EscalationTier, number> = { tie_break: 1, quorum: 2, operator: 3 };
/** The highest tier reached: 0 before any escalation. The ladder only climbs. */
export const highestTier = (s: DialecticSession): number => s.escalations.reduce((max, e) => Math.max(max, TIER_RANK[e.tier]), 0);
/** The escalation waiting for its outcome, if any. */
export const pendingEscalation = (s: DialecticSession): EscalationView | undefined => s.escalations.findLast((e) => e.outcome === null);

const earlier = (a: string, b: string): string => (Date.parse(a) <= Date.parse(b) ? a : b);
/** A dialectic phase's deadline: its own time-box, capped by the session limit. */
export const phaseDeadline = (s: DialecticSession, now: string, ms: number): string => earlier(timeAfter(now, ms), s.sessionDeadlineAt);
