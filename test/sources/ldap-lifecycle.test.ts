/**
 * Issue 18 point 8: Active Directory's accountExpires and OpenLDAP's shadowExpire read as the member's end_date by
 * the profiles, on a real slapd with the AD-like schema (test/fixtures/ldap/ad.schema) and Debian's nis schema; then
 * the planner's `ended` rule with an injected clock takes the member out on that date.
 */
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { calculatePlan, lifecycleOptionsFrom } from '../../src/planner/index.js';
import { ManualClock } from '../../src/shared/clock.js';
import { requireSlapd, startSlapd, type Slapd } from '../helpers/slapd.js';
import { desired as desiredState, member, OPTS, snapshot } from '../planner/fixtures.js';
import { read } from './support.js';

const run = requireSlapd();

// FILETIME = (ms since 1970 + 11644473600000) * 10000.
const fileTime = (ms: number) => String((BigInt(ms) + 11644473600000n) * 10000n);
const JAN31 = Date.UTC(2026, 0, 31);
const Y2030 = Date.UTC(2030, 0, 1);

const LDIF = `
dn: OU=Staff,DC=corp,DC=example
objectClass: organizationalUnit
ou: Staff

dn: CN=Expired Ed,OU=Staff,DC=corp,DC=example
objectClass: user
objectGUID:: qqqqqgAAAECAAAAAAAAAAQ==
cn: Expired Ed
sn: Ed
mail: ed@corp.example
userAccountControl: 512
accountExpires: ${fileTime(JAN31)}

dn: CN=Future Fay,OU=Staff,DC=corp,DC=example
objectClass: user
objectGUID:: qqqqqgAAAECAAAAAAAAAAg==
cn: Future Fay
sn: Fay
mail: fay@corp.example
userAccountControl: 512
accountExpires: ${fileTime(Y2030)}

dn: CN=Never Ned,OU=Staff,DC=corp,DC=example
objectClass: user
objectGUID:: qqqqqgAAAECAAAAAAAAAAw==
cn: Never Ned
sn: Ned
mail: ned@corp.example
userAccountControl: 512
accountExpires: 9223372036854775807

dn: CN=Zero Zoe,OU=Staff,DC=corp,DC=example
objectClass: user
objectGUID:: qqqqqgAAAECAAAAAAAAABA==
cn: Zero Zoe
sn: Zoe
mail: zoe@corp.example
userAccountControl: 514
accountExpires: 0

dn: ou=People,dc=example,dc=org
objectClass: organizationalUnit
ou: People

dn: uid=sam,ou=People,dc=example,dc=org
objectClass: inetOrgPerson
objectClass: shadowAccount
uid: sam
cn: Sam Shadow
sn: Shadow
mail: sam@example.org
shadowExpire: ${JAN31 / 86_400_000}

dn: uid=tia,ou=People,dc=example,dc=org
objectClass: inetOrgPerson
objectClass: shadowAccount
uid: tia
cn: Tia Later
sn: Later
mail: tia@example.org
shadowExpire: ${Y2030 / 86_400_000}

dn: uid=uma,ou=People,dc=example,dc=org
objectClass: inetOrgPerson
objectClass: shadowAccount
uid: uma
cn: Uma Unset
sn: Unset
mail: uma@example.org
shadowExpire: -1
`;

describe.skipIf(!run)('LDAP profiles: account expiry as end_date on a real slapd', () => {
  let slapd: Slapd;
  beforeAll(async () => {
    slapd = await startSlapd({ suffixes: ['dc=corp,dc=example', 'dc=example,dc=org'], ldif: [{ text: LDIF }] });
  });
  afterAll(async () => {
    await slapd?.stop();
  });
  const ad = () => ({ name: 'ad', type: 'ldap', profile: 'active-directory', url: slapd.url, bind_dn: slapd.rootDn, bind_password: slapd.rootPassword, base_dn: 'DC=corp,DC=example' });
  const ol = () => ({ name: 'ol', type: 'ldap', profile: 'openldap', url: slapd.url, bind_dn: slapd.rootDn, bind_password: slapd.rootPassword, base_dn: 'dc=example,dc=org', departments: false });

  it('active-directory: accountExpires (FILETIME) is the end; 0 and 2^63-1 are never; userAccountControl still suspends', async () => {
    const state = await read([ad()]);
    const by = Object.fromEntries([...state.members].map((m) => [m.display_name, m]));
    expect(by['Expired Ed']).toMatchObject({ end_at: JAN31, end_date: '2026-01-31T00:00:00.000Z', status: 'active' });
    expect(by['Future Fay']).toMatchObject({ end_at: Y2030 });
    expect(by['Never Ned']!.end_at).toBeUndefined();
    expect(by['Zero Zoe']).toMatchObject({ status: 'suspended' });
    expect(by['Zero Zoe']!.end_at).toBeUndefined();
  });

  it('openldap: shadowExpire (days since 1970) is the end; -1 is never', async () => {
    const state = await read([ol()]);
    const by = Object.fromEntries([...state.members].map((m) => [m.source_id, m]));
    expect(by.sam).toMatchObject({ end_at: JAN31, end_date: '2026-01-31' });
    expect(by.tia).toMatchObject({ end_at: Y2030, end_date: '2030-01-01' });
    expect(by.uma!.end_at).toBeUndefined();
  });

  it('a mapped end_date field wins over the profile\'s attribute', async () => {
    const state = await read([{ ...ol(), members: { fields: { end_date: 'description' } } }]);
    expect([...state.members].find((m) => m.source_id === 'sam')!.end_at).toBeUndefined();
  });

  it('the ended rule removes the expired account on its date, with the directory still listing it', async () => {
    const state = await read([ad()]);
    const live = [...state.members].map((m, i) => member({ account_id: `a${i}`, display_name: m.display_name, email: m.email ?? '', third_user_id: m.source_id, status: m.status === 'suspended' ? 'suspended' : 'active' }));
    const owned = new Map(live.map((m) => [m.third_user_id, m.account_id]));
    const clock = new ManualClock(JAN31 - 1);
    const plan = () =>
      calculatePlan(desiredState({ members: [...state.members], provided: { departments: false, positions: false, members: true } }), snapshot({ members: live, ownedMembers: owned }), {
        ...OPTS,
        now: clock.now(),
        lifecycle: lifecycleOptionsFrom({ lifecycle: { create_days_before_start: 0, end_action: 'remove' } }),
      });
    expect(plan().changes).toEqual([]);
    await clock.advance(1);
    const p = plan();
    expect(p.changes.map((c) => [c.op, c.description])).toEqual([['remove', 'remove member "Expired Ed" (DELETE: status left)']]);
    expect(p.lifecycle?.ended.map((e) => [e.displayName, e.action])).toEqual([['Expired Ed', 'remove']]);
  });
});
