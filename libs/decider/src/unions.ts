import type { CommandDefinition, DataOf, EventDefinition, PayloadOf } from '@agora/contracts';
import type { Command, DomainEvent } from './decider.js';

/**
 * A decider's command and event unions, derived from its contracts (never written by hand): the
 * union of `Command<type, payload>` of each definition in `D`, e.g.
 * `CommandsOf<(typeof votingContracts.commands)[number]>`.
 */
export type CommandsOf<D extends CommandDefinition> = D extends CommandDefinition ? Command<D['type'], PayloadOf<D>> : never;
/** The union of `DomainEvent<type, data>` of each event definition in `D`. */
export type EventsOf<D extends EventDefinition> = D extends EventDefinition ? DomainEvent<D['type'], DataOf<D>> : never;

/** The member of a command or event union with this type. */
export type OfType<U extends { type: string }, T extends U['type']> = Extract<U, { type: T }>;

/** The constructor of a decider's events: `event('ProposalApproved', data)` checks the data against that event's contract. */
export const eventConstructor =
  <E extends DomainEvent>() =>
  <T extends E['type']>(type: T, data: OfType<E, T>['data']): OfType<E, T> =>
    ({ type, data }) as OfType<E, T>;
