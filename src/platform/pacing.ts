/**
 * Pacing: one token bucket per credential, shared by every request made with it, and a bound on requests in flight.
 * A 429 pauses the whole bucket (not only the request that got it) until its Retry-After has passed.
 */
import { createHash } from 'node:crypto';
import { monotonicNow, type Clock } from '../shared/clock.js';

/** Options of a TokenBucket. */
export interface TokenBucketOptions {
  /** Tokens per second. */
  ratePerSecond: number;
  /** Tokens that may be spent at once after an idle period (default 1: requests are evenly spaced, never a burst). */
  burst?: number;
}

/**
 * A token bucket written as GCRA (a "theoretical arrival time"): each acquire reserves the next free slot, so
 * waiters are served in arrival order without polling, and the rate holds across any window.
 */
export class TokenBucket {
  private readonly intervalMs: number;
  private readonly burstMs: number;
  /** The time the next request would be due if the bucket had no burst allowance. */
  private tat = -Infinity;
  private pausedUntilMs = -Infinity;

  constructor(
    private readonly clock: Clock,
    options: TokenBucketOptions,
  ) {
    if (!(options.ratePerSecond > 0)) throw new RangeError('ratePerSecond must be positive');
    this.intervalMs = 1000 / options.ratePerSecond;
    this.burstMs = (Math.max(1, options.burst ?? 1) - 1) * this.intervalMs;
  }

  /**
   * The bucket's time: monotonic, so a wall clock stepped back an hour does not hold every request for that hour
   * (nor one stepped forward release a burst).
   */
  private t(): number {
    return monotonicNow(this.clock);
  }

  /** Until when the bucket is paused by a 429 (the clock's monotonic ms; epoch ms on a manual clock), or -Infinity. */
  get pausedUntil(): number {
    return this.pausedUntilMs;
  }

  /**
   * Waits for a token. Resolves with the milliseconds waited (0 when a token was free).
   * A pause that starts while a caller waits for its slot makes it wait again behind the pause.
   */
  async acquire(signal?: AbortSignal): Promise<number> {
    const started = this.t();
    for (;;) {
      const now = this.t();
      if (now < this.pausedUntilMs) {
        await this.clock.sleep(this.pausedUntilMs - now, signal);
        continue;
      }
      const due = Math.max(this.tat, now);
      const sendAt = Math.max(now, due - this.burstMs);
      this.tat = due + this.intervalMs;
      if (sendAt <= now) return now - started;
      await this.clock.sleep(sendAt - now, signal);
      // Between the reservation and now a 429 may have paused the bucket: then this slot is void, queue again.
      if (this.t() < this.pausedUntilMs) continue;
      return this.t() - started;
    }
  }

  /**
   * The earliest time (this bucket's monotonic ms) a request could be sent from `now` on without reserving it: the
   * later of now, the end of a pause and the next free slot. For pacing over several buckets at once (./key-pool.ts).
   */
  earliest(now: number): number {
    return Math.max(now, this.pausedUntilMs, this.tat - this.burstMs);
  }

  /**
   * Reserves the slot of a request sent at `at` (at least `earliest(now)`): the same bookkeeping as `acquire`, for a
   * caller that waits itself because the request needs slots in several buckets at the same time.
   */
  reserve(at: number): void {
    this.tat = Math.max(this.tat, at) + this.intervalMs;
  }

  /** Pauses every request of this bucket for `ms` from now (a 429's Retry-After); pauses only ever extend. */
  pause(ms: number): void {
    const until = this.t() + Math.max(0, ms);
    if (until > this.pausedUntilMs) this.pausedUntilMs = until;
    // After the pause, requests resume at the configured rate rather than as a burst.
    if (this.tat < this.pausedUntilMs) this.tat = this.pausedUntilMs;
  }
}

/** A counting semaphore bounding requests in flight. */
export class Semaphore {
  private available: number;
  private readonly waiters: (() => void)[] = [];

  constructor(permits: number) {
    if (!(permits >= 1)) throw new RangeError('permits must be at least 1');
    this.available = permits;
  }

  /** Waits for a permit; returns the function that gives it back. */
  async acquire(): Promise<() => void> {
    if (this.available > 0) this.available -= 1;
    else await new Promise<void>((resolve) => this.waiters.push(resolve));
    let released = false;
    return () => {
      if (released) return;
      released = true;
      const next = this.waiters.shift();
      if (next) next();
      else this.available += 1;
    };
  }
}

const bucketsByClock = new WeakMap<Clock, Map<string, TokenBucket>>();

/**
 * The bucket of a credential: every client built in this process with the same credential (and clock) shares it,
 * so two parts of one run cannot together exceed the key's rate. Keyed by a hash, never the secret itself.
 */
export function sharedBucket(clock: Clock, credential: string, options: TokenBucketOptions): TokenBucket {
  let byKey = bucketsByClock.get(clock);
  if (!byKey) {
    byKey = new Map();
    bucketsByClock.set(clock, byKey);
  }
  const key = `${createHash('sha256').update(credential).digest('hex')}:${options.ratePerSecond}:${options.burst ?? 1}`;
  let bucket = byKey.get(key);
  if (!bucket) {
    bucket = new TokenBucket(clock, options);
    byKey.set(key, bucket);
  }
  return bucket;
}
