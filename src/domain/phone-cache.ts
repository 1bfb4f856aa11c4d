/**
 * The phone cache (issue 19): raw phone value + default region -> E.164 (or null: not a valid number) as
 * libphonenumber-js gave it, so a repeat run of an unchanged export asks the library nothing. Values the fast path
 * answers (src/desired/phone/fast-path.ts) are not kept: checking them again (about 0.5 µs) costs less than loading them from the
 * state DB (about 3 µs a row). Pure and in memory; src/mirror/phone-cache.ts loads it from the state DB before the
 * sources are read and stores what changed after (only runs that hold the state DB's lease do).
 *
 * Bounded: an entry lives as long as its value is in the sources. A run moves every entry it looks up from `loaded` to
 * `used`; after the run, `used` is what is kept and what is left in `loaded` was not seen and is deleted. A raw value
 * that changed is a different key: it is normalised again, and the old value's entry goes with the next save.
 */
import { createRequire } from 'node:module';

const require = createRequire(import.meta.url);

/**
 * The rules a cached verdict was made under: libphonenumber-js's version (its metadata changes with it) and the fast
 * path's revision. A cache written under other rules is dropped whole, never consulted.
 */
export const PHONE_RULES = `libphonenumber-js@${(require('libphonenumber-js/package.json') as { version: string }).version}+fast-path.1`;

/** One cached verdict; region "" when the source has no phone_region. */
export interface PhoneCacheEntry {
  region: string;
  raw: string;
  /** The E.164 number, or null when the raw value is not a valid number. */
  e164: string | null;
}

/** What a run changed: entries to add, and (region, raw) keys to delete. */
export interface PhoneCacheChanges {
  added: PhoneCacheEntry[];
  unused: { region: string; raw: string }[];
}

/** Raw value -> verdict, per region. */
type Verdicts = Map<string, string | null>;

/** See the file comment. */
export class PhoneCache {
  private readonly loaded = new Map<string, Verdicts>();
  private readonly used = new Map<string, Verdicts>();
  private readonly added: PhoneCacheEntry[] = [];
  private loadedCount = 0;
  // The last region looked up and its maps: a source has one region, so the hot path does one Map.get per value.
  private lastRegion: string | undefined;
  private lastUsed: Verdicts | undefined;
  private lastLoaded: Verdicts | undefined;

  constructor(entries: Iterable<PhoneCacheEntry> = []) {
    for (const e of entries) this.load(e.region, e.raw, e.e164);
  }

  /** Adds one entry of an earlier run (before the run's lookups). */
  load(region: string, raw: string, e164: string | null): void {
    let m = this.loaded.get(region);
    if (!m) this.loaded.set(region, (m = new Map()));
    if (!m.has(raw)) this.loadedCount++;
    m.set(raw, e164);
  }

  /** Entries loaded from the state DB. */
  get size(): number {
    return this.loadedCount;
  }

  private select(region: string): void {
    if (this.lastRegion === region) return;
    this.lastRegion = region;
    let used = this.used.get(region);
    if (!used) this.used.set(region, (used = new Map()));
    this.lastUsed = used;
    this.lastLoaded = this.loaded.get(region);
  }

  /** The cached verdict (string or null), or undefined when this value was never normalised under this region. */
  lookup(raw: string, region: string | undefined): string | null | undefined {
    this.select(region ?? '');
    const seen = this.lastUsed!.get(raw);
    if (seen !== undefined) return seen;
    const known = this.lastLoaded?.get(raw);
    if (known !== undefined) {
      this.lastUsed!.set(raw, known);
      this.lastLoaded!.delete(raw);
    }
    return known;
  }

  /** Remembers a verdict just made (call after a lookup that returned undefined). */
  remember(raw: string, region: string | undefined, e164: string | null): void {
    const r = region ?? '';
    this.select(r);
    if (this.lastUsed!.has(raw)) return;
    this.lastUsed!.set(raw, e164);
    this.added.push({ region: r, raw, e164 });
  }

  /** What to write back: the verdicts made this run, and the loaded entries no lookup asked for. */
  changes(): PhoneCacheChanges {
    const unused: PhoneCacheChanges['unused'] = [];
    for (const [region, m] of this.loaded) for (const raw of m.keys()) unused.push({ region, raw });
    return { added: this.added, unused };
  }
}
