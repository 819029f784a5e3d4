import type { DomainEvent } from '@agora/decider';
import { mapSnapshotCodec, type Projection } from '@agora/eventsourcing';
import { StreamNotFound, type EventStore, type RecordedEvent } from '@agora/eventstore';

export interface AggregateViewsSpec<S extends { status: string }, E extends DomainEvent> {
  name: string;
  /** The stream category: streams are `<category>-<id>`, and the id is the view's key. */
  category: string;
  /** The decider's initial state and its own `evolve`, so the read model and the decider cannot disagree. */
  initial: S;
  evolve(state: S, event: E): S;
  /** Version of saved snapshots of this model: bump it when `evolve` or the view changes, so older snapshots are rebuilt from the log. Default 1. */
  snapshotVersion?: number;
}

/**
 * A read model of every aggregate of a category, by id: the decider's state folded with its own
 * `evolve`, plus the revision of the stream it reflects (`V`, the view's contract type). An
 * aggregate whose state is still the initial one (a stream of events that created nothing) is left out.
 */
export function aggregateViews<V extends { streamRevision: number }, S extends { status: string }, E extends DomainEvent>(spec: AggregateViewsSpec<S, E>): Projection<Map<string, V>> {
  const prefix = `${spec.category}-`;
  return {
    name: spec.name,
    categories: [spec.category],
    initial: () => new Map(),
    snapshot: mapSnapshotCodec<V>(spec.snapshotVersion ?? 1),
    apply(model, event: RecordedEvent) {
      const id = event.streamId.slice(prefix.length);
      const current = (model.get(id) as S | undefined) ?? spec.initial;
      const next = spec.evolve(current, { type: event.type, data: event.data } as E);
      // Past the initial state, the decider's state is the view's record (the contracts define both).
      if (next.status !== spec.initial.status) model.set(id, { ...next, streamRevision: event.revision } as unknown as V);
    },
  };
}

/** The events of one stream, or undefined when it has none. */
export async function readEvents(store: EventStore, streamId: string): Promise<RecordedEvent[] | undefined> {
  try {
    return await store.readStream(streamId);
  } catch (error) {
    if (error instanceof StreamNotFound) return undefined;
    throw error;
  }
}

/**
 * One aggregate read straight from its stream, folded the way `projection` folds it: for a reactor
 * or handler that decides on the aggregate as the log has it now. Queries answer from the read model
 * itself (a command's reply waits until the model holds it). Undefined when there is none.
 */
export async function readAggregateView<V>(store: EventStore, projection: Projection<Map<string, V>>, streamId: string, id: string): Promise<V | undefined> {
  const events = await readEvents(store, streamId);
  if (!events) return undefined;
  const model = projection.initial();
  for (const event of events) projection.apply(model, event);
  return model.get(id);
}
