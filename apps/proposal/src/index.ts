export * from './proposal-service.js';
