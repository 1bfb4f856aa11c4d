/** The embedded platform emulator: build it, start it, load a seed. */
export { buildEmulator, startEmulator } from './core/app.js';
export type { BuildEmulatorOptions, BuiltEmulator, RunningEmulator, StartEmulatorOptions } from './core/app.js';
export { loadSeedFile, parseSeed, parseSeedText } from './core/seed-file.js';
export type { Seed } from './core/seed.js';
export type { EmulatorContext, EmulatorArea } from './core/types.js';
export { ManualClock, systemClock } from './core/clock.js';
export type { Clock } from './core/clock.js';
export { silentLogger } from './core/logger.js';
export type { Logger } from './core/logger.js';
export { isSeedError, SeedError } from './core/seed-error.js';
