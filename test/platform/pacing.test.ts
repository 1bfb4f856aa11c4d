import { describe, expect, it } from 'vitest';
import { ManualClock } from '../../src/shared/clock.js';
import { Semaphore, sharedBucket, TokenBucket } from '../../src/platform/pacing.js';
import { backoffDelay, DEFAULT_RETRY_POLICY, nextDelay, retryReason } from '../../src/platform/retry.js';
import { platformError, type PlatformErrorKind } from '../../src/platform/errors.js';

/** Advances the clock in steps until `promise` settles (or the step budget runs out). */
async function drive<T>(clock: ManualClock, promise: Promise<T>, stepMs = 10, maxSteps = 100_000): Promise<T> {
  let settled = false;
  const p = promise.finally(() => {
    settled = true;
  });
  for (let i = 0; i < maxSteps && !settled; i += 1) {
    // Let ready work run at the current time before moving on.
    await new Promise((r) => setImmediate(r));
    if (settled) break;
    await clock.advance(stepMs);
  }
  return p;
}

function err(kind: PlatformErrorKind, status: number, retryAfterMs?: number) {
  return platformError({ kind, status, message: 'x', method: 'GET', route: '/org/members', retryAfterMs });
}

describe('TokenBucket', () => {
  it('spaces requests evenly at the configured rate, never as a burst', async () => {
    const clock = new ManualClock(0);
    const bucket = new TokenBucket(clock, { ratePerSecond: 5 });
    const sent: number[] = [];
    const all = Promise.all(Array.from({ length: 10 }, () => bucket.acquire().then(() => sent.push(clock.now()))));
    await drive(clock, all);
    expect(sent).toEqual([0, 200, 400, 600, 800, 1000, 1200, 1400, 1600, 1800]);
    // Any 1-second window holds at most 5 sends.
    for (const t of sent) expect(sent.filter((s) => s >= t && s < t + 1000).length).toBeLessThanOrEqual(5);
  });

  it('allows a burst of the configured size after idling, then the rate', async () => {
    const clock = new ManualClock(0);
    const bucket = new TokenBucket(clock, { ratePerSecond: 10, burst: 3 });
    await clock.advance(5000);
    const sent: number[] = [];
    const all = Promise.all(Array.from({ length: 5 }, () => bucket.acquire().then(() => sent.push(clock.now() - 5000))));
    await drive(clock, all);
    expect(sent).toEqual([0, 0, 0, 100, 200]);
  });

  it('a 429 pause holds every waiter of the bucket, including one already waiting for its slot', async () => {
    const clock = new ManualClock(0);
    const bucket = new TokenBucket(clock, { ratePerSecond: 2 });
    await bucket.acquire(); // t=0
    const sent: number[] = [];
    const waiting = bucket.acquire().then(() => sent.push(clock.now())); // slot at 500
    await clock.advance(100);
    bucket.pause(3000); // until 3100
    const later = bucket.acquire().then(() => sent.push(clock.now()));
    await drive(clock, Promise.all([waiting, later]));
    expect(sent[0]).toBeGreaterThanOrEqual(3100);
    expect(sent[1]! - sent[0]!).toBeGreaterThanOrEqual(500);
    expect(bucket.pausedUntil).toBe(3100);
  });

  it('pauses only extend', () => {
    const clock = new ManualClock(0);
    const bucket = new TokenBucket(clock, { ratePerSecond: 1 });
    bucket.pause(5000);
    bucket.pause(1000);
    expect(bucket.pausedUntil).toBe(5000);
  });

  it('is shared by every client of one credential and clock', () => {
    const clock = new ManualClock(0);
    const a = sharedBucket(clock, 'ek_a_secret', { ratePerSecond: 5 });
    expect(sharedBucket(clock, 'ek_a_secret', { ratePerSecond: 5 })).toBe(a);
    expect(sharedBucket(clock, 'ek_b_secret', { ratePerSecond: 5 })).not.toBe(a);
  });

  it('rejects when the signal aborts while waiting', async () => {
    const clock = new ManualClock(0);
    const bucket = new TokenBucket(clock, { ratePerSecond: 1 });
    await bucket.acquire();
    const ac = new AbortController();
    const p = bucket.acquire(ac.signal);
    ac.abort(new Error('stop'));
    await expect(p).rejects.toThrow('stop');
  });
});

describe('Semaphore', () => {
  it('bounds holders and hands permits over in order', async () => {
    const sem = new Semaphore(2);
    const r1 = await sem.acquire();
    await sem.acquire();
    let third = false;
    const p = sem.acquire().then((r) => {
      third = true;
      return r;
    });
    await new Promise((r) => setImmediate(r));
    expect(third).toBe(false);
    r1();
    r1(); // releasing twice gives back one permit only
    await p;
    expect(third).toBe(true);
  });
});

describe('retry policy', () => {
  it('retries 429, 500, 502, 503, 504, network and timeout, nothing else', () => {
    expect(retryReason(err('rate_limited', 429))).toBe('rate_limited');
    for (const s of [500, 502, 503, 504]) expect(retryReason(err('server', s))).toBe('server');
    expect(retryReason(err('server', 501))).toBeUndefined();
    expect(retryReason(err('network', 0))).toBe('network');
    expect(retryReason(err('timeout', 0))).toBe('timeout');
    for (const [k, s] of [['bad_request', 400], ['unauthorized', 401], ['scope_denied', 403], ['not_found', 404], ['conflict', 409], ['invalid_response', 200]] as const) {
      expect(retryReason(err(k, s))).toBeUndefined();
    }
  });

  it('backs off exponentially with full jitter, capped', () => {
    const policy = { ...DEFAULT_RETRY_POLICY, baseDelayMs: 100, maxDelayMs: 1000 };
    expect(backoffDelay(policy, 1, () => 0.5)).toBe(50);
    expect(backoffDelay(policy, 2, () => 0.5)).toBe(100);
    expect(backoffDelay(policy, 3, () => 0.5)).toBe(200);
    expect(backoffDelay(policy, 10, () => 0.5)).toBe(500);
    expect(backoffDelay(policy, 3, () => 0)).toBe(0);
    expect(backoffDelay(policy, 3, () => 0.999)).toBeLessThan(400);
  });

  it('uses Retry-After for a 429 and gives up at the attempt and time bounds', () => {
    const policy = { maxAttempts: 3, maxRetryTimeMs: 10_000, baseDelayMs: 100, maxDelayMs: 1000 };
    expect(nextDelay(policy, err('rate_limited', 429, 4000), 1, 0, () => 0.5)).toBe(4000);
    expect(nextDelay(policy, err('rate_limited', 429), 1, 0, () => 0.5)).toBe(50);
    expect(nextDelay(policy, err('server', 500), 3, 0, () => 0.5)).toBeUndefined();
    // An outage (refused or reset connections, 502/503/504) is retried past maxAttempts, within the time budget.
    expect(nextDelay(policy, err('server', 503), 3, 0, () => 0.5)).toBe(200);
    expect(nextDelay(policy, err('network', 0), 9, 0, () => 0.5)).toBe(500);
    expect(nextDelay(policy, err('server', 502), 9, 9_600, () => 0.5)).toBeUndefined();
    expect(nextDelay(policy, err('rate_limited', 429, 4000), 2, 7000, () => 0.5)).toBeUndefined();
    expect(nextDelay(policy, err('conflict', 409), 1, 0, () => 0.5)).toBeUndefined();
  });
});
