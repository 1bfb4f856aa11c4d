import { afterEach, beforeEach, describe, expect, it } from 'vitest';
import { MockAgent } from 'undici';
import { ManualClock } from '../../src/shared/clock.js';
import { PLATFORM_DEFAULTS } from '../../src/config/platform.js';
import { clientLimitsFrom, PlatformClient } from '../../src/platform/client.js';
import { TokenBucket } from '../../src/platform/pacing.js';
import {
  ConflictError,
  ForbiddenError,
  InvalidResponseError,
  NetworkError,
  NotFoundError,
  PlatformError,
  RateLimitedError,
  ScopeDeniedError,
  ServerError,
  TimeoutError,
  UnauthorizedError,
  parseRetryAfter,
} from '../../src/platform/errors.js';
import type { ClientObserver } from '../../src/platform/port.js';

const ORIGIN = 'http://platform.test';
const P = '/api/external/v1';

const member = (over: Record<string, unknown> = {}) => ({
  account_id: 'acc-1',
  display_name: 'Ada Lovelace',
  email: 'ada@example.com',
  phone: '+12015550123',
  third_user_id: 'E1',
  title: 'Engineer',
  department_id: 'dep-1',
  status: 'active',
  roles: ['tenant.member'],
  updated_at: '2026-01-01T00:00:00.000Z',
  ...over,
});

const shape2 = (code: string, message = code) => ({ error: { code, message }, meta: { request_id: 'req-1' } });

/** Advances the clock in steps until `promise` settles. */
async function drive<T>(clock: ManualClock, promise: Promise<T>, stepMs = 50, maxSteps = 10_000): Promise<T> {
  let settled = false;
  const p = promise.finally(() => {
    settled = true;
  });
  p.catch(() => {});
  for (let i = 0; i < maxSteps && !settled; i += 1) {
    await new Promise((r) => setImmediate(r));
    if (settled) break;
    await clock.advance(stepMs);
  }
  return p;
}

describe('PlatformClient over MockAgent', () => {
  let agent: MockAgent;
  let clock: ManualClock;
  let events: string[];
  let observer: ClientObserver;

  beforeEach(() => {
    agent = new MockAgent();
    agent.disableNetConnect();
    clock = new ManualClock(0);
    events = [];
    observer = {
      onResponse: (m, r, s) => events.push(`response ${m} ${r} ${s}`),
      onRetry: (reason) => events.push(`retry ${reason}`),
      onRateLimited: () => events.push('rate_limited'),
      onThrottled: (s) => events.push(`throttled ${s}`),
    };
  });
  afterEach(async () => {
    await agent.close();
  });

  const client = (over: Partial<ConstructorParameters<typeof PlatformClient>[0]> = {}) =>
    new PlatformClient({
      ...clientLimitsFrom(PLATFORM_DEFAULTS),
      baseUrl: ORIGIN,
      credential: 'ek_test_secret',
      dispatcher: agent,
      clock,
      random: () => 0.5,
      bucket: new TokenBucket(clock, { ratePerSecond: 1000 }),
      observer,
      retry: { maxAttempts: 4, maxRetryTimeMs: 60_000, baseDelayMs: 100, maxDelayMs: 1000 },
      ...over,
    });

  it('lists a page with cursor, limit and updated_since, sending the bearer credential', async () => {
    let auth: unknown;
    agent
      .get(ORIGIN)
      .intercept({ path: `${P}/org/members?cursor=c1&limit=2&updated_since=2026-01-01T00%3A00%3A00.000Z`, method: 'GET' })
      .reply((opts) => {
        auth = (opts.headers as Record<string, string>).authorization;
        return { statusCode: 200, data: { items: [member({ extra_field: 1 })], next_cursor: 'c2', has_more: true, total: 9 } };
      });
    const page = await client().listMembers({ cursor: 'c1', limit: 2, updated_since: '2026-01-01T00:00:00.000Z' });
    expect(auth).toBe('Bearer ek_test_secret');
    expect(page.has_more).toBe(true);
    expect(page.next_cursor).toBe('c2');
    // Unknown fields are tolerated and kept.
    expect(page.items[0]).toMatchObject({ account_id: 'acc-1', extra_field: 1 });
    expect(events).toEqual(['response GET /org/members 200']);
  });

  it('names a missing required field of a response', async () => {
    const { updated_at: _u, ...broken } = member();
    agent.get(ORIGIN).intercept({ path: `${P}/org/members?limit=200`, method: 'GET' }).reply(200, { items: [member(), broken], next_cursor: '', has_more: false });
    const e = await client().listMembers({ limit: 200 }).catch((x: unknown) => x);
    expect(e).toBeInstanceOf(InvalidResponseError);
    expect((e as PlatformError).message).toContain('items[1].updated_at');
    expect((e as PlatformError).kind).toBe('invalid_response');
  });

  it('a body that is not JSON is an invalid response, not retried', async () => {
    agent.get(ORIGIN).intercept({ path: `${P}/org/positions/p1`, method: 'GET' }).reply(200, '<html>');
    await expect(client().getPosition('p1')).rejects.toBeInstanceOf(InvalidResponseError);
  });

  it.each([
    [400, shape2('invalid_argument', 'limit: must be at most 200'), 'bad_request', 'invalid_argument'],
    [401, shape2('invalid_api_key'), 'unauthorized', 'invalid_api_key'],
    [403, shape2('scope_denied'), 'scope_denied', 'scope_denied'],
    [403, shape2('member_is_admin'), 'forbidden', 'member_is_admin'],
    [404, shape2('not_found'), 'not_found', 'not_found'],
    [409, shape2('third_id_conflict'), 'conflict', 'third_id_conflict'],
    [409, shape2('department_has_children'), 'conflict', 'department_has_children'],
    [401, { success: false, code: 4010, message: 'unauthorized', traceId: 't-1' }, 'unauthorized', '4010'],
    [200, { success: false, code: 4040, message: 'not found', traceId: 't-1' }, 'not_found', '4040'],
    [200, { success: false, code: 4030, message: 'forbidden' }, 'forbidden', '4030'],
  ] as const)('maps %i %j to kind %s, code %s, without retrying', async (status, body, kind, code) => {
    agent.get(ORIGIN).intercept({ path: `${P}/org/departments/d%2F1`, method: 'DELETE' }).reply(status, body);
    const e = (await client().deleteDepartment('d/1').catch((x: unknown) => x)) as PlatformError;
    expect(e).toBeInstanceOf(PlatformError);
    expect(e.kind).toBe(kind);
    expect(e.code).toBe(code);
    expect(e.method).toBe('DELETE');
    expect(e.route).toBe('/org/departments/{department_id}');
    expect(e.message).not.toContain('ek_test_secret');
    expect(events.filter((x) => x.startsWith('retry'))).toEqual([]);
  });

  it('exposes typed subclasses', async () => {
    const cases: [number, unknown, new (...a: never[]) => PlatformError][] = [
      [409, shape2('member_exists'), ConflictError],
      [403, shape2('scope_denied'), ScopeDeniedError],
      [403, shape2('member_is_admin'), ForbiddenError],
      [404, shape2('not_found'), NotFoundError],
      [401, shape2('invalid_api_key'), UnauthorizedError],
    ];
    for (const [status, body, cls] of cases) {
      agent.get(ORIGIN).intercept({ path: `${P}/org/members`, method: 'POST' }).reply(status, body as object);
      await expect(client().createMember({ email: 'a@b.c' })).rejects.toBeInstanceOf(cls);
    }
  });

  it('retries 503 and a connection reset with jittered backoff, POST included, then succeeds', async () => {
    const scope = agent.get(ORIGIN);
    scope.intercept({ path: `${P}/org/members`, method: 'POST' }).reply(503, shape2('service_unavailable'));
    scope.intercept({ path: `${P}/org/members`, method: 'POST' }).replyWithError(Object.assign(new Error('socket hang up'), { code: 'ECONNRESET' }));
    scope.intercept({ path: `${P}/org/members`, method: 'POST' }).reply(201, member());
    const c = client();
    const sentAt: number[] = [];
    const origObserver = observer.onResponse!;
    observer.onResponse = (...a) => {
      sentAt.push(clock.now());
      origObserver(...a);
    };
    const created = await drive(clock, c.createMember({ email: 'ada@example.com', third_user_id: 'E1' }), 10);
    expect(created.account_id).toBe('acc-1');
    expect(events.filter((x) => x.startsWith('retry'))).toEqual(['retry server', 'retry network']);
    // random 0.5: 0.5 * 100 ms after attempt 1, then 0.5 * 200 ms after attempt 2.
    expect(sentAt[1]! - sentAt[0]!).toBeGreaterThanOrEqual(100 + 50);
  });

  it('gives up after max attempts with the last error', async () => {
    const scope = agent.get(ORIGIN);
    for (let i = 0; i < 4; i += 1) scope.intercept({ path: `${P}/org/positions/p1`, method: 'GET' }).reply(500, shape2('internal_error'));
    const e = await drive(clock, client().getPosition('p1')).catch((x: unknown) => x);
    expect(e).toBeInstanceOf(ServerError);
    expect((e as PlatformError).status).toBe(500);
    expect(events.filter((x) => x.startsWith('retry'))).toHaveLength(3);
  });

  it('gives up when the retry time budget is spent', async () => {
    const scope = agent.get(ORIGIN);
    scope.intercept({ path: `${P}/org/positions/p1`, method: 'GET' }).reply(429, shape2('rate_limited'), { headers: { 'retry-after': '30' } });
    const bucket = new TokenBucket(clock, { ratePerSecond: 1000 });
    const e = await drive(clock, client({ bucket, retry: { maxAttempts: 5, maxRetryTimeMs: 10_000 } }).getPosition('p1')).catch((x: unknown) => x);
    expect(e).toBeInstanceOf(RateLimitedError);
    expect((e as PlatformError).retryAfterMs).toBe(30_000);
    // Giving up does not lift the pause: other requests of the key still wait out the Retry-After.
    expect(bucket.pausedUntil).toBe(30_000);
  });

  it('a 429 pauses the whole bucket for Retry-After: other requests of the credential wait too', async () => {
    const scope = agent.get(ORIGIN);
    const sends: { path: string; at: number }[] = [];
    const record = (path: string, status: number, body: object, headers: Record<string, string> = {}) =>
      scope.intercept({ path: `${P}${path}`, method: 'GET' }).reply(() => {
        sends.push({ path, at: clock.now() });
        return { statusCode: status, data: body, responseOptions: { headers } };
      });
    record('/org/members/a', 429, shape2('rate_limited'), { 'retry-after': '2' });
    record('/org/members/b', 200, member({ account_id: 'b' }));
    record('/org/members/a', 200, member({ account_id: 'a' }));
    const bucket = new TokenBucket(clock, { ratePerSecond: 10 });
    const c = client({ bucket });
    const first = c.getMember('a');
    // Let the 429 arrive before the second request asks for a token.
    for (let i = 0; i < 20 && sends.length === 0; i += 1) await new Promise((r) => setImmediate(r));
    await new Promise((r) => setTimeout(r, 5));
    const second = c.getMember('b');
    const [a, b] = await drive(clock, Promise.all([first, second]), 100);
    expect(a.account_id).toBe('a');
    expect(b.account_id).toBe('b');
    expect(events).toContain('rate_limited');
    expect(sends[0]!.at).toBe(0);
    // Neither the other request nor the retry went out during the 2 s pause.
    expect(sends[1]!.at).toBeGreaterThanOrEqual(2000);
    expect(sends[2]!.at).toBeGreaterThanOrEqual(2000);
    expect(events.some((e) => e.startsWith('throttled'))).toBe(true);
  });

  it('paces requests at the configured rate', async () => {
    const scope = agent.get(ORIGIN);
    const at: number[] = [];
    for (let i = 0; i < 6; i += 1) {
      scope.intercept({ path: `${P}/org/positions/p${i}`, method: 'DELETE' }).reply(() => {
        at.push(clock.now());
        return { statusCode: 204, data: '' };
      });
    }
    const c = client({ bucket: new TokenBucket(clock, { ratePerSecond: 4 }), concurrency: 3 });
    await drive(clock, Promise.all(Array.from({ length: 6 }, (_, i) => c.deletePosition(`p${i}`))), 25);
    expect(at).toEqual([0, 250, 500, 750, 1000, 1250]);
  });

  it('maps a network failure that never recovers to NetworkError, retried past maxAttempts until the time budget is spent (an outage)', async () => {
    const scope = agent.get(ORIGIN);
    scope.intercept({ path: `${P}/org/departments?limit=1`, method: 'GET' }).replyWithError(Object.assign(new Error('connect ECONNREFUSED'), { code: 'ECONNREFUSED' })).persist();
    const e = await drive(clock, client({ retry: { maxAttempts: 4, maxRetryTimeMs: 5_000, baseDelayMs: 100, maxDelayMs: 1000 } }).listDepartments({ limit: 1 }), 200).catch((x: unknown) => x);
    expect(e).toBeInstanceOf(NetworkError);
    expect((e as PlatformError).code).toBe('ECONNREFUSED');
    // random 0.5: waits of 50, 100, 200, 400, then 500 ms each, until the next would end past 5 s.
    const retries = events.filter((x) => x === 'retry network').length;
    expect(retries).toBeGreaterThan(3);
    expect(retries).toBe(12);
  });

  it('a request slower than timeout_ms is a TimeoutError (retryable, then given up)', async () => {
    const scope = agent.get(ORIGIN);
    scope.intercept({ path: `${P}/org/positions/slow`, method: 'GET' }).reply(200, {}).delay(2000);
    const c = client({ timeoutMs: 50, retry: { maxAttempts: 1, maxRetryTimeMs: PLATFORM_DEFAULTS.max_retry_time_ms } });
    const e = await c.getPosition('slow').catch((x: unknown) => x);
    expect(e).toBeInstanceOf(TimeoutError);
    expect((e as PlatformError).message).toBe('GET /org/positions/{position_id}: timed out after 50 ms');
  });

  it('an abort by the caller is not retried and not mapped', async () => {
    const scope = agent.get(ORIGIN);
    scope.intercept({ path: `${P}/org/positions/slow`, method: 'GET' }).reply(200, {}).delay(2000);
    const ac = new AbortController();
    const p = client().getPosition('slow', { signal: ac.signal });
    setTimeout(() => ac.abort(new Error('shutting down')), 10);
    await expect(p).rejects.toThrow('shutting down');
    expect(events.filter((x) => x.startsWith('retry'))).toEqual([]);
  });

  it('parses Retry-After as seconds or an HTTP date', () => {
    expect(parseRetryAfter('3', 0)).toBe(3000);
    expect(parseRetryAfter(undefined, 0)).toBeUndefined();
    expect(parseRetryAfter('Thu, 01 Jan 1970 00:00:10 GMT', 4000)).toBe(6000);
    expect(parseRetryAfter('soon', 0)).toBeUndefined();
  });
});
