/**
 * The phone cache around a run's source read (issue 19): loaded from the state DB first, saved after when the run
 * may write the state DB (it holds the lease). A cache that cannot be loaded or saved costs speed, never the run:
 * the sources are then read with an empty cache and the next run asks libphonenumber-js again.
 */
import type { DesiredState } from '../domain/desired.js';
import { PhoneCache } from '../domain/phone-cache.js';
import type { PhoneCacheStore } from '../mirror/phone-cache.js';
import type { Logger } from '../shared/logger.js';

/** Reads the sources with the state DB's phone cache; `mayWrite` is asked after the read (the lease may be lost). */
export async function readWithPhoneCache(store: PhoneCacheStore, mayWrite: () => boolean, logger: Logger, read: (cache: PhoneCache) => Promise<DesiredState>): Promise<DesiredState> {
  let cache: PhoneCache;
  try {
    cache = store.load();
  } catch (err) {
    logger.warn({ err: err instanceof Error ? err.message : String(err) }, 'phone cache not loaded: reading without it');
    cache = new PhoneCache();
  }
  const state = await read(cache);
  if (mayWrite()) {
    try {
      const saved = store.save(cache);
      logger.debug({ loaded: cache.size, added: saved.added, removed: saved.removed }, 'phone cache saved');
    } catch (err) {
      logger.warn({ err: err instanceof Error ? err.message : String(err) }, 'phone cache not saved: the next run asks libphonenumber-js again');
    }
  }
  return state;
}
