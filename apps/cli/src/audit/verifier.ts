import { createPublicKey, verify, type KeyObject } from 'node:crypto';
import { Worker } from 'node:worker_threads';
import { commitHash, signingBytes, type ChainEvent, type UnsignedCommand } from '@agora/identity';
import { addStageTimes, timed, type StageTimes } from './stages.js';

/**
 * One Ed25519 check: `signature` (base64url) of the signing bytes of `envelope` under `publicKey`
 * (`ed25519:<base64url>`). The bytes (canonical JSON) are built where the check runs: on a worker
 * thread when there are workers.
 */
export interface VerifyTask {
  envelope: UnsignedCommand;
  /** The same envelope written another way, which the signature may be of; tried when `envelope` fails. */
  alternative?: UnsignedCommand;
  publicKey: string;
  signature: string;
}

/**
 * One commit of a stream's hash chain, to hash (commitHash): the next commit of the stream links to
 * it. Only what the chain covers of each event (no position or revision to copy to a worker).
 */
export interface HashTask {
  commit: ChainEvent[];
}

type Task = VerifyTask | HashTask;
/** A signature check answers whether it verifies; a commit, its hash. */
type Answer = boolean | string;

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

export function verifyTask(task: VerifyTask, keys: KeyCache): boolean {
  const signature = Buffer.from(task.signature, 'base64url');
  const key = keys.get(task.publicKey);
  if (signature.length !== 64 || !key) return false;
  const verifies = (envelope: UnsignedCommand) => {
    try {
      return verify(null, signingBytes(envelope), key, signature);
    } catch {
      return false; // an envelope with no canonical form (a lone surrogate) was not signed as written
    }
  };
  return verifies(task.envelope) || (task.alternative !== undefined && verifies(task.alternative));
}

/**
 * True when two values read from JSON are equal: the same strings, numbers, literals, and arrays and
 * objects with the same members (an object member set to undefined counts as absent, as in JSON).
 * Equal values have equal canonical JSON, so equal signing bytes. A tight walk: the envelopes
 * compared carry payloads of hundreds of kilobytes (a recovery's candidates).
 */
export function sameJson(a: unknown, b: unknown): boolean {
  if (a === b) return true;
  if (typeof a !== 'object' || typeof b !== 'object' || a === null || b === null) return false;
  if (Array.isArray(a)) {
    if (!Array.isArray(b) || a.length !== b.length) return false;
    for (let i = 0; i < a.length; i++) if (!sameJson(a[i], b[i])) return false;
    return true;
  }
  if (Array.isArray(b)) return false;
  const x = a as Record<string, unknown>;
  const y = b as Record<string, unknown>;
  let members = 0;
  for (const key in x) {
    if (!Object.hasOwn(x, key) || x[key] === undefined) continue;
    if (!Object.hasOwn(y, key) || !sameJson(x[key], y[key])) return false;
    members++;
  }
  for (const key in y) if (Object.hasOwn(y, key) && y[key] !== undefined) members--;
  return members === 0;
}

/** Runs one task of either kind (what a worker thread does with each task of a batch), its time added to `times`' stage. */
export function runTask(task: Task, keys: KeyCache, times?: StageTimes): Answer {
  return 'commit' in task ? timed(times, 'hashing', () => commitHash(task.commit)) : timed(times, 'signatures', () => verifyTask(task, keys));
}

/** A worker's answer to a batch: the answers in order, and the time its tasks took by stage. */
export interface BatchAnswer {
  answers: Answer[];
  times: StageTimes;
}

const BATCH = 256;
/**
 * Batches queued on a worker before this thread checks one itself. This thread (reading, hashing,
 * deciding) is the slower one on the benchmark log: with 2 queued it took about a sixth of the
 * checks while the worker idled, so the queue is long enough to ride out a burst of large commits.
 */
const QUEUED_PER_WORKER = 8;
/** Signature checks remembered (most recent first out last): a command's id reservation and its commit carry the same signed envelope. */
const REMEMBERED = 4_096;

/** A check made or under way, and who waits for its answer. */
interface Remembered {
  task: VerifyTask;
  valid: boolean | undefined;
  waiting: ((valid: boolean) => void)[];
}
/** The worker's module beside this one: built (.js), or run from source (.ts, the worker inherits the loader's flags). */
const WORKER_URL = new URL(`./verify-worker${import.meta.url.endsWith('.ts') ? '.ts' : '.js'}`, import.meta.url);

interface Batch {
  tasks: Task[];
  done: ((answer: Answer) => void)[];
}

interface PoolWorker {
  worker: Worker;
  /** Batches sent and not answered yet, in order (a worker answers in order). */
  waiting: { batch: Batch; resolve: () => void }[];
}

/**
 * Checks signatures and hashes commits on this thread, or in batches on worker threads (`workers` >
 * 0), answering each through its callback; a batch that finds every worker busy is checked on this
 * thread. `drain` waits for all.
 */
export class SignatureVerifier {
  private readonly keys = new KeyCache();
  private readonly remembered = new Map<string, Remembered>();
  private readonly pool: PoolWorker[] = [];
  private batch: Batch = { tasks: [], done: [] };
  private readonly inFlight = new Set<Promise<void>>();
  private failure: Error | undefined;
  private next = 0;

  /** `times`: where the time of the checks is added up, by stage (worker threads' included), when given. */
  constructor(
    workers: number,
    private readonly times?: StageTimes,
  ) {
    for (let i = 0; i < workers; i++) {
      const member: PoolWorker = { worker: new Worker(WORKER_URL, { workerData: { timed: times !== undefined } }), waiting: [] };
      member.worker.on('message', ({ answers, times: spent }: BatchAnswer) => {
        const sent = member.waiting.shift();
        if (!sent) return;
        if (this.times) {
          addStageTimes(this.times, spent);
          this.times.onWorkers += spent.parse + spent.signatures + spent.hashing;
        }
        answers.forEach((answer, index) => sent.batch.done[index]!(answer));
        sent.resolve();
      });
      member.worker.on('error', (error: Error) => {
        this.failure = error;
        for (const sent of member.waiting.splice(0)) sent.resolve();
      });
      this.pool.push(member);
    }
  }

  /** Checks at once on this thread (rare checks: which retired key signed). */
  verifyNow(task: VerifyTask): boolean {
    return timed(this.times, 'signatures', () => verifyTask(task, this.keys));
  }

  /**
   * Checks `task`, answering through `done`. The same signature under the same key of the same
   * envelope, checked a moment ago (a command's reservation, then its commit), is answered from
   * that check: equal envelopes (every field and value the same, compared without building their
   * canonical JSON) have equal signing bytes, and equal bytes, key and signature give the same
   * answer, so nothing is trusted that was not verified.
   */
  async submit(task: VerifyTask, done: (valid: boolean) => void): Promise<void> {
    const seen = this.remembered.get(task.signature);
    if (seen && seen.task.publicKey === task.publicKey && sameJson(seen.task.envelope, task.envelope) && sameJson(seen.task.alternative, task.alternative)) {
      if (seen.valid === undefined) seen.waiting.push(done);
      else done(seen.valid);
      return;
    }
    const entry: Remembered = { task, valid: undefined, waiting: [done] };
    this.remembered.delete(task.signature);
    this.remembered.set(task.signature, entry);
    if (this.remembered.size > REMEMBERED) this.remembered.delete(this.remembered.keys().next().value!);
    await this.check(task, (answer) => {
      const valid = answer === true;
      entry.valid = valid;
      for (const waiter of entry.waiting.splice(0)) waiter(valid);
    });
  }

  /** Hashes a commit (its stream's next commit links to it), answering through `done`. */
  async submitHash(task: HashTask, done: (hash: string) => void): Promise<void> {
    await this.check(task, (answer) => done(String(answer)));
  }

  private async check(task: Task, done: (answer: Answer) => void): Promise<void> {
    if (this.pool.length === 0) {
      done(runTask(task, this.keys, this.times));
      return;
    }
    this.batch.tasks.push(task);
    this.batch.done.push(done);
    if (this.batch.tasks.length >= BATCH) await this.flush();
  }

  private async flush(): Promise<void> {
    const batch = this.batch;
    if (batch.tasks.length === 0) return;
    this.batch = { tasks: [], done: [] };
    if (this.failure) throw this.failure;
    if (this.inFlight.size >= this.pool.length * QUEUED_PER_WORKER) {
      // Every worker has a long queue: this thread checks the batch itself rather than wait, so
      // the reading, hashing and deciding thread also verifies when it would otherwise idle.
      batch.tasks.forEach((task, index) => batch.done[index]!(runTask(task, this.keys, this.times)));
      return;
    }
    const member = this.pool[this.next++ % this.pool.length]!;
    const answered = new Promise<void>((resolve) => member.waiting.push({ batch, resolve }));
    timed(this.times, 'handoff', () => member.worker.postMessage(batch.tasks));
    const tracked: Promise<void> = answered.finally(() => this.inFlight.delete(tracked));
    this.inFlight.add(tracked);
  }

  async drain(): Promise<void> {
    await this.flush();
    await Promise.all(this.inFlight);
    if (this.failure) throw this.failure;
  }

  async close(): Promise<void> {
    await Promise.all(this.pool.map((m) => m.worker.terminate()));
    this.pool.length = 0;
  }
}
