/**
 * LDAP read by delta through `orgsync sync` (issue 31 point 3): a real slapd, the emulator and the real state DB's
 * snapshot store together. The first sync reads the directory in full and keeps its snapshot; after entries are
 * modified, added and deleted with ldapmodify, the next sync reads by delta and brings the platform to the new
 * directory; `sync --full-read --dry-run` then finds nothing to do, so the full read agrees with the snapshot.
 */
import { spawnSync } from 'node:child_process';
import { rmSync } from 'node:fs';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { startTestEmulator, orgTestSeed, type TestEmulator } from '../helpers/emulator.js';
import { requireSlapd, startSlapd, type Slapd } from '../helpers/slapd.js';
import { tempDir } from '../helpers/temp.js';
import { platformMembers, syncJson, writeSyncConfig } from '../sources/delta-support.js';

const run = requireSlapd();
const PEOPLE = 'ou=People,dc=example,dc=org';
const person = (uid: string, title: string) => `dn: uid=${uid},${PEOPLE}\nobjectClass: inetOrgPerson\nuid: ${uid}\ncn: ${uid} Person\nsn: Person\nmail: ${uid}@example.org\ntitle: ${title}`;
const LDIF = [`dn: ${PEOPLE}\nobjectClass: organizationalUnit\nou: People`, person('ada', 'Engineer'), person('bob', 'Analyst'), person('cy', 'Designer'), person('dee', 'Writer')].join('\n\n');

describe.skipIf(!run)('LDAP by delta through orgsync sync (real slapd, state DB snapshot)', () => {
  let slapd: Slapd;
  let emulator: TestEmulator;
  let dir: string;
  let file: string;
  beforeAll(async () => {
    slapd = await startSlapd({ suffixes: ['dc=example,dc=org'], ldif: [{ text: LDIF }] });
    emulator = await startTestEmulator(orgTestSeed());
    dir = tempDir('orgsync-ldap-delta-sync-');
    const source = `  - name: dir\n    type: ldap\n    url: ${slapd.url}\n    bind_dn: ${slapd.rootDn}\n    bind_password: ${slapd.rootPassword}\n    base_dn: dc=example,dc=org\n    members:\n      base_dn: ${PEOPLE}\n`;
    file = writeSyncConfig(dir, emulator, source);
  });
  afterAll(async () => {
    await slapd?.stop();
    await emulator?.close();
    if (dir) rmSync(dir, { recursive: true, force: true });
  });

  const titles = async () => Object.fromEntries([...(await platformMembers(emulator))].map(([id, m]) => [id, (m as { title?: string }).title ?? '']));

  it('reads in full first, then by delta; a full read then finds the platform in sync', async () => {
    const first = await syncJson(file, {});
    expect([first.code, first.stderr]).toEqual([0, '']);
    expect(first.doc.source_reads).toEqual([{ source: 'dir', mode: 'full', reason: 'first read', records_read: 4 }]);
    expect(await titles()).toEqual({ ada: 'Engineer', bob: 'Analyst', cy: 'Designer', dee: 'Writer' });

    const add = person('eve', 'Lawyer').replace('\n', '\nchangetype: add\n');
    const modify = `dn: uid=ada,${PEOPLE}\nchangetype: modify\nreplace: title\ntitle: Staff Engineer\n\ndn: uid=bob,${PEOPLE}\nchangetype: delete\n\n${add}\n`;
    const r = spawnSync('ldapmodify', ['-x', '-H', slapd.url, '-D', slapd.rootDn, '-w', slapd.rootPassword], { input: modify, encoding: 'utf8' });
    expect([r.status, r.stderr]).toEqual([0, '']);

    // One of four members gone is over the default delete threshold's 20%: allowed here, as an operator would.
    const second = await syncJson(file, {}, '--allow-deletes', '1');
    expect([second.code, second.stderr]).toEqual([0, '']);
    expect(second.doc.source_reads?.map((s) => [s.source, s.mode])).toEqual([['dir', 'delta']]);
    const after = await titles();
    expect(after).toEqual({ ada: 'Staff Engineer', cy: 'Designer', dee: 'Writer', eve: 'Lawyer' });

    const full = await syncJson(file, {}, '--full-read', '--dry-run');
    expect([full.code, full.stderr]).toEqual([0, '']);
    expect(full.doc.source_reads).toEqual([{ source: 'dir', mode: 'full', reason: '--full-read', records_read: 4 }]);
    expect(full.doc.result).toBe('in_sync');
  });
});
