/**
 * Issue 19, point 3: the phone cache. libphonenumber-js verdicts are kept in the state DB between runs (a repeat run
 * of an unchanged export asks the library nothing), looked up by (raw value, phone_region), invalid ones included;
 * a raw value that changed is normalised again and the old entry leaves the cache; only a run that may write the state
 * DB saves; `plan` (read-only) writes nothing, `sync` saves. Real CSV connector, real state DB file, real CLI against
 * the emulator over loopback.
 */
import { existsSync, rmSync, writeFileSync } from 'node:fs';
import { join } from 'node:path';
import Database from 'better-sqlite3';
import { afterEach, beforeEach, describe, expect, it } from 'vitest';
import { readWithPhoneCache } from '../../src/daemon/phone-cache.js';
import { PHONE_RULES, PhoneCache } from '../../src/domain/phone-cache.js';
import { openStateDb } from '../../src/mirror/db.js';
import { TEST_BUSY_TIMEOUT_MS } from '../helpers/state-db.js';
import { PhoneCacheStore } from '../../src/mirror/phone-cache.js';
import { readDesiredState } from '../../src/sources/index.js';
import { silentLogger } from '../../src/shared/logger.js';
import { orgTestSeed, startTestEmulator, TEST_KEYS } from '../helpers/emulator.js';
import { cli } from '../helpers/cli.js';
import { instantClock, sourcesConfig } from './support.js';
import { tempDir } from '../helpers/temp.js';

// Shapes the fast path leaves to libphonenumber-js: a trunk prefix "1", an extension, letters; and an invalid value.
const MEMBERS = (e2phone: string) => `id,name,email,tel,dept
E1,Ann Lee,ann@acme.test,1 (415) 555-0132,eng
E2,Bob Roy,bob@acme.test,${e2phone},eng
E3,Cid Moe,cid@acme.test,+1 510 729 3928 ext. 7,eng
E4,Dee Fox,dee@acme.test,12345x,eng
E5,Eve Kim,eve@acme.test,(510) 729-3927,eng
`;

let dir: string;
let db: Database.Database | undefined;
beforeEach(() => {
  dir = tempDir('orgsync-phone-cache-');
  writeFileSync(join(dir, 'departments.csv'), 'id,name\neng,Engineering\n');
  writeFileSync(join(dir, 'members.csv'), MEMBERS('1 (510) 729-3926'));
});
afterEach(() => {
  db?.close();
  db = undefined;
  rmSync(dir, { recursive: true, force: true });
});

const SOURCE = {
  name: 'hr',
  type: 'csv',
  phone_region: 'US',
  departments: { file: 'departments.csv', fields: { id: 'id', name: 'name' } },
  members: { file: 'members.csv', fields: { id: 'id', display_name: 'name', email: 'email', phone: 'tel', department: 'dept' } },
};

const rows = (d: Database.Database) => d.prepare('SELECT region, raw, e164 FROM phone_cache ORDER BY raw').raw().all();

/** One run's source read with the state DB's cache, as sync does it. */
async function run(store: PhoneCacheStore, mayWrite = true) {
  const state = await readWithPhoneCache(store, () => mayWrite, silentLogger, (phoneCache) =>
    readDesiredState(sourcesConfig([SOURCE], dir), { env: {}, logger: silentLogger, clock: instantClock, phoneCache }),
  );
  return Object.fromEntries([...state.members].map((m) => [m.source_id, m.phone ?? null]));
}

describe('the phone cache', () => {
  it('keeps libphonenumber-js verdicts (invalid ones too), not the fast path’s, and a repeat run takes them from the cache', async () => {
    db = openStateDb(join(dir, 'state.db'), { busyTimeoutMs: TEST_BUSY_TIMEOUT_MS });
    const store = new PhoneCacheStore(db);
    const phones = { E1: '+14155550132', E2: '+15107293926', E3: '+15107293928', E4: null, E5: '+15107293927' };
    expect(await run(store)).toEqual(phones);
    expect(rows(db)).toEqual([
      ['US', '+1 510 729 3928 ext. 7', '+15107293928'],
      ['US', '1 (415) 555-0132', '+14155550132'],
      ['US', '1 (510) 729-3926', '+15107293926'],
      ['US', '12345x', null],
    ]);
    // The repeat run answers from the cache: a verdict planted in it is what the run returns.
    db.prepare("UPDATE phone_cache SET e164 = '+14155550000' WHERE raw = '1 (415) 555-0132'").run();
    expect(await run(store)).toEqual({ ...phones, E1: '+14155550000' });
  });

  it('invalidates an entry when the raw value changes: the new value is normalised, the old one leaves the cache', async () => {
    db = openStateDb(join(dir, 'state.db'), { busyTimeoutMs: TEST_BUSY_TIMEOUT_MS });
    const store = new PhoneCacheStore(db);
    await run(store);
    // Planted: were the stale entry used for the changed row, E2 would get this number.
    db.prepare("UPDATE phone_cache SET e164 = '+19999999999' WHERE raw = '1 (510) 729-3926'").run();
    writeFileSync(join(dir, 'members.csv'), MEMBERS('1 (650) 253-0000'));
    expect((await run(store)).E2).toBe('+16502530000');
    const raws = rows(db).map((r) => (r as unknown[])[1]);
    expect(raws).toContain('1 (650) 253-0000');
    expect(raws).not.toContain('1 (510) 729-3926');
    expect(raws).toHaveLength(4);
  });

  it('the same raw value under another phone_region is another entry', async () => {
    const cache = new PhoneCache([{ region: 'US', raw: '1 (415) 555-0132', e164: '+14155550132' }]);
    expect(cache.lookup('1 (415) 555-0132', 'US')).toBe('+14155550132');
    expect(cache.lookup('1 (415) 555-0132', 'CA')).toBeUndefined();
    expect(cache.lookup('1 (415) 555-0132', undefined)).toBeUndefined();
  });

  it('an unchanged export writes nothing; a run that may not write the state DB saves nothing', async () => {
    db = openStateDb(join(dir, 'state.db'), { busyTimeoutMs: TEST_BUSY_TIMEOUT_MS });
    const store = new PhoneCacheStore(db);
    await run(store);
    const before = db.prepare('SELECT total_changes() AS n').pluck().get() as number;
    await run(store);
    expect(db.prepare('SELECT total_changes() AS n').pluck().get()).toBe(before);
    writeFileSync(join(dir, 'members.csv'), MEMBERS('1 (650) 253-0000'));
    await run(store, false);
    expect(rows(db).map((r) => (r as unknown[])[1])).toContain('1 (510) 729-3926');
  });

  it('entries made under other rules (another libphonenumber-js) are never used and are replaced at the next save', async () => {
    db = openStateDb(join(dir, 'state.db'), { busyTimeoutMs: TEST_BUSY_TIMEOUT_MS });
    const store = new PhoneCacheStore(db);
    await run(store);
    db.prepare("UPDATE phone_cache SET e164 = '+14155550000' WHERE raw = '1 (415) 555-0132'").run();
    db.prepare("UPDATE phone_cache_rules SET rules = 'libphonenumber-js@0.0.1+fast-path.0'").run();
    expect((await run(store)).E1).toBe('+14155550132');
    expect(db.prepare('SELECT rules FROM phone_cache_rules').pluck().get()).toBe(PHONE_RULES);
    expect(rows(db)).toContainEqual(['US', '1 (415) 555-0132', '+14155550132']);
  });

  it('sync saves the cache in the state DB; plan (read-only) and sources check do not write it', async () => {
    const emulator = await startTestEmulator(orgTestSeed());
    try {
      const file = join(dir, 'orgsync.yaml');
      writeFileSync(
        file,
        `platform:\n  base_url: ${emulator.url}\n  api_key: ${TEST_KEYS.acmeRw}\nstate:\n  path: ./state.db\nsync:\n  id: hr-sync\nlog:\n  level: silent\nsources:\n  - name: hr\n    type: csv\n    phone_region: US\n    departments: { file: departments.csv, fields: { id: id, name: name } }\n    members: { file: members.csv, fields: { id: id, display_name: name, email: email, phone: tel, department: dept } }\n`,
      );
      expect((await cli('sources', 'check', '--config', file)).code).toBe(0);
      expect(existsSync(join(dir, 'state.db'))).toBe(false);
      const raws = () => {
        const d = new Database(join(dir, 'state.db'), { readonly: true });
        try {
          return d.prepare('SELECT raw FROM phone_cache ORDER BY raw').pluck().all();
        } finally {
          d.close();
        }
      };
      expect((await cli('sync', '--config', file)).code).toBe(0);
      const first = ['+1 510 729 3928 ext. 7', '1 (415) 555-0132', '1 (510) 729-3926', '12345x'];
      expect(raws()).toEqual(first);
      // A changed export: plan reads it from a snapshot and leaves the state DB as it was; the next sync saves.
      writeFileSync(join(dir, 'members.csv'), MEMBERS('1 (650) 253-0000'));
      expect((await cli('plan', '--config', file)).code).toBe(0);
      expect((await cli('sources', 'check', '--config', file)).code).toBe(0);
      expect(raws()).toEqual(first);
      expect((await cli('sync', '--config', file)).code).toBe(0);
      expect(raws()).toEqual(['+1 510 729 3928 ext. 7', '1 (415) 555-0132', '1 (650) 253-0000', '12345x']);
    } finally {
      await emulator.close();
    }
  });
});
