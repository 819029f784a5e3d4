// The recovery session decider's types, and the readings of a session's state shared by its rules.
import type { AntithesisSubmitted, AssignAuditor, AssignTieBreaker, AuditorAssigned, AuditSubmitted, DataOf, DecideRecovery, DialecticPhaseExpired, DialecticSessionRecord, EscalateRecovery, EscalationTier, EscalationView, ExpireDialecticPhase, NoCandidateEligible, OpenRecovery, Party, PayloadOf, Position, QuorumResultRecorded, RecordQuorumResult, RecordRelapse, RecordTieBreak, RecoveryDecided, RecoveryEscalated, RecoveryOpened, RecoveryRelapsed, RecoveryResolved, ResolutionBlocked, ResolutionProposed, ResolutionSigned, ReviewerSelected, SignResolution, SubmitAntithesis, SubmitAudit, SubmitSynthesis, SubmitThesis, SynthesisSubmitted, ThesisSubmitted, TieBreakerSelected, TieBreakRecorded } from '@agora/contracts';
import { type Command, type DomainEvent, timeAfter } from '@agora/decider';

export type DialecticEvent =
  | DomainEvent<'RecoveryOpened', DataOf<typeof RecoveryOpened>>
  | DomainEvent<'ReviewerSelected', DataOf<typeof ReviewerSelected>>
  | DomainEvent<'NoCandidateEligible', DataOf<typeof NoCandidateEligible>>
  | DomainEvent<'ThesisSubmitted', DataOf<typeof ThesisSubmitted>>
  | DomainEvent<'AntithesisSubmitted', DataOf<typeof AntithesisSubmitted>>
  | DomainEvent<'SynthesisSubmitted', DataOf<typeof SynthesisSubmitted>>
  | DomainEvent<'ResolutionProposed', DataOf<typeof ResolutionProposed>>
  | DomainEvent<'ResolutionBlocked', DataOf<typeof ResolutionBlocked>>
  | DomainEvent<'ResolutionSigned', DataOf<typeof ResolutionSigned>>
  | DomainEvent<'RecoveryResolved', DataOf<typeof RecoveryResolved>>
  | DomainEvent<'DialecticPhaseExpired', DataOf<typeof DialecticPhaseExpired>>
  | DomainEvent<'RecoveryEscalated', DataOf<typeof RecoveryEscalated>>
  | DomainEvent<'TieBreakerSelected', DataOf<typeof TieBreakerSelected>>
  | DomainEvent<'TieBreakRecorded', DataOf<typeof TieBreakRecorded>>
  | DomainEvent<'QuorumResultRecorded', DataOf<typeof QuorumResultRecorded>>
  | DomainEvent<'RecoveryDecided', DataOf<typeof RecoveryDecided>>
  | DomainEvent<'RecoveryRelapsed', DataOf<typeof RecoveryRelapsed>>
  | DomainEvent<'AuditorAssigned', DataOf<typeof AuditorAssigned>>
  | DomainEvent<'AuditSubmitted', DataOf<typeof AuditSubmitted>>;

export type DialecticCommand =
  | Command<'OpenRecovery', PayloadOf<typeof OpenRecovery>>
  | Command<'SubmitThesis', PayloadOf<typeof SubmitThesis>>
  | Command<'SubmitAntithesis', PayloadOf<typeof SubmitAntithesis>>
  | Command<'SubmitSynthesis', PayloadOf<typeof SubmitSynthesis>>
  | Command<'SignResolution', PayloadOf<typeof SignResolution>>
  | Command<'ExpireDialecticPhase', PayloadOf<typeof ExpireDialecticPhase>>
  | Command<'EscalateRecovery', PayloadOf<typeof EscalateRecovery>>
  | Command<'AssignTieBreaker', PayloadOf<typeof AssignTieBreaker>>
  | Command<'RecordTieBreak', PayloadOf<typeof RecordTieBreak>>
  | Command<'RecordQuorumResult', PayloadOf<typeof RecordQuorumResult>>
  | Command<'DecideRecovery', PayloadOf<typeof DecideRecovery>>
  | Command<'RecordRelapse', PayloadOf<typeof RecordRelapse>>
  | Command<'AssignAuditor', PayloadOf<typeof AssignAuditor>>
  | Command<'SubmitAudit', PayloadOf<typeof SubmitAudit>>;

/** A recovery with its whole transcript (the DialecticSessionRecord contract: a read model can be this state). */
export type DialecticSession = DialecticSessionRecord;
export type DialecticSessionState = { status: 'unopened' } | DialecticSession;

type EventType = DialecticEvent['type'];
type EventOf<T extends EventType> = Extract<DialecticEvent, { type: T }>;
export type CommandOf<T extends DialecticCommand['type']> = Extract<DialecticCommand, { type: T }>;

export const event = <T extends EventType>(type: T, data: EventOf<T>['data']): EventOf<T> => ({ type, data }) as EventOf<T>;

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
