import { AgoraError, type ErrorCode } from '@agora/contracts';

/** A domain event as deciders see it: a stable type name and plain JSON data. */
export interface DomainEvent<T extends string = string, D = unknown> {
  type: T;
  data: D;
}

/**
 * What a command carries besides its payload. Time and ids come in here, never from the clock
 * inside `decide`, so a decision replays to the same events.
 */
export interface CommandContext {
  /** The command's time: `issuedAt` of the envelope, or the scheduler's due time. */
  now: string;
  /** The acting agent, and its roles as the registry knows them. */
  actor: string;
  actorRoles: readonly string[];
  commandId: string;
  /**
   * The rules the command is decided under (RULES_VERSION of the release that decided it, recorded
   * in its `decision` metadata; a log written before rules were numbered: 1). Undefined: today's.
   * Only an audit that decides an old command again sets it, so that it gets the old answer.
   */
  rules?: number;
}

/**
 * The release of the deciders' rules. A release that changes what a decider answers to a command
 * it already took (a default, a threshold, a budget) raises it, and the decider keeps the old answer
 * for `context.rules` below the new number: a log stays auditable (docs/event-versions.md).
 * 2: a debate's CRUX_LOCK budget, unless set, follows from its participants (1: the seed's 6-8).
 * 3: RegisterAgent refuses an agent id reserved for a process (reservedAgentId of @agora/contracts); before, any id.
 *    And the auditor role sends no command: before, it could send ReserveModelCall and RecordModelCallOutcome
 *    (their `rolesBefore` in @agora/contracts, which the audit's authorization check applies).
 * 4: RegisterAgent refuses the id of a bootstrap operator (configured outside the log) to anyone but that
 *    operator itself, so no other operator shadows it in the registry; before, any operator could.
 */
export const RULES_VERSION = 4;

/** The rules `context` is decided under: its own, or today's. */
export const rulesOf = (context: Pick<CommandContext, 'rules'>): number => context.rules ?? RULES_VERSION;

export interface Command<T extends string = string, P = unknown> {
  type: T;
  payload: P;
  context: CommandContext;
}

/**
 * One aggregate's rules as three pure functions (docs/decisions/0003-deciders-are-plain-functions.md).
 * `decide` returns the events a command produces, `[]` when it is already satisfied
 * (idempotent), and throws a DomainError when it is refused.
 */
export interface Decider<C extends Command, E extends DomainEvent, S> {
  initialState(): S;
  evolve(state: S, event: E): S;
  decide(command: C, state: S): E[];
}

/** A refusal: becomes a reply `{ok:false, error:{code, message, details}}`; nothing is written. */
export class DomainError extends AgoraError {
  constructor(code: Extract<ErrorCode, 'illegal_state' | 'forbidden' | 'not_found' | 'invalid_command' | 'conflict'>, message: string, details?: Record<string, unknown>) {
    super(code, message, details);
    this.name = 'DomainError';
  }
}

export function fold<E extends DomainEvent, S>(decider: Pick<Decider<Command, E, S>, 'initialState' | 'evolve'>, events: readonly E[]): S {
  return events.reduce((s, e) => decider.evolve(s, e), decider.initialState());
}
