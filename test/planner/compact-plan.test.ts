/**
 * Issue 19: member creates are held in a compact form (description and request derived when read). They must stay
 * the same value to every reader: JSON text (key order included), comparisons, spreads, and a saved plan read back.
 */
import { describe, expect, it } from 'vitest';
import { fastPropertiesCheck } from '../helpers/fast-properties.js';
import { memberCreateChange } from '../../src/domain/index.js';
import { calculatePlan, normEmail, normText } from '../../src/planner/index.js';
import { suspendNewMember } from '../../src/planner/members/create-member.js';
import { desired, member, OPTS, snapshot } from './fixtures.js';

describe('compact member creates', () => {
  const plan = () =>
    calculatePlan(
      desired({
        departments: [{ source_id: 'eng', name: 'Engineering' }],
        members: [
          { source_id: 'u1', display_name: 'Ann Lee', email: 'Ann@X.test', department_source_id: 'eng', status: 'active' },
          { source_id: 'u2', display_name: 'Bo', department_source_id: 'eng', status: 'active' },
        ],
      }),
      snapshot(),
      OPTS,
    );

  it('reads as the plain change it replaces: same keys in the same order, same description and request', () => {
    const c = plan().changes.find((x) => x.id === 'members:create:u1')!;
    const plain = {
      id: 'members:create:u1',
      entity: 'members',
      op: 'create',
      thirdId: 'u1',
      description: 'create member "Ann Lee" <ann@x.test> in "/Acme/Engineering"',
      paths: { department_id: { after: '/Acme/Engineering' } },
      reason: 'missing on the platform',
      fields: { display_name: 'Ann Lee', third_user_id: 'u1', email: 'ann@x.test', department_id: { ref: 'departments:create:eng' } },
      request: { method: 'POST', path: '/org/members', body: { display_name: 'Ann Lee', third_user_id: 'u1', email: 'ann@x.test', department_id: { ref: 'departments:create:eng' } } },
      dependsOn: ['departments:create:eng'],
    };
    expect(JSON.stringify(c)).toBe(JSON.stringify(plain));
    expect(c).toStrictEqual(plain);
    expect({ ...c }).toStrictEqual(plain);
    expect(JSON.parse(JSON.stringify(c))).toStrictEqual(plain);
  });

  it('shares what creates into one department have in common', () => {
    const [a, b] = plan().changes.filter((x) => x.op === 'create' && x.entity === 'members');
    expect(a!.paths).toBe(b!.paths);
    expect(a!.dependsOn).toBe(b!.dependsOn);
  });

  it('keeps every compact change in fast mode, a re-hire first among them (no dictionary of about 430 bytes a change)', () => {
    const hasFastProperties = fastPropertiesCheck();
    const left = member({ account_id: 'a0', display_name: 'Old', third_user_id: 'u0', status: 'left' });
    const members = Array.from({ length: 40 }, (_, i) => ({ source_id: `u${i}`, display_name: `M ${i}`, department_source_id: i % 2 ? 'eng' : undefined, status: i % 5 === 4 ? ('suspended' as const) : ('active' as const) }));
    for (let run = 0; run < 2; run++) {
      const changes = calculatePlan(desired({ departments: [{ source_id: 'eng', name: 'Engineering' }], members }), snapshot({ members: [left], ownedMembers: new Map([['u0', 'a0']]) }), OPTS).changes;
      expect(changes.filter((c) => c.entity === 'members' && c.op === 'create')).toHaveLength(40);
      expect(changes[1]!.reason).toBe('re-hire: the member left and is in the source again');
      expect(changes.filter((c) => !hasFastProperties(c)).map((c) => c.id)).toEqual([]);
    }
  });

  it('says re-add for a re-hire (a create carrying the account it re-activates)', () => {
    const c = memberCreateChange({ id: 'members:create:u9', thirdId: 'u9', platformId: 'acc-9', reason: 're-hire', fields: { display_name: 'Cy', third_user_id: 'u9' }, dependsOn: [] });
    expect(c.description).toBe('re-add member "Cy"');
    expect(Object.keys(c)).toEqual(['id', 'entity', 'op', 'thirdId', 'platformId', 'description', 'reason', 'fields', 'request', 'dependsOn']);
  });

  it('normalisation keeps values that are already normal and fixes the others', () => {
    const s = ['ann', '@x.test'].join('');
    expect(normEmail(s)).toBe(s);
    expect(normText('Ann Lee')).toBe('Ann Lee');
    expect(normEmail(' Ann@X.test ')).toBe('ann@x.test');
  });
});

describe('compact suspensions of new members', () => {
  it('read as the plain PATCH that completes the create: same keys, order, values and request', () => {
    const plan = calculatePlan(
      desired({
        departments: [{ source_id: 'eng', name: 'Engineering' }],
        members: [{ source_id: 'u/7', display_name: ' Zoë  Park ', department_source_id: 'eng', status: 'suspended' }],
      }),
      snapshot(),
      OPTS,
    );
    const c = plan.changes.find((x) => x.id === 'members:update:u/7')!;
    const plain = suspendNewMember('u/7', 'members:create:u/7', normText(' Zoë  Park '));
    expect(Object.keys(c)).toEqual(['id', 'entity', 'op', 'thirdId', 'description', 'reason', 'fields', 'request', 'dependsOn', 'completes']);
    expect(JSON.stringify(c)).toBe(JSON.stringify(plain));
    expect(c).toStrictEqual(plain);
    expect({ ...c }).toStrictEqual(plain);
    expect(c.description).toBe('suspend new member "Zoë  Park"');
    expect(c.request).toEqual({ method: 'PATCH', path: '/org/members/{ref:members:create:u/7}', body: { status: 'suspended' } });
    // Its create comes first and it completes that create, as a policy judges them together.
    expect(plan.changes.findIndex((x) => x.id === 'members:create:u/7')).toBeLessThan(plan.changes.indexOf(c));
  });
});
