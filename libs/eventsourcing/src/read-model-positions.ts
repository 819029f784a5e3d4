import { AgoraError } from '@agora/contracts';
import { InvalidPosition, type EventStore, type Position } from '@agora/eventstore';

/** How long a query given `minPosition` waits for the read models by default (AGORA_READ_MODEL_WAIT_MS). */
export const DEFAULT_READ_MODEL_WAIT_MS = 2_000;

/** One read model of the process, as the positions see it. */
export interface TrackedReadModel {
  readonly name: string;
  /** Position of the last event of the log the model has taken in (applied or skipped); undefined before the first. */
  readonly position: Position | undefined;
}

/**
 * Read your writes: where the read models of a process have got to in the log, and a bounded wait
 * until all of them have reached a position (a command's reply carries the position of its last
 * event). A query given `minPosition` is answered only once every read model of the process has
 * taken in that event, so an agent that acts and then looks sees its own write, whichever replica
 * answers; after `waitMs` it is refused with `read_model_behind` instead.
 *
 * Read models (ProjectionRunner) register themselves and say when they take in an event; a wait
 * checks again then, with no polling.
 */
export class ReadModelPositions {
  private readonly models = new Set<TrackedReadModel>();
  private wake: Array<() => void> = [];

  constructor(
    private readonly store: Pick<EventStore, 'comparePositions'>,
    /** The bounded wait, in ms. */
    readonly waitMs: number = DEFAULT_READ_MODEL_WAIT_MS,
  ) {
    if (!Number.isSafeInteger(waitMs) || waitMs < 0) throw new RangeError(`waitMs must be a non-negative whole number of milliseconds, got ${String(waitMs)}`);
  }

  /** Counts `model` in from now on; the returned function counts it out. */
  track(model: TrackedReadModel): () => void {
    this.models.add(model);
    this.advanced();
    return () => {
      this.models.delete(model);
      this.advanced();
    };
  }

  /** A read model took in an event: waits check again. */
  advanced(): void {
    if (this.wake.length === 0) return;
    const wake = this.wake;
    this.wake = [];
    for (const resolve of wake) resolve();
  }

  /** The first read model (of `models`, default every one) that has not reached `minPosition` yet (undefined: all have). InvalidPosition for a string that is not a position of this log. */
  lagging(minPosition: Position, models: Iterable<TrackedReadModel> = this.models): TrackedReadModel | undefined {
    this.store.comparePositions(minPosition, minPosition);
    for (const model of models) {
      if (model.position === undefined || this.store.comparePositions(model.position, minPosition) < 0) return model;
    }
    return undefined;
  }

  /**
   * Resolves once every read model has reached `minPosition`. Throws AgoraError `read_model_behind`
   * (details `{ minPosition, position }`, position: how far the lagging model has got, null before
   * its first event) after `waitMs`, and `invalid_command` when `minPosition` is not a position of this log.
   */
  async waitFor(minPosition: unknown): Promise<void> {
    if (typeof minPosition !== 'string') throw new AgoraError('invalid_command', `minPosition must be a position of the log as a string (the \`position\` of a command's reply), got ${JSON.stringify(minPosition)}`, { minPosition: minPosition ?? null });
    let lag: TrackedReadModel | undefined;
    try {
      lag = await this.waitUntil(minPosition, this.models);
    } catch (error) {
      if (error instanceof InvalidPosition) throw new AgoraError('invalid_command', `minPosition ${JSON.stringify(minPosition)} is not a position of this log: give the \`position\` of a command's reply`, { minPosition });
      throw error;
    }
    if (lag === undefined) return;
    const position = lag.position ?? null;
    throw new AgoraError(
      'read_model_behind',
      `the read model ${lag.name} has reached ${position ?? 'no event yet'} in the log, not ${minPosition}, after waiting ${this.waitMs} ms; retry later (or give a position the log has)`,
      { minPosition, position },
    );
  }

  /**
   * Waits, at most `waitMs`, until these read models have taken in `position` (a command's own, so
   * valid), and says whether they have. A command's reply waits so for the read models its service
   * answers queries from (DispatcherOptions.commandsVisible of @agora/messaging): the replica's next
   * query sees the command without being given its position.
   */
  async reached(position: Position, models: readonly TrackedReadModel[]): Promise<boolean> {
    return (await this.waitUntil(position, models)) === undefined;
  }

  /** Waits until none of `models` lags behind `minPosition`, at most `waitMs`; the one still lagging then, if any. */
  private async waitUntil(minPosition: Position, models: Iterable<TrackedReadModel>): Promise<TrackedReadModel | undefined> {
    let lag = this.lagging(minPosition, models);
    if (lag === undefined) return undefined;
    const deadline = Date.now() + this.waitMs;
    let timer: NodeJS.Timeout | undefined;
    let waiting: (() => void) | undefined;
    const timedOut = new Promise<'timeout'>((resolve) => (timer = setTimeout(() => resolve('timeout'), this.waitMs)));
    try {
      while (lag !== undefined && Date.now() < deadline) {
        const next = new Promise<'advanced'>((resolve) => this.wake.push((waiting = () => resolve('advanced'))));
        if ((await Promise.race([next, timedOut])) === 'timeout') break;
        lag = this.lagging(minPosition, models);
      }
      return this.lagging(minPosition, models);
    } finally {
      clearTimeout(timer);
      this.wake = this.wake.filter((w) => w !== waiting);
    }
  }
}
