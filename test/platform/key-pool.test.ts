/**
 * Pacing across several keys of one tenant (src/platform/key-pool.ts), on the manual clock: every send is recorded
 * at the clock's time, and the spacing per key and in total is checked against the rates.
 */
import { describe, expect, it } from 'vitest';
import { KeyPool, keyFingerprint, namesTenant } from '../../src/platform/key-pool.js';
import { ManualClock } from '../../src/shared/clock.js';

const KEYS = ['ek_a_0123456789abcdef', 'ek_b_0123456789abcdef', 'ek_c_0123456789abcdef', 'ek_d_0123456789abcdef', 'ek_e_0123456789abcdef'];
const EPS = 1e-6;

interface Send {
  at: number;
  key: string;
}

/** Starts `n` acquires at once and runs the clock until all are sent; returns the sends in order. */
async function sendAll(clock: ManualClock, pool: KeyPool, n: number, start = clock.now()): Promise<Send[]> {
  const sends: Send[] = [];
  const all = Promise.all(Array.from({ length: n }, () => pool.acquire().then(({ key }) => sends.push({ at: clock.now() - start, key: key.credential }))));
  let done = false;
  void all.then(() => (done = true));
  while (!done) {
    await new Promise((r) => setImmediate(r));
    if (!done) await clock.advance(1000);
  }
  return sends;
}

/** The smallest gap between consecutive sends of `sends` (Infinity for fewer than two). */
function minGap(sends: readonly Send[]): number {
  let gap = Infinity;
  for (let i = 1; i < sends.length; i++) gap = Math.min(gap, sends[i]!.at - sends[i - 1]!.at);
  return gap;
}

/** Most sends within any window of `ms` starting at a send. */
function maxInWindow(sends: readonly Send[], ms: number): number {
  let most = 0;
  // EPS: sends at exactly 1000/rate apart add up to 999.9999... ms in floating point.
  for (const s of sends) most = Math.max(most, sends.filter((o) => o.at >= s.at && o.at < s.at + ms - EPS).length);
  return most;
}

describe('KeyPool', () => {
  it('5 keys at 100/s under a 500/s tenant budget: no key exceeds its rate, the sum never exceeds the budget, and the budget is used', async () => {
    const clock = new ManualClock(0);
    const pool = new KeyPool(clock, KEYS, { ratePerSecond: 100, tenantRatePerSecond: 500 });
    const sends = await sendAll(clock, pool, 1500);
    for (const key of KEYS) {
      const mine = sends.filter((s) => s.key === key);
      expect(minGap(mine)).toBeGreaterThanOrEqual(10 - EPS);
      expect(maxInWindow(mine, 1000)).toBeLessThanOrEqual(100);
      // Spread evenly: each key carries a fifth.
      expect(mine.length).toBe(300);
    }
    expect(minGap(sends)).toBeGreaterThanOrEqual(2 - EPS);
    expect(maxInWindow(sends, 1000)).toBeLessThanOrEqual(500);
    // 1,500 requests at 500/s: the last is sent just before 3 s, no later.
    expect(sends.at(-1)!.at).toBeCloseTo(2998, 6);
  });

  it('a tenant share below the keys\' sum binds: 5 keys at 100/s with 300/s are sent at 300/s in total, no key over 100/s', async () => {
    const clock = new ManualClock(0);
    const pool = new KeyPool(clock, KEYS, { ratePerSecond: 100, tenantRatePerSecond: 300 });
    const sends = await sendAll(clock, pool, 900);
    expect(minGap(sends)).toBeGreaterThanOrEqual(1000 / 300 - EPS);
    expect(maxInWindow(sends, 1000)).toBeLessThanOrEqual(300);
    for (const key of KEYS) expect(minGap(sends.filter((s) => s.key === key))).toBeGreaterThanOrEqual(10 - EPS);
    expect(sends.at(-1)!.at).toBeCloseTo((899 * 1000) / 300, 6);
  });

  it('the default share (100/s) with 5 keys is 100/s in total: several keys never take more than the share', async () => {
    const clock = new ManualClock(0);
    const pool = new KeyPool(clock, KEYS, { ratePerSecond: 100, tenantRatePerSecond: 100 });
    const sends = await sendAll(clock, pool, 300);
    expect(minGap(sends)).toBeGreaterThanOrEqual(10 - EPS);
    expect(maxInWindow(sends, 1000)).toBeLessThanOrEqual(100);
  });

  it('a 429 on one key pauses only that key: the others go on and carry the requests', async () => {
    const clock = new ManualClock(0);
    const pool = new KeyPool(clock, KEYS, { ratePerSecond: 100, tenantRatePerSecond: 500 });
    await sendAll(clock, pool, 5);
    const paused = pool.keys[0]!;
    expect(pool.rateLimited(paused, 2000, false)).toBe('key');
    const start = clock.now();
    const sends = await sendAll(clock, pool, 1000, start);
    const during = sends.filter((s) => s.at < 2000);
    expect(during.some((s) => s.key === paused.credential)).toBe(false);
    // Four keys at 100/s each for the two seconds of the pause.
    expect(during.length).toBeGreaterThanOrEqual(790);
    for (const key of KEYS.slice(1)) expect(minGap(sends.filter((s) => s.key === key))).toBeGreaterThanOrEqual(10 - EPS);
    // After the pause the key is used again, at its own rate.
    const after = sends.filter((s) => s.key === paused.credential);
    expect(after.length).toBeGreaterThan(0);
    expect(after[0]!.at).toBeGreaterThanOrEqual(2000);
    expect(minGap(after)).toBeGreaterThanOrEqual(10 - EPS);
  });

  it('a 429 the platform attributes to the tenant pauses every key', async () => {
    const clock = new ManualClock(0);
    const pool = new KeyPool(clock, KEYS, { ratePerSecond: 100, tenantRatePerSecond: 500 });
    await sendAll(clock, pool, 5);
    expect(namesTenant('POST /org/members: 429 rate_limited: rate limit exceeded: tenant')).toBe(true);
    expect(namesTenant('POST /org/members: 429 rate_limited: rate limit exceeded: api key')).toBe(false);
    expect(pool.rateLimited(pool.keys[2]!, 1500, namesTenant('POST /org/members: 429 rate_limited: rate limit exceeded: tenant'))).toBe('tenant');
    const start = clock.now();
    const sends = await sendAll(clock, pool, 50, start);
    expect(sends[0]!.at).toBeGreaterThanOrEqual(1500);
    expect(minGap(sends)).toBeGreaterThanOrEqual(2 - EPS);
  });

  it('429s from two keys within one second pause every key; two seconds apart, only each key', async () => {
    const clock = new ManualClock(0);
    const pool = new KeyPool(clock, KEYS, { ratePerSecond: 100, tenantRatePerSecond: 500 });
    expect(pool.rateLimited(pool.keys[0]!, 1000, false)).toBe('key');
    await clock.advance(999);
    expect(pool.rateLimited(pool.keys[1]!, 1000, false)).toBe('tenant');
    const start = clock.now();
    const sends = await sendAll(clock, pool, 10, start);
    expect(sends[0]!.at).toBeGreaterThanOrEqual(1000);

    const clock2 = new ManualClock(0);
    const pool2 = new KeyPool(clock2, KEYS, { ratePerSecond: 100, tenantRatePerSecond: 500 });
    expect(pool2.rateLimited(pool2.keys[0]!, 1000, false)).toBe('key');
    await clock2.advance(1000);
    expect(pool2.rateLimited(pool2.keys[1]!, 1000, false)).toBe('key');
    // The same key twice is no tenant limit either.
    expect(pool2.rateLimited(pool2.keys[1]!, 1000, false)).toBe('key');
  });

  it('a dropped key gets no further requests; the last key is never dropped', async () => {
    const clock = new ManualClock(0);
    const pool = new KeyPool(clock, KEYS.slice(0, 2), { ratePerSecond: 100, tenantRatePerSecond: 500 });
    expect(pool.drop(pool.keys[0]!)).toBe('dropped');
    expect(pool.drop(pool.keys[0]!)).toBe('already');
    expect(pool.drop(pool.keys[1]!)).toBe('last');
    expect(pool.active().map((k) => k.credential)).toEqual([KEYS[1]]);
    const sends = await sendAll(clock, pool, 20);
    expect(sends.every((s) => s.key === KEYS[1])).toBe(true);
    expect(minGap(sends)).toBeGreaterThanOrEqual(10 - EPS);
    pool.restore();
    expect(pool.active()).toHaveLength(2);
  });

  it('a request waiting for the slot of a key that is dropped meanwhile goes to another key', async () => {
    const clock = new ManualClock(0);
    const pool = new KeyPool(clock, KEYS.slice(0, 2), { ratePerSecond: 100, tenantRatePerSecond: 500 });
    const sent: string[] = [];
    // t=0 on a, t=2 on b, then a's next slot at t=10.
    const all = Promise.all([pool.acquire(), pool.acquire(), pool.acquire()].map((p) => p.then(({ key }) => sent.push(`${clock.now()} ${key.credential}`))));
    await new Promise((r) => setImmediate(r));
    expect(sent).toEqual([`0 ${KEYS[0]}`]);
    expect(pool.drop(pool.keys[0]!)).toBe('dropped');
    await clock.advance(50);
    await all;
    // The third was waiting for a's slot at t=10; a is dropped, so it is sent on b at b's next slot (t=12).
    expect(sent).toEqual([`0 ${KEYS[0]}`, `2 ${KEYS[1]}`, `12 ${KEYS[1]}`]);
  });

  it('one key: the tenant share never slows it (a share below the key\'s rate is raised to it), as a single api_key always was', async () => {
    const clock = new ManualClock(0);
    const pool = new KeyPool(clock, KEYS.slice(0, 1), { ratePerSecond: 2000, tenantRatePerSecond: 100 });
    const sends = await sendAll(clock, pool, 200);
    expect(sends.at(-1)!.at).toBeCloseTo(199 * 0.5, 6);
    // The same key given twice is one key.
    expect(new KeyPool(clock, [KEYS[0]!, KEYS[0]!], { ratePerSecond: 100 }).keys).toHaveLength(1);
  });

  it('fingerprints are the first 8 hex digits of the key\'s SHA-256, never the key', () => {
    expect(keyFingerprint('ek_a_0123456789abcdef')).toMatch(/^[0-9a-f]{8}$/);
    expect(keyFingerprint('ek_a_0123456789abcdef')).not.toBe(keyFingerprint('ek_b_0123456789abcdef'));
    expect('ek_a_0123456789abcdef').not.toContain(keyFingerprint('ek_a_0123456789abcdef'));
  });
});
