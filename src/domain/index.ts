export * from './entities.js';
export * from './desired.js';
