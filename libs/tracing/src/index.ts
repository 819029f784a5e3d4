export * from './spans.js';
export * from './sdk.js';
