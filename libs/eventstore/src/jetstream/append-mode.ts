// How the JetStream store writes a command's id reservation and its events: one atomic batch
// (appendMany, ADR-50) or two appends, chosen when the store opens from what was asked, the
// server's version and the log stream's replicas and storage.
import { ATOMIC_BATCH_MIN_VERSION, takesAtomicBatches } from './server-version.js';

/**
 * `true`: one atomic batch wherever the server and the stream take them. `false`: always two
 * appends. `auto` (the default): one batch on a stream whose server stages batches in memory (a
 * replicated stream, or one in memory), two appends on a single-replica file stream.
 */
export type AtomicAppends = boolean | 'auto';

/** What the store chose, and the sentence it says at start. */
export interface AppendMode {
  atomic: boolean;
  reason: string;
}

/** The log stream as the store found it (StreamInfo's config, the fields that decide). */
export interface LogStreamShape {
  num_replicas?: number;
  storage?: string;
  allow_atomic?: boolean;
}

/**
 * Whether nats-server stages an atomic batch on this stream in memory. A single-replica file stream
 * stages each batch in an on-disk store of its own, created and removed per batch (nats-server's
 * server/jetstream_batching.go), one batch at a time per stream: on 2.15.1 a batch of two took about
 * 5 ms there, a hundredth of the rate of two appends (docs/benchmarks.md). A replicated stream
 * stages its batches in memory and proposes each as one entry to its replicas: there one batch
 * beat two appends (docs/cluster.md).
 */
export function stagesBatchesInMemory(stream: Pick<LogStreamShape, 'num_replicas' | 'storage'>): boolean {
  return (stream.num_replicas ?? 1) > 1 || stream.storage === 'memory';
}

/** Chooses, once the stream is set up (or verified), how a command's two commits are written, and says why. */
export function chooseAppendMode(mode: AtomicAppends, version: string | undefined, stream: LogStreamShape): AppendMode {
  const replicas = stream.num_replicas ?? 1;
  const shape = `${replicas} replica${replicas === 1 ? '' : 's'}, ${stream.storage ?? 'file'} storage`;
  const asked = mode === 'auto' ? 'atomic=auto' : `atomic=${mode ? 'on' : 'off'}`;
  const two = 'two appends per command (the id reservation, then the events)';
  const one = 'one atomic batch per command (the id reservation and the events, stored all or none)';
  if (mode === false) return { atomic: false, reason: `${two}: asked for (${asked})` };
  if (!takesAtomicBatches(version)) return { atomic: false, reason: `${two}: nats-server ${version ?? '(version unknown)'} has no atomic batches (${ATOMIC_BATCH_MIN_VERSION}+)` };
  if (mode === 'auto' && !stagesBatchesInMemory(stream)) {
    return { atomic: false, reason: `${two}: the log stream has ${shape}, where the server stages each batch on disk, one at a time (${asked}; atomic=on to batch anyway)` };
  }
  if (stream.allow_atomic !== true) return { atomic: false, reason: `${two}: the log stream (${shape}) does not allow atomic batches (allow_atomic: false; agora setup nats --stream adds it)` };
  const why = mode === 'auto' ? `the log stream has ${shape}, where the server stages batches in memory (${asked})` : `asked for (${asked}; ${shape})`;
  return { atomic: true, reason: `${one}: ${why}` };
}
