/**
 * Several credentials of one tenant as one pool (`platform.api_keys`): each key is paced by its own token bucket at
 * `requests_per_second`, all of them under one tenant bucket at `tenant_requests_per_second`. Each request takes the
 * key whose next slot comes soonest and reserves that slot in the key's bucket and in the tenant's at the same time,
 * so no key ever exceeds its rate and their sum never exceeds the tenant's share.
 *
 * A 429 pauses the key that got it; a 429 the platform attributes to the tenant (its message names the tenant), or
 * 429s from two or more keys within one second, pause them all (docs/decisions.md, Organisation API rule 11).
 * A key the platform refuses (401, 403 scope_denied) is dropped, unless it is the last one: the last key's refusal
 * reaches the caller, which stops as it does with one key.
 *
 * With one key there is no tenant bucket (the tenant's share is never below one key's rate) and acquire() is the key
 * bucket's own: the pacing of a single `api_key` is exactly what it was before pools existed.
 */
import { createHash } from 'node:crypto';
import { monotonicNow, type Clock } from '../shared/clock.js';
import { sharedBucket, type TokenBucket } from './pacing.js';

/** The warning logged when a key is dropped (with `key`: its fingerprint, `status`, `code`, `keys_left`). */
export const KEY_DROPPED_MESSAGE = 'platform key refused: dropped from this run, continuing on the other keys';

/** Two 429s from different keys within this many ms are read as the tenant's limit. */
export const TENANT_429_WINDOW_MS = 1000;

/** A key's label in metrics and logs: the first 8 hex digits of its SHA-256, never the key itself. */
export function keyFingerprint(credential: string): string {
  return createHash('sha256').update(credential).digest('hex').slice(0, 8);
}

/** True when a 429's message attributes it to the tenant's limit (docs/decisions.md, Organisation API rule 11). */
export function namesTenant(message: string): boolean {
  return /\btenant\b/i.test(message);
}

/** One credential of the pool. */
export interface PoolKey {
  /** The bearer secret (never logged; see `fingerprint`). */
  readonly credential: string;
  /** keyFingerprint(credential): the label of its metrics and log lines. */
  readonly fingerprint: string;
  readonly bucket: TokenBucket;
  /** Dropped from the run after the platform refused it (401, 403 scope_denied). */
  dropped: boolean;
  /** When (the pool's monotonic ms) it last got a 429. */
  last429: number;
}

/** Options of a KeyPool. */
export interface KeyPoolOptions {
  /** Each key's rate (requests_per_second). */
  ratePerSecond: number;
  /** The tenant's share for all keys together (tenant_requests_per_second); raised to `ratePerSecond` if lower. */
  tenantRatePerSecond?: number;
  /** Tokens spendable at once after idling (default 1). */
  burst?: number;
  /** One key only: use this bucket instead of the process-wide one of the credential (tests, benches). */
  bucket?: TokenBucket;
}

/** Whom a 429 paused. */
export type PauseScope = 'key' | 'tenant';

/** The keys of one client and their buckets. */
export class KeyPool {
  readonly keys: readonly PoolKey[];
  /** Absent with one key: the share is never below one key's rate, so it could never hold it back. */
  private readonly tenant: TokenBucket | undefined;
  /** Where the next search for a key starts (round robin among equally free keys). */
  private turn = 0;

  constructor(
    private readonly clock: Clock,
    credentials: readonly string[],
    options: KeyPoolOptions,
  ) {
    const unique = [...new Set(credentials)];
    if (unique.length === 0) throw new RangeError('a key pool needs at least one key');
    if (options.bucket && unique.length > 1) throw new RangeError('an injected bucket is for one key only');
    const bucketOptions = { ratePerSecond: options.ratePerSecond, burst: options.burst ?? 1 };
    this.keys = unique.map((credential) => ({
      credential,
      fingerprint: keyFingerprint(credential),
      bucket: options.bucket ?? sharedBucket(clock, credential, bucketOptions),
      dropped: false,
      last429: -Infinity,
    }));
    const tenantRate = Math.max(options.tenantRatePerSecond ?? Infinity, options.ratePerSecond);
    // Shared like the keys' buckets: two clients of this process with the same keys share one tenant budget.
    // With several keys always: even at a share equal to their sum it spaces their requests evenly (no key-count burst).
    this.tenant =
      unique.length > 1
        ? sharedBucket(clock, `tenant\u0000${[...unique].sort().join('\u0000')}`, { ratePerSecond: tenantRate, burst: options.burst ?? 1 })
        : undefined;
  }

  private t(): number {
    return monotonicNow(this.clock);
  }

  /** The keys not dropped. */
  active(): PoolKey[] {
    return this.keys.filter((k) => !k.dropped);
  }

  /** Puts every dropped key back (a new run tries them again). */
  restore(): void {
    for (const k of this.keys) k.dropped = false;
  }

  /**
   * Waits for a slot and says on which key to send. Resolves with the key and the milliseconds waited. A pause that
   * starts while the caller waits makes it queue again behind the pause, as TokenBucket.acquire does.
   */
  async acquire(signal?: AbortSignal): Promise<{ key: PoolKey; waited: number }> {
    const single = this.keys.length === 1 ? this.keys[0]! : undefined;
    if (single && !this.tenant) return { key: single, waited: await single.bucket.acquire(signal) };
    const started = this.t();
    for (;;) {
      const now = this.t();
      let key: PoolKey | undefined;
      let keyAt = Infinity;
      // From the key after the last one picked: among keys free at the same time, each takes its turn.
      const n = this.keys.length;
      for (let i = 0; i < n; i++) {
        const k = this.keys[(this.turn + i) % n]!;
        if (k.dropped) continue;
        const at = k.bucket.earliest(now);
        if (at < keyAt) {
          key = k;
          keyAt = at;
        }
      }
      // drop() keeps the last key, so there is always one.
      if (!key) throw new Error('no platform key left');
      // A pause is no slot: wait it out without reserving, then choose again (another key may be free by then).
      const pausedUntil = Math.max(key.bucket.pausedUntil, this.tenant?.pausedUntil ?? -Infinity);
      if (pausedUntil > now) {
        await this.clock.sleep(pausedUntil - now, signal);
        continue;
      }
      const at = Math.max(keyAt, this.tenant?.earliest(now) ?? now);
      key.bucket.reserve(at);
      this.tenant?.reserve(at);
      this.turn = (this.keys.indexOf(key) + 1) % n;
      if (at <= now) return { key, waited: now - started };
      await this.clock.sleep(at - now, signal);
      // Between the reservation and now the key may have been dropped or a 429 paused it: the slot is void.
      const after = this.t();
      if (key.dropped || after < key.bucket.pausedUntil || after < (this.tenant?.pausedUntil ?? -Infinity)) continue;
      return { key, waited: after - started };
    }
  }

  /**
   * A 429 on `key`: pauses that key for `ms`, or every key when the platform named the tenant or another key got a
   * 429 less than a second ago. Returns whom it paused.
   */
  rateLimited(key: PoolKey, ms: number, tenantNamed: boolean): PauseScope {
    const now = this.t();
    const another = this.keys.some((k) => k !== key && now - k.last429 < TENANT_429_WINDOW_MS);
    key.last429 = now;
    if (!tenantNamed && !another) {
      key.bucket.pause(ms);
      return 'key';
    }
    for (const k of this.keys) k.bucket.pause(ms);
    this.tenant?.pause(ms);
    return 'tenant';
  }

  /**
   * Drops a key the platform refused: `dropped` now, `already` when an earlier refusal dropped it (both: send the
   * request on another key), `last` when it is the only key left, which stays: its refusal is then the caller's to
   * handle, as with a single key.
   */
  drop(key: PoolKey): 'dropped' | 'already' | 'last' {
    if (key.dropped) return 'already';
    if (this.active().length <= 1) return 'last';
    key.dropped = true;
    return 'dropped';
  }
}
