/**
 * The busy timeout tests open state DBs with: openStateDb and openStateSnapshot take it from their caller (state.busy_timeout,
 * defaulted once, in the config schema), so tests pass the schema's own default rather than a number of their own.
 */
import { stateConfigSchema } from '../../src/config/platform.js';

/** state.busy_timeout's default in milliseconds, as the schema gives it. */
export const TEST_BUSY_TIMEOUT_MS: number = stateConfigSchema.parse({}).busy_timeout;
