export * from './ids.js';
export * from './streams.js';
export * from './handle-command.js';
export * from './scheduler.js';
export * from './checkpoint-store.js';
export * from './projection.js';
export * from './checkpointed-consumer.js';
