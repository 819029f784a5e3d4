export * from './proposals.js';
export * from './voting.js';
