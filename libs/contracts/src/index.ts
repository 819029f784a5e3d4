export * from './common.js';
export * from './errors.js';
export * from './envelope.js';
export * from './define.js';
export * from './registry.js';
export * from './catalog.js';
export * from './documents.js';
