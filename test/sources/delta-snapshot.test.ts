/**
 * The parts of delta reads below the connectors (issue 31): the read-mode decision table, the hash of a source's
 * config and mapping, and the source snapshot store of the state DB (a real SQLite file: staged reads committed in
 * one transaction, a full read replacing the snapshot, a delta applied to it, sources no longer configured dropped).
 */
import { TEST_BUSY_TIMEOUT_MS } from '../helpers/state-db.js';
import { rmSync } from 'node:fs';
import { join } from 'node:path';
import { afterEach, beforeEach, describe, expect, it } from 'vitest';
import { parseConfig } from '../../src/config/load.js';
import { openStateDb } from '../../src/mirror/db.js';
import { forgetPerson } from '../../src/mirror/forget.js';
import { SourceSnapshotStore } from '../../src/mirror/source-snapshot.js';
import { sourceConfigHash } from '../../src/sources/delta/config-hash.js';
import { decideReadMode, formatDuration, type ReadModeFacts } from '../../src/sources/delta/read-mode.js';
import { tempDir } from '../helpers/temp.js';

const HOUR = 3_600_000;

describe('read mode decision table', () => {
  const facts = (over: Partial<ReadModeFacts>): ReadModeFacts => ({
    head: { configHash: 'h1', fullReadAt: 0, readAt: 10 * HOUR },
    configHash: 'h1',
    now: 12 * HOUR,
    fullReadIntervalMs: 24 * HOUR,
    fullRead: false,
    ...over,
  });
  it('no snapshot: a full first read; a changed hash: config changed (before the other rules)', () => {
    expect(decideReadMode(facts({ head: undefined, fullRead: true }))).toEqual({ mode: 'full', reason: 'first read' });
    expect(decideReadMode(facts({ configHash: 'h2', fullRead: true }))).toEqual({ mode: 'full', reason: 'config changed' });
  });
  it('full_read_interval: full from the moment the last full read is that old, delta a millisecond before', () => {
    expect(decideReadMode(facts({ now: 24 * HOUR }))).toEqual({ mode: 'full', reason: 'full_read_interval 24h elapsed' });
    expect(decideReadMode(facts({ now: 24 * HOUR - 1 }))).toEqual({ mode: 'delta', reason: 'changes since the read of 1970-01-01T10:00:00.000Z' });
  });
  it('--full-read: full; otherwise delta', () => {
    expect(decideReadMode(facts({ fullRead: true }))).toEqual({ mode: 'full', reason: '--full-read' });
    expect(decideReadMode(facts({})).mode).toBe('delta');
  });
  it('durations are written as the config writes them', () => {
    expect([formatDuration(24 * HOUR), formatDuration(7 * 24 * HOUR), formatDuration(90 * 60_000), formatDuration(1500), formatDuration(1)]).toEqual(['24h', '7d', '90m', '1500ms', '1ms']);
  });
});

describe('config hash of a source', () => {
  const hash = (extra: string, timezone?: string, env = 'secret-1') => {
    const c = parseConfig(
      `platform: { base_url: "http://127.0.0.1:1" }\ntimezone: ${timezone ?? 'UTC'}\nsources:\n  - name: entra\n    preset: microsoft-graph\n    auth: { type: bearer, token: "\${T}" }\n${extra}`,
      '/etc/orgsync.yaml',
      { T: env },
    );
    return sourceConfigHash(c.sources[0]!, c.timezone);
  };
  it('changes with the mapping, the scope, the URL and the timezone', () => {
    const base = hash('');
    expect(hash('    members: { fields: { title: department } }\n')).not.toBe(base);
    expect(hash('    members: { exclude: [] }\n')).not.toBe(base);
    expect(hash('    phone_region: DE\n')).not.toBe(base);
    expect(hash('    base_url: https://graph.microsoft.us\n')).not.toBe(base);
    expect(hash('', 'Europe/Berlin')).not.toBe(base);
  });
  it('not with timeouts, retries, the interval or a rotated secret', () => {
    const base = hash('');
    expect(hash('    timeout_ms: 5000\n    max_attempts: 5\n    max_pages: 10\n    full_read_interval: 12h\n')).toBe(base);
    expect(hash('', undefined, 'secret-2')).toBe(base);
  });
});

describe('source snapshot store', () => {
  let dir: string;
  beforeEach(() => {
    dir = tempDir('orgsync-snapshot-');
  });
  afterEach(() => rmSync(dir, { recursive: true, force: true }));

  it('a full read replaces the snapshot, a delta is applied to it, both with their head in one commit', () => {
    const db = openStateDb(join(dir, 'state.db'), { busyTimeoutMs: TEST_BUSY_TIMEOUT_MS });
    try {
      const store = new SourceSnapshotStore(db);
      // 4,500 records: more than one chunk of the walk.
      const full = store.stage('a');
      for (let i = 0; i < 4500; i++) full.put('members', { key: `k${String(i).padStart(5, '0')}`, raw: { id: i } });
      full.flush();
      // Nothing is visible before the commit.
      expect([store.head('a'), store.count('a')]).toEqual([undefined, 0]);
      store.commit([{ source: 'a', mode: 'full', watermark: 'w1', configHash: 'h', at: 1000 }], ['a']);
      expect(store.head('a')).toEqual({ source: 'a', watermark: 'w1', configHash: 'h', fullReadAt: 1000, readAt: 1000 });
      const keys = [...store.records('a', 'members')].map((r) => r.key);
      expect(keys).toHaveLength(4500);
      expect(keys).toEqual([...keys].sort());

      const delta = store.stage('a');
      delta.put('members', { key: 'k00001', raw: { id: 1, changed: true } });
      delta.put('members', { key: 'new', raw: { id: 'new' } });
      delta.remove('members', 'k00002');
      delta.flush();
      store.commit([{ source: 'a', mode: 'delta', watermark: 'w2', configHash: 'h', at: 2000 }], ['a']);
      expect(store.head('a')).toEqual({ source: 'a', watermark: 'w2', configHash: 'h', fullReadAt: 1000, readAt: 2000 });
      const after = new Map([...store.records('a', 'members')].map((r) => [r.key, r.raw]));
      expect([after.size, after.get('k00001'), after.get('new'), after.has('k00002')]).toEqual([4500, { id: 1, changed: true }, { id: 'new' }, false]);
      const staged = db.prepare('SELECT count(*) FROM source_snapshot_staging').pluck().get();
      expect(staged).toBe(0);
    } finally {
      db.close();
    }
  });

  it('a read that never committed leaves nothing visible, and the next read of the source starts clean', () => {
    const db = openStateDb(join(dir, 'state.db'), { busyTimeoutMs: TEST_BUSY_TIMEOUT_MS });
    try {
      const store = new SourceSnapshotStore(db);
      const failed = store.stage('a');
      failed.put('members', { key: 'stale', raw: {} });
      failed.flush();
      const next = store.stage('a');
      next.put('members', { key: 'fresh', raw: {} });
      next.flush();
      store.commit([{ source: 'a', mode: 'full', watermark: 'w', configHash: 'h', at: 1 }], ['a']);
      expect([...store.records('a', 'members')].map((r) => r.key)).toEqual(['fresh']);
    } finally {
      db.close();
    }
  });

  it('snapshots of sources no longer configured (or no longer read by delta) are dropped at the next commit', () => {
    const db = openStateDb(join(dir, 'state.db'), { busyTimeoutMs: TEST_BUSY_TIMEOUT_MS });
    try {
      const store = new SourceSnapshotStore(db);
      for (const name of ['a', 'b']) {
        const s = store.stage(name);
        s.put('members', { key: '1', raw: { name } });
        s.flush();
      }
      store.commit(
        [
          { source: 'a', mode: 'full', watermark: 'w', configHash: 'h', at: 1 },
          { source: 'b', mode: 'full', watermark: 'w', configHash: 'h', at: 1 },
        ],
        ['a', 'b'],
      );
      store.commit([], ['a']);
      expect([store.count('a'), store.count('b'), store.head('b')]).toEqual([1, 0, undefined]);
    } finally {
      db.close();
    }
  });

  it('forgetting a person drops a source snapshot that still holds them whole (the next run reads that source in full)', () => {
    const db = openStateDb(join(dir, 'state.db'), { busyTimeoutMs: TEST_BUSY_TIMEOUT_MS });
    try {
      const store = new SourceSnapshotStore(db);
      for (const [name, mail] of [['entra', 'Lars.Okafor@Acme.test'], ['other', 'someone@acme.test']] as const) {
        const s = store.stage(name);
        s.put('members', { key: 'u1', raw: { id: 'u1', mail } });
        s.flush();
      }
      store.commit(
        [
          { source: 'entra', mode: 'full', watermark: 'w', configHash: 'h', at: 1 },
          { source: 'other', mode: 'full', watermark: 'w', configHash: 'h', at: 1 },
        ],
        ['entra', 'other'],
      );
      db.prepare(
        `INSERT INTO mirror_members (account_id, display_name, email, phone, third_user_id, title, department_id, status, roles, updated_at, updated_ms)
         VALUES ('acc-1', 'Lars Okafor', 'lars.okafor@acme.test', '', 'u1', '', '', 'left', '[]', '', 0)`,
      ).run();
      forgetPerson(db, { sourceIds: ['u1'], platformIds: ['acc-1'] }, 1000);
      expect([store.head('entra'), store.count('entra'), store.count('other')]).toEqual([undefined, 0, 1]);
    } finally {
      db.close();
    }
  });
});
