export * from './decider.js';
export * from './specification.js';
