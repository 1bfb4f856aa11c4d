/** The planner's normalisation is the domain's (src/domain/normalise.ts): the state DB's member table compares alike. */
export * from '../domain/normalise.js';
