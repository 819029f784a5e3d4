/**
 * Resuming an audit from its state file (state.ts): the log must continue the one verified, and a
 * stream met again is read from the log up to where it was verified.
 */
import { LogHasher } from '@agora/eventsourcing';
import { InvalidPosition, StreamNotFound, type EventStore, type RecordedEvent } from '@agora/eventstore';
import { commitHash, commitsOf } from '@agora/identity';
import type { AuditState } from './state.js';

/**
 * A resumed audit first hashes again the last event its state verified, where the log has it now:
 * the same event at the same place, or the past was rewritten. Undefined when the log continues;
 * else why not (a finding at the state's position, and nothing more is read).
 */
export async function discontinuity(store: EventStore, state: AuditState): Promise<string | undefined> {
  if (state.log.position === undefined) return undefined;
  const rewritten = (reason: string) => `${reason}: the log is not the one the audit state verified up to position ${state.log.position} (${state.log.count} events, hash ${state.log.hash})`;
  let event: RecordedEvent | undefined;
  try {
    for await (const e of store.readAll(state.previous.position === undefined ? { maxCount: 1 } : { after: state.previous.position, maxCount: 1 })) event = e;
  } catch (error) {
    if (error instanceof InvalidPosition) return rewritten(`the log has no position ${state.previous.position ?? ''}`);
    throw error;
  }
  if (!event) return rewritten('the log ends before the last event verified');
  if (event.position !== state.log.position) return rewritten(`the event after position ${state.previous.position ?? '(start)'} is at ${event.position}, not ${state.log.position}`);
  const again = new LogHasher({ count: state.log.count - 1, hash: state.previous.hash, position: state.previous.position }).add(event);
  if (again.hash !== state.log.hash) return rewritten(`the event at position ${event.position} (${event.streamId}@${event.revision}) is not the one verified`);
  return undefined;
}

/** A stream's events before a commit, read from the log, with the hash of its last commit. */
export interface StreamHistory {
  history: RecordedEvent[];
  /** The revision of its last event and the hash of its last commit (undefined: no event before). */
  last: { revision: number; hash: string } | undefined;
  /** Why its past is not the one a resumed audit's state verified (a continuation finding), if it is not. */
  rewritten?: string;
}

/**
 * The events of `first`'s stream before it. For a resumed audit (`verifiedTo`, its state's
 * position, and `kept`, what its state recorded of the stream if it kept it): its last commit must
 * hash to what the state recorded and lie at or before that position, otherwise its past was rewritten.
 */
export async function streamHistory(store: EventStore, first: RecordedEvent, resumed?: { verifiedTo: string; kept: { revision: number; commit: string } | undefined }): Promise<StreamHistory> {
  const history = first.revision > 0 ? await store.readStream(first.streamId, { maxCount: first.revision }).catch((error: unknown) => (error instanceof StreamNotFound ? [] : Promise.reject(error))) : [];
  const lastCommit = commitsOf(history).at(-1);
  const last = lastCommit && { revision: lastCommit.at(-1)!.revision, hash: commitHash(lastCommit) };
  if (!resumed) return { history, last };
  const { verifiedTo, kept } = resumed;
  const later = history.find((e) => store.comparePositions(e.position, verifiedTo) > 0);
  let rewritten: string | undefined;
  if (later) rewritten = `its revision ${later.revision} is at position ${later.position}, after the audit's state (${verifiedTo}), which verified the stream up to revision ${kept?.revision ?? '?'}`;
  else if (kept && (!last || last.revision !== kept.revision)) rewritten = `the audit's state verified it up to revision ${kept.revision}; the log has it up to revision ${last?.revision ?? 'none'} before this commit`;
  else if (kept && last && last.hash !== kept.commit) rewritten = `its commit at revision ${kept.revision} is not the one the audit's state verified (hash ${kept.commit})`;
  return { history, last, ...(rewritten ? { rewritten } : {}) };
}
