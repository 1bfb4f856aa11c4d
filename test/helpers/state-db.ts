/**
 * The `state:` values tests open state DBs and refresh mirrors with. openStateDb, openStateSnapshot and refreshMirror
 * take them from their caller (defaulted once, in the config schema), so tests pass the schema's own defaults rather
 * than numbers of their own.
 */
import { stateConfigSchema } from '../../src/config/platform.js';
import { refreshOptionsFrom, type RefreshSettings } from '../../src/daemon/pipeline/options.js';

const STATE_DEFAULTS = stateConfigSchema.parse({});

/** state.busy_timeout's default in milliseconds, as the schema gives it. */
export const TEST_BUSY_TIMEOUT_MS: number = STATE_DEFAULTS.busy_timeout;

/** state.lease_ttl's default in milliseconds, as the schema gives it. */
export const TEST_LEASE_TTL_MS: number = STATE_DEFAULTS.lease_ttl;

/** The mirror refresh's settings from the schema's defaults (state.mirror_overlap_seconds, state.full_walk_every). */
export const TEST_REFRESH_SETTINGS: RefreshSettings = refreshOptionsFrom({ state: STATE_DEFAULTS });
