export * from './dialectic-service.js';
