export * from './tribunal-service.js';
