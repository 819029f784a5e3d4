export * from './projections-service.js';
export * from './settings.js';
export * from './tribunal-metrics.js';
export * from './log-checkpoints.js';
