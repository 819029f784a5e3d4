export * from './debate-service.js';
export * from './scripted.js';
export * from './llm-context.js';
export * from './llm-runner.js';
