import { z } from 'zod';
import { Timestamp } from '../common.js';
import { defineCommand, defineEvent } from '../define.js';

/** The one stream of log checkpoints (category `audit`). */
export const AUDIT_LOG_STREAM = 'audit-log';

/** `sha256-chain-v1`: h(0) = 64 zeros; h(n) = sha256(h(n-1) + "\n" + JSON of the n-th event of the log); see libs/eventsourcing log-checkpoint. */
export const LogHashAlgorithm = z.literal('sha256-chain-v1');

const checkpoint = {
  count: z.number().int().min(1).describe('How many events of the whole log, from the first, the hash covers'),
  position: z.string().min(1).max(100).describe('Position of the last event covered (opaque, as the store gives it)'),
  hash: z
    .string()
    .regex(/^[0-9a-f]{64}$/)
    .describe('The running hash of the log after that event, hex'),
  algorithm: LogHashAlgorithm,
};

export const RecordLogCheckpoint = defineCommand({
  type: 'RecordLogCheckpoint',
  service: 'projections',
  aggregate: 'log',
  verb: 'checkpoint',
  // Service-only: the projections service issues it on its own behalf, signed with its key.
  roles: [],
  issuers: ['projections'],
  summary: 'Record a checkpoint of the whole log: a hash over every event up to a position (the projections service, every N commits or M seconds), so that an edited, removed or truncated event is detectable',
  payload: z.object(checkpoint).strict(),
});

export const LogCheckpointRecorded = defineEvent({
  type: 'LogCheckpointRecorded',
  category: 'audit',
  summary: 'A checkpoint of the whole log: the hash over its first `count` events, up to `position`',
  data: z.object({ ...checkpoint, recordedAt: Timestamp }).strict(),
});

