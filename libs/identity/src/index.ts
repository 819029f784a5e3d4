export * from './canonical-json.js';
export * from './keys.js';
export * from './envelope-signing.js';
