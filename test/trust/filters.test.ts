/** The pure trust filters and the config keys they read. */
import { describe, expect, it } from 'vitest';
import { parseConfig } from '../../src/config/load.js';
import type { Change } from '../../src/domain/index.js';
import { configScope, createTrustFilter, describeScopeChange, findSourceShrink, scopeFingerprint } from '../../src/planner/trust/index.js';
import { desiredOf, org } from '../e2e/harness.js';

const cfg = (sync: string, sources = ''): ReturnType<typeof parseConfig> =>
  parseConfig(`platform:\n  base_url: http://127.0.0.1:1\n  api_key: ek_x\nsync:\n  ${sync}\n${sources}`, '/tmp/orgsync.yaml', {});

const ldap = (filter: string, base = 'ou=people,dc=acme,dc=test'): string => `sources:
  - name: dir
    type: ldap
    url: ldap://127.0.0.1:389
    base_dn: dc=acme,dc=test
    members: { base_dn: "${base}", filter: "${filter}" }
`;

const removal = (entity: Change['entity'], thirdId: string, dependsOn: string[] = []): Change => ({
  id: `${entity}:remove:${thirdId}`,
  entity,
  op: 'remove',
  thirdId,
  description: `remove ${thirdId}`,
  reason: 'gone from the source',
  fields: {},
  request: { method: 'DELETE', path: `/org/${entity}/${thirdId}` },
  dependsOn,
});

describe('config keys', () => {
  it('sync.removal_grace accepts 0, "0", durations and { runs: N }; defaults are 0 and 10%', () => {
    expect(cfg('id: a').sync.removal_grace).toEqual({ kind: 'none' });
    expect(cfg('id: a').sync.max_source_shrink_percent).toBe(10);
    expect(cfg('removal_grace: 0').sync.removal_grace).toEqual({ kind: 'none' });
    expect(cfg('removal_grace: "0"').sync.removal_grace).toEqual({ kind: 'none' });
    expect(cfg('removal_grace: 30m').sync.removal_grace).toEqual({ kind: 'duration', ms: 1_800_000, text: '30m' });
    expect(cfg('removal_grace: 72h').sync.removal_grace).toMatchObject({ ms: 72 * 3_600_000 });
    expect(cfg('removal_grace: 7d').sync.removal_grace).toMatchObject({ ms: 7 * 86_400_000 });
    expect(cfg('removal_grace: { runs: 3 }').sync.removal_grace).toEqual({ kind: 'runs', runs: 3 });
    expect(() => cfg('removal_grace: 7x')).toThrow(/removal_grace/);
    expect(() => cfg('removal_grace: { runs: 0 }')).toThrow(/removal_grace/);
    expect(() => cfg('max_source_shrink_percent: 120')).toThrow(/max_source_shrink_percent/);
  });
});

describe('scope guard', () => {
  it('names a changed filter and base DN, and a removed source', () => {
    const a = configScope(cfg('id: a', ldap('(objectClass=inetOrgPerson)')));
    const b = configScope(cfg('id: a', ldap('(&(objectClass=inetOrgPerson)(employeeType=staff))', 'ou=staff,dc=acme,dc=test')));
    expect(scopeFingerprint(a)).not.toBe(scopeFingerprint(b));
    expect(scopeFingerprint(a)).toBe(scopeFingerprint(configScope(cfg('id: a', ldap('(objectClass=inetOrgPerson)')))));
    const [line] = describeScopeChange(a, b);
    expect(line).toMatch(/^dir\/members changed from \{"base_dn":"ou=people[^}]*inetOrgPerson\)"[^}]*\} to \{"base_dn":"ou=staff.*employeeType=staff/);
    expect(describeScopeChange(a, configScope(cfg('id: a')))).toEqual(['source dir removed']);
  });
});

describe('trust filter', () => {
  const desired = org({ members: [['u1', 'A', 'a@x.test']] });
  const base = { desired: desiredOf(desired), lastSnapshot: {}, maxShrinkPercent: 10, missingBefore: new Map(), grace: { kind: 'none' as const }, currentScope: {}, now: Date.UTC(2026, 0, 1) };
  const threshold = { owned: { members: 10, departments: 2, positions: 0 }, threshold: { max_count: 500, max_percent: 20 } };

  it('withholds what depends on a removal inside its grace period', () => {
    const filter = createTrustFilter({ ...base, grace: { kind: 'duration', ms: 3_600_000, text: '1h' } });
    const r = filter([removal('members', 'u9'), removal('departments', 'd1', ['members:remove:u9'])], threshold);
    expect(r.kept).toEqual([]);
    expect(r.withheld.map((w) => [w.change.id, w.dueAt ?? w.why])).toEqual([
      ['members:remove:u9', '2026-01-01T01:00:00.000Z'],
      ['departments:remove:d1', '2026-01-01T01:00:00.000Z'],
    ]);
  });

  it('a shrink that also trips the delete threshold is reported as the threshold, naming the shrink; --allow-deletes N accepts both', () => {
    expect(findSourceShrink({ members: 7 }, { members: 10 }, 10)).toEqual([{ entity: 'members', previous: 10, current: 7, dropPercent: 30 }]);
    // One record gone is never a shrink (5 -> 4 is 20%, but one person leaving); two are.
    expect(findSourceShrink({ members: 4 }, { members: 5 }, 10)).toEqual([]);
    expect(findSourceShrink({ members: 3, departments: 2 }, { members: 5, departments: 2 }, 10)).toEqual([{ entity: 'members', previous: 5, current: 3, dropPercent: 40 }]);
    const changes = [removal('members', 'u7'), removal('members', 'u8'), removal('members', 'u9')];
    const filter = createTrustFilter({ ...base, lastSnapshot: { members: 10 }, desired: desiredOf({ ...desired, members: [...desired.members].concat(Array.from({ length: 6 }, (_, i) => ({ ...desired.members[0]!, source_id: `x${i}` }))) }) });
    const r = filter(changes, threshold);
    expect(r.refusal?.guard).toBe('delete_threshold');
    expect(r.refusal?.message).toMatch(/over sync\.delete_threshold.*; also, the sources shrank against the last good read: members 10 -> 7 \(-30%\)/);
    expect(r.kept).toHaveLength(3);
    const lenient = filter(changes, { ...threshold, threshold: { max_count: 500, max_percent: 100 } });
    expect(lenient.refusal?.guard).toBe('source_shrink');
    expect(lenient.kept).toEqual([]);
    const allowed = createTrustFilter({ ...base, lastSnapshot: { members: 10 }, allowDeletes: 3, desired: desiredOf({ ...desired, members: Array.from({ length: 7 }, (_, i) => ({ ...desired.members[0]!, source_id: `x${i}` })) }) });
    expect(allowed(changes, { ...threshold, allowDeletes: 3 }).refusal).toBeUndefined();
  });
});
