/**
 * The phone cache in the state DB (issue 19): the verdicts of libphonenumber-js kept between runs, so a repeat run of
 * an unchanged export asks the library nothing. src/domain/phone-cache.ts is the in-memory side; this loads it
 * before the sources are read and writes back what the run changed. Only a run that holds the state DB's lease
 * (sync, daemon) saves; read-only commands load from their snapshot and write nothing; `sources check` never opens
 * the state DB and reads without a cache.
 *
 * Bounded by the sources: a save keeps the entries the run looked up or added and deletes the rest, so the table holds
 * at most the distinct phone values of the latest run. A run that changed nothing writes nothing. Entries made under
 * other rules (another libphonenumber-js version, see PHONE_RULES) are dropped whole at load and deleted at the next
 * save.
 */
import type Database from 'better-sqlite3';
import { PHONE_RULES, PhoneCache } from '../domain/phone-cache.js';
import type { Migration } from './migrations/types.js';

/** 040: the phone cache (040-049: caches of the sources). */
export const migration040: Migration = {
  version: 40,
  name: 'phone-cache',
  sql: `
CREATE TABLE phone_cache (
  region TEXT NOT NULL,
  raw    TEXT NOT NULL,
  e164   TEXT,
  PRIMARY KEY (region, raw)
) STRICT, WITHOUT ROWID;
CREATE TABLE phone_cache_rules (
  id    INTEGER PRIMARY KEY CHECK (id = 1),
  rules TEXT NOT NULL
) STRICT;
`,
};

/** What a save wrote. */
export interface PhoneCacheSaved {
  added: number;
  removed: number;
}

/** Loads and saves the phone cache of a state DB. */
export class PhoneCacheStore {
  constructor(private readonly db: Database.Database) {}

  private rules(): string | undefined {
    return this.db.prepare('SELECT rules FROM phone_cache_rules WHERE id = 1').pluck().get() as string | undefined;
  }

  /** The cache as the last saving run left it (empty when it was made under other rules). */
  load(): PhoneCache {
    if (this.rules() !== PHONE_RULES) return new PhoneCache();
    // Streamed into the cache's maps: no array of every row, no object per row.
    const cache = new PhoneCache();
    for (const [region, raw, e164] of this.db.prepare('SELECT region, raw, e164 FROM phone_cache').raw().iterate() as IterableIterator<[string, string, string | null]>) cache.load(region, raw, e164);
    return cache;
  }

  /** Writes what the run changed: its new verdicts in, the entries it did not look up out. */
  save(cache: PhoneCache): PhoneCacheSaved {
    const { added, unused } = cache.changes();
    const stale = this.rules() !== PHONE_RULES;
    if (!stale && added.length === 0 && unused.length === 0) return { added: 0, removed: 0 };
    let removed = unused.length;
    this.db.transaction(() => {
      if (stale) {
        removed = this.db.prepare('DELETE FROM phone_cache').run().changes;
        this.db.prepare('INSERT INTO phone_cache_rules (id, rules) VALUES (1, ?) ON CONFLICT (id) DO UPDATE SET rules = excluded.rules').run(PHONE_RULES);
      }
      const del = this.db.prepare('DELETE FROM phone_cache WHERE region = ? AND raw = ?');
      for (const u of unused) del.run(u.region, u.raw);
      const ins = this.db.prepare('INSERT OR REPLACE INTO phone_cache (region, raw, e164) VALUES (?, ?, ?)');
      for (const a of added) ins.run(a.region, a.raw, a.e164);
    })();
    return { added: added.length, removed };
  }
}
