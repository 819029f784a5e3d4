export * from './canonical-json.js';
export * from './keys.js';
export * from './envelope-signing.js';
export * from './test-vectors.js';
export * from './signing-text.js';
export * from './log-signatures.js';
export * from './commit-chain.js';
export * from './service-keys.js';
