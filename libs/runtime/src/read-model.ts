import { runProjection, type EventSourcingLogger, type Projection, type ProjectionRunner } from '@agora/eventsourcing';
import type { ServiceContext } from './context.js';
import type { Running } from './process.js';

/**
 * A service's read model as a part of its process (for `startAll` / `startTogether`, like
 * `runReactor` and `runDeadlines`): restored from the process's snapshots, its position shared for
 * read-your-writes, caught up (in the process's shared pass when started together with the rest).
 */
export async function runReadModel<M>(
  context: Pick<ServiceContext, 'store' | 'snapshots' | 'readModels'>,
  projection: Projection<M>,
  logger?: EventSourcingLogger,
): Promise<Running & { model: ProjectionRunner<M> }> {
  const model = await runProjection(context.store, projection, { ...(logger ? { logger } : {}), snapshots: context.snapshots, positions: context.readModels });
  return { model, close: () => model.stop() };
}
