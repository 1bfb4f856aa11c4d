/**
 * The hash of a source's expanded config and mapping (preset applied, defaults filled in): a snapshot is used only
 * while this hash is the one it was read under, so a changed URL, field, status map, scope rule, phone region or
 * config timezone forces a full read. Left out are only the settings that cannot change what is read or how it is
 * mapped (timeouts, retries, the page cap, `full_read_interval`) and the secrets themselves (a rotated password does
 * not change the mapping; which credential type is used still counts).
 */
import { createHash } from 'node:crypto';
import type { SourceConfig } from '../../config/sources.js';

/** Bumped when what a connector keeps in the snapshot changes shape: every snapshot is then read again in full. */
export const SNAPSHOT_FORMAT = 1;

const IGNORED = new Set(['timeout_ms', 'connect_timeout_ms', 'max_attempts', 'max_pages', 'full_read_interval', 'time_limit_seconds']);
/** Secret keys of `auth:` and of an LDAP source; credential headers (as fetch-json.ts names them). */
const SECRET = /^(token|password|client_secret|bind_password)$/;
const CREDENTIAL_HEADER = /^(authorization|proxy-authorization|cookie)$|key|token|secret|auth|password/i;

/** JSON with sorted keys (so the same config always hashes the same), secrets replaced by a mark. */
function canonical(value: unknown, parent: string | undefined): string {
  if (Array.isArray(value)) return `[${value.map((v) => canonical(v, '[]')).join(',')}]`;
  if (value !== null && typeof value === 'object') {
    const parts: string[] = [];
    for (const k of Object.keys(value).sort()) {
      if (parent === undefined && IGNORED.has(k)) continue;
      const v = (value as Record<string, unknown>)[k];
      if (v === undefined) continue;
      const secret = typeof v === 'string' && ((parent === 'headers' && CREDENTIAL_HEADER.test(k)) || ((parent === undefined || parent === 'auth') && SECRET.test(k)));
      parts.push(`${JSON.stringify(k)}:${secret ? '"(secret)"' : canonical(v, k)}`);
    }
    return `{${parts.join(',')}}`;
  }
  return JSON.stringify(value ?? null);
}

/** The hash of `source`'s config and mapping under the config's `timezone` (dates without an offset are read in it). */
export function sourceConfigHash(source: SourceConfig, timezone: string | undefined): string {
  const text = `${SNAPSHOT_FORMAT}\n${timezone ?? ''}\n${canonical(source, undefined)}`;
  return createHash('sha256').update(text).digest('hex');
}
