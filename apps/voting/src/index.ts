export * from './voting-service.js';
