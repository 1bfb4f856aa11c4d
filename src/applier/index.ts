export * from './apply-plan.js';
export * from './executor.js';
export * from './seam.js';
