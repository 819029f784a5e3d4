import type { EventStore } from '../port.js';
import type { KurrentDbEventStoreOptions } from './store.js';

export type { KurrentDbEventStoreOptions, KurrentDbLogger } from './store.js';

/**
 * Opens the KurrentDB adapter (see `store.ts`). The client (gRPC plus a native addon) is loaded
 * on first use, so importing `@agora/eventstore` stays cheap for processes that never use it.
 */
export async function openKurrentDbEventStore(options: KurrentDbEventStoreOptions): Promise<EventStore> {
  const { openKurrentDbEventStore: open } = await import('./store.js');
  return open(options);
}
