/** refreshMirror over a scripted port (no HTTP): page handling, batching, and what an error leaves behind. */
import { describe, expect, it } from 'vitest';
import { refreshMirror } from '../../src/daemon/refresh-mirror.js';
import type { EntityKind, ListPage, PlatformPosition } from '../../src/domain/entities.js';
import { openStateDb } from '../../src/mirror/db.js';
import { TEST_BUSY_TIMEOUT_MS, TEST_REFRESH_SETTINGS } from '../helpers/state-db.js';
import { Mirror } from '../../src/mirror/mirror.js';
import type { ListParams, OrgPlatformPort } from '../../src/platform/port.js';
import { ManualClock } from '../../src/shared/clock.js';
import { silentLogger } from '../../src/shared/logger.js';

const pos = (id: string): PlatformPosition => ({
  id,
  name: id,
  description: '',
  sort_order: 0,
  third_position_id: '',
  is_system: false,
  member_count: 0,
  agent_count: 0,
  metadata: {},
  status: 'active',
  updated_at: '2026-01-01T00:00:00.000Z',
});

/** A port serving `pages` for positions (empty lists for the rest) and recording every query. */
function scripted(pages: (ListPage<PlatformPosition> | Error)[]) {
  const calls: { entity: EntityKind; params: ListParams }[] = [];
  let i = 0;
  const port: Pick<OrgPlatformPort, 'listPage'> = {
    async listPage(entity, params) {
      calls.push({ entity, params });
      if (entity !== 'positions') return { items: [], next_cursor: '', has_more: false } as never;
      const page = pages[i++];
      if (!page) throw new Error('no more pages scripted');
      if (page instanceof Error) throw page;
      return page as never;
    },
  };
  return { port, calls };
}

describe('refreshMirror (scripted port)', () => {
  it('follows cursors with limit 200, applies in batches, and sets the watermark to the platform time of the first page', async () => {
    const db = openStateDb(':memory:', { busyTimeoutMs: TEST_BUSY_TIMEOUT_MS });
    const mirror = new Mirror(db);
    // The local clock is an hour ahead of the platform: the watermark follows the platform, never this clock.
    const clock = new ManualClock(Date.UTC(2026, 5, 1, 1));
    const { port, calls } = scripted([
      { items: [pos('a'), pos('b')], next_cursor: 'c1', has_more: true, server_time: '2026-06-01T00:00:00.000Z' },
      { items: [pos('c')], next_cursor: 'c2', has_more: true, server_time: '2026-06-01T00:00:01.000Z' },
      { items: [pos('d')], next_cursor: '', has_more: false, server_time: '2026-06-01T00:00:02.000Z' },
    ]);
    const result = await refreshMirror({ client: port, mirror, clock, logger: silentLogger, ...TEST_REFRESH_SETTINGS, entities: ['positions'], applyBatchRecords: 2 });
    expect(calls.map((c) => c.params)).toEqual([{ limit: 200 }, { limit: 200, cursor: 'c1' }, { limit: 200, cursor: 'c2' }]);
    expect(result.entities).toEqual([{ entity: 'positions', mode: 'full', pages: 3, records: 4, tombstones: 0, removed: 0, watermark: '2026-06-01T00:00:00.000Z' }]);
    expect(mirror.all('positions').map((p) => p.id)).toEqual(['a', 'b', 'c', 'd']);

    // Incremental next: updated_since = watermark - overlap.
    const next = scripted([{ items: [], next_cursor: '', has_more: false }]);
    await refreshMirror({ client: next.port, mirror, clock, logger: silentLogger, ...TEST_REFRESH_SETTINGS, overlapSeconds: 30 });
    expect(next.calls.map((c) => [c.entity, c.params])).toEqual([
      ['positions', { limit: 200, updated_since: '2026-05-31T23:59:30.000Z' }],
      ['departments', { limit: 200 }], // never walked: a full walk
      ['members', { limit: 200 }],
    ]);
    // That empty page had no Date header and no record: the platform showed no time, so the watermark stays.
    expect(mirror.state('positions').watermark).toBe('2026-06-01T00:00:00.000Z');
    db.close();
  });

  it('without a Date header the newest updated_at of the first page is the watermark; with nothing shown, the epoch', async () => {
    const db = openStateDb(':memory:', { busyTimeoutMs: TEST_BUSY_TIMEOUT_MS });
    const mirror = new Mirror(db);
    const clock = new ManualClock(Date.UTC(2026, 5, 1));
    const { port } = scripted([
      { items: [{ ...pos('a'), updated_at: '2026-03-01T10:00:00.000Z' }, { ...pos('b'), updated_at: '2026-04-02T11:00:00.500Z' }], next_cursor: 'c1', has_more: true },
      { items: [{ ...pos('c'), updated_at: '2026-05-30T00:00:00.000Z' }], next_cursor: '', has_more: false },
    ]);
    const result = await refreshMirror({ client: port, mirror, clock, logger: silentLogger, ...TEST_REFRESH_SETTINGS, entities: ['positions'] });
    expect(result.entities[0]!.watermark).toBe('2026-04-02T11:00:00.500Z');
    const empty = scripted([{ items: [], next_cursor: '', has_more: false }]);
    const none = await refreshMirror({ client: empty.port, mirror, clock, logger: silentLogger, ...TEST_REFRESH_SETTINGS, entities: ['departments'] });
    expect(none.entities[0]!.watermark).toBe('1970-01-01T00:00:00.000Z');
    db.close();
  });

  it('a local clock that went back behind the last full walk takes a full walk (the due time is unknown)', async () => {
    const db = openStateDb(':memory:', { busyTimeoutMs: TEST_BUSY_TIMEOUT_MS });
    const mirror = new Mirror(db);
    const page = { items: [pos('a')], next_cursor: '', has_more: false, server_time: '2026-06-01T00:00:00.000Z' };
    await refreshMirror({ client: scripted([page]).port, mirror, clock: new ManualClock(Date.UTC(2026, 5, 1, 1)), logger: silentLogger, ...TEST_REFRESH_SETTINGS, entities: ['positions'] });
    const same = scripted([page]);
    await refreshMirror({ client: same.port, mirror, clock: new ManualClock(Date.UTC(2026, 5, 1, 1, 5)), logger: silentLogger, ...TEST_REFRESH_SETTINGS, entities: ['positions'] });
    expect(same.calls[0]!.params.updated_since).toBeDefined();
    const back = scripted([page]);
    await refreshMirror({ client: back.port, mirror, clock: new ManualClock(Date.UTC(2026, 5, 1, 0, 30)), logger: silentLogger, ...TEST_REFRESH_SETTINGS, entities: ['positions'] });
    expect(back.calls[0]!.params).toEqual({ limit: 200 });
    db.close();
  });

  it('keeps every page that arrived when a later one fails, and no watermark', async () => {
    const db = openStateDb(':memory:', { busyTimeoutMs: TEST_BUSY_TIMEOUT_MS });
    const mirror = new Mirror(db);
    const { port } = scripted([{ items: [pos('a'), pos('b')], next_cursor: 'c1', has_more: true }, new Error('outage')]);
    await expect(refreshMirror({ client: port, mirror, clock: new ManualClock(), logger: silentLogger, ...TEST_REFRESH_SETTINGS, entities: ['positions'] })).rejects.toThrow('outage');
    expect(mirror.all('positions').map((p) => p.id)).toEqual(['a', 'b']);
    expect(mirror.state('positions').watermark).toBeUndefined();
    db.close();
  });

  it('refuses a page that says has_more without a cursor (instead of looping forever)', async () => {
    const db = openStateDb(':memory:', { busyTimeoutMs: TEST_BUSY_TIMEOUT_MS });
    const mirror = new Mirror(db);
    const { port } = scripted([{ items: [pos('a')], next_cursor: '', has_more: true }]);
    await expect(refreshMirror({ client: port, mirror, clock: new ManualClock(), logger: silentLogger, ...TEST_REFRESH_SETTINGS, entities: ['positions'] })).rejects.toMatchObject({
      kind: 'invalid_response',
      message: 'GET /org/positions: has_more is true but next_cursor is empty',
    });
    expect(mirror.state('positions').watermark).toBeUndefined();
    db.close();
  });
});
