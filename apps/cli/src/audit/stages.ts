/**
 * Where an audit spends its time, by stage (what `npm run bench:audit` prints): milliseconds of the
 * thread that ran each stage, summed. The main thread's stages are timed where they run (engine.ts);
 * a worker thread times the tasks of each batch it answers and sends the sums back with the answers
 * (verifier.ts). Off unless the caller hands a StageTimes in AuditOptions.stages.
 */

/** The stages of an audit. */
export interface StageTimes {
  /** The store's readAll on the main thread: reading the log's records, checking them, parsing their JSON. */
  read: number;
  /** Parsing a commit's stored bytes again on a worker thread (the main thread's parse is in `read`). */
  parse: number;
  /** Envelopes (rebuilt from metadata), their canonical signing bytes and the Ed25519 checks, on whichever thread ran them. */
  signatures: number;
  /** Each command decided again and the recorded events folded (main thread). */
  decisions: number;
  /** The log hash (main thread) and each commit's chain hash (canonical JSON, SHA-256), on whichever thread ran it. */
  hashing: number;
  /** Handing batches to worker threads (main thread): copying the commits' bytes into a batch. */
  handoff: number;
  /** Of the figures above, milliseconds spent on worker threads. */
  onWorkers: number;
  /** The main thread waiting for the worker threads' last answers (idle). */
  waiting: number;
}

export type Stage = Exclude<keyof StageTimes, 'onWorkers' | 'waiting'>;

export const STAGES: readonly Stage[] = ['read', 'parse', 'signatures', 'decisions', 'hashing', 'handoff'];

export function noStageTimes(): StageTimes {
  return { read: 0, parse: 0, signatures: 0, decisions: 0, hashing: 0, handoff: 0, onWorkers: 0, waiting: 0 };
}

/** Adds the time `run` takes to `stage` of `times` (when there are times to keep), and returns its result. */
export function timed<T>(times: StageTimes | undefined, stage: Stage, run: () => T): T {
  if (!times) return run();
  const started = performance.now();
  try {
    return run();
  } finally {
    times[stage] += performance.now() - started;
  }
}

/** Adds `from`'s figures to `into`. */
export function addStageTimes(into: StageTimes, from: Partial<StageTimes>): void {
  for (const stage of [...STAGES, 'onWorkers', 'waiting'] as const) into[stage] += from[stage] ?? 0;
}
