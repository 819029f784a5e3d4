export * from './chamber-service.js';
export * from './call-runner.js';
export * from './settings.js';
export * from './stand-in-panel.js';
export * from './tribunal-hook.js';
