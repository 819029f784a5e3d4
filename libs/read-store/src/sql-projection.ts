import { logHolds, streamFilter, type EventSourcingLogger, type LogMark, type ProjectionVerification, type ReadModelPositions } from '@agora/eventsourcing';
import { backoffDelay, sleep, type EventStore, type Position, type RecordedEvent, type Subscription } from '@agora/eventstore';
import type { HeldLock, ReadDatabase, SqlExecutor, SqlRow } from './database.js';
import { POSITIONS_TABLE, positionRowForUpdate, positionsSchema, readModelKey, type PositionRow } from './positions.js';
import { ScratchTables } from './scratch.js';

/**
 * A read model kept in tables. The runner hands it the log's events of its categories in order, in
 * batches, each batch inside one transaction that also records how far the model has got, so a crash
 * neither loses an event nor applies one twice.
 */
export interface SqlProjection {
  /** Its row in `agora_read_models` and the name of its writer's lock. */
  name: string;
  /** Bump it when the tables or the fold change: the new version's tables (named with it) are filled from the log beside the old ones. */
  version: number;
  /** Only events of streams in these categories are applied. Default: every event. */
  categories?: readonly string[];
  /** Its tables, in the order to drop them. */
  tables: readonly string[];
  /** CREATE TABLE / CREATE INDEX IF NOT EXISTS statements of its tables, for this database. */
  schema(db: Pick<ReadDatabase, 'engine' | 'text'>): string[];
  /** Folds `events` (in log order, at least one) into the tables. Must not depend on anything but the events and the tables. */
  apply(tx: SqlExecutor, events: readonly RecordedEvent[]): Promise<void>;
}

export interface SqlProjectionRunnerOptions {
  logger?: EventSourcingLogger;
  /** The process's read models, for read your writes: the runner counts itself in while it runs. */
  positions?: ReadModelPositions;
  /** Events of a batch at most (default 500): the subscription waits while that many are not written yet. */
  maxBatch?: number;
  /** How often a runner that does not write (another replica holds the lock) reads how far the model has got (default 1 s where the database tells it when the writer commits, else 100 ms). */
  pollMs?: number;
  /** How often it tries to take the lock over (default 2 s). */
  lockRetryMs?: number;
  /** Where progress lines of a long catch-up go (default standard output). */
  progress?: (line: string) => void;
  /** Backoff of a failed write. */
  retry?: { initialDelayMs?: number; maxDelayMs?: number };
}

/**
 * Keeps a read model's tables up to date with the log, in any number of processes sharing the
 * database: the one holding the projection's lock writes (it subscribes after the position the tables
 * record); every other follows the recorded position (for read your writes) and takes the lock over
 * when it is free. A new version of the read model fills tables of its own from the log (`<name>_v<n>`);
 * tables at a position the log does not hold are emptied and filled again.
 *
 * A batch is written in one transaction with the position of its last event, after checking the
 * position recorded, so two writers (a lock lost and taken over) never apply an event twice.
 * Events of other categories only move the position: it is written with the next batch, or within
 * half a second.
 */
export class SqlProjectionRunner {
  private readonly accepts: (streamId: string) => boolean;
  private readonly maxBatch: number;
  private subscription: Subscription | undefined;
  private lock: HeldLock | undefined;
  /** The last event handed to the runner (applied or skipped). */
  private seen: LogMark | undefined;
  /** The last event whose batch is written. */
  private written: LogMark | undefined;
  /** The events not written yet, in order, each with the position of the event before it in the log. */
  private buffer: { event: RecordedEvent; previous: Position | null }[] = [];
  /** Events taken from the buffer by the write in progress. */
  private inFlight = 0;
  private flushing: Promise<void> | undefined;
  private flushTimer: NodeJS.Timeout | undefined;
  /** How far the model has got as the database says (a follower's view). */
  private recorded: Position | undefined;
  private followTimer: NodeJS.Timeout | undefined;
  private stopListening: (() => Promise<void>) | undefined;
  private stopped = false;
  /** Events handed to the runner since it started writing (applied or skipped), for progress lines. */
  private taken = 0;
  private untrack: (() => void) | undefined;
  private resolveCaughtUp!: () => void;
  private rejectCaughtUp!: (error: unknown) => void;
  /** Resolves once the model holds every event the log had when the runner started. */
  readonly caughtUp: Promise<void>;

  constructor(
    private readonly db: ReadDatabase,
    private readonly store: EventStore,
    private readonly projection: SqlProjection,
    private readonly options: SqlProjectionRunnerOptions = {},
  ) {
    this.accepts = streamFilter(projection.categories);
    this.maxBatch = options.maxBatch ?? 500;
    this.caughtUp = new Promise((resolve, reject) => {
      this.resolveCaughtUp = resolve;
      this.rejectCaughtUp = reject;
    });
    this.caughtUp.catch(() => undefined);
  }

  get name(): string {
    return this.projection.name;
  }

  /** The read model at its version (readModelKey): its row, its lock and its notifications. */
  private get key(): string {
    return readModelKey(this.projection);
  }

  /** Whether this process writes the model (holds its lock). */
  get writing(): boolean {
    return this.lock !== undefined;
  }

  /**
   * Position of the last event the tables hold (applied or skipped), for read your writes: what this
   * runner has written when it writes, else what the database records.
   */
  get position(): Position | undefined {
    if (!this.lock) return this.recorded;
    return this.buffer.length === 0 && this.inFlight === 0 ? (this.seen ?? this.written)?.position : this.written?.position;
  }

  /** Creates the tables (or replaces those of another version), then writes or follows; resolves once caught up. */
  async start(): Promise<void> {
    if (this.untrack) throw new Error(`read model ${this.name} was already started`);
    this.untrack = this.options.positions?.track(this);
    this.lock = await this.db.tryLock(`read-model:${this.key}`);
    if (this.lock) await this.startWriting();
    else await this.startFollowing();
    await this.caughtUp;
  }

  async stop(): Promise<void> {
    if (this.stopped) return;
    this.stopped = true;
    clearTimeout(this.followTimer);
    clearTimeout(this.flushTimer);
    await this.stopListening?.();
    await this.subscription?.stop();
    if (this.lock) await this.flush();
    await this.lock?.release();
    this.lock = undefined;
    this.untrack?.();
    this.resolveCaughtUp();
  }

  private get logger(): EventSourcingLogger {
    return this.options.logger ?? console;
  }

  private async startWriting(): Promise<void> {
    const row = await this.prepareTables();
    this.written = row?.position ? { position: row.position, previous: row.previous, eventId: row.event_id! } : undefined;
    this.seen = this.written;
    const head = await this.store.headPosition();
    const subscription = this.store.subscribe({
      name: `read-model:${this.name}`,
      ...(this.written ? { after: this.written.position } : {}),
      handler: (event) => this.take(event),
      onError: (error, { event, attempt }) => this.logger.warn(`[read model ${this.name}] ${event ? `failed on ${event.streamId}@${event.revision}` : 'subscription dropped'} (attempt ${attempt}); retrying`, error),
    });
    this.subscription = subscription;
    // Catching up on a long stretch of the log says how it goes, every 5 s (a short one says nothing).
    const started = Date.now();
    const progress = this.options.progress ?? ((line: string) => void process.stdout.write(`${line}\n`));
    let reported = false;
    const from = this.written ? `after ${this.written.position}` : 'the beginning';
    const ticker = setInterval(() => {
      reported = true;
      const seconds = (Date.now() - started) / 1000;
      progress(`[read model ${this.name}] catching up from ${from} of the log (version ${this.projection.version}): ${this.taken} events in ${seconds.toFixed(0)} s (${Math.round(this.taken / seconds)}/s), now at ${this.seen?.position ?? 'the start'}, the log's end at start ${head ?? 'none'}`);
    }, 5_000);
    ticker.unref();
    subscription.caughtUp.then(
      async () => {
        await this.flush();
        clearInterval(ticker);
        if (reported) progress(`[read model ${this.name}] caught up: ${this.taken} events in ${((Date.now() - started) / 1000).toFixed(1)} s`);
        this.resolveCaughtUp();
      },
      (error: unknown) => {
        clearInterval(ticker);
        this.rejectCaughtUp(error);
      },
    );
  }

  /** Creates the tables, or empties them when they are of another log; the row as it then stands. */
  private async prepareTables(): Promise<PositionRow | undefined> {
    await this.db.migrate(async (tx) => {
      await tx.run(positionsSchema(this.db));
      for (const statement of this.projection.schema(this.db)) await tx.run(statement);
    });
    let row = await this.readRow();
    let reason: string | undefined;
    if (row?.position && !(await logHolds(this.store, { position: row.position, previous: row.previous, eventId: row.event_id ?? '' }))) reason = `the log does not hold the event its tables end at (${row.position}): another log, or one cut short`;
    if (reason || !row) {
      if (reason) this.logger.warn(`[read model ${this.name}] ${reason}; emptied, filling again from the log`);
      await this.db.migrate(async (tx) => {
        for (const table of this.projection.tables) await tx.run(`DROP TABLE IF EXISTS ${table}`);
        for (const statement of this.projection.schema(this.db)) await tx.run(statement);
        await tx.run(`DELETE FROM ${POSITIONS_TABLE} WHERE name = $1`, [this.key]);
        await tx.run(`INSERT INTO ${POSITIONS_TABLE} (name, version, position, previous, event_id, events, updated_at) VALUES ($1, $2, NULL, NULL, NULL, 0, $3)`, [this.key, this.projection.version, new Date().toISOString()]);
      });
      row = await this.readRow();
    }
    return row;
  }

  private async readRow(executor: { all: ReadDatabase['all'] } = this.db): Promise<PositionRow | undefined> {
    const [row] = await executor.all<PositionRow>(`SELECT version, position, previous, event_id, events FROM ${POSITIONS_TABLE} WHERE name = $1`, [this.key]);
    return row;
  }

  /** The subscription's handler: takes the event in, and makes the log wait while a full batch is not written. */
  private take(event: RecordedEvent): Promise<void> | void {
    this.taken++;
    const previous = this.seen?.position ?? null;
    this.seen = { position: event.position, previous, eventId: event.id };
    if (this.accepts(event.streamId)) {
      this.buffer.push({ event, previous });
      // Written once the events taken in the same turn are (a store hands over a commit's events
      // together, so a batch never ends inside a commit), while a write is under way they gather.
      this.scheduleFlush(0);
      // A full batch makes the log wait, and is cut at its last commit's start (the rest of that commit may be on its way).
      if (this.buffer.length >= this.maxBatch) return this.flush(true);
    } else {
      // Waits for read your writes look at `position`, which moved.
      this.options.positions?.advanced();
      this.scheduleFlush(500);
    }
  }

  private scheduleFlush(delayMs: number): void {
    if (this.flushTimer && delayMs > 0) return;
    clearTimeout(this.flushTimer);
    this.flushTimer = setTimeout(() => {
      this.flushTimer = undefined;
      void this.flush();
    }, delayMs);
  }

  /**
   * Writes what was taken in and not written yet (one write at a time); resolves once it is written.
   * `partial`: the last commit taken in may not be whole yet (the log waits mid-commit): its events stay for the next write.
   */
  private flush(partial = false): Promise<void> {
    if (this.flushing) return this.flushing.then(() => (this.buffer.length > 0 || this.seen !== this.written ? this.flush(partial) : undefined));
    if (this.buffer.length === 0 && this.seen === this.written) return Promise.resolve();
    this.flushing = this.writeUntilDone(partial).finally(() => (this.flushing = undefined));
    return this.flushing;
  }

  /** Writes the buffer, retrying a failed write (the events stay taken in) until it is written or the runner loses its lock. */
  private async writeUntilDone(partial: boolean): Promise<void> {
    for (let attempt = 1; ; attempt++) {
      // Never a batch that ends inside a commit: up to maxBatch events and the rest of the last
      // commit's taken in (a commit larger than a batch is written whole); when more of that commit
      // may be on its way (`partial`), it waits for the next write.
      let size = Math.min(this.maxBatch, this.buffer.length);
      while (size < this.buffer.length && sameCommit(this.buffer[size - 1]!.event, this.buffer[size]!.event)) size++;
      const batch = this.buffer.splice(0, size);
      if (partial && this.buffer.length === 0) this.buffer.unshift(...batch.splice(lastCommitStart(batch)));
      // Only part of a commit taken in so far: written with the rest of it. (No event at all: the position moved over skipped events, and is written.)
      if (batch.length === 0 && this.buffer.length > 0) return;
      // The whole buffer: up to the last event seen (those after the batch's last were skipped); else up to the batch's last.
      const last = batch.at(-1);
      const mark: LogMark = this.buffer.length === 0 || !last ? this.seen! : { position: last.event.position, previous: last.previous, eventId: last.event.id };
      this.inFlight = batch.length;
      try {
        await this.write(batch, mark);
        this.written = mark;
        this.inFlight = 0;
        this.options.positions?.advanced();
        if (this.buffer.length === 0) return;
        attempt = 0;
      } catch (error) {
        this.buffer.unshift(...batch);
        this.inFlight = 0;
        // Stopping gives up after one failed write: what is not written is read again from the log at the next start.
        if (this.stopped) return void this.logger.warn(`[read model ${this.name}] writing ${batch.length} events up to ${mark.position} failed while stopping; the next start reads them again from the log`, error);
        this.logger.warn(`[read model ${this.name}] writing ${batch.length} events up to ${mark.position} failed (attempt ${attempt}); retrying`, error);
        await sleep(backoffDelay(attempt, this.options.retry));
      }
    }
  }

  /** One transaction: the events after the position the tables record (another writer may have written some), and the new position. */
  private async write(batch: readonly { event: RecordedEvent }[], mark: LogMark): Promise<void> {
    await this.db.transaction(async (tx) => {
      const row = await positionRowForUpdate(tx, this.db.engine, this.key);
      if (!row) throw new Error(`the position of read model ${this.key} is gone from ${POSITIONS_TABLE}`);
      const recorded = row.position;
      if (recorded && this.store.comparePositions(recorded, mark.position) >= 0) return;
      const events = batch.map((b) => b.event).filter((e) => !recorded || this.store.comparePositions(e.position, recorded) > 0);
      if (events.length > 0) await this.projection.apply(tx, events);
      await tx.run(`UPDATE ${POSITIONS_TABLE} SET position = $2, previous = $3, event_id = $4, events = events + $5, updated_at = $6 WHERE name = $1`, [this.key, mark.position, mark.previous, mark.eventId, events.length, new Date().toISOString()]);
      // Followers in other processes hear of it once this commits (read your writes without polling).
      await this.db.notify(tx, this.key);
    });
  }

  /**
   * Folds the log again from the beginning, into a database of its own (SQLite in a temporary
   * directory), up to the position the live tables hold, and compares every table row by row with
   * the live ones as they stood at that position (read on one snapshot). A difference means the fold
   * depends on something besides the events, or an event was lost or applied twice. Writes nothing
   * to the live tables; costs a fold of the log.
   */
  async verify(): Promise<ProjectionVerification & { differences: string[] }> {
    const live = await this.db.snapshot(async (reader) => {
      const [row] = await reader.all<PositionRow>(`SELECT version, position, previous, event_id, events FROM ${POSITIONS_TABLE} WHERE name = $1`, [this.key]);
      return { position: row?.position ?? null, tables: await tablesOf(reader, this.projection.tables) };
    });
    const scratch = await ScratchTables.create(this.projection);
    try {
      if (live.position !== null) await scratch.foldUpTo(this.store, live.position, this.maxBatch);
      const rebuilt = await tablesOf(scratch.db, this.projection.tables);
      const differences = this.projection.tables.flatMap((table) => differencesOf(table, live.tables[table]!, rebuilt[table]!));
      return { name: this.name, position: live.position, events: scratch.events, equal: differences.length === 0, differences };
    } finally {
      await scratch.close();
    }
  }

  /** Another replica writes: follow the position it records, and take the lock over when it is free. */
  private async startFollowing(): Promise<void> {
    await this.db.migrate(async (tx) => {
      await tx.run(positionsSchema(this.db));
      for (const statement of this.projection.schema(this.db)) await tx.run(statement);
    });
    const head = await this.store.headPosition();
    let lastLockTry = Date.now();
    // Told when the writer commits (PostgreSQL), the follower reads the position at once; it polls besides, slower, for a missed notification and for the lock.
    // Declared before listening: a notification may come as soon as LISTEN is on, before `listen` returns.
    const listening: { to?: { close(): Promise<void> } } = {};
    let following = false;
    let again = false;
    const follow = async (): Promise<void> => {
      if (this.stopped) return;
      // A notification while a read is under way reads again right after it.
      if (following) return void (again = true);
      following = true;
      try {
        const row = await this.readRow();
        if (row && row.position !== this.recorded) {
          this.recorded = row.position ?? undefined;
          this.options.positions?.advanced();
        }
        if (head === undefined || (this.recorded !== undefined && this.store.comparePositions(this.recorded, head) >= 0)) this.resolveCaughtUp();
        if (Date.now() - lastLockTry >= (this.options.lockRetryMs ?? 2_000)) {
          lastLockTry = Date.now();
          const lock = await this.db.tryLock(`read-model:${this.key}`);
          if (lock) {
            if (this.stopped) return void (await lock.release());
            this.lock = lock;
            await this.stopListening?.();
            this.stopListening = undefined;
            this.logger.warn(`[read model ${this.name}] took over writing (the replica that wrote it let its lock go)`);
            await this.startWriting();
            return;
          }
        }
      } catch (error) {
        this.logger.warn(`[read model ${this.name}] reading how far it has got failed; retrying`, error);
      } finally {
        following = false;
      }
      if (again && !this.lock) {
        again = false;
        return follow();
      }
      clearTimeout(this.followTimer);
      if (!this.stopped && !this.lock) this.followTimer = setTimeout(() => void follow(), this.options.pollMs ?? (listening.to ? 1_000 : 100));
    };
    listening.to = await this.db.listen?.((name) => {
      if (name !== this.key || this.stopped) return;
      clearTimeout(this.followTimer);
      void follow();
    });
    const listened = listening.to;
    this.stopListening = listened ? () => listened.close() : undefined;
    await follow();
  }
}

/** The commit an event belongs to: a command's events on one stream (events that name no command are each their own). */
function commitOf(event: RecordedEvent): string | undefined {
  const commandId = event.metadata['commandId'];
  return typeof commandId === 'string' ? `${event.streamId}\n${commandId}` : undefined;
}

/** Whether two events are of one commit (see commitOf). */
function sameCommit(a: RecordedEvent, b: RecordedEvent): boolean {
  const commit = commitOf(a);
  return commit !== undefined && commit === commitOf(b);
}

/** Where the batch's last commit starts (its length when its last event names no command). */
function lastCommitStart(batch: readonly { event: RecordedEvent }[]): number {
  let start = batch.length;
  if (start === 0 || commitOf(batch[start - 1]!.event) === undefined) return start;
  start--;
  while (start > 0 && sameCommit(batch[start - 1]!.event, batch[start]!.event)) start--;
  return start;
}

/** Every row of each table, as JSON text, sorted: a form two databases' tables compare in. */
async function tablesOf(reader: Pick<SqlExecutor, 'all'>, tables: readonly string[]): Promise<Record<string, string[]>> {
  const out: Record<string, string[]> = {};
  for (const table of tables) out[table] = (await reader.all<SqlRow>(`SELECT * FROM ${table}`)).map((row) => JSON.stringify(Object.fromEntries(Object.entries(row).sort(([a], [b]) => (a < b ? -1 : 1))))).sort();
  return out;
}

/** What differs between a table as it is and as rebuilt (at most a few lines of each). */
function differencesOf(table: string, live: readonly string[], rebuilt: readonly string[]): string[] {
  const inRebuilt = new Set(rebuilt);
  const inLive = new Set(live);
  const onlyLive = live.filter((row) => !inRebuilt.has(row));
  const onlyRebuilt = rebuilt.filter((row) => !inLive.has(row));
  const cut = (row: string) => (row.length > 300 ? `${row.slice(0, 300)}...` : row);
  return [...onlyLive.slice(0, 3).map((row) => `${table}: live only: ${cut(row)}`), ...onlyRebuilt.slice(0, 3).map((row) => `${table}: rebuilt only: ${cut(row)}`), ...(onlyLive.length + onlyRebuilt.length > 6 ? [`${table}: ${onlyLive.length} rows only live, ${onlyRebuilt.length} only rebuilt`] : [])];
}

/** Starts a runner and resolves with it once caught up. */
export async function runSqlProjection(db: ReadDatabase, store: EventStore, projection: SqlProjection, options?: SqlProjectionRunnerOptions): Promise<SqlProjectionRunner> {
  const runner = new SqlProjectionRunner(db, store, projection, options);
  await runner.start();
  return runner;
}
