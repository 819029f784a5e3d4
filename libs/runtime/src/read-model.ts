import type { EventSourcingLogger, ReadModelPositions } from '@agora/eventsourcing';
import type { EventStore } from '@agora/eventstore';
import { runSqlProjection, type ReadDatabase, type SqlProjection, type SqlProjectionRunner } from '@agora/read-store';
import type { Running } from './process.js';

/**
 * The read models a process keeps in the read side's database, each kept once however many of the
 * process's services read it (the proposal, tribunal and projections services all read the proposals
 * model): the first `use` starts its runner, the last `close` stops it.
 */
export class SqlReadModels {
  private readonly running = new Map<string, { runner: Promise<SqlProjectionRunner>; users: number }>();

  constructor(
    readonly db: ReadDatabase,
    private readonly store: EventStore,
    private readonly positions: ReadModelPositions,
  ) {}

  /** The projection's runner, once caught up; `close` when done with it. */
  async use(projection: SqlProjection, logger?: EventSourcingLogger): Promise<Running & { runner: SqlProjectionRunner }> {
    let entry = this.running.get(projection.name);
    if (!entry) {
      entry = { runner: runSqlProjection(this.db, this.store, projection, { positions: this.positions, ...(logger ? { logger } : {}) }), users: 0 };
      this.running.set(projection.name, entry);
      entry.runner.catch(() => this.running.delete(projection.name));
    }
    entry.users++;
    const runner = await entry.runner;
    let closed = false;
    return {
      runner,
      close: async () => {
        if (closed) return;
        closed = true;
        if (--entry.users > 0) return;
        this.running.delete(projection.name);
        await runner.stop();
      },
    };
  }

  /** Stops every runner still in use. */
  async close(): Promise<void> {
    const all = [...this.running.values()];
    this.running.clear();
    for (const entry of all) await (await entry.runner.catch(() => undefined))?.stop();
  }
}
