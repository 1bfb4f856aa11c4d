/**
 * clientLimitsFrom: the client's pacing, requests in flight, timeout and retry bounds come from the `platform:` block
 * (the client has no defaults of its own), and a client built by createPlatformClient keeps them.
 */
import { MockAgent } from 'undici';
import { afterEach, describe, expect, it } from 'vitest';
import { PLATFORM_DEFAULTS } from '../../src/config/platform.js';
import { clientLimitsFrom, createPlatformClient } from '../../src/platform/client.js';
import { TimeoutError } from '../../src/platform/errors.js';

const ORIGIN = 'http://platform.test';

let agent: MockAgent | undefined;
afterEach(async () => {
  await agent?.close();
  agent = undefined;
});

describe('clientLimitsFrom', () => {
  it('maps the platform block to the client options, field by field', () => {
    const config = { ...PLATFORM_DEFAULTS, requests_per_second: 7, concurrency: 3, timeout_ms: 1234, max_attempts: 2, max_retry_time_ms: 999 };
    expect(clientLimitsFrom(config)).toEqual({ requestsPerSecond: 7, concurrency: 3, timeoutMs: 1234, retry: { maxAttempts: 2, maxRetryTimeMs: 999 } });
  });

  it('the schema defaults give the documented limits (100/s per key, 8 in flight)', () => {
    expect(clientLimitsFrom(PLATFORM_DEFAULTS)).toMatchObject({ requestsPerSecond: 100, concurrency: 8 });
  });

  it('a client from a config with timeout_ms 50 and max_attempts 1 gives up after one 50 ms attempt', async () => {
    agent = new MockAgent();
    agent.disableNetConnect();
    agent.get(ORIGIN).intercept({ path: '/api/external/v1/org/positions/slow', method: 'GET' }).reply(200, {}).delay(2000);
    const client = createPlatformClient({ ...PLATFORM_DEFAULTS, base_url: `${ORIGIN}/`, api_key: 'ek_limits_0123456789', timeout_ms: 50, max_attempts: 1 }, { dispatcher: agent });
    try {
      const err = await client.getPosition('slow').catch((x: unknown) => x);
      expect(err).toBeInstanceOf(TimeoutError);
      expect((err as TimeoutError).message).toBe('GET /org/positions/{position_id}: timed out after 50 ms');
    } finally {
      await client.close();
    }
  });
});
