/**
 * Issue 29 point 4: `orgsync forget` against the emulator and the demo data. A person a source still lists is
 * refused (exit 2 naming the source); once they left the source and the sync removed their account, forget erases
 * their name, e-mail and phone from the state DB files byte for byte (db, -wal, -shm), and the next sync does not
 * bring them back.
 */
import { existsSync, readFileSync, writeFileSync } from 'node:fs';
import { join } from 'node:path';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { startTestEmulator, type TestEmulator } from '../helpers/emulator.js';
import { demoSeed, demoWorkspace } from '../daemon/support.js';
import { cli } from '../trust/cli.js';

const PERSON = { id: 'E1007', name: 'Emeka Petrov', email: 'emeka.petrov@demo-corp.test', phone: '+15125550154' };

/** Which of the person's values each file of the state DB holds (the files that exist). */
function found(dbPath: string): Record<string, string[]> {
  const out: Record<string, string[]> = {};
  for (const file of [dbPath, `${dbPath}-wal`, `${dbPath}-shm`]) {
    if (!existsSync(file)) continue;
    const bytes = readFileSync(file);
    out[file.slice(dbPath.length) || 'db'] = [PERSON.name, PERSON.email, PERSON.phone].filter((v) => bytes.includes(Buffer.from(v, 'utf8')));
  }
  return out;
}

describe('orgsync forget', { timeout: 240_000 }, () => {
  let emulator: TestEmulator;
  let dir: string;
  let config: string;
  let dbPath: string;
  beforeAll(async () => {
    emulator = await startTestEmulator(demoSeed());
    dir = demoWorkspace({ url: emulator.url });
    config = join(dir, 'orgsync.yaml');
    dbPath = join(dir, 'state', 'orgsync.db');
    const first = await cli('sync', '--config', config);
    expect(first.code).toBe(0);
  }, 120_000);
  afterAll(async () => {
    await emulator?.close();
  });

  it('refuses a person a source still lists, naming the source, and changes nothing', async () => {
    const before = readFileSync(dbPath);
    const r = await cli('forget', '--config', config, PERSON.email);
    expect(r.code).toBe(2);
    expect(r.stderr).toBe(`orgsync: forget "${PERSON.email}": source "hr" still lists this person, so the next run would bring them back; remove them from the source first\n`);
    expect(found(dbPath).db).toEqual([PERSON.name, PERSON.email, PERSON.phone]);
    expect(readFileSync(dbPath).equals(before)).toBe(true);
  });

  it('a leaver: present in the state DB before, absent from db, -wal and -shm after, and after the next sync', async () => {
    const csv = join(dir, 'members.csv');
    writeFileSync(csv, readFileSync(csv, 'utf8').split('\n').filter((l) => !l.startsWith(`${PERSON.id},`)).join('\n'));
    const removal = await cli('sync', '--config', config);
    expect(removal.code).toBe(0);
    expect(removal.stdout).toMatch(/^members +0 +0 +0 +0 +1$/m);
    // The mirror's tombstone and the record history still hold the person.
    expect(found(dbPath).db).toEqual([PERSON.name, PERSON.email, PERSON.phone]);

    const r = await cli('forget', '--config', config, PERSON.id);
    expect(r.stderr).toBe('');
    expect(r.code).toBe(0);
    expect(r.stdout).toContain(`Forgot "${PERSON.id}" (source id ${PERSON.id}, platform id `);
    expect(r.stdout).toContain('WAL truncated');
    expect(r.stdout).toContain("the platform's own record of the account (its tombstone");
    for (const v of [PERSON.name, PERSON.email, PERSON.phone]) expect(r.stdout).not.toContain(v);
    expect(Object.values(found(dbPath)).flat()).toEqual([]);

    // The history keeps ids, operations and results, and tells of the forget.
    const history = await cli('history', '--config', config, PERSON.id, '--output', 'json');
    const entries = (JSON.parse(history.stdout) as { entries: { op: string; trigger: string }[] }).entries;
    expect(entries.map((e) => `${e.trigger} ${e.op}`)).toEqual(['forget forget', 'once remove', 'once create']);
    expect(history.stdout).not.toContain('Emeka');

    const next = await cli('sync', '--config', config);
    expect(next.code).toBe(0);
    expect(Object.values(found(dbPath)).flat()).toEqual([]);
    // A full walk lists the platform's tombstone again, with the person's data: the mirror stores it blank.
    const full = await cli('mirror', 'refresh', '--full', '--config', config);
    expect(full.code).toBe(0);
    expect(Object.values(found(dbPath)).flat()).toEqual([]);
  });
});
