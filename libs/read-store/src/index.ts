export * from './database.js';
export * from './sqlite.js';
export * from './postgres.js';
export * from './open.js';
export * from './sql-projection.js';
export * from './state-stores.js';
export * from './multi-row.js';
export * from './rebuild.js';
