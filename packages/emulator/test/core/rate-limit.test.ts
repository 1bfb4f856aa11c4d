import { afterEach, describe, expect, test } from 'vitest';
import { ManualClock } from '../../src/core/clock.js';
import type { Principal } from '../../src/core/types.js';
import { orgTestSeed, startTestEmulator, TEST_KEYS, type TestEmulator } from '../helpers/emulator.js';

const LIST = '/api/external/v1/org/departments';
let emu: TestEmulator | undefined;
afterEach(async () => {
  await emu?.close();
  emu = undefined;
});

async function burst(n: number, token: string): Promise<number[]> {
  const statuses: number[] = [];
  for (let i = 0; i < n; i++) statuses.push((await emu!.request('GET', LIST, { token })).status);
  return statuses;
}

describe('rate limits', () => {
  test('per API key: over the limit is 429 rate_limited with Retry-After in whole seconds; the bucket refills with time', async () => {
    const clock = new ManualClock();
    emu = await startTestEmulator(orgTestSeed({ per_api_key: 5 }), { clock });
    expect(await burst(5, TEST_KEYS.acmeRw)).toEqual([200, 200, 200, 200, 200]);
    const res = await emu.request('GET', LIST, { token: TEST_KEYS.acmeRw });
    expect(res.status).toBe(429);
    expect(res.body.error.code).toBe('rate_limited');
    // The message names the limit hit (docs/decisions.md, "Which limit a 429 names").
    expect(res.body.error.message).toBe('rate limit exceeded: api key');
    expect(res.headers.get('retry-after')).toBe('1');
    // Another key of the same tenant has its own bucket.
    expect((await emu.request('GET', LIST, { token: TEST_KEYS.acmeRead })).status).toBe(200);
    await clock.advance(200);
    expect((await emu.request('GET', LIST, { token: TEST_KEYS.acmeRw })).status).toBe(200);
    expect((await emu.request('GET', LIST, { token: TEST_KEYS.acmeRw })).status).toBe(429);
    await clock.advance(1000);
    expect(await burst(5, TEST_KEYS.acmeRw)).toEqual([200, 200, 200, 200, 200]);
  });

  test('Retry-After rounds up to whole seconds at low rates', async () => {
    const clock = new ManualClock();
    emu = await startTestEmulator(orgTestSeed({ per_api_key: 0.25 }), { clock });
    // Burst is the rate: below one token, the first request already waits.
    const res = await emu.request('GET', LIST, { token: TEST_KEYS.acmeRw });
    expect(res.status).toBe(429);
    expect(res.headers.get('retry-after')).toBe('3');
  });

  test('per tenant: all credentials of a tenant share it; other tenants do not', async () => {
    const clock = new ManualClock();
    emu = await startTestEmulator(orgTestSeed({ per_tenant: 3 }), { clock });
    expect(await burst(2, TEST_KEYS.acmeRw)).toEqual([200, 200]);
    expect((await emu.request('GET', LIST, { token: TEST_KEYS.acmeRead })).status).toBe(200);
    const res = await emu.request('GET', LIST, { token: TEST_KEYS.acmeRead });
    expect(res.status).toBe(429);
    expect(res.body.error.message).toBe('rate limit exceeded: tenant');
    expect(Number(res.headers.get('retry-after'))).toBeGreaterThanOrEqual(1);
    expect((await emu.request('GET', LIST, { token: TEST_KEYS.globexRw })).status).toBe(200);
  });

  test('a 429 over both the key\'s and the tenant\'s limit names the tenant', async () => {
    const clock = new ManualClock();
    emu = await startTestEmulator(orgTestSeed({ per_api_key: 2, per_tenant: 2 }), { clock });
    expect(await burst(2, TEST_KEYS.acmeRw)).toEqual([200, 200]);
    const res = await emu.request('GET', LIST, { token: TEST_KEYS.acmeRw });
    expect(res.status).toBe(429);
    expect(res.body.error.message).toBe('rate limit exceeded: tenant');
  });

  test('per session token (principal kind session_token)', async () => {
    const clock = new ManualClock();
    emu = await startTestEmulator(orgTestSeed({ per_session_token: 2 }), { clock });
    const principal: Principal = { kind: 'session_token', tenantId: 1001, scopes: new Set(['tenant.org.read']), credentialId: 'st-x' };
    emu.ctx.credentials.add({ matches: (t) => t === 'test-session', resolve: () => principal });
    expect(await burst(2, 'test-session')).toEqual([200, 200]);
    const limited = await emu.request('GET', LIST, { token: 'test-session' });
    expect(limited.status).toBe(429);
    expect(limited.body.error.message).toBe('rate limit exceeded: session token');
    // API keys are not limited by the session-token rate.
    expect(await burst(3, TEST_KEYS.acmeRw)).toEqual([200, 200, 200]);
  });

  test('0 turns a limit off', async () => {
    emu = await startTestEmulator(orgTestSeed({ per_api_key: 0, per_tenant: 0 }), { clock: new ManualClock() });
    expect((await burst(150, TEST_KEYS.acmeRw)).every((s) => s === 200)).toBe(true);
  });

  test('the spec defaults apply when the seed has no limits block (100 per key per second)', async () => {
    const seed = orgTestSeed();
    delete seed.limits;
    emu = await startTestEmulator(seed, { clock: new ManualClock() });
    const statuses = await burst(101, TEST_KEYS.acmeRw);
    expect(statuses.slice(0, 100).every((s) => s === 200)).toBe(true);
    expect(statuses[100]).toBe(429);
  });
});
