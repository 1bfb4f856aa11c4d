/**
 * An LDAP entry as the delta snapshot keeps it (src/sources/delta/types.ts): its DN and every attribute read, text as
 * text and binary values (objectGUID, `;binary`, values that are not UTF-8) in base64, so that mapping the stored
 * entry gives exactly what mapping the entry as read gave. Keyed by entryUUID (OpenLDAP) or objectGUID (Active
 * Directory); an entry without its key attribute is keyed by its DN.
 */
import type { SearchEntry } from 'ldapts';
import { dnKey } from './dn.js';
import { guidToString } from './profiles.js';

/** The stored form: `[type, values]` for text, `[type, base64 values, 1]` for binary values. */
export interface StoredEntry {
  dn: string;
  attrs: ([string, string[]] | [string, string[], 1])[];
}

/** The operational attribute that keys a member entry: it never changes, whatever is renamed or moved. */
export function keyAttribute(profile: 'openldap' | 'active-directory'): string {
  return profile === 'active-directory' ? 'objectGUID' : 'entryUUID';
}

/** The entry's key: its key attribute (objectGUID as its GUID string), else `dn:` and its normalised DN. */
export function entryKey(entry: SearchEntry, attribute: string): string {
  const wanted = attribute.toLowerCase();
  for (const a of entry.attributes) {
    if (a.type.toLowerCase() !== wanted) continue;
    if (wanted === 'objectguid') {
      const bytes: unknown = a.parsedBuffers[0] ?? a.values[0];
      if (Buffer.isBuffer(bytes)) return guidToString(bytes);
    }
    const first: unknown = a.values[0];
    if (Buffer.isBuffer(first)) return first.toString('hex');
    if (typeof first === 'string' && first !== '') return first.toLowerCase();
  }
  return `dn:${dnKey(entry.name)}`;
}

/** The entry as stored in the snapshot. */
export function storeEntry(entry: SearchEntry): StoredEntry {
  const attrs: StoredEntry['attrs'] = [];
  for (const a of entry.attributes) {
    const values = a.values as readonly unknown[];
    if (a.type.toLowerCase() === 'objectguid' || !allText(values)) {
      const buffers = a.parsedBuffers.length > 0 || values.length === 0 ? a.parsedBuffers : (values as Buffer[]);
      attrs.push([a.type, buffers.map((b) => b.toString('base64')), 1]);
    } else attrs.push([a.type, values as string[]]);
  }
  return { dn: entry.name, attrs };
}

/**
 * A stored entry back as a search entry the entry reader reads (paged-search.ts): the shape of a lean entry
 * (entry-decoder.ts), binary values as Buffers in both `values` and `parsedBuffers`. `dn` replaces the stored DN
 * (an entry whose parent was renamed since: its attributes are as stored, its DN is the one listed now).
 */
export function loadEntry(stored: StoredEntry, dn = stored.dn): SearchEntry {
  const attributes = stored.attrs.map((a) => {
    if (a[2] !== 1) return { type: a[0], values: a[1], parsedBuffers: [] as Buffer[] };
    const buffers = a[1].map((v) => Buffer.from(v, 'base64'));
    return { type: a[0], values: buffers, parsedBuffers: buffers };
  });
  return { name: dn, attributes } as unknown as SearchEntry;
}

/** True when `raw` has the shape of a stored entry (a snapshot from another connector or version is not). */
export function isStoredEntry(raw: unknown): raw is StoredEntry {
  const r = raw as StoredEntry | null;
  return typeof r === 'object' && r !== null && typeof r.dn === 'string' && Array.isArray(r.attrs);
}

function allText(values: readonly unknown[]): boolean {
  for (let i = 0; i < values.length; i++) if (typeof values[i] !== 'string') return false;
  return true;
}
