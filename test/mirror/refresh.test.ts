/**
 * refreshMirror against the emulator over loopback: full and incremental walks, tombstones, overlap, interruption,
 * a walk while records change, a 429 storm and injected 5xx/resets.
 */
import { afterEach, beforeEach, describe, expect, it } from 'vitest';
import type Database from 'better-sqlite3';
import { refreshMirror, type RefreshMirrorOptions } from '../../src/daemon/refresh-mirror.js';
import { openStateDb } from '../../src/mirror/db.js';
import { TEST_BUSY_TIMEOUT_MS, TEST_REFRESH_SETTINGS } from '../helpers/state-db.js';
import { Mirror } from '../../src/mirror/mirror.js';
import type { PlatformClient } from '../../src/platform/client.js';
import type { OrgPlatformPort } from '../../src/platform/port.js';
import { ManualClock, systemClock, type Clock } from '../../src/shared/clock.js';
import { silentLogger } from '../../src/shared/logger.js';
import { orgTestSeed, startTestEmulator, TEST_KEYS, type TestEmulator } from '../helpers/emulator.js';
import {
  buildOrg,
  expectMirrorEqualsLive,
  expectMirrorMatches,
  readerClient,
  recordingDispatcher,
  requestCounts,
  resetCounts,
  setFaults,
  writerClient,
} from './org-fixture.js';

const ADMIN = 'admin-token-for-tests';

/** A listPage port that fails on the `failAt`-th page of `entity` (a crash or an outage mid-walk). */
function failingOn(client: PlatformClient, entity: string, failAt: number, before?: () => Promise<void>): Pick<OrgPlatformPort, 'listPage'> {
  let n = 0;
  return {
    async listPage(e, params, options) {
      if (e === entity) {
        n += 1;
        if (n === failAt) throw new Error('simulated crash mid-walk');
        if (n === 2 && before) await before();
      }
      return client.listPage(e, params, options);
    },
  };
}

describe('refreshMirror against the emulator', () => {
  let emu: TestEmulator;
  let writer: PlatformClient;
  let reader: PlatformClient;
  let db: Database.Database;
  let mirror: Mirror;
  const refresh = (client: Pick<OrgPlatformPort, 'listPage'>, over: Partial<RefreshMirrorOptions> = {}) =>
    refreshMirror({ client, mirror, clock: systemClock, logger: silentLogger, ...TEST_REFRESH_SETTINGS, ...over });

  beforeEach(async () => {
    emu = await startTestEmulator(orgTestSeed(), { adminToken: ADMIN });
    writer = writerClient(emu.url);
    reader = readerClient(emu.url, systemClock);
    db = openStateDb(':memory:', { busyTimeoutMs: TEST_BUSY_TIMEOUT_MS });
    mirror = new Mirror(db);
  });
  afterEach(async () => {
    db.close();
    await reader.close();
    await writer.close();
    await emu.close();
  });

  it('takes a full walk first, then a no-op incremental refresh makes exactly one list request per entity', async () => {
    await buildOrg(writer, { positions: 3, departments: 7, members: 12 });
    const first = await refresh(reader, { pageSize: 5 });
    expect(first.entities.map((e) => [e.entity, e.mode, e.pages, e.records])).toEqual([
      ['positions', 'full', 1, 3],
      ['departments', 'full', 2, 8], // 7 + the root
      ['members', 'full', 3, 13], // 12 + the seeded admin
    ]);
    await expectMirrorEqualsLive(mirror, writer);
    for (const s of mirror.states()) {
      // The watermark is platform time (the first page's Date header, whole seconds, or its updated_at): no later than
      // the walk's local end (its start would be a timed assertion: the first page may be served in the next second).
      expect(Date.parse(s.watermark!)).toBeLessThanOrEqual(Date.parse(s.lastWalk!.completedAt!));
    }

    await resetCounts(emu.url, ADMIN);
    const second = await refresh(reader, { overlapSeconds: 0 });
    expect(second.entities.map((e) => [e.entity, e.mode, e.pages])).toEqual([
      ['positions', 'incremental', 1],
      ['departments', 'incremental', 1],
      ['members', 'incremental', 1],
    ]);
    // The watermark is platform time of the walk's first page: records changed in that same second (the Date
    // header has whole seconds) may be read again, never more than the entity holds.
    expect(second.entities.map((e) => e.records <= first.entities.find((f) => f.entity === e.entity)!.records)).toEqual([true, true, true]);
    const counts = await requestCounts(emu.url, ADMIN);
    expect(counts.sort((a, b) => a.route.localeCompare(b.route))).toEqual([
      { method: 'GET', route: '/api/external/v1/org/departments', status: 200, count: 1 },
      { method: 'GET', route: '/api/external/v1/org/members', status: 200, count: 1 },
      { method: 'GET', route: '/api/external/v1/org/positions', status: 200, count: 1 },
    ]);
    await expectMirrorEqualsLive(mirror, writer);
  });

  it('re-reads the overlap window without duplicating records, and picks up patches', async () => {
    const org = await buildOrg(writer, { positions: 2, departments: 3, members: 5 });
    await refresh(reader);
    const before = mirror.counts();
    await writer.patchMember(org.members[2]!, { title: 'Director' });
    await writer.patchDepartment(org.departments[0]!, { name: 'Renamed' });
    const second = await refresh(reader); // default overlap 120 s: everything created seconds ago is listed again
    expect(second.entities.every((e) => e.mode === 'incremental')).toBe(true);
    expect(second.entities.find((e) => e.entity === 'members')!.records).toBeGreaterThanOrEqual(6);
    expect(mirror.counts()).toEqual(before);
    expect(mirror.get('members', org.members[2]!)!.title).toBe('Director');
    expect(mirror.get('departments', org.departments[0]!)!.path).toBe('/Acme/Renamed');
    await expectMirrorEqualsLive(mirror, writer);
  });

  it('applies tombstones of all three entities; a later full walk removes them', async () => {
    const org = await buildOrg(writer, { positions: 3, departments: 6, members: 4 });
    await refresh(reader);
    await writer.deleteMember(org.members[1]!);
    await writer.deleteDepartment(org.emptyLeaves[0]!);
    await writer.deletePosition(org.positions[2]!);

    const inc = await refresh(reader, { overlapSeconds: 0 });
    expect(inc.entities.map((e) => [e.entity, e.mode, e.tombstones, e.removed])).toEqual([
      ['positions', 'incremental', 1, 0],
      ['departments', 'incremental', 1, 0],
      ['members', 'incremental', 1, 0],
    ]);
    expect(mirror.get('members', org.members[1]!)!.status).toBe('left');
    expect(mirror.get('departments', org.emptyLeaves[0]!)!.status).toBe('deleted');
    expect(mirror.get('positions', org.positions[2]!)!.status).toBe('deleted');
    expect(mirror.counts()).toEqual([
      { entity: 'positions', status: 'active', count: 2 },
      { entity: 'positions', status: 'deleted', count: 1 },
      { entity: 'departments', status: 'active', count: 6 },
      { entity: 'departments', status: 'deleted', count: 1 },
      { entity: 'members', status: 'active', count: 4 },
      { entity: 'members', status: 'left', count: 1 },
    ]);
    await expectMirrorMatches(mirror, writer);

    const full = await refresh(reader, { full: true });
    expect(full.entities.map((e) => [e.entity, e.mode, e.removed])).toEqual([
      ['positions', 'full', 1],
      ['departments', 'full', 1],
      ['members', 'full', 1],
    ]);
    await expectMirrorEqualsLive(mirror, writer);
  });

  it('takes a full walk when the last one is older than the period', async () => {
    await buildOrg(writer, { positions: 1, departments: 1, members: 1 });
    const clock = new ManualClock(Date.now());
    await refreshMirror({ client: reader, mirror, clock, logger: silentLogger, ...TEST_REFRESH_SETTINGS });
    clock.set(clock.now() + 60_000);
    const soon = await refreshMirror({ client: reader, mirror, clock, logger: silentLogger, ...TEST_REFRESH_SETTINGS, fullWalkEveryMs: 3_600_000 });
    expect(soon.entities.map((e) => e.mode)).toEqual(['incremental', 'incremental', 'incremental']);
    clock.set(clock.now() + 3_600_000);
    const late = await refreshMirror({ client: reader, mirror, clock, logger: silentLogger, ...TEST_REFRESH_SETTINGS, fullWalkEveryMs: 3_600_000 });
    expect(late.entities.map((e) => e.mode)).toEqual(['full', 'full', 'full']);
  });

  it('a full walk interrupted halfway keeps no watermark; the resumed refresh completes it and removes what vanished', async () => {
    const org = await buildOrg(writer, { positions: 2, departments: 3, members: 10 });
    await expect(refresh(failingOn(reader, 'members', 2), { pageSize: 4 })).rejects.toThrow('simulated crash');
    const members = mirror.state('members');
    expect(members.watermark).toBeUndefined();
    expect(members.lastWalk).toMatchObject({ kind: 'full', completedAt: undefined });
    expect(mirror.state('departments').watermark).toBeDefined();
    expect([...mirror.scanMembers()]).toHaveLength(4); // the first page only

    // Meanwhile a member of that first page leaves: the resumed full walk must drop it.
    await writer.deleteMember(org.members[0]!);
    const resumed = await refresh(reader, { pageSize: 4 });
    expect(resumed.entities.map((e) => [e.entity, e.mode])).toEqual([
      ['positions', 'incremental'],
      ['departments', 'incremental'],
      ['members', 'full'],
    ]);
    expect(resumed.entities[2]!.removed).toBe(1);
    await expectMirrorEqualsLive(mirror, writer);
  });

  it('an incremental walk interrupted halfway keeps its watermark; the next one catches up', async () => {
    const org = await buildOrg(writer, { positions: 1, departments: 2, members: 8 });
    await refresh(reader);
    const watermark = mirror.state('members').watermark;
    for (const id of org.members) await writer.patchMember(id, { title: 'Changed' });
    await expect(refresh(failingOn(reader, 'members', 2), { pageSize: 3, overlapSeconds: 0 })).rejects.toThrow('simulated crash');
    expect(mirror.state('members').watermark).toBe(watermark);
    // The first two pages arrived (an incremental walk re-reads from the watermark's whole second, so some of
    // them may be records that did not change); not all eight changes did.
    const halfway = [...mirror.scanMembers()].filter((m) => m.title === 'Changed').length;
    expect(halfway).toBeGreaterThan(0);
    expect(halfway).toBeLessThan(8);
    await refresh(reader, { pageSize: 3, overlapSeconds: 0 });
    expect([...mirror.scanMembers()].filter((m) => m.title === 'Changed')).toHaveLength(8);
    await expectMirrorMatches(mirror, writer);
  });

  it('a full walk while records change misses nothing: the watermark is the walk start', async () => {
    const org = await buildOrg(writer, { positions: 2, departments: 5, members: 9 });
    let created = '';
    const changeDuringWalk = async () => {
      // After the first page of members (Ada, user0, user1) has been applied:
      await writer.patchMember(org.members[0]!, { title: 'Changed while walked' }); // already seen
      await writer.deleteMember(org.members[1]!); // already seen
      await writer.deleteMember(org.members[7]!); // not yet seen
      created = (await writer.createMember({ email: 'late@acme.test', display_name: 'Late', third_user_id: 'LATE' })).account_id;
      await writer.patchDepartment(org.departments[3]!, { parent_id: org.departments[4]! }); // departments already walked
      await writer.patchPosition(org.positions[0]!, { description: 'edited' });
    };
    // overlapSeconds 0: only the watermark choice protects the changes made during the walk.
    await refresh(failingOn(reader, 'members', -1, changeDuringWalk), { pageSize: 3, overlapSeconds: 0 });
    await refresh(reader, { pageSize: 3, overlapSeconds: 0 });
    expect(mirror.get('members', org.members[0]!)!.title).toBe('Changed while walked');
    expect(mirror.get('members', org.members[1]!)!.status).toBe('left');
    expect(mirror.get('members', org.members[7]!)!.status).toBe('left');
    expect(mirror.get('members', created)!.display_name).toBe('Late');
    expect(mirror.get('departments', org.departments[3]!)!.parent_id).toBe(org.departments[4]);
    expect(mirror.get('positions', org.positions[0]!)!.description).toBe('edited');
    await expectMirrorMatches(mirror, writer);
  });

  it('a credential without read scope fails clearly and leaves the mirror untouched', async () => {
    await buildOrg(writer, { positions: 1, departments: 1, members: 1 });
    await refresh(reader);
    const before = { rows: mirror.snapshot(), states: mirror.states() };
    for (const key of [TEST_KEYS.acmeWrite, TEST_KEYS.acmeNone]) {
      const noRead = readerClient(emu.url, systemClock, { credential: key });
      const err = await refresh(noRead, { full: true }).catch((e: unknown) => e);
      await noRead.close();
      expect(err).toMatchObject({ kind: 'scope_denied', status: 403, code: 'scope_denied', method: 'GET', route: '/org/positions' });
      expect({ rows: mirror.snapshot(), states: mirror.states() }).toEqual(before);
    }
  });

  it('completes under 20% injected 5xx plus connection resets, and the mirror equals the emulator exactly', async () => {
    const org = await buildOrg(writer, { positions: 4, departments: 9, members: 30 });
    let retries = 0;
    const flaky = readerClient(emu.url, systemClock, {
      retry: { maxAttempts: 12, baseDelayMs: 5, maxDelayMs: 40, maxRetryTimeMs: 30_000 },
      observer: { onRetry: () => (retries += 1) },
    });
    await setFaults(emu.url, ADMIN, { probability: 0.2, statuses: [500, 502, 503, 504], reset_probability: 0.05, methods: ['GET'] });
    try {
      await refresh(flaky, { pageSize: 2 });
      await setFaults(emu.url, ADMIN, undefined);
      await expectMirrorEqualsLive(mirror, writer);
      for (const id of org.members.slice(0, 5)) await writer.patchMember(id, { title: 'After faults' });
      await writer.deleteMember(org.members[6]!);
      await setFaults(emu.url, ADMIN, { probability: 0.2, statuses: [500, 502, 503, 504], reset_probability: 0.05, methods: ['GET'] });
      await refresh(flaky, { pageSize: 2 });
      await refresh(flaky, { pageSize: 2, full: true });
    } finally {
      await setFaults(emu.url, ADMIN, undefined);
      await flaky.close();
    }
    expect(retries).toBeGreaterThan(0);
    const counts = await requestCounts(emu.url, ADMIN);
    expect(counts.some((c) => c.status >= 500)).toBe(true);
    await expectMirrorEqualsLive(mirror, writer);
    expect(mirror.get('members', org.members[0]!)!.title).toBe('After faults');
  });
});

/**
 * Runs `work` with the emulator and the clients on one ManualClock that moves only while every party waits on it:
 * HTTP is instantaneous in clock time and the pacing is exactly measurable (no wall-clock assertions).
 */
async function onClock<T>(clock: ManualClock, work: () => Promise<T>): Promise<T> {
  let done = false;
  const p = work().finally(() => {
    done = true;
  });
  p.catch(() => {});
  while (!done) {
    await new Promise((r) => setImmediate(r));
    if (!done && clock.pending > 0) await clock.advance(1);
  }
  return p;
}

describe('pacing against the emulator\'s rate limit (one ManualClock for both sides)', () => {
  const setup = async (clientRate: number) => {
    const clock = new ManualClock(Date.UTC(2026, 10, 22, 12));
    const emu = await startTestEmulator(orgTestSeed({ per_api_key: 5 }), { adminToken: ADMIN, clock });
    const writer = readerClient(emu.url, clock, { credential: TEST_KEYS.acmeRw, requestsPerSecond: 5 });
    await onClock(clock, () => buildOrg(writer, { positions: 3, departments: 5, members: 10 }));
    await resetCounts(emu.url, ADMIN);
    const sends: { at: number; path: string }[] = [];
    const answers429: number[] = [];
    const reader = readerClient(emu.url, clock, {
      requestsPerSecond: clientRate,
      dispatcher: recordingDispatcher(clock, sends),
      observer: { onResponse: (_m, _r, status) => status === 429 && answers429.push(clock.now()) },
      retry: { maxAttempts: 20, maxRetryTimeMs: 600_000 },
    });
    const db = openStateDb(':memory:', { busyTimeoutMs: TEST_BUSY_TIMEOUT_MS });
    const mirror = new Mirror(db);
    const close = async () => {
      db.close();
      await reader.close();
      await writer.close();
      await emu.close();
    };
    return { clock, emu, writer, reader, mirror, sends, answers429, close };
  };

  it('a 429 storm: the refresh completes, sends never exceed the given rate, and each 429 pauses the whole bucket', async () => {
    const t = await setup(20);
    try {
      const result = await onClock(t.clock, () => refreshMirror({ client: t.reader, mirror: t.mirror, clock: t.clock as Clock, logger: silentLogger, ...TEST_REFRESH_SETTINGS, pageSize: 2 }));
      expect(result.entities.map((e) => e.records)).toEqual([3, 6, 11]);
      const counts = await requestCounts(t.emu.url, ADMIN);
      const limited = counts.filter((c) => c.status === 429).reduce((n, c) => n + c.count, 0);
      expect(limited).toBeGreaterThan(0);
      expect(limited).toBe(t.answers429.length);
      // Never faster than 20/s: consecutive sends at least 50 ms apart, at most 20 in any second.
      const at = t.sends.map((s) => s.at);
      for (let i = 1; i < at.length; i += 1) expect(at[i]! - at[i - 1]!).toBeGreaterThanOrEqual(50);
      for (const start of at) expect(at.filter((x) => x >= start && x < start + 1000).length).toBeLessThanOrEqual(20);
      // After a 429 (Retry-After: 1) nothing is sent for a second.
      for (const a of t.answers429) expect(at.filter((x) => x > a && x < a + 1000)).toEqual([]);
      await onClock(t.clock, () => expectMirrorEqualsLive(t.mirror, t.writer));
    } finally {
      await t.close();
    }
  });

  it('paced at the emulator\'s limit, the client is never answered 429', async () => {
    const t = await setup(5);
    try {
      await onClock(t.clock, () => refreshMirror({ client: t.reader, mirror: t.mirror, clock: t.clock as Clock, logger: silentLogger, ...TEST_REFRESH_SETTINGS, pageSize: 2 }));
      const counts = await requestCounts(t.emu.url, ADMIN);
      expect(counts.filter((c) => c.status === 429)).toEqual([]);
      expect(t.answers429).toEqual([]);
      const at = t.sends.map((s) => s.at);
      for (let i = 1; i < at.length; i += 1) expect(at[i]! - at[i - 1]!).toBeGreaterThanOrEqual(200);
    } finally {
      await t.close();
    }
  });
});

