/** The one harness of Agora's service and process tests (docs/tests.md). */
export * from './basics.js';
export * from './processes.js';
export * from './nats-server.js';
export * from './nats-users.js';
export * from './browser.js';
export * from './otlp-receiver.js';
export * from './services.js';
export * from './standalone.js';
export * from './protocols.js';
export * from './postgres.js';
