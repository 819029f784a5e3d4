export * from './common.js';
export * from './paging.js';
export * from './errors.js';
export * from './envelope.js';
export * from './define.js';
export * from './versions.js';
// The protocols, each in its folder.
export * from './registry/index.js';
export * from './tribunal/index.js';
export * from './voting/index.js';
export * from './dialectic/index.js';
export * from './model-calls/index.js';
export * from './chamber/index.js';
export * from './debate/index.js';
export * from './projections/index.js';
export * from './audit/index.js';
export * from './settings/index.js';
// Everything listed from them.
export * from './catalog.js';
export * from './json-schema.js';
export * from './documents.js';
export * from './openapi.js';
export * from './metadata.js';
export * from './signing-spec.js';
export * from './visibility.js';
export * from './authorization.js';
export * from './nats-link.js';
