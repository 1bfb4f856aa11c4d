import { afterEach, describe, expect, it } from 'vitest';
import type Database from 'better-sqlite3';
import { openStateDb } from '../../src/mirror/db.js';
import { migrations, runMigrations } from '../../src/mirror/migrations/index.js';
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

describe('record history as stored (issue 42)', () => {
  it("a create's fields are stored as their values alone, an update's as [old, new], and read back as old -> new", () => {
    db = openStateDb(':memory:', { busyTimeoutMs: TEST_BUSY_TIMEOUT_MS });
    const store = new RecordHistory(db);
    store.recordResults(
      [
        { change: change({ id: 'members:create:u1', op: 'create', platformId: undefined, fields: { display_name: 'Ann Lee', email: 'ann@acme.test' } }), status: 'applied', platformId: 'a1' },
        { change: change({ fields: { title: 'CTO', phone: '' }, before: { title: 'CEO' } }), status: 'applied' },
      ],
      { runId: 'r1', trigger: 'once', at: 1000 },
    );
    expect(db.prepare('SELECT fields FROM record_history ORDER BY seq').pluck().all()).toEqual(['{"display_name":"Ann Lee","email":"a***@acme.test"}', '{"title":["CEO","CTO"],"phone":""}']);
    // One batch row carries the run, trigger and time of both entries.
    expect(db.prepare('SELECT at, run_id, trigger, approval_digest FROM history_batches').all()).toEqual([{ at: 1000, run_id: 'r1', trigger: 'once', approval_digest: null }]);
    expect(store.entries({ sourceIds: ['u1'], platformIds: [] }).map((e) => e.fields)).toEqual([{ title: { old: 'CEO', new: 'CTO' }, phone: { old: null, new: '' } }, { display_name: { old: null, new: 'Ann Lee' }, email: { old: null, new: 'a***@acme.test' } }]);
  });

  it('migration 081 keeps every entry of a state DB written before it, with its run, time, approval and fields of either older form', () => {
    db = openStateDb(':memory:', { busyTimeoutMs: TEST_BUSY_TIMEOUT_MS, migrations: migrations.filter((m) => m.version < 81) });
    const insert = db.prepare(
      `INSERT INTO record_history (at, entity, source_id, platform_id, run_id, trigger, op, description, fields, result, message, approval_digest) VALUES (?, 'members', ?, ?, ?, ?, ?, ?, ?, ?, ?, ?)`,
    );
    insert.run(1000, 'u1', 'a1', 'r1', 'once', 'create', 'create member "Ann"', '{"display_name":{"old":null,"new":"Ann"}}', 'applied', null, null);
    insert.run(1000, 'u2', 'a2', 'r1', 'once', 'create', 'create member "Bo"', '{"display_name":[null,"Bo"]}', 'applied', null, null);
    insert.run(5000, 'u1', 'a1', 'r2', 'schedule', 'update', 'update member "Ann"', '{"title":["CEO","CTO"]}', 'failed', 'HTTP 409', 'sha256:d1');
    runMigrations(db, migrations, ':memory:');
    const store = new RecordHistory(db);
    expect(store.entries({ sourceIds: ['u1'], platformIds: [] })).toEqual([
      { at: new Date(5000).toISOString(), entity: 'members', sourceId: 'u1', platformId: 'a1', runId: 'r2', trigger: 'schedule', op: 'update', description: 'update member "Ann"', fields: { title: { old: 'CEO', new: 'CTO' } }, result: 'failed', message: 'HTTP 409', approvalDigest: 'sha256:d1' },
      { at: new Date(1000).toISOString(), entity: 'members', sourceId: 'u1', platformId: 'a1', runId: 'r1', trigger: 'once', op: 'create', description: 'create member "Ann"', fields: { display_name: { old: null, new: 'Ann' } }, result: 'applied', message: null, approvalDigest: null },
    ]);
    expect(store.entries({ sourceIds: [], platformIds: ['a2'] }).map((e) => [e.runId, e.fields])).toEqual([['r1', { display_name: { old: null, new: 'Bo' } }]]);
    expect(db.prepare('SELECT count(*) FROM history_batches').pluck().get()).toBe(2);
    // New entries continue the sequence; pruning drops the older batch's two entries and the batch.
    store.recordResults([{ change: change({}), status: 'applied' }], { runId: 'r3', trigger: 'schedule', at: 9000 });
    expect(db.prepare('SELECT max(seq) FROM record_history').pluck().get()).toBe(4);
    expect(store.prune(2000)).toBe(2);
    expect(db.prepare('SELECT run_id FROM history_batches ORDER BY id').pluck().all()).toEqual(['r2', 'r3']);
  });
});
