export * from './dialectic.js';
export * from './proposals.js';
export * from './voting.js';
export * from './aggregate-views.js';
export * from './chamber.js';
export * from './debate.js';
export * from './paging.js';
export * from './catalogue.js';
