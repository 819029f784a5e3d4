/**
 * The audit's checks that need no state of the log (verifier.ts runs them, on this thread or on
 * worker threads): a command's Ed25519 signature under a key the caller names, and a commit's
 * chain hash. A command's payload is put in canonical JSON once: its signing bytes build it, and
 * the hash of the commit that carries it in its metadata reuses it (`payloadOf`).
 *
 * A worker thread is sent, in one transferred buffer per batch, the bytes the store holds of each
 * commit (the first event's metadata for a signature, each event's data and metadata for a hash),
 * not the parsed values: copying bytes costs the reading thread a memcpy, where cloning the values
 * cost it about as much as the checks it handed over. Without stored bytes (a store that keeps
 * none), the values are sent.
 */
import { createPublicKey, verify, type KeyObject } from 'node:crypto';
import type { StoredBytes } from '@agora/eventstore';
import { canonicalJson, commitHash, envelopeOfMetadata, signingBytes, type ChainEvent, type SignedCommand, type UnsignedCommand } from '@agora/identity';
import { timed, type StageTimes } from './stages.js';

/**
 * One Ed25519 check: `signature` (base64url) of the signing bytes of `envelope` under `publicKey`
 * (`ed25519:<base64url>`). The bytes (canonical JSON) are built where the check runs.
 */
export interface VerifyTask {
  envelope: UnsignedCommand;
  /** The envelope was recorded with its commandId as its correlationId: the signature may be of it with that correlationId too (tried when `envelope` fails). */
  impliedCorrelation?: true;
  publicKey: string;
  signature: string;
  /** The metadata the envelope was read from, as stored: what a worker thread is sent instead of the envelope. */
  stored?: Uint8Array;
}

/**
 * One commit of a stream's hash chain, to hash (commitHash): the next commit of the stream links to
 * it. Only what the chain covers of each event.
 */
export interface HashTask {
  commit: ChainEvent[];
  /** Each event's data and metadata as stored, when the store handed them: what a worker thread is sent instead of the values. */
  stored?: readonly StoredBytes[];
  /** The signature check (its id) of an envelope whose payload the commit's first event carries as its commandPayload (an equal value): its canonical JSON is not built again. */
  payloadOf?: number;
}

/** A check to run: a signature check has an id (a later hash may reuse its payload's canonical JSON). */
export type Job = { id: number; verify: VerifyTask } | { hash: HashTask };
/** A signature check answers whether it verifies; a commit, its hash. */
export type Answer = boolean | string;

/**
 * The check of a recorded envelope under `publicKey`. A command sent without a correlation id is
 * recorded with its commandId as one: either form may be the signed one, the form without it far
 * more often (tried first).
 */
export function verifyTaskOf(envelope: SignedCommand, publicKey: string, stored?: Uint8Array): VerifyTask {
  const { signature, ...unsigned } = envelope;
  const { correlationId: _implied, ...withoutCorrelation } = unsigned;
  const implied = envelope.correlationId === envelope.commandId;
  return { envelope: implied ? withoutCorrelation : unsigned, ...(implied ? { impliedCorrelation: true } : {}), publicKey, signature, ...(stored ? { stored } : {}) };
}

const ED25519_SPKI_PREFIX = Buffer.from('302a300506032b6570032100', 'hex');

/** Public keys as KeyObjects, converted once each. */
export class KeyCache {
  private readonly keys = new Map<string, KeyObject | null>();

  get(text: string): KeyObject | null {
    let key = this.keys.get(text);
    if (key === undefined) {
      const raw = text.startsWith('ed25519:') ? Buffer.from(text.slice('ed25519:'.length), 'base64url') : Buffer.alloc(0);
      key = raw.length === 32 ? createPublicKey({ key: Buffer.concat([ED25519_SPKI_PREFIX, raw]), format: 'der', type: 'spki' }) : null;
      this.keys.set(text, key);
    }
    return key;
  }
}

/**
 * Payloads' canonical JSON by the id of the signature check that built it: the most recent few (a
 * commit follows its reservation closely; texts kept longer would live on into the old generation).
 */
const PAYLOAD_TEXTS = 8;

/** What a thread running checks keeps between them: the keys as KeyObjects, the recent payloads' canonical JSON. */
export class CheckContext {
  readonly keys = new KeyCache();
  private readonly payloads = new Map<number, string>();

  constructor(readonly times?: StageTimes) {}

  /** Runs one check, its time added to its stage. */
  run(job: Job): Answer {
    return 'verify' in job ? timed(this.times, 'signatures', () => this.verify(job.id, job.verify)) : timed(this.times, 'hashing', () => this.hash(job.hash));
  }

  /** The signature check (at once, rare checks such as which retired key signed: no payload kept). */
  verify(id: number | undefined, task: VerifyTask): boolean {
    const signature = Buffer.from(task.signature, 'base64url');
    const key = this.keys.get(task.publicKey);
    if (signature.length !== 64 || !key) return false;
    let known: Map<object, string>;
    try {
      const { payload } = task.envelope;
      const text = canonicalJson(payload);
      if (id !== undefined) this.keep(id, text);
      known = new Map([[payload, text]]);
    } catch {
      return false; // a payload with no canonical form (a lone surrogate) was not signed as written
    }
    const verifies = (envelope: UnsignedCommand) => {
      try {
        return verify(null, signingBytes(envelope, known), key, signature);
      } catch {
        return false;
      }
    };
    return verifies(task.envelope) || (task.impliedCorrelation === true && verifies({ ...task.envelope, correlationId: task.envelope.commandId }));
  }

  hash(task: HashTask): string {
    const text = task.payloadOf === undefined ? undefined : this.payloads.get(task.payloadOf);
    const first = task.commit[0];
    const payload = (first?.written?.metadata ?? first?.metadata)?.['commandPayload'];
    const known = text !== undefined && typeof payload === 'object' && payload !== null ? new Map([[payload, text]]) : undefined;
    return commitHash(task.commit, known);
  }

  private keep(id: number, text: string): void {
    this.payloads.set(id, text);
    if (this.payloads.size > PAYLOAD_TEXTS) this.payloads.delete(this.payloads.keys().next().value!);
  }
}

/** A job as a worker thread is sent it: its values, or where its stored bytes lie in the batch's buffer. */
export type WireJob =
  | Job
  | { id: number; publicKey: string; signature: string; metadataAt: readonly [number, number] }
  | { commitAt: readonly [number, number]; payloadOf: number | undefined };

/** A batch as a worker thread is sent it. */
export interface WireBatch {
  jobs: WireJob[];
  bytes: Uint8Array;
}

const text = (s: string) => Buffer.from(s, 'utf8');

/** Writes a batch's jobs for a worker thread: stored bytes where there are some, gathered into one buffer to transfer. */
export function encodeBatch(jobs: readonly Job[]): WireBatch {
  const pieces: Uint8Array[] = [];
  let length = 0;
  const put = (piece: Uint8Array) => {
    pieces.push(piece);
    length += piece.length;
  };
  const wire = jobs.map((job): WireJob => {
    if ('verify' in job) {
      const { stored, publicKey, signature } = job.verify;
      if (!stored) return job;
      const at = length;
      put(stored);
      return { id: job.id, publicKey, signature, metadataAt: [at, length] };
    }
    const { commit, stored, payloadOf } = job.hash;
    if (!stored || stored.length !== commit.length) return job;
    // [[id, type, data, metadata], ...]: the data and metadata as stored, the rest written here.
    const at = length;
    commit.forEach((event, k) => {
      const { bytes, data, metadata } = stored[k]!;
      put(text(`${k === 0 ? '[' : ','}[${JSON.stringify(event.id)},${JSON.stringify(event.type)},`));
      put(bytes.subarray(data[0], data[1]));
      put(text(','));
      put(bytes.subarray(metadata[0], metadata[1]));
      put(text(']'));
    });
    put(text(']'));
    return { commitAt: [at, length], payloadOf };
  });
  // A buffer of its own (not a slice of Node's shared pool): it is transferred.
  const bytes = new Uint8Array(length);
  let at = 0;
  for (const piece of pieces) {
    bytes.set(piece, at);
    at += piece.length;
  }
  return { jobs: wire, bytes };
}

/** A job of a batch sent to a worker thread, with its values parsed from the batch's bytes (their time added to `parse`). */
export function decodeJob(job: WireJob, bytes: Buffer, times?: StageTimes): Job | { invalid: true } {
  if ('metadataAt' in job) {
    const metadata = timed(times, 'parse', () => JSON.parse(bytes.toString('utf8', job.metadataAt[0], job.metadataAt[1])) as Record<string, unknown>);
    const found = envelopeOfMetadata(metadata);
    // The reading thread found an envelope in this same metadata: only bytes that are not it fail here.
    if ('reason' in found) return { invalid: true };
    return { id: job.id, verify: verifyTaskOf({ ...found.envelope, signature: job.signature }, job.publicKey) };
  }
  if ('commitAt' in job) {
    const events = timed(times, 'parse', () => JSON.parse(bytes.toString('utf8', job.commitAt[0], job.commitAt[1])) as [string, string, unknown, Record<string, unknown>][]);
    return { hash: { commit: events.map(([id, type, data, metadata]) => ({ id, type, data, metadata })), payloadOf: job.payloadOf } };
  }
  return job;
}
