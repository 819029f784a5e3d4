export * from './port.js';
export * from './errors.js';
export * from './validation.js';
export * from './catch-up.js';
export * from './embedded/embedded-store.js';
export * from './open-store.js';
export { openKurrentDbEventStore, type KurrentDbEventStoreOptions, type KurrentDbLogger } from './kurrentdb/index.js';
export { openJetStreamEventStore, type JetStreamEventStoreOptions, type JetStreamStoreLogger } from './jetstream/index.js';
