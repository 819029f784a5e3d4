// One commandId, one command (docs/decisions/0004-every-command-is-signed.md: "a repeated commandId returns the first result
// and appends nothing"), across every stream and type, every replica and every restart.
//
// The index lives in the event store itself, so it holds wherever the log does: with a command's
// first append (in one atomic append where the store has appendMany, else just before it), a stream
// of its own, `commandid-<commandId>`, gets one event naming the command
// (stream, type, actor, a hash of the payload), appended with expected revision `no_stream`. Only
// one such event can ever exist for an id. A second command with that id finds it: the same
// command goes on (a retry, another replica, a crash between the two appends) and the per-stream
// dedup answers it; anything else is refused with `command_id_reused` and nothing is written.
// Refusals and no-ops reserve nothing (they write nothing).
import { createHash } from 'node:crypto';
import { AgoraError } from '@agora/contracts';
import { StreamNotFound, WrongExpectedRevision, type EventStore, type StreamAppend } from '@agora/eventstore';
import { canonicalJson, uuidV5 } from '@agora/identity';

/** Category of the reservation streams: `commandid-<commandId>`. */
export const COMMAND_ID_CATEGORY = 'commandid';
export const COMMAND_ID_RESERVED = 'CommandIdReserved';
/** Namespace of the reservation event's id (a fixed random UUID: never change it). */
const RESERVATION_ID_NAMESPACE = '0e6b1f4a-9c27-4d83-b5e0-7a31c8d94f62';

/** What identifies one command behind its commandId. */
export interface CommandIdentity {
  commandId: string;
  streamId: string;
  commandType: string;
  actor: string;
  /**
   * The signed payload of a command from outside, compared by a hash of its canonical JSON.
   * Not compared for a service's own command (actor `service:<name>`), whose id is derived from
   * its cause: there the first result stands whatever a second run decides to send (a reaction
   * may read newer state), so only stream, type and actor are compared.
   */
  payload?: unknown;
}

interface Reservation {
  streamId: string;
  commandType: string;
  actor: string;
  /** Absent for a service's own command (see CommandIdentity.payload). */
  payloadSha256?: string;
}

export function commandIdStream(commandId: string): string {
  return `${COMMAND_ID_CATEGORY}-${commandId}`;
}

/** A service acting on its own behalf (`service:<name>`): its command ids come from their cause. */
function isServiceActor(actor: string): boolean {
  return actor.startsWith('service:');
}

function reservationOf(identity: CommandIdentity): Reservation {
  return {
    streamId: identity.streamId,
    commandType: identity.commandType,
    actor: identity.actor,
    ...(identity.payload === undefined || isServiceActor(identity.actor) ? {} : { payloadSha256: createHash('sha256').update(canonicalJson(identity.payload)).digest('base64url') }),
  };
}

/**
 * Throws AgoraError('command_id_reused') unless `first` (what the log says the id was used for,
 * in the same stream) is this command: same type, same actor, same payload when both have one.
 */
export function assertSameCommand(identity: CommandIdentity, first: { commandType: string; actor: string; payload?: unknown }): void {
  const refused = mismatch(identity, reservationOf({ ...first, commandId: identity.commandId, streamId: identity.streamId }), reservationOf(identity));
  if (refused) throw refused;
}

function mismatch(identity: CommandIdentity, first: Reservation, wanted: Reservation): AgoraError | undefined {
  const differs: string[] = [];
  if (first.streamId !== wanted.streamId) differs.push(`stream ${first.streamId}`);
  if (first.commandType !== wanted.commandType) differs.push(`type ${first.commandType}`);
  if (first.actor !== wanted.actor) differs.push(`actor ${first.actor}`);
  if (first.payloadSha256 !== undefined && wanted.payloadSha256 !== undefined && first.payloadSha256 !== wanted.payloadSha256) differs.push('another payload');
  if (differs.length === 0) return undefined;
  // Another actor's command: say nothing of it (its stream, type or actor), as a read would not.
  if (first.actor !== wanted.actor) {
    return new AgoraError('command_id_reused', `commandId ${identity.commandId} was already used by another command; nothing was written: give each command a new commandId`, { commandId: identity.commandId });
  }
  return new AgoraError(
    'command_id_reused',
    `commandId ${identity.commandId} was already used by another command (${differs.join(', ')}); nothing was written: give each command a new commandId`,
    { commandId: identity.commandId, streamId: first.streamId, commandType: first.commandType },
  );
}

/** The reservation already stored for this id, if any. */
async function storedReservation(store: EventStore, commandId: string): Promise<Reservation | undefined> {
  try {
    const [event] = await store.readStream(commandIdStream(commandId), { maxCount: 1 });
    return event?.data as unknown as Reservation | undefined;
  } catch (error) {
    if (error instanceof StreamNotFound) return undefined;
    throw error;
  }
}

/**
 * Reserves `identity.commandId` for this command before its first append. `metadata` is the
 * command's own (actor, signature, signed payload...), so that an audit attributes the
 * reservation exactly as it attributes the command's events. Resolves when the id
 * is this command's: `reserved` when this call reserved it, `held` when this same command had
 * (a retry, or a copy on another replica); throws AgoraError('command_id_reused') when another
 * command holds it.
 */
export async function reserveCommandId(store: EventStore, identity: CommandIdentity, metadata: Record<string, unknown> = { commandId: identity.commandId, actor: identity.actor }): Promise<'reserved' | 'held'> {
  const reservation = reservationAppend(identity, metadata);
  try {
    const result = await store.append(reservation.streamId, reservation.events, reservation.expectedRevision);
    return result.alreadyStored === true ? 'held' : 'reserved';
  } catch (error) {
    // The event id is derived from the whole reservation: the same command's copy is absorbed by
    // the store (success), another command's is refused (WrongExpectedRevision), never absorbed.
    if (!(error instanceof WrongExpectedRevision)) throw error;
  }
  await assertReservedFor(store, identity);
  return 'held';
}

/**
 * The append that reserves `identity.commandId` (expected `no_stream`), for a store that writes it
 * together with the command's events in one atomic append (`EventStore.appendMany`); the same event
 * `reserveCommandId` appends alone, so a log written either way reads the same.
 */
export function reservationAppend(identity: CommandIdentity, metadata: Record<string, unknown>): StreamAppend {
  const wanted = reservationOf(identity);
  return {
    streamId: commandIdStream(identity.commandId),
    events: [{ id: uuidV5(`${identity.commandId}:${canonicalJson(wanted)}`, RESERVATION_ID_NAMESPACE), type: COMMAND_ID_RESERVED, data: { commandId: identity.commandId, ...wanted }, metadata }],
    expectedRevision: 'no_stream',
  };
}

/**
 * After a reservation was refused because the id's stream exists: resolves when the id is held by
 * this same command (a copy or a retry of it), throws AgoraError('command_id_reused') when another
 * command holds it.
 */
export async function assertReservedFor(store: EventStore, identity: CommandIdentity): Promise<void> {
  const first = await storedReservation(store, identity.commandId);
  if (first === undefined) return; // cannot happen (the stream exists); the per-stream dedup still holds
  const refused = mismatch(identity, first, reservationOf(identity));
  if (refused) throw refused;
}

/**
 * Checks, without writing, that `identity.commandId` is not held by another command (for answers
 * that write nothing: a duplicate found in the stream, a no-op). A log written before reservations
 * existed has none: then there is nothing to compare and the command stands. Resolves `true` when
 * this same command holds the id already, `false` when nothing does.
 */
export async function checkCommandId(store: EventStore, identity: CommandIdentity): Promise<boolean> {
  const first = await storedReservation(store, identity.commandId);
  if (first === undefined) return false;
  const refused = mismatch(identity, first, reservationOf(identity));
  if (refused) throw refused;
  return true;
}
