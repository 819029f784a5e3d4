export * from './policy.js';
export * from './selection.js';
export * from './deadlines.js';
export * from './proposal.js';
export * from './stats.js';
export * from './calibration.js';
