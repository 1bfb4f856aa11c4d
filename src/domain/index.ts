export * from './entities.js';
export * from './desired.js';
export * from './plan.js';
export * from './phone-cache.js';
export * from './normalise.js';
export * from './member-table.js';
