export * from './calculate-plan.js';
export * from './types.js';
export * from './ownership.js';
export * from './policies.js';
export * from './guards.js';
export * from './order.js';
export * from './normalise.js';
export * from './render.js';
export { NOT_OWNED_ABSENT } from './diff-members.js';
