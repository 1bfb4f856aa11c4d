/**
 * The platform client with several keys (issue 19 point 1), over undici's MockAgent on the manual clock: which key a
 * request goes out with after a 429 (its key's or the tenant's) and after a refusal (401, 403 scope_denied).
 */
import { MockAgent } from 'undici';
import { afterEach, beforeEach, describe, expect, it } from 'vitest';
import { PLATFORM_DEFAULTS } from '../../src/config/platform.js';
import { clientLimitsFrom, PlatformClient } from '../../src/platform/client.js';
import { ForbiddenError, UnauthorizedError } from '../../src/platform/errors.js';
import { keyFingerprint } from '../../src/platform/key-pool.js';
import { ManualClock } from '../../src/shared/clock.js';

const ORIGIN = 'http://platform.test';
const P = '/api/external/v1';
const A = 'ek_keya_0123456789abcdef';
const B = 'ek_keyb_0123456789abcdef';

const member = (id: string) => ({
  account_id: id,
  display_name: 'Ada Lovelace',
  email: 'ada@example.com',
  phone: '',
  third_user_id: id,
  title: '',
  department_id: 'dep-1',
  status: 'active',
  roles: ['tenant.member'],
  updated_at: '2026-01-01T00:00:00.000Z',
});
const shape2 = (code: string, message: string) => ({ error: { code, message }, meta: { request_id: 'req-1' } });

/** Advances the clock in steps until `promise` settles, letting loopback I/O run between steps. */
async function drive<T>(clock: ManualClock, promise: Promise<T>, stepMs = 50): Promise<T> {
  let settled = false;
  const p = promise.finally(() => {
    settled = true;
  });
  p.catch(() => {});
  for (let i = 0; i < 10_000 && !settled; i += 1) {
    await new Promise((r) => setTimeout(r, 0));
    if (settled) break;
    await clock.advance(stepMs);
  }
  return p;
}

interface Sent {
  at: number;
  key: string;
  path: string;
}

let agent: MockAgent;
let clock: ManualClock;
let sent: Sent[];
let limited: string[];
let dropped: string[];

/** Every GET of a member answers by `answer(key, path, n)` (n: that key's how-many-th request, from 1). */
function serve(answer: (key: string, path: string, n: number) => { status: number; body: object; headers?: Record<string, string> }): void {
  const perKey = new Map<string, number>();
  agent
    .get(ORIGIN)
    .intercept({ path: (p) => p.startsWith(`${P}/org/members/`), method: 'GET' })
    .reply((opts) => {
      const key = String((opts.headers as Record<string, string>).authorization).replace('Bearer ', '');
      const n = (perKey.get(key) ?? 0) + 1;
      perKey.set(key, n);
      const path = opts.path.slice(`${P}/org/members/`.length);
      sent.push({ at: clock.now(), key, path });
      const r = answer(key, path, n);
      return { statusCode: r.status, data: r.body, responseOptions: { headers: r.headers ?? {} } };
    })
    .persist();
}

const client = () =>
  new PlatformClient({
    ...clientLimitsFrom(PLATFORM_DEFAULTS),
    baseUrl: ORIGIN,
    credential: A,
    moreCredentials: [B],
    requestsPerSecond: 10,
    tenantRequestsPerSecond: 20,
    dispatcher: agent,
    clock,
    random: () => 0.5,
    retry: { maxAttempts: 4, maxRetryTimeMs: 60_000, baseDelayMs: 100, maxDelayMs: 1000 },
    observer: {
      onKeyRateLimited: (k) => limited.push(k),
      onKeyDropped: (k, status, code) => dropped.push(`${k} ${status} ${code}`),
    },
  });

beforeEach(() => {
  agent = new MockAgent();
  agent.disableNetConnect();
  clock = new ManualClock(0);
  sent = [];
  limited = [];
  dropped = [];
});
afterEach(async () => {
  await agent.close();
});

describe('PlatformClient with several keys', () => {
  it('spreads requests over the keys, never a key faster than its rate', async () => {
    serve((_k, path) => ({ status: 200, body: member(path) }));
    const c = client();
    await drive(clock, Promise.all(Array.from({ length: 10 }, (_, i) => c.getMember(`m${i}`))));
    expect(sent.filter((s) => s.key === A)).toHaveLength(5);
    expect(sent.filter((s) => s.key === B)).toHaveLength(5);
    for (const key of [A, B]) {
      const at = sent.filter((s) => s.key === key).map((s) => s.at);
      for (let i = 1; i < at.length; i++) expect(at[i]! - at[i - 1]!).toBeGreaterThanOrEqual(100);
    }
    // The tenant's 20/s: 50 ms apart in total.
    for (let i = 1; i < sent.length; i++) expect(sent[i]!.at - sent[i - 1]!.at).toBeGreaterThanOrEqual(50);
  });

  it('a 429 naming the key pauses that key only: the other key carries the requests, the retry included', async () => {
    serve((key, path, n) =>
      key === A && n === 1 ? { status: 429, body: shape2('rate_limited', 'rate limit exceeded: api key'), headers: { 'retry-after': '3' } } : { status: 200, body: member(path) },
    );
    const c = client();
    const results = await drive(clock, Promise.all(Array.from({ length: 6 }, (_, i) => c.getMember(`m${i}`))));
    expect(results.map((m) => m.account_id)).toEqual(['m0', 'm1', 'm2', 'm3', 'm4', 'm5']);
    expect(limited).toEqual([keyFingerprint(A)]);
    const pausedAt = sent[0]!.at;
    // Within the 3 s pause only B sends (its own 10/s), the retry of the 429 included.
    const during = sent.slice(1).filter((s) => s.at < pausedAt + 3000);
    expect(during.length).toBe(6);
    expect(during.every((s) => s.key === B)).toBe(true);
  });

  it('a 429 naming the tenant pauses every key for its Retry-After', async () => {
    serve((key, path, n) =>
      key === A && n === 1 ? { status: 429, body: shape2('rate_limited', 'rate limit exceeded: tenant'), headers: { 'retry-after': '3' } } : { status: 200, body: member(path) },
    );
    const c = client();
    // The second request waits for the tenant's slot (50 ms) and so is still waiting when the 429 arrives.
    await drive(clock, Promise.all(Array.from({ length: 4 }, (_, i) => c.getMember(`m${i}`))), 10);
    expect(limited).toEqual([keyFingerprint(A)]);
    const after = sent.slice(1);
    expect(after).toHaveLength(4);
    expect(after.every((s) => s.at >= sent[0]!.at + 3000)).toBe(true);
  });

  it('a key answered 401 is dropped with its fingerprint and the request goes out again on the other key; no further request uses it', async () => {
    serve((key, path) => (key === A ? { status: 401, body: shape2('invalid_api_key', 'invalid or expired credential') } : { status: 200, body: member(path) }));
    const c = client();
    const results = await drive(clock, Promise.all(Array.from({ length: 5 }, (_, i) => c.getMember(`m${i}`))));
    expect(results).toHaveLength(5);
    expect(dropped).toEqual([`${keyFingerprint(A)} 401 invalid_api_key`]);
    expect(sent.filter((s) => s.key === A)).toHaveLength(1);
    expect(c.activeKeys()).toEqual([keyFingerprint(B)]);
    // The last key's refusal is the caller's, as with one key.
    agent = new MockAgent();
    agent.disableNetConnect();
    serve(() => ({ status: 401, body: shape2('invalid_api_key', 'invalid or expired credential') }));
    const both = client();
    await expect(drive(clock, both.getMember('x'))).rejects.toBeInstanceOf(UnauthorizedError);
    expect(both.activeKeys()).toHaveLength(1);
    both.restoreKeys();
    expect(both.activeKeys()).toHaveLength(2);
  });

  it('403 scope_denied drops the key; 403 member_is_admin is no key problem and reaches the caller', async () => {
    serve((key, path) =>
      path === 'admin'
        ? { status: 403, body: shape2('member_is_admin', 'a tenant.admin member cannot be removed') }
        : key === B
          ? { status: 403, body: shape2('scope_denied', 'the credential lacks the scope tenant.org.read') }
          : { status: 200, body: member(path) },
    );
    const c = client();
    await expect(drive(clock, c.getMember('admin'))).rejects.toBeInstanceOf(ForbiddenError);
    expect(dropped).toEqual([]);
    await drive(clock, Promise.all([c.getMember('m1'), c.getMember('m2'), c.getMember('m3')]));
    expect(dropped).toEqual([`${keyFingerprint(B)} 403 scope_denied`]);
    expect(c.activeKeys()).toEqual([keyFingerprint(A)]);
  });
});
