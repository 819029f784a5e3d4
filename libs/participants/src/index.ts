export * from './model-calls.js';
