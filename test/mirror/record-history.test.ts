import { afterEach, describe, expect, it } from 'vitest';
import type Database from 'better-sqlite3';
import { openStateDb } from '../../src/mirror/db.js';
import { TEST_BUSY_TIMEOUT_MS } from '../helpers/state-db.js';
import { maskContact, maskContactsIn, RecordHistory } from '../../src/mirror/record-history.js';
import type { Change } from '../../src/domain/index.js';

let db: Database.Database | undefined;
afterEach(() => {
  db?.close();
  db = undefined;
});

const change = (p: Partial<Change>): Change => ({ id: 'members:update:u1', entity: 'members', op: 'update', thirdId: 'u1', platformId: 'a1', description: 'x', reason: 'y', fields: {}, dependsOn: [], request: { method: 'PATCH', path: '/org/members/a1' }, ...p });

describe('record history store', () => {
  it('masks e-mails and phone numbers in fields, descriptions and messages', () => {
    expect(maskContact('ann.lee@acme.test')).toBe('a***@acme.test');
    expect(maskContact('+4915112345678')).toBe('+49*********78');
    expect(maskContactsIn('create member "Ann" <ann.lee@acme.test>, phone +4915112345678')).toBe('create member "Ann" <a***@acme.test>, phone +49*********78');
    db = openStateDb(':memory:', { busyTimeoutMs: TEST_BUSY_TIMEOUT_MS });
    const store = new RecordHistory(db);
    store.recordResults(
      [
        { change: change({ description: 'set phone of ann@acme.test', fields: { phone: '+4915112345678', title: 'CTO' }, before: { phone: '+4915100000000', title: 'CEO' } }), status: 'failed', message: 'HTTP 409: ann@acme.test taken' },
        { change: change({ id: 'members:create:u2', thirdId: 'u2' }), status: 'not_started' },
      ],
      { runId: 'r1', trigger: 'once', at: 1000 },
    );
    const [e, ...rest] = store.entries({ sourceIds: ['u1', 'u2'], platformIds: [] });
    expect(rest).toEqual([]);
    expect(e).toMatchObject({ result: 'failed', description: 'set phone of a***@acme.test', message: 'HTTP 409: a***@acme.test taken', fields: { phone: { old: '+49*********00', new: '+49*********78' }, title: { old: 'CEO', new: 'CTO' } } });
  });

  it('prunes entries older than a time and filters by since, newest first', () => {
    db = openStateDb(':memory:', { busyTimeoutMs: TEST_BUSY_TIMEOUT_MS });
    const store = new RecordHistory(db);
    for (const at of [1000, 2000, 3000]) store.recordResults([{ change: change({}), status: 'applied' }], { runId: `r${at}`, trigger: 'schedule', at });
    expect(store.entries({ sourceIds: ['u1'], platformIds: [] }).map((e) => e.runId)).toEqual(['r3000', 'r2000', 'r1000']);
    expect(store.entries({ sourceIds: [], platformIds: ['a1'] }, { since: 2000 }).map((e) => e.runId)).toEqual(['r3000', 'r2000']);
    expect(store.prune(2000)).toBe(1);
    expect(store.count()).toBe(2);
  });
});
