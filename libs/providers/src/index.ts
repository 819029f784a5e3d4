export * from './config.js';
export * from './layer.js';
export * from './stand-in.js';
export * from './record.js';
export * from './chamber-policy.js';
