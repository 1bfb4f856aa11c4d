/** docs/configuration.md's table of platform error kinds and the code agree (kinds and which are retried). */
import { readFileSync } from 'node:fs';
import { describe, expect, it } from 'vitest';
import { PLATFORM_ERROR_KINDS, platformError } from '../../src/platform/errors.js';
import { retryReason } from '../../src/platform/retry.js';

const STATUS: Record<string, number> = {
  bad_request: 400, unauthorized: 401, scope_denied: 403, forbidden: 403, not_found: 404, conflict: 409,
  rate_limited: 429, server: 503, network: 0, timeout: 0, invalid_response: 200,
};

describe('docs/configuration.md platform error table', () => {
  const readme = readFileSync(new URL('../../docs/configuration.md', import.meta.url), 'utf8');
  const start = readme.indexOf('| kind | when | retried |');
  const rows = readme
    .slice(start)
    .split('\n')
    .slice(2)
    .filter((_, i, all) => all.slice(0, i + 1).every((l) => l.startsWith('|')))
    .map((l) => l.split('|').map((c) => c.trim()));

  it('lists every kind, in order', () => {
    expect(start).toBeGreaterThan(-1);
    expect(rows.map((r) => r[1]!.replace(/`/g, ''))).toEqual(PLATFORM_ERROR_KINDS);
  });

  it('says which kinds are retried as the policy does', () => {
    for (const r of rows) {
      const kind = r[1]!.replace(/`/g, '') as (typeof PLATFORM_ERROR_KINDS)[number];
      const err = platformError({ kind, status: STATUS[kind], message: 'x', method: 'GET', route: '/org/members' });
      expect(retryReason(err) !== undefined ? 'yes' : 'no', kind).toBe(r[3]);
    }
  });
});
