// The JetStream store's appendMany: one commit on each of several streams as one atomic batch
// (ADR-50, nats-server 2.12+, a stream with `allow_atomic`), each message stating the expected last
// sequence of its subject, so that JetStream stores all of them or none.
import { randomUUID } from 'node:crypto';
import { StoreUnavailable, WrongExpectedRevision } from '../errors.js';
import type { AppendResult, ExpectedRevision } from '../port.js';
import { checkExpectedRevision } from '../validation.js';
import { encodeCommit, formatPosition } from './codec.js';
import { InFlightWait, NOT_YET, WRONG_LAST_SEQUENCE } from './in-flight.js';
import type { BatchMessage, PubAck } from './pub-acks.js';
import type { StreamState } from './stream-state.js';

/** JetStream's answer to a batch one of whose message ids is already stored (a copy of it got in first). */
const BATCH_DUPLICATE_MSG_ID = 10201;
/** Rounds of "a stream moved, re-read, try again" (for `any` or `stream_exists`) before giving up. */
const MAX_BATCH_ATTEMPTS = 50;
/** Reads again of streams that show one commit of the batch stored and another not, before that is a conflict. */
const MAX_MIXED_REREADS = 3;

/** One stream's commit in a batch, encoded once. */
export interface BatchPart {
  streamId: string;
  subject: string;
  eventsJson: string;
  count: number;
  expected: ExpectedRevision;
  commitId: string;
}

/** What the batch needs of the store. */
export interface BatchContext {
  requestTimeoutMs: number;
  /** The last commit of a stream as the store knows it (cached), or undefined. */
  known(streamId: string): StreamState | undefined;
  remember(streamId: string, state: StreamState): void;
  forget(streamId: string): void;
  /** The last commit of a stream, read from a replica (`direct`) or the stream leader. */
  readLastCommit(streamId: string, from: 'direct' | 'leader'): Promise<StreamState>;
  publishBatch(batchId: string, messages: readonly BatchMessage[]): Promise<PubAck>;
}

function resultOf(state: StreamState, alreadyStored: boolean): AppendResult {
  const result: AppendResult = { nextExpectedRevision: state.lastRevision, position: formatPosition(state.lastSeq, state.lastIndex) };
  return alreadyStored ? { ...result, alreadyStored: true } : result;
}

function conflictOf(part: BatchPart, state: StreamState): WrongExpectedRevision | undefined {
  try {
    checkExpectedRevision(part.streamId, part.expected, state.lastRevision);
    return undefined;
  } catch (error) {
    if (error instanceof WrongExpectedRevision) return error;
    throw error;
  }
}

/**
 * Publishes the batch at the streams' last commits (cached, assumed absent for `no_stream`, or
 * read), and on a refusal reads them again from the stream leader: every commit the streams' last
 * (a copy of the whole got in first) answers `alreadyStored`; a stream whose revision does not hold
 * (confirmed with the leader) is a WrongExpectedRevision; a refusal whose cause no read shows yet
 * (a write in flight) is waited for, as a single append waits.
 */
export async function appendBatch(ctx: BatchContext, parts: readonly BatchPart[]): Promise<AppendResult[]> {
  let states = await Promise.all(parts.map((p) => ctx.known(p.streamId) ?? (p.expected === 'no_stream' ? undefined : ctx.readLastCommit(p.streamId, 'direct'))));
  const fresh = (i: number): StreamState => states[i] ?? { lastRevision: -1, lastSeq: 0, lastIndex: -1, commitId: undefined };
  let confirmed = false;
  let mixedRereads = 0;
  const inFlight = new InFlightWait(parts[0]!.streamId, ctx.requestTimeoutMs);
  const readAll = async () => {
    for (const p of parts) ctx.forget(p.streamId);
    states = await Promise.all(parts.map((p) => ctx.readLastCommit(p.streamId, 'leader')));
    confirmed = true;
  };
  for (let attempt = 1; attempt <= MAX_BATCH_ATTEMPTS; attempt++) {
    const stored = parts.map((p, i) => fresh(i).commitId === p.commitId);
    if (stored.every(Boolean)) return parts.map((_, i) => resultOf(fresh(i), true));
    // A commit stored beside others that are not: its stream has moved since the caller read it.
    const conflict = parts.map((p, i) => (stored[i] ? new WrongExpectedRevision(p.streamId, p.expected, fresh(i).lastRevision) : conflictOf(p, fresh(i)))).find((c) => c !== undefined);
    if (conflict) {
      // The streams are read one request each, so a read taken while a copy's batch was being applied
      // may show part of it: a mix is read again a few times (a torn read settles within milliseconds,
      // a commit stored beside others that are not stays so) before it is called a conflict.
      const mixed = stored.some(Boolean);
      if (confirmed && !(mixed && mixedRereads < MAX_MIXED_REREADS)) throw conflict;
      if (confirmed) {
        mixedRereads++;
        await inFlight.wait(`${conflict.message} (a read that may have seen part of a batch)`);
      }
      await readAll();
      continue;
    }
    const tried = parts.map((_, i) => fresh(i).lastSeq);
    const messages = parts.map((p, i) => ({ subject: p.subject, body: encodeCommit(fresh(i).lastRevision + 1, p.eventsJson), msgId: p.commitId, lastSubjectSequence: fresh(i).lastSeq }));
    const ack = await ctx.publishBatch(randomUUID(), messages);
    if (ack.kind === 'ack' && !ack.duplicate) {
      // The batch's messages have consecutive sequences, the ack the last one's.
      return parts.map((p, i) => {
        const state: StreamState = { lastRevision: fresh(i).lastRevision + p.count, lastSeq: ack.seq - (parts.length - 1 - i), lastIndex: p.count - 1, commitId: p.commitId };
        ctx.remember(p.streamId, state);
        return resultOf(state, false);
      });
    }
    if (ack.kind === 'ack') throw new StoreUnavailable(`jetstream: atomic append to ${parts.map((p) => p.streamId).join(', ')}: JetStream answered the batch as a duplicate`, parts[0]!.streamId);
    if (!WRONG_LAST_SEQUENCE.has(ack.errCode) && !NOT_YET.has(ack.errCode) && ack.errCode !== BATCH_DUPLICATE_MSG_ID) {
      throw new Error(`JetStream refused an atomic batch to ${parts.map((p) => p.streamId).join(', ')}: ${ack.description} (error ${ack.errCode})`);
    }
    const reason = `${ack.description} (error ${ack.errCode})`;
    if (NOT_YET.has(ack.errCode)) await inFlight.wait(reason);
    await readAll();
    // Nothing a read shows yet explains the refusal: a write is in flight. Waiting is not a lost round.
    if (NOT_YET.has(ack.errCode) || states.every((s, i) => (s?.lastSeq ?? 0) === tried[i])) {
      if (!NOT_YET.has(ack.errCode)) await inFlight.wait(reason);
      attempt--;
    }
  }
  throw new StoreUnavailable(`jetstream: atomic append to ${parts.map((p) => p.streamId).join(', ')}: gave up after ${MAX_BATCH_ATTEMPTS} attempts, the streams kept moving`, parts[0]!.streamId);
}
