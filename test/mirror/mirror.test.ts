import { afterEach, beforeEach, describe, expect, it } from 'vitest';
import { rmSync } from 'node:fs';
import { join } from 'node:path';
import type Database from 'better-sqlite3';
import { openStateDb } from '../../src/mirror/db.js';
import { TEST_BUSY_TIMEOUT_MS } from '../helpers/state-db.js';
import { Mirror } from '../../src/mirror/mirror.js';
import { migrations, runMigrations, type Migration } from '../../src/mirror/migrations/index.js';
import type { PlatformDepartment, PlatformMember, PlatformPosition } from '../../src/domain/entities.js';
import { tempDir } from '../helpers/temp.js';

const dep = (id: string, over: Partial<PlatformDepartment> = {}): PlatformDepartment => ({
  id,
  parent_id: 'root',
  name: `Dept ${id}`,
  path: `/Acme/Dept ${id}`,
  depth: 1,
  sort_order: 0,
  third_department_id: `T-${id}`,
  member_count: 0,
  metadata: { managed_by: 'orgsync' },
  status: 'active',
  updated_at: '2026-01-01T00:00:00.000Z',
  ...over,
});
const mem = (id: string, over: Partial<PlatformMember> = {}): PlatformMember => ({
  account_id: id,
  display_name: `M ${id}`,
  email: `${id}@example.com`,
  phone: '',
  third_user_id: `E-${id}`,
  title: '',
  department_id: '',
  status: 'active',
  roles: ['tenant.member'],
  updated_at: '2026-01-01T00:00:00.000Z',
  ...over,
});
const pos = (id: string, over: Partial<PlatformPosition> = {}): PlatformPosition => ({
  id,
  name: `P ${id}`,
  description: '',
  sort_order: 0,
  third_position_id: `P-${id}`,
  is_system: false,
  member_count: 0,
  agent_count: 0,
  metadata: {},
  status: 'active',
  updated_at: '2026-01-01T00:00:00.000Z',
  ...over,
});

describe('state DB', () => {
  let dir: string;
  beforeEach(() => {
    dir = tempDir('orgsync-mirror-');
  });
  afterEach(() => rmSync(dir, { recursive: true, force: true }));

  it('opens a file in WAL with synchronous=FULL and a 2 MB page cache, and tracks migrations in user_version', () => {
    const db = openStateDb(join(dir, 'sub', 'state.db'), { busyTimeoutMs: TEST_BUSY_TIMEOUT_MS });
    expect(db.pragma('journal_mode', { simple: true })).toBe('wal');
    expect(db.pragma('synchronous', { simple: true })).toBe(2); // FULL
    // SQLite's default, not better-sqlite3's 16 MB (issue 31: 16 MB of an initial sync's peak RSS).
    expect(db.pragma('cache_size', { simple: true })).toBe(-2000);
    expect(db.pragma('busy_timeout', { simple: true })).toBe(TEST_BUSY_TIMEOUT_MS); // as passed: state.busy_timeout
    expect(db.pragma('user_version', { simple: true })).toBe(Math.max(...migrations.map((m) => m.version)));
    db.close();
    // Re-opening applies nothing twice.
    const again = openStateDb(join(dir, 'sub', 'state.db'), { busyTimeoutMs: TEST_BUSY_TIMEOUT_MS });
    expect(runMigrations(again, migrations)).toEqual([]);
    again.close();
  });

  it('applies only newer migrations, each with its version', () => {
    const db = openStateDb(':memory:', { busyTimeoutMs: TEST_BUSY_TIMEOUT_MS, migrations: migrations.slice(0, 1) });
    expect(db.pragma('user_version', { simple: true })).toBe(1);
    const extra: Migration = { version: 900, name: 'test', sql: 'CREATE TABLE t10 (x INTEGER)' };
    const expected = [...migrations.slice(1).map((m) => m.version), 900].sort((a, b) => a - b);
    expect(runMigrations(db, [...migrations, extra])).toEqual(expected);
    expect(db.pragma('user_version', { simple: true })).toBe(expected.at(-1));
  });

  it('a failing migration leaves the previous version, and says which failed', () => {
    const db = openStateDb(':memory:', { busyTimeoutMs: TEST_BUSY_TIMEOUT_MS });
    const v = db.pragma('user_version', { simple: true }) as number;
    const bad: Migration = { version: 901, name: 'broken', sql: 'CREATE TABLE ok1 (x); CREATE TABLE nope (' };
    expect(() => runMigrations(db, [...migrations, bad])).toThrow(/migration 901 broken failed/);
    expect(db.pragma('user_version', { simple: true })).toBe(v);
    expect(db.prepare("SELECT count(*) FROM sqlite_master WHERE name = 'ok1'").pluck().get()).toBe(0);
  });

  it('refuses a DB newer than this orgsync', () => {
    const db = openStateDb(':memory:', { busyTimeoutMs: TEST_BUSY_TIMEOUT_MS });
    db.pragma('user_version = 5000');
    expect(() => runMigrations(db, migrations)).toThrow(/newer than this orgsync knows/);
  });

  it('refuses duplicate migration versions', () => {
    const db = openStateDb(':memory:', { busyTimeoutMs: TEST_BUSY_TIMEOUT_MS, migrations: [] });
    expect(() => runMigrations(db, [...migrations, { ...migrations[0]!, name: 'dup' }])).toThrow(/defined twice/);
  });
});

describe('Mirror', () => {
  let db: Database.Database;
  let mirror: Mirror;
  beforeEach(() => {
    db = openStateDb(':memory:', { busyTimeoutMs: TEST_BUSY_TIMEOUT_MS });
    mirror = new Mirror(db);
  });
  afterEach(() => db.close());

  it('stores every field in its column and only the fields it does not know in extra (issue 42: no second copy)', () => {
    mirror.applyPage('positions', [pos('p1', { is_system: true, future: 'x' } as Partial<PlatformPosition>), pos('p2')]);
    expect(mirror.get('positions', 'p1')).toEqual({ ...pos('p1', { is_system: true }), future: 'x' });
    expect(mirror.get('positions', 'p2')).toEqual(pos('p2'));
    const rows = db.prepare('SELECT * FROM mirror_positions ORDER BY id').all() as Record<string, unknown>[];
    expect(rows[0]).toMatchObject({ id: 'p1', is_system: 1, third_position_id: 'P-p1', status: 'active', metadata: '{}', extra: '{"future":"x"}' });
    expect(rows[1]).toMatchObject({ id: 'p2', extra: null });
    expect(Object.keys(rows[0]!)).not.toContain('raw');
  });

  it('applies pages idempotently and keeps tombstones with their status', () => {
    mirror.applyPage('members', [mem('a'), mem('b')]);
    mirror.applyPage('members', [mem('a'), mem('b')]);
    mirror.applyPage('members', [mem('b', { status: 'left', updated_at: '2026-01-02T00:00:00.000Z' })]);
    expect(mirror.counts()).toEqual([
      { entity: 'members', status: 'active', count: 1 },
      { entity: 'members', status: 'left', count: 1 },
    ]);
  });

  it('does not let an older version overwrite a newer one', () => {
    mirror.applyPage('departments', [dep('d1', { name: 'New', updated_at: '2026-01-02T00:00:00.000Z' })]);
    mirror.applyPage('departments', [dep('d1', { name: 'Old', updated_at: '2026-01-01T00:00:00.000Z' })]);
    expect(mirror.get('departments', 'd1')!.name).toBe('New');
  });

  it('a completed full walk removes what it did not see; an incomplete one removes nothing', () => {
    mirror.applyPage('departments', [dep('d1'), dep('d2'), dep('d3', { status: 'deleted' })]);
    const interrupted = mirror.beginWalk('departments', 'full', '2026-01-03T00:00:00.000Z');
    mirror.applyPage('departments', [dep('d1')], interrupted);
    expect(mirror.all('departments').map((d) => d.id)).toEqual(['d1', 'd2', 'd3']);
    expect(mirror.state('departments').watermark).toBeUndefined();

    const walk = mirror.beginWalk('departments', 'full', '2026-01-04T00:00:00.000Z');
    // The interrupted walk's handle cannot complete any more.
    expect(mirror.completeWalk(interrupted, 'x', 'y')).toEqual({ removed: 0, completed: false });
    // A page older than the stored version still counts as seen.
    mirror.applyPage('departments', [dep('d1', { updated_at: '2025-12-31T00:00:00.000Z' }), dep('d4')], walk);
    expect(mirror.completeWalk(walk, '2026-01-04T00:00:00.000Z', '2026-01-04T00:00:05.000Z')).toEqual({ removed: 2, completed: true });
    expect(mirror.all('departments').map((d) => d.id)).toEqual(['d1', 'd4']);
    expect(mirror.state('departments')).toEqual({
      entity: 'departments',
      watermark: '2026-01-04T00:00:00.000Z',
      lastFullWalkAt: '2026-01-04T00:00:00.000Z',
      lastIncrementalAt: undefined,
      lastWalk: { kind: 'full', startedAt: '2026-01-04T00:00:00.000Z', completedAt: '2026-01-04T00:00:05.000Z' },
    });
  });

  it('an incremental walk upserts and advances the watermark without removing anything', () => {
    mirror.applyPage('positions', [pos('p1'), pos('p2')]);
    const walk = mirror.beginWalk('positions', 'incremental', '2026-01-05T00:00:00.000Z');
    mirror.applyPage('positions', [pos('p2', { status: 'deleted', updated_at: '2026-01-04T00:00:00.000Z' })], walk);
    expect(mirror.completeWalk(walk, '2026-01-05T00:00:00.000Z', '2026-01-05T00:00:01.000Z')).toEqual({ removed: 0, completed: true });
    expect(mirror.all('positions').map((p) => [p.id, p.status])).toEqual([['p1', 'active'], ['p2', 'deleted']]);
    expect(mirror.state('positions').lastIncrementalAt).toBe('2026-01-05T00:00:00.000Z');
    expect(mirror.state('positions').lastFullWalkAt).toBeUndefined();
  });

  it('records write outcomes at once: create, patch, delete', () => {
    mirror.recordOutcome({ entity: 'members', record: mem('m1') });
    mirror.recordOutcome({ entity: 'members', record: mem('m1', { title: 'CTO', updated_at: '2026-01-02T00:00:00.000Z' }) });
    expect(mirror.get('members', 'm1')!.title).toBe('CTO');
    mirror.recordOutcome({ entity: 'members', removedId: 'm1' });
    expect(mirror.get('members', 'm1')!.status).toBe('left');
    mirror.recordOutcome({ entity: 'departments', record: dep('d9') });
    mirror.recordOutcome({ entity: 'departments', removedId: 'd9' });
    expect(mirror.get('departments', 'd9')!.status).toBe('deleted');
  });

  it('a record written during a full walk counts as seen by it', () => {
    const walk = mirror.beginWalk('positions', 'full', '2026-01-05T00:00:00.000Z');
    mirror.applyPage('positions', [pos('p1')], walk);
    mirror.recordOutcome({ entity: 'positions', record: pos('p-new') });
    mirror.completeWalk(walk, '2026-01-05T00:00:00.000Z', '2026-01-05T00:00:01.000Z');
    expect(mirror.all('positions').map((p) => p.id)).toEqual(['p-new', 'p1']);
  });

  it('snapshot indexes by id and third id, a live record winning over tombstones', () => {
    mirror.applyPage('members', [
      mem('old', { third_user_id: 'E7', status: 'left', updated_at: '2026-01-03T00:00:00.000Z' }),
      mem('new', { third_user_id: 'E7' }),
      mem('none', { third_user_id: '' }),
      mem('t1', { third_user_id: 'E8', status: 'left', updated_at: '2026-01-01T00:00:00.000Z' }),
      mem('t2', { third_user_id: 'E8', status: 'left', updated_at: '2026-01-02T00:00:00.000Z' }),
    ]);
    mirror.applyPage('departments', [dep('d1')]);
    mirror.applyPage('positions', [pos('p1')]);
    const snap = mirror.snapshot();
    // Members are read by key and by scan (the snapshot holds departments and positions).
    expect([...mirror.scanMembers()]).toHaveLength(5);
    expect(mirror.byThirdId('members', 'E7')!.account_id).toBe('new');
    expect(mirror.byThirdId('members', 'E8')!.account_id).toBe('t2');
    expect(mirror.byThirdId('members', '')).toBeUndefined();
    expect(snap.departments.byThirdId.get('T-d1')!.id).toBe('d1');
    expect(snap.positions.byId.get('p1')!.name).toBe('P p1');
  });
});

describe('Mirror as a metrics probe', () => {
  it('reports watermarks in ms and records by status', () => {
    const db = openStateDb(':memory:', { busyTimeoutMs: TEST_BUSY_TIMEOUT_MS });
    const mirror = new Mirror(db);
    expect(mirror.watermarks()).toEqual({ positions: undefined, departments: undefined, members: undefined });
    const walk = mirror.beginWalk('members', 'full', '2026-01-04T00:00:00.000Z');
    mirror.applyPage('members', [mem('a')], walk);
    mirror.completeWalk(walk, '2026-01-04T00:00:00.000Z', '2026-01-04T00:00:01.000Z');
    expect(mirror.watermarks().members).toBe(Date.UTC(2026, 0, 4));
    expect(mirror.records()).toEqual([{ entity: 'members', status: 'active', count: 1 }]);
    db.close();
  });
});
