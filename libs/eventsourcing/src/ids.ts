import { uuidV5 } from '@agora/identity';

/**
 * Name-based ids (RFC 9562 UUID version 5: SHA-1 over a namespace and a name).
 *
 * Why deterministic ids: two replicas that handle the same command compute the same event ids, and
 * the event store refuses or absorbs the second copy of a commit with the same ids. Random ids would
 * let both copies through whenever the stream revision happened to allow it.
 */


/** Namespace of the ids of events appended by a command (a fixed random UUID: never change it). */
export const EVENT_ID_NAMESPACE = '5b0f8f7e-3c1d-4a8e-9f61-0d2a7c4e9b13';
/** Namespace of the command ids the scheduler's expiry commands use (a fixed random UUID: never change it). */
export const DEADLINE_COMMAND_ID_NAMESPACE = 'c7e3a9d2-61b4-4f0a-8d35-2e9b7f1c6a48';

/** Id of the `index`-th event (0-based) a command appends: the same on every replica and every retry. */
export function eventIdFor(commandId: string, index: number): string {
  if (typeof commandId !== 'string' || commandId.length === 0) throw new TypeError('commandId must be a non-empty string');
  if (!Number.isSafeInteger(index) || index < 0) throw new RangeError(`event index ${String(index)} must be a non-negative integer`);
  return uuidV5(`${commandId}:${index}`, EVENT_ID_NAMESPACE);
}

/**
 * A command id for the expiry command of deadline `key` due at `dueAt`. Every scheduler replica that
 * fires the same deadline issues the same command id, so the command lands once (see handleCommand).
 */
export function deadlineCommandId(key: string, dueAt: string): string {
  return uuidV5(`${key}@${dueAt}`, DEADLINE_COMMAND_ID_NAMESPACE);
}

/** Namespace of the command ids a reactor issues in answer to an event (a fixed random UUID: never change it). */
export const REACTION_COMMAND_ID_NAMESPACE = '0e6a4c1b-93f2-4d7e-b5a8-7c2d19f03e64';

/**
 * The command id of the `index`-th command reactor `reactor` issues in answer to event `eventId`:
 * the same on every redelivery and every replica, so the reaction lands once (see handleCommand).
 */
export function reactionCommandId(reactor: string, eventId: string, index = 0): string {
  return uuidV5(`${reactor}:${eventId}:${index}`, REACTION_COMMAND_ID_NAMESPACE);
}
