import { describe, expect, it } from 'vitest';
import { calculatePlan, listMembers, matchSelector, selectorProblem, selectorProblemMessage, selectPlan } from '../../src/planner/index.js';
import { desired, dept, member, OPTS, ROOT, snapshot } from './fixtures.js';

const ids = (p: { changes: { id: string }[] }) => p.changes.map((c) => c.id);

const ENG = dept({ id: 'd-eng', parent_id: 'root', name: 'Engineering', path: '/Acme/Engineering', depth: 1, third_department_id: 'eng', metadata: { managed_by: 'hr' } });
const ANN = member({ account_id: 'a-ann', display_name: 'Ann', email: 'ann@x.test', third_user_id: 'u1', department_id: 'd-eng' });
const BOB = member({ account_id: 'a-bob', display_name: 'Bob', email: 'bob@x.test', third_user_id: 'u2', department_id: 'd-eng' });
const OWNED = new Map([
  ['u1', 'a-ann'],
  ['u2', 'a-bob'],
]);

const DESIRED = desired({
  departments: [
    { source_id: 'eng', name: 'Engineering Renamed' },
    { source_id: 'ops', name: 'Operations' },
    { source_id: 'sre', name: 'SRE', parent_source_id: 'ops' },
  ],
  members: [
    { source_id: 'u1', display_name: 'Ann Changed', email: 'ann@x.test', department_source_id: 'eng', status: 'active' },
    { source_id: 'u3', display_name: 'Nina', email: 'Nina@X.test', department_source_id: 'sre', status: 'active' },
    { source_id: 'u4', display_name: 'Otto', email: 'otto@x.test', department_source_id: 'eng', status: 'suspended' },
  ],
});
const PLATFORM = { departments: [ROOT, ENG], positions: [], members: listMembers([ANN, BOB], OWNED).finder() };
const PLAN = calculatePlan(DESIRED, snapshot({ departments: [ROOT, ENG], members: [ANN, BOB], ownedMembers: OWNED }), OPTS);

describe('selectPlan', () => {
  it('the full plan holds every change (the fixture is what the selections below narrow)', () => {
    expect(ids(PLAN).sort()).toEqual(
      ['departments:create:ops', 'departments:create:sre', 'departments:update:eng', 'members:create:u3', 'members:create:u4', 'members:remove:u2', 'members:update:u1', 'members:update:u4'].sort(),
    );
  });

  it('a new hire in a new department brings the department and its new parent first, in plan order, and nothing else', () => {
    const s = selectPlan(PLAN, DESIRED, PLATFORM, ['nina@x.test']);
    expect(s.unmatched).toEqual([]);
    expect(s.records).toEqual([{ selector: 'nina@x.test', entity: 'members', thirdId: 'u3', label: 'Nina' }]);
    expect(ids(s.plan)).toEqual(['departments:create:ops', 'departments:create:sre', 'members:create:u3']);
    expect(s.selectedChangeIds).toEqual(['members:create:u3']);
    expect(s.plan.counts.departments.create).toBe(2);
    expect(s.plan.counts.members).toMatchObject({ create: 1, update: 0, remove: 0 });
  });

  it('a create and the patch that completes it (a suspended new hire) come together', () => {
    const s = selectPlan(PLAN, DESIRED, PLATFORM, ['u4']);
    expect(ids(s.plan)).toEqual(['members:create:u4', 'members:update:u4']);
  });

  it('a leaver is matched on the platform (by source id or e-mail) and only their removal is selected', () => {
    for (const sel of ['u2', 'BOB@x.test']) {
      const s = selectPlan(PLAN, DESIRED, PLATFORM, [sel]);
      expect(s.records).toEqual([{ selector: sel, entity: 'members', thirdId: 'u2', platformId: 'a-bob', label: 'Bob' }]);
      expect(ids(s.plan)).toEqual(['members:remove:u2']);
    }
  });

  it('several selectors add up; a department path matches source names or the platform path', () => {
    const s = selectPlan(PLAN, DESIRED, PLATFORM, ['u1', 'Operations/SRE', '/Acme/Engineering']);
    expect(s.records.map((r) => `${r.entity}:${r.thirdId}`)).toEqual(['members:u1', 'departments:sre', 'departments:eng']);
    expect(ids(s.plan)).toEqual(['departments:create:ops', 'departments:create:sre', 'departments:update:eng', 'members:update:u1']);
    expect(matchSelector('Engineering Renamed', DESIRED, PLATFORM).map((r) => r.thirdId)).toEqual(['eng']);
  });

  it('a selector matching nothing is reported; the rest still select', () => {
    const s = selectPlan(PLAN, DESIRED, PLATFORM, ['nobody@x.test', 'u9', 'No/Such/Path', '', 'u1']);
    expect(s.unmatched).toEqual(['nobody@x.test', 'u9', 'No/Such/Path', '']);
    expect(ids(s.plan)).toEqual(['members:update:u1']);
  });

  it('a record already in sync is selected with no change; warnings and quarantine narrow to the selection', () => {
    const d = { ...DESIRED, quarantine: [{ source: 'hr', entity: 'members' as const, source_id: 'u7', location: 'm.csv:9', reason: 'invalid_email', message: 'bad' }] };
    const s = selectPlan(calculatePlan(d, snapshot({ departments: [ROOT, ENG], members: [ANN, BOB], ownedMembers: OWNED }), OPTS), d, PLATFORM, ['u7']);
    expect(s.unmatched).toEqual([]);
    expect(s.plan.changes).toEqual([]);
    expect(s.quarantine.map((q) => q.source_id)).toEqual(['u7']);
    expect(s.plan.warnings).toEqual([]);
  });
});

describe('selectorProblem: a selector that can never match is told before any source is read', () => {
  it('accepts source ids, e-mails and department paths', () => {
    for (const ok of ['u1234', 'E-0001', 'new.hire@example.com', 'Engineering/Backend', '/Acme/Engineering/', 'uid=ann,ou=people']) expect(selectorProblem(ok)).toBeUndefined();
  });

  it('refuses empty, a bare @domain or name@, two @, only slashes, control characters and over 1,024 characters', () => {
    expect(selectorProblem('')).toBe('is empty: give a source id, an e-mail or a department path');
    expect(selectorProblem('   ')).toBe('is empty: give a source id, an e-mail or a department path');
    for (const bad of ['@example.com', 'ann@', 'a@b@c']) expect(selectorProblem(bad)).toBe('is not an e-mail address (one @ with a name before it and a domain after it)');
    expect(selectorProblem('/ //')).toBe('is not a department path (it names no department)');
    expect(selectorProblem('u1\nu2')).toBe('contains a control character');
    expect(selectorProblem('x'.repeat(1025))).toBe('is longer than 1024 characters');
    expect(selectorProblem('x'.repeat(1024))).toBeUndefined();
    expect(selectorProblemMessage('ann@', 'is not an e-mail address')).toBe('--only "ann@" is not an e-mail address');
  });
});
