export * from './agent-directory.js';
export * from './keyed-lock.js';
export * from './decider-handler.js';
export * from './relay.js';
export * from './config.js';
export * from './config-error.js';
export * from './context.js';
export * from './process.js';
export * from './reactor.js';
export * from './deadlines.js';
export * from './read-model.js';
export * from './lease.js';
export * from './metrics.js';
export * from './metrics-server.js';
export * from './service-identity.js';
export * from './startup.js';
/** The category of command id reservations (command-ids.ts), which event feeds leave out. */
export { COMMAND_ID_CATEGORY } from '@agora/eventsourcing';
export * from './settings.js';
