import { Worker } from 'node:worker_threads';
import { addStageTimes, timed, type StageTimes } from './stages.js';
import { CheckContext, encodeBatch, type Answer, type HashTask, type Job, type VerifyTask, type WireBatch } from './tasks.js';

export type { HashTask, VerifyTask } from './tasks.js';

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
  id: number;
  task: VerifyTask;
  valid: boolean | undefined;
  waiting: ((valid: boolean) => void)[];
}
/** The worker's module beside this one: built (.js), or run from source (.ts, the worker inherits the loader's flags). */
const WORKER_URL = new URL(`./verify-worker${import.meta.url.endsWith('.ts') ? '.ts' : '.js'}`, import.meta.url);

interface Batch {
  jobs: Job[];
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
  private readonly context: CheckContext;
  private readonly remembered = new Map<string, Remembered>();
  private readonly pool: PoolWorker[] = [];
  private batch: Batch = { jobs: [], done: [] };
  private readonly inFlight = new Set<Promise<void>>();
  private failure: Error | undefined;
  private next = 0;
  /** Ids of signature checks. */
  private checks = 0;

  /** `times`: where the time of the checks is added up, by stage (worker threads' included), when given. */
  constructor(
    workers: number,
    private readonly times?: StageTimes,
  ) {
    this.context = new CheckContext(times);
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
    return timed(this.times, 'signatures', () => this.context.verify(undefined, task));
  }

  /**
   * Checks `task`, answering through `done`. The same signature under the same key of the same
   * envelope, checked a moment ago (a command's reservation, then its commit), is answered from
   * that check: equal envelopes (every field and value the same, compared without building their
   * canonical JSON) have equal signing bytes, and equal bytes, key and signature give the same
   * answer, so nothing is trusted that was not verified. Returns the id of the check that answers
   * (a hash of the commit whose metadata carries the envelope's payload reuses its canonical JSON).
   */
  async submit(task: VerifyTask, done: (valid: boolean) => void): Promise<number> {
    const seen = this.remembered.get(task.signature);
    if (seen && seen.task.publicKey === task.publicKey && seen.task.impliedCorrelation === task.impliedCorrelation && sameJson(seen.task.envelope, task.envelope)) {
      if (seen.valid === undefined) seen.waiting.push(done);
      else done(seen.valid);
      return seen.id;
    }
    const id = ++this.checks;
    // Remembered without its stored bytes, which would keep the whole span of the log they were read in.
    const { stored: _bytes, ...compared } = task;
    const entry: Remembered = { id, task: compared, valid: undefined, waiting: [done] };
    this.remembered.delete(task.signature);
    this.remembered.set(task.signature, entry);
    if (this.remembered.size > REMEMBERED) this.remembered.delete(this.remembered.keys().next().value!);
    await this.check({ id, verify: task }, (answer) => {
      const valid = answer === true;
      entry.valid = valid;
      for (const waiter of entry.waiting.splice(0)) waiter(valid);
    });
    return id;
  }

  /** Hashes a commit (its stream's next commit links to it), answering through `done`. */
  async submitHash(task: HashTask, done: (hash: string) => void): Promise<void> {
    await this.check({ hash: task }, (answer) => done(String(answer)));
  }

  private async check(job: Job, done: (answer: Answer) => void): Promise<void> {
    if (this.pool.length === 0) {
      done(this.context.run(job));
      return;
    }
    this.batch.jobs.push(job);
    this.batch.done.push(done);
    if (this.batch.jobs.length >= BATCH) await this.flush();
  }

  private async flush(): Promise<void> {
    const batch = this.batch;
    if (batch.jobs.length === 0) return;
    this.batch = { jobs: [], done: [] };
    if (this.failure) throw this.failure;
    if (this.inFlight.size >= this.pool.length * QUEUED_PER_WORKER) {
      // Every worker has a long queue: this thread checks the batch itself rather than wait, so
      // the reading, hashing and deciding thread also verifies when it would otherwise idle.
      // It has the values parsed: it checks them, not the stored bytes.
      batch.jobs.forEach((job, index) => batch.done[index]!(this.context.run(job)));
      return;
    }
    const member = this.pool[this.next++ % this.pool.length]!;
    const answered = new Promise<void>((resolve) => member.waiting.push({ batch, resolve }));
    timed(this.times, 'handoff', () => {
      const wire: WireBatch = encodeBatch(batch.jobs);
      member.worker.postMessage(wire, [wire.bytes.buffer as ArrayBuffer]);
    });
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
