import { createHash } from 'node:crypto';
import { AUDIT_LOG_STREAM, type DataOf, type LogCheckpointRecorded, type PayloadOf, type RecordLogCheckpoint } from '@agora/contracts';
import type { Command, Decider, DomainEvent } from '@agora/decider';
import type { RecordedEvent } from '@agora/eventstore';

/**
 * Checkpoints of the whole log (tamper evidence): a running hash over every event of the log in
 * its one global order, recorded now and then, signed, in the `audit-log` stream. An event edited,
 * removed or cut off the end of the log before a checkpoint changes every hash from there on, so
 * the auditor, hashing the log again with these same functions, finds the checkpoint that no
 * longer matches. The hash covers what the store holds of each event (id, type, stream,
 * revision, data and metadata as written), which is what the writer saw too.
 */

export const LOG_HASH_ALGORITHM = 'sha256-chain-v1' as const;
/** The hash of the empty log. */
export const LOG_HASH_GENESIS = '0'.repeat(64);

/** What of an event the log hash covers: its data and metadata as written (an upcast event carries them in `written`). */
export function logHashInput(event: RecordedEvent): string {
  const { data, metadata } = event.written ?? event;
  return JSON.stringify([event.id, event.type, event.streamId, event.revision, data, metadata]);
}

const COMMA = Buffer.from(',');
const CLOSE = Buffer.from(']');

/**
 * The running hash after `event`, from the hash before it. An event handed with its stored bytes
 * (RecordedEvent.stored: the JSON.stringify of its data and metadata as written) is hashed over
 * them: the same input, not serialized again.
 */
export function nextLogHash(previous: string, event: RecordedEvent): string {
  const hash = createHash('sha256').update(previous).update('\n');
  const { stored } = event;
  if (!stored) return hash.update(logHashInput(event)).digest('hex');
  const { bytes, data, metadata } = stored;
  return hash
    .update(`[${JSON.stringify(event.id)},${JSON.stringify(event.type)},${JSON.stringify(event.streamId)},${event.revision},`)
    .update(bytes.subarray(data[0], data[1]))
    .update(COMMA)
    .update(bytes.subarray(metadata[0], metadata[1]))
    .update(CLOSE)
    .digest('hex');
}

/** Where a log hash stands: after `count` events, the last at `position`. */
export interface LogHead {
  count: number;
  hash: string;
  position: string | undefined;
}

/** Hashes the log event by event, in order. */
export class LogHasher {
  private head: LogHead;

  constructor(from: LogHead = { count: 0, hash: LOG_HASH_GENESIS, position: undefined }) {
    this.head = { ...from };
  }

  add(event: RecordedEvent): LogHead {
    this.head = { count: this.head.count + 1, hash: nextLogHash(this.head.hash, event), position: event.position };
    return this.head;
  }

  get current(): LogHead {
    return this.head;
  }
}

export type LogCheckpoint = PayloadOf<typeof RecordLogCheckpoint>;
export type LogCheckpointCommand = Command<'RecordLogCheckpoint', LogCheckpoint>;
export type LogCheckpointEvent = DomainEvent<'LogCheckpointRecorded', DataOf<typeof LogCheckpointRecorded>>;
export interface LogCheckpointState {
  last: LogCheckpoint | undefined;
}

export const logCheckpointStreamId = (): string => AUDIT_LOG_STREAM;

/**
 * The checkpoint stream's rules: checkpoints only move forward (a checkpoint at or before the last
 * one is already covered: nothing to record).
 */
export const logCheckpointDecider: Decider<LogCheckpointCommand, LogCheckpointEvent, LogCheckpointState> = {
  initialState: () => ({ last: undefined }),
  evolve: (_state, event) => {
    const { recordedAt: _, ...checkpoint } = event.data;
    return { last: checkpoint };
  },
  decide: (command, state) => {
    if (state.last && command.payload.count <= state.last.count) return [];
    return [{ type: 'LogCheckpointRecorded', data: { ...command.payload, recordedAt: command.context.now } }];
  },
};

/** What an auditor compares a checkpoint with: undefined when they agree, else why not. */
export function checkpointMismatch(checkpoint: LogCheckpoint, head: LogHead): string | undefined {
  if (checkpoint.algorithm !== LOG_HASH_ALGORITHM) return `checkpoint uses unknown hash algorithm ${String(checkpoint.algorithm)}`;
  if (head.count !== checkpoint.count) return `the checkpoint covers ${checkpoint.count} events; the log has ${head.count} at that point`;
  if (head.position !== checkpoint.position) return `the checkpoint's ${checkpoint.count}th event is at position ${checkpoint.position}; in the log it is at ${String(head.position)}`;
  if (head.hash !== checkpoint.hash) return `the log's hash over its first ${checkpoint.count} events is ${head.hash}, the checkpoint recorded ${checkpoint.hash}: an event up to position ${checkpoint.position} was edited, removed or inserted`;
  return undefined;
}
