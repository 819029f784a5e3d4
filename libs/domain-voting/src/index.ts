export * from './config.js';
export * from './selection.js';
export * from './consensus.js';
export * from './session.js';
export * from './deadlines.js';
export * from './stats.js';
