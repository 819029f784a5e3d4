export * from './proposals.js';
