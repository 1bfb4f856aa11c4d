import { describe, expect, it } from 'vitest';
import { dnKey, dnParts } from '../../src/sources/ldap/dn.js';
import { guidToString, LDAP_PROFILES } from '../../src/sources/ldap/profiles.js';

describe('LDAP helpers (no server)', () => {
  it('decodes objectGUID bytes to the canonical GUID string (first three groups little-endian)', () => {
    const bytes = Buffer.from('e1a5b8d62b3c7a4f9e8d1a2b3c4d5e6f', 'hex');
    expect(guidToString(bytes)).toBe('d6b8a5e1-3c2b-4f7a-9e8d-1a2b3c4d5e6f');
    expect(guidToString(Buffer.from('0102', 'hex'))).toBe('0102');
  });

  it('folds case and spaces of DNs and keeps escaped commas inside an RDN', () => {
    expect(dnKey('CN=Ada Lovelace, OU=Staff ,DC=corp,DC=example')).toBe('cn=ada lovelace,ou=staff,dc=corp,dc=example');
    expect(dnParts('cn=Smith\\, John,ou=People,dc=x')).toEqual(['cn=smith\\, john', 'ou=people', 'dc=x']);
  });

  it('reads disabled flags per profile', () => {
    const get = (attrs: Record<string, unknown>) => (name: string) => attrs[name];
    expect(LDAP_PROFILES['active-directory'].isDisabled(get({ userAccountControl: '514' }))).toBe(true);
    expect(LDAP_PROFILES['active-directory'].isDisabled(get({ userAccountControl: '512' }))).toBe(false);
    expect(LDAP_PROFILES['active-directory'].isDisabled(get({ userAccountControl: '66050' }))).toBe(true);
    expect(LDAP_PROFILES['active-directory'].isDisabled(get({}))).toBe(false);
    expect(LDAP_PROFILES.openldap.isDisabled(get({ pwdAccountLockedTime: '000001010000Z' }))).toBe(true);
    expect(LDAP_PROFILES.openldap.isDisabled(get({ nsAccountLock: 'true' }))).toBe(true);
    expect(LDAP_PROFILES.openldap.isDisabled(get({ nsAccountLock: 'FALSE' }))).toBe(false);
  });
});
