export * from './agent.js';
export * from './model-calls.js';
