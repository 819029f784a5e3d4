/**
 * The projections service as its int tests run it: in this process (startServicesInProcess of
 * @agora/testing), over a fresh embedded store and the in-process transport, /metrics on a free
 * loopback port, after a test's history has been written into the log.
 */
import type { Reply } from '@agora/contracts';
import type { EventStore } from '@agora/eventstore';
import type { KeyPair } from '@agora/identity';
import { openServiceContext, type ServiceContext } from '@agora/runtime';
import { embeddedAgora, freshPostgresDatabase, QUIET_PROJECTIONS, startServicesInProcess } from '@agora/testing';
import { startProjectionsService, type ProjectionsServiceOptions, type RunningProjections } from '../../src/projections-service.js';

export interface ProjectionsOver {
  /** The test's directory (the store's). */
  dir: string;
  context: ServiceContext;
  /** The bootstrap operator's key pair. */
  root: KeyPair;
  running: RunningProjections;
  /** A query or command over the context's in-process client, answered within 5 s. */
  request<T>(subject: string, body: unknown): Promise<Reply<T>>;
  /** Closes the service and the context, and removes the directory. */
  close(): Promise<void>;
}

/**
 * The projections service started over a test context of its own (`label` names its directory) once
 * `write` has appended the history it starts from (nothing when omitted); `options` add to or
 * replace QUIET_PROJECTIONS. The read side is SQLite in the directory, or a fresh PostgreSQL database
 * (`readSide: 'postgres'`, dropped on close). When writing or starting fails, what was opened is closed again.
 */
export async function startProjectionsOver(label: string, write?: (store: EventStore) => Promise<void>, options: ProjectionsServiceOptions & { readSide?: 'sqlite' | 'postgres' } = {}): Promise<ProjectionsOver> {
  let running!: RunningProjections;
  const { readSide, ...serviceOptions } = options;
  const postgres = readSide === 'postgres' ? await freshPostgresDatabase(label) : undefined;
  const services = await startServicesInProcess({
    label,
    open: (dir, operator) => openServiceContext({ ...embeddedAgora(dir, operator), ...(postgres ? { readDb: { engine: 'postgres' as const, url: postgres.url } } : {}), requestTimeoutMs: 5_000 }),
    start: async (context) => {
      await write?.(context.store);
      return (running = await startProjectionsService(context, { ...QUIET_PROJECTIONS, ...serviceOptions }));
    },
  });
  const { dir, context } = services;
  const request = <T>(subject: string, body: unknown): Promise<Reply<T>> => context.client.request<T>(subject, body, { timeoutMs: 5_000 });
  return {
    dir,
    context,
    root: services.key('root'),
    running,
    request,
    close: async () => {
      await services.stop();
      await postgres?.drop();
    },
  };
}
