/** Default mappings of the two LDAP profiles. Config values override them field by field. */
import type { FieldSpec } from '../../config/sources.js';
import { fileTimeToMs } from '../../shared/dates.js';

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
  /** Attributes that carry the account's end (read as the member's end_date unless end_date is mapped). */
  endDateAttributes: string[];
  /** The account's end: the text shown in plans and its instant; undefined when it never ends. */
  endDate(get: (name: string) => unknown): { text: string; ms: number } | undefined;
}

const DAY_MS = 86_400_000;

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
    endDateAttributes: ['shadowExpire'],
    // shadowExpire (RFC 2307 shadowAccount): the day the account expires, in days since 1970-01-01; -1 or absent: never.
    endDate: (get) => {
      const t = text(get('shadowExpire')).trim();
      if (!/^\d+$/.test(t)) return undefined;
      const ms = Number(t) * DAY_MS;
      return { text: new Date(ms).toISOString().slice(0, 10), ms };
    },
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
    endDateAttributes: ['accountExpires'],
    // accountExpires: a FILETIME (100 ns since 1601-01-01 UTC) at which the account expires; 0 and 2^63-1 mean never.
    endDate: (get) => {
      const ms = fileTimeToMs(text(get('accountExpires')));
      return ms === undefined ? undefined : { text: new Date(ms).toISOString(), ms };
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
