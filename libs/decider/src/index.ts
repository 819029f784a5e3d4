export * from './decider.js';
export * from './specification.js';
export * from './guards.js';
export * from './deadlines.js';
export * from './unions.js';
export * from './sums.js';
