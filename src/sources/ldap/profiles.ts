/** Default mappings of the two LDAP profiles. Config values override them field by field. */
import type { FieldSpec } from '../../config/sources.js';

/** One profile's defaults. */
export interface LdapProfile {
  /** Departments from the OU tree unless the config says otherwise. */
  departmentsFromOuTree: boolean;
  departmentFilter: string;
  departmentFields: { id: FieldSpec; name: FieldSpec };
  memberFilter: string;
  memberFields: Record<string, FieldSpec>;
  /** Member field read when department_from is `attribute` and no department field is mapped. */
  departmentAttribute: string;
  /** Attributes that mark an account disabled. */
  disabledAttributes: string[];
  isDisabled(get: (name: string) => unknown): boolean;
}

const first = (v: unknown): unknown => (Array.isArray(v) ? v[0] : v);
const text = (v: unknown): string => {
  const f = first(v);
  return f === undefined || f === null ? '' : Buffer.isBuffer(f) ? f.toString('utf8') : String(f);
};

/** The built-in profiles. */
export const LDAP_PROFILES: Record<'openldap' | 'active-directory', LdapProfile> = {
  openldap: {
    departmentsFromOuTree: true,
    departmentFilter: '(objectClass=organizationalUnit)',
    departmentFields: { id: 'entryUUID', name: 'ou' },
    memberFilter: '(objectClass=inetOrgPerson)',
    memberFields: { id: 'uid', display_name: ['displayName', 'cn'], email: 'mail', phone: ['telephoneNumber', 'mobile'], title: 'title' },
    departmentAttribute: 'departmentNumber',
    disabledAttributes: ['pwdAccountLockedTime', 'nsAccountLock'],
    // ppolicy locks with pwdAccountLockedTime (any value); 389-DS style directories use nsAccountLock: TRUE.
    isDisabled: (get) => text(get('pwdAccountLockedTime')).trim() !== '' || text(get('nsAccountLock')).trim().toLowerCase() === 'true',
  },
  'active-directory': {
    departmentsFromOuTree: false,
    departmentFilter: '(objectClass=organizationalUnit)',
    departmentFields: { id: 'objectGUID', name: 'ou' },
    // Computers are users too in Active Directory.
    memberFilter: '(&(objectClass=user)(!(objectClass=computer)))',
    memberFields: { id: 'objectGUID', display_name: ['displayName', 'cn', 'sAMAccountName'], email: 'mail', phone: ['telephoneNumber', 'mobile'], title: 'title' },
    departmentAttribute: 'department',
    disabledAttributes: ['userAccountControl'],
    // userAccountControl bit 0x2 = ACCOUNTDISABLE.
    isDisabled: (get) => {
      const v = Number.parseInt(text(get('userAccountControl')), 10);
      return Number.isFinite(v) && (v & 0x2) !== 0;
    },
  },
};

/** objectGUID bytes -> the canonical GUID string (first three groups little-endian), lower-case. */
export function guidToString(buf: Buffer): string {
  if (buf.length !== 16) return buf.toString('hex');
  const h = (i: number) => buf[i]!.toString(16).padStart(2, '0');
  const r = (idx: number[]) => idx.map(h).join('');
  return `${r([3, 2, 1, 0])}-${r([5, 4])}-${r([7, 6])}-${r([8, 9])}-${r([10, 11, 12, 13, 14, 15])}`;
}
