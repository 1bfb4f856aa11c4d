/**
 * `orgsync sources check` on an LDAP source, step by step (issue 43): connect, TLS, bind, a search of the members
 * filter, and a read of the watermark attribute a delta read needs. Each step that passes is reported with what it
 * found; the first that fails throws its SOURCE_UNREADABLE error (details.step names it), so the operator knows which
 * step to fix. Nothing is written.
 */
import type { LdapSourceConfig } from '../../config/sources.js';
import { isOrgsyncError, OrgsyncError } from '../../shared/errors.js';
import type { SourceReadContext } from '../context.js';
import { LDAP_PROFILES } from './profiles.js';
import { openLdap, stepFailure, type LdapCheckStep } from './connect.js';
import { searcher } from './read-ldap.js';
import { keyAttribute } from './snapshot-entry.js';
import { changedSince, takeWatermark, type LdapWatermark } from './watermark.js';

/** One step of the check: passed (with what it found) or not needed for this source. */
export interface LdapCheckOutcome {
  step: LdapCheckStep;
  result: 'ok' | 'skipped';
  detail: string;
}

/** Runs the steps in order; returns them all when every one passed, else throws the first failure. */
export async function checkLdapSource(source: LdapSourceConfig, ctx: SourceReadContext, passed: (o: LdapCheckOutcome) => void): Promise<void> {
  const url = new URL(source.url);
  const secure = url.protocol === 'ldaps:';
  const { client, failure } = await openLdap(source, ctx);
  try {
    passed({ step: 'connect', result: 'ok', detail: `${url.hostname}:${url.port || (secure ? '636' : '389')}` });
    const ca = failure.caPath ? `ca_file ${failure.caPath}` : "the system's CAs";
    const name = source.tls_server_name ? `, name ${source.tls_server_name} (tls_server_name)` : '';
    if (secure || source.start_tls) passed({ step: 'TLS', result: 'ok', detail: `${secure ? 'ldaps://' : 'StartTLS'}, the certificate verified with ${ca}${name}` });
    else passed({ step: 'TLS', result: 'skipped', detail: 'ldap:// without start_tls: the connection is not encrypted' });
    passed({ step: 'bind', result: 'ok', detail: source.bind_dn ? `as ${source.bind_dn}` : 'anonymous (no bind_dn)' });
    const search = searcher(client, failure, ctx);
    const m = source.members;
    const base = m.base_dn ?? source.base_dn;
    const filter = m.filter ?? LDAP_PROFILES[source.profile].memberFilter;
    const key = keyAttribute(source.profile);
    let first: string | undefined;
    await stepOf('search of the members filter', () =>
      search('members', base, filter, m.scope, [key], (e) => {
        first = e.name;
        return true;
      }),
    );
    if (first === undefined) {
      const who = source.bind_dn ? `the account "${source.bind_dn}" (bind_dn)` : 'an anonymous bind';
      throw stepFailure(source, 'search of the members filter', `members: the search under "${base}" with ${filter} found no entry: check ${m.base_dn ? 'members.base_dn' : 'base_dn'} and ${m.filter ? 'members.filter' : `the ${source.profile} profile's filter (members.filter)`}, and that ${who} may read these entries`);
    }
    passed({ step: 'search of the members filter', result: 'ok', detail: `${filter} under "${base}" finds entries (the first: ${first})` });
    if (!source.delta) {
      passed({ step: 'read of the watermark attribute', result: 'skipped', detail: 'delta: false (every run reads every member)' });
      return;
    }
    const mark = await stepOf('read of the watermark attribute', () => takeWatermark(client, base, ctx.clock));
    const lowest: LdapWatermark = mark.by === 'uSNChanged' ? { ...mark, usn: '0' } : { by: 'modifyTimestamp', at: '19700101000000Z' };
    let readable = false;
    await stepOf('read of the watermark attribute', () =>
      search('members', base, changedSince(filter, lowest), m.scope, [mark.by], () => {
        readable = true;
        return true;
      }),
    );
    if (!readable) {
      const who = source.bind_dn ? `the account "${source.bind_dn}" (bind_dn)` : 'an anonymous bind';
      throw stepFailure(
        source,
        'read of the watermark attribute',
        `members: no member entry matched ${mark.by}>=${mark.by === 'uSNChanged' ? '0' : '19700101000000Z'}: ${who} may not read ${mark.by}, so delta reads cannot find changes: grant it read access to ${mark.by} on the member entries, or set delta: false`,
      );
    }
    passed({ step: 'read of the watermark attribute', result: 'ok', detail: mark.by === 'uSNChanged' ? `uSNChanged (highestCommittedUSN ${mark.usn})` : 'modifyTimestamp' });
  } finally {
    await client.unbind().catch(() => {});
  }
}

/** Runs one step's operation; a failure that names no step of its own is this step's. */
async function stepOf<T>(step: LdapCheckStep, op: () => Promise<T>): Promise<T> {
  try {
    return await op();
  } catch (err) {
    if (!isOrgsyncError(err) || err.details?.step !== undefined) throw err;
    throw new OrgsyncError(err.code, err.message, { cause: err.cause, details: { ...err.details, step } });
  }
}
