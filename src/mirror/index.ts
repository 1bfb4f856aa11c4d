/** The state DB and the mirror of the platform's organisation. */
export * from './db.js';
export * from './mirror.js';
export { migrations, runMigrations, type Migration } from './migrations/index.js';
