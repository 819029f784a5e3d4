export * from './registry-service.js';
