/**
 * Token buckets for the emulator's rate limits: `ratePerSecond` tokens refill per second, the burst is the rate.
 * Time comes from the injected Clock, so tests move it by hand.
 */
import type { Clock } from './clock.js';
import type { RateLimiter } from './types.js';

interface Bucket {
  tokens: number;
  at: number;
}

/** The in-memory RateLimiter. */
export class TokenBucketLimiter implements RateLimiter {
  private readonly buckets = new Map<string, Bucket>();

  constructor(private readonly clock: Clock) {}

  take(requests: { key: string; ratePerSecond: number }[]): number {
    return this.takeOrRefuse(requests).retryAfterSeconds;
  }

  takeOrRefuse(requests: { key: string; ratePerSecond: number }[]): { retryAfterSeconds: number; refused: string[] } {
    const now = this.clock.now();
    let waitMs = 0;
    const active: Bucket[] = [];
    const refused: string[] = [];
    for (const { key, ratePerSecond } of requests) {
      if (!(ratePerSecond > 0)) continue;
      const bucket = this.refill(key, ratePerSecond, now);
      if (bucket.tokens < 1) {
        waitMs = Math.max(waitMs, ((1 - bucket.tokens) / ratePerSecond) * 1000);
        refused.push(key);
      }
      active.push(bucket);
    }
    // All or none: a refused request does not use up the budget of the other buckets.
    if (waitMs > 0) return { retryAfterSeconds: Math.max(1, Math.ceil(waitMs / 1000)), refused };
    for (const bucket of active) bucket.tokens -= 1;
    return { retryAfterSeconds: 0, refused };
  }

  private refill(key: string, rate: number, now: number): Bucket {
    let bucket = this.buckets.get(key);
    if (!bucket) {
      bucket = { tokens: rate, at: now };
      this.buckets.set(key, bucket);
      return bucket;
    }
    const elapsed = Math.max(0, now - bucket.at);
    bucket.tokens = Math.min(rate, bucket.tokens + (elapsed / 1000) * rate);
    bucket.at = now;
    return bucket;
  }
}
