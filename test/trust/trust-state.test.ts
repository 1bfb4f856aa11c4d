/** The trust state store: migration 015, a DB migrated past it before it existed, the commit and the signing key. */
import { describe, expect, it } from 'vitest';
import { openStateDb } from '../../src/mirror/db.js';
import { TEST_BUSY_TIMEOUT_MS } from '../helpers/state-db.js';
import { migrations } from '../../src/mirror/migrations/index.js';
import { TrustStateStore } from '../../src/mirror/trust-state.js';

describe('TrustStateStore', () => {
  it('records an accepted run in one commit and replaces the missing set', () => {
    const db = openStateDb(':memory:', { busyTimeoutMs: TEST_BUSY_TIMEOUT_MS });
    const store = new TrustStateStore(db, 'hr-sync');
    expect(store.snapshotCounts()).toEqual({});
    expect(store.scope()).toBeUndefined();
    store.commit({ at: '2026-01-01T00:00:00.000Z', snapshot: { members: 10, departments: 2 }, missing: [{ entity: 'members', key: 'u9', firstMissingAt: '2026-01-01T00:00:00.000Z', runs: 1 }], scope: { fingerprint: 'f1', scope: { hr: '{"type":"csv"}' } } });
    store.commit({ at: '2026-01-02T00:00:00.000Z', snapshot: { members: 9 }, missing: [{ entity: 'members', key: 'u8', firstMissingAt: '2026-01-02T00:00:00.000Z', runs: 1 }] });
    expect(store.snapshotCounts()).toEqual({ members: 9, departments: 2 });
    expect([...store.missing().keys()]).toEqual(['members:u8']);
    expect(store.scope()).toEqual({ fingerprint: 'f1', scope: { hr: '{"type":"csv"}' }, recordedAt: '2026-01-01T00:00:00.000Z' });
    // Another sync id sees none of it.
    expect(new TrustStateStore(db, 'other').snapshotCounts()).toEqual({});
    const key = store.planSigningKey();
    expect(key).toHaveLength(32);
    expect(store.planSigningKey().equals(key)).toBe(true);
    expect(new TrustStateStore(db, 'other').planSigningKey().equals(key)).toBe(false);
    db.close();
  });

  it('works on a state DB that reached a later version before migration 015 existed', () => {
    const db = openStateDb(':memory:', { busyTimeoutMs: TEST_BUSY_TIMEOUT_MS, migrations: migrations.filter((m) => m.version !== 15) });
    expect(db.pragma('user_version', { simple: true })).toBe(Math.max(...migrations.map((m) => m.version)));
    const store = new TrustStateStore(db, 'hr-sync');
    store.commit({ at: '2026-01-01T00:00:00.000Z', snapshot: { members: 1 }, missing: [] });
    expect(store.snapshotCounts()).toEqual({ members: 1 });
    db.close();
  });
});
