export * from './schema.js';
export * from './load.js';
export * from './zod-errors.js';
export * from './platform.js';
export * from './sources.js';
export * from './sync.js';
export * from './operations.js';
