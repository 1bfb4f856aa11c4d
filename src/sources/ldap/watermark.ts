/**
 * The watermark of an LDAP delta read, taken before the read, and the filter that finds what changed since one.
 *
 * - A server whose rootDSE offers `highestCommittedUSN` (Active Directory, Samba): that USN, with the domain
 *   controller's identity (its NTDS Settings' `invocationId`, else `dsServiceName`). USNs are counted per domain
 *   controller and start again after a restore, so a watermark of another controller or invocation is not used.
 * - Any other server (OpenLDAP): a `modifyTimestamp`: the newest `contextCSN` of the naming context holding the base
 *   (kept by the syncprov overlay), else this host's clock; minus an overlap for clock skew and replication lag.
 *   modifyTimestamp has whole seconds and the search asks for `>=`: entries changed around the watermark are read
 *   again, which is harmless.
 */
import type { Client, Entry } from 'ldapts';
import type { Clock } from '../../shared/clock.js';
import { dnKey } from './dn.js';
import { guidToString } from './profiles.js';

/** How far before the newest change (or this host's clock) a timestamp watermark is put. */
export const TIMESTAMP_OVERLAP_MS = 10 * 60_000;

/** A watermark as saved (JSON in the snapshot's watermark). */
export type LdapWatermark = { by: 'uSNChanged'; usn: string; dc: string } | { by: 'modifyTimestamp'; at: string };

/** What is saved instead of a watermark when a full read found that delta reads cannot work here: why not. */
export interface NoWatermark {
  by: 'none';
  reason: string;
}

/** The watermark as saved. */
export function formatWatermark(mark: LdapWatermark | NoWatermark): string {
  return JSON.stringify(mark);
}

/** Takes the watermark now (before the read): the server's USN, or a modifyTimestamp. */
export async function takeWatermark(client: Client, base: string, clock: Clock): Promise<LdapWatermark> {
  // A rootDSE the bind may not read is a server without a USN: the clock serves.
  const root = await readEntry(client, '', ['highestCommittedUSN', 'dsServiceName', 'namingContexts']).catch(() => undefined);
  const usn = first(root?.['highestCommittedUSN']);
  if (typeof usn === 'string' && /^\d+$/.test(usn)) {
    const service = first(root?.['dsServiceName']);
    const dc = typeof service === 'string' ? await invocationOf(client, service) : '';
    return { by: 'uSNChanged', usn, dc };
  }
  const newest = await newestContextCsn(client, base, root?.['namingContexts']);
  const at = (newest ?? clock.now()) - TIMESTAMP_OVERLAP_MS;
  return { by: 'modifyTimestamp', at: generalizedTime(at) };
}

/** The saved watermark when this server can answer from it, else why not (the reason of the fallback to a full read). */
export function checkWatermark(saved: string | undefined, now: LdapWatermark): { reason: string } | { mark: LdapWatermark } {
  let mark: LdapWatermark | NoWatermark | undefined;
  try {
    mark = parseWatermark(saved);
  } catch {
    mark = undefined;
  }
  if (mark?.by === 'none') return { reason: mark.reason };
  if (!mark) return { reason: `the saved watermark ${JSON.stringify(saved ?? null)} is not one of this LDAP source` };
  if (mark.by !== now.by) return { reason: `the saved watermark is a ${mark.by}, but the server now offers ${now.by === 'uSNChanged' ? 'highestCommittedUSN' : 'no highestCommittedUSN'}` };
  if (mark.by === 'uSNChanged' && now.by === 'uSNChanged') {
    if (mark.dc !== now.dc) return { reason: `the domain controller is not the one of the saved uSNChanged watermark (invocationId ${mark.dc || 'unknown'}, now ${now.dc || 'unknown'}: another controller, or one restored from a backup)` };
    if (BigInt(now.usn) < BigInt(mark.usn)) return { reason: `the server's highestCommittedUSN ${now.usn} is below the saved watermark ${mark.usn} (a restore)` };
  }
  return { mark };
}

/** The member filter ANDed with "changed at or after the watermark". */
export function changedSince(filter: string, mark: LdapWatermark): string {
  const inner = filter.startsWith('(') ? filter : `(${filter})`;
  return mark.by === 'uSNChanged' ? `(&${inner}(uSNChanged>=${mark.usn}))` : `(&${inner}(modifyTimestamp>=${mark.at}))`;
}

function parseWatermark(saved: string | undefined): LdapWatermark | NoWatermark | undefined {
  if (saved === undefined) return undefined;
  const v = JSON.parse(saved) as Partial<{ by: string; usn: unknown; dc: unknown; at: unknown; reason: unknown }>;
  if (v.by === 'none' && typeof v.reason === 'string') return { by: 'none', reason: v.reason };
  if (v.by === 'uSNChanged' && typeof v.usn === 'string' && /^\d+$/.test(v.usn) && typeof v.dc === 'string') return { by: 'uSNChanged', usn: v.usn, dc: v.dc };
  if (v.by === 'modifyTimestamp' && typeof v.at === 'string' && /^\d{14}Z$/.test(v.at)) return { by: 'modifyTimestamp', at: v.at };
  return undefined;
}

/** The controller's invocationId (changes with a restore), else its NTDS Settings DN. */
async function invocationOf(client: Client, service: string): Promise<string> {
  const settings = await readEntry(client, service, ['invocationId'], ['invocationId']).catch(() => undefined);
  const id = first(settings?.['invocationId']);
  return Buffer.isBuffer(id) && id.length === 16 ? guidToString(id) : service;
}

/** The newest contextCSN (ms) of the naming context that holds `base`; undefined when the server keeps none. */
async function newestContextCsn(client: Client, base: string, contexts: unknown): Promise<number | undefined> {
  const baseKey = dnKey(base);
  let context: string | undefined;
  for (const c of Array.isArray(contexts) ? contexts : [contexts]) {
    if (typeof c !== 'string' || c === '') continue;
    const key = dnKey(c);
    if ((baseKey === key || baseKey.endsWith(`,${key}`)) && (context === undefined || key.length > dnKey(context).length)) context = c;
  }
  if (context === undefined) return undefined;
  const entry = await readEntry(client, context, ['contextCSN']).catch(() => undefined);
  const csns = entry?.['contextCSN'];
  let newest: number | undefined;
  for (const csn of Array.isArray(csns) ? csns : [csns]) {
    const m = typeof csn === 'string' ? /^(\d{4})(\d{2})(\d{2})(\d{2})(\d{2})(\d{2})/.exec(csn) : null;
    if (!m) continue;
    const ms = Date.UTC(Number(m[1]), Number(m[2]) - 1, Number(m[3]), Number(m[4]), Number(m[5]), Number(m[6]));
    if (newest === undefined || ms > newest) newest = ms;
  }
  return newest;
}

/** One entry read by a base search (not paged: one entry), or undefined when it does not exist. */
async function readEntry(client: Client, dn: string, attributes: string[], binary: string[] = []): Promise<Entry | undefined> {
  const { searchEntries } = await client.search(dn, { scope: 'base', filter: '(objectClass=*)', attributes, explicitBufferAttributes: binary });
  return searchEntries[0];
}

/** A time as LDAP GeneralizedTime in UTC, whole seconds (`20261127125000Z`). */
export function generalizedTime(ms: number): string {
  return `${new Date(ms).toISOString().slice(0, 19).replace(/[-T:]/g, '')}Z`;
}

function first(v: unknown): unknown {
  return Array.isArray(v) ? v[0] : v;
}
