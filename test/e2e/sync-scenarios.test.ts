/**
 * Sync scenarios end to end over loopback against the emulator. Each scenario is data: the runs that make the
 * starting platform state, hand-made records, the desired state, and what to expect. Every scenario ends by
 * comparing the platform (listed through the API) with the desired state and asserting that a second plan is empty.
 */
import { afterEach, describe, expect, it } from 'vitest';
import type { PlatformMember } from '../../src/domain/index.js';
import type { RunOnceOptions, RunSummary } from '../../src/daemon/run-once.js';
import { renderSyncSummary, syncSummaryJson, syncSummaryJsonChunks } from '../../src/cli/sync-summary.js';
import { metricsRunObserver } from '../../src/daemon/daemon.js';
import { OrgsyncMetrics } from '../../src/observability/metrics.js';
import { ADA, expectedView, org, SyncWorld, type OrgState, type OrgView } from './harness.js';

const TREE = {
  departments: [
    ['eng', 'Engineering'],
    ['eng-be', 'Backend', 'eng'],
    ['eng-be-db', 'Databases', 'eng-be'],
    ['sales', 'Sales'],
    ['ops', 'Operations'],
  ] as [string, string, string?][],
  positions: [
    ['p-eng', 'Engineer'],
    ['p-mgr', 'Manager'],
  ] as [string, string][],
  members: [
    ['u1', 'Ann Lee', 'ann@acme.test', 'eng'],
    ['u2', 'Bob Roy', 'bob@acme.test', 'eng-be'],
    ['u3', 'Cid Moe', 'cid@acme.test', 'ops'],
    ['u4', 'Dee Fox', 'dee@acme.test', 'ops'],
    ['u5', 'Eve Kim', 'eve@acme.test', 'eng-be-db'],
  ] as [string, string, string, string?][],
};

interface Scenario {
  name: string;
  /** Sync runs that build the starting platform state. */
  before?: OrgState[];
  /** Records made by hand on the platform before the run (the sync must leave them alone). */
  handMade?: (w: SyncWorld) => Promise<void>;
  desired: OrgState;
  options?: Partial<RunOnceOptions>;
  /** Extra records expected in the final state besides the desired ones (hand-made, the seeded admin). */
  extra?: Partial<OrgView>;
  expect?: (summary: RunSummary, w: SyncWorld) => void | Promise<void>;
}

const HAND_MADE = async (w: SyncWorld): Promise<void> => {
  const fac = await w.api('POST', '/org/departments', { name: 'Facilities', third_department_id: 'fac' });
  await w.api('POST', '/org/members', { display_name: 'Hank Hand', email: 'hank@acme.test', third_user_id: 'hank', department_id: fac.id });
  await w.api('POST', '/org/positions', { name: 'Janitor', third_position_id: 'p-jan' });
};
const HAND_VIEW: Partial<OrgView> = {
  departments: { '/Acme/Facilities': { third: 'fac', managedBy: '' } },
  members: { ...ADA, hank: { name: 'Hank Hand', email: 'hank@acme.test', department: '/Acme/Facilities', status: 'active' } },
  positions: { 'p-jan': { name: 'Janitor', managedBy: '' } },
};

const scenarios: Scenario[] = [
  {
    name: 'initial import of a tree',
    desired: org(TREE),
    expect: (s) => {
      expect(s.applied.departments.create).toBe(5);
      expect(s.applied.members.create).toBe(5);
      expect(s.applied.positions.create).toBe(2);
      expect(s.exitCode).toBe(0);
    },
  },
  {
    name: 'rename a department (its subtree paths follow)',
    before: [org(TREE)],
    desired: org({ ...TREE, departments: TREE.departments.map((d) => (d[0] === 'eng-be' ? ['eng-be', 'Platform', 'eng'] : d)) }),
    expect: (s) => {
      expect(s.plan.changes.map((c) => [c.id, c.request?.body])).toEqual([['departments:update:eng-be', { name: 'Platform' }]]);
    },
  },
  {
    name: 'move a subtree under another department',
    before: [org(TREE)],
    desired: org({ ...TREE, departments: TREE.departments.map((d) => (d[0] === 'eng-be' ? ['eng-be', 'Backend', 'sales'] : d)) }),
    expect: (s) => expect(s.plan.changes.map((c) => c.id)).toEqual(['departments:move:eng-be']),
  },
  {
    name: 'swap a parent and its child',
    before: [org(TREE)],
    desired: org({
      ...TREE,
      departments: TREE.departments.map((d) => (d[0] === 'eng' ? ['eng', 'Engineering', 'eng-be'] : d[0] === 'eng-be' ? ['eng-be', 'Backend'] : d)),
    }),
    expect: (s) => {
      expect(s.byStatus.deferred).toBe(0);
      expect(s.applied.departments.move).toBe(2);
    },
  },
  {
    name: 'delete a department whose members move elsewhere in the same run',
    before: [org(TREE)],
    desired: org({
      ...TREE,
      departments: TREE.departments.filter((d) => d[0] !== 'ops'),
      members: TREE.members.map((m) => (m[3] === 'ops' ? [m[0], m[1], m[2], 'sales'] : m)),
    }),
    expect: (s) => {
      expect(s.applied.members.update).toBe(2);
      expect(s.applied.departments.remove).toBe(1);
      expect(s.replanRounds).toBe(0);
    },
  },
  {
    name: 'records created by hand are left alone',
    handMade: HAND_MADE,
    before: [org(TREE)],
    desired: org({ ...TREE, members: TREE.members.filter((m) => m[3] !== 'ops'), departments: TREE.departments.filter((d) => d[0] !== 'ops'), positions: TREE.positions.slice(0, 1) }),
    options: { allowDeletes: 10 },
    extra: HAND_VIEW,
    expect: (s) => {
      expect(s.plan.changes.every((c) => !['fac', 'hank', 'p-jan'].includes(c.thirdId))).toBe(true);
    },
  },
  {
    name: 'a hand-made member is adopted by e-mail only when configured (and the adoption is logged)',
    handMade: async (w) => {
      await w.api('POST', '/org/members', { display_name: 'Ann L.', email: 'ann@acme.test' });
    },
    desired: org(TREE),
    expect: (s, w) => {
      expect(s.applied.members.adopt).toBe(1);
      expect(w.ownership.adoptions().map((a) => [a.entity, a.thirdId, a.matchedBy])).toEqual([['members', 'u1', 'email']]);
    },
  },
];

let world: SyncWorld | undefined;
afterEach(async () => {
  await world?.close();
  world = undefined;
});

const withoutAda = (extra: Partial<OrgView> | undefined): Partial<OrgView> => ({ ...extra, members: { ...ADA, ...extra?.members } });

function merge(a: OrgView, b: Partial<OrgView>): OrgView {
  return { departments: { ...a.departments, ...b.departments }, positions: { ...a.positions, ...b.positions }, members: { ...a.members, ...b.members } };
}

describe('sync scenarios', () => {
  for (const sc of scenarios) {
    it(sc.name, async () => {
      const adopt = sc.name.includes('adopted by e-mail');
      world = await SyncWorld.start(`id: hr-sync\n  delete_threshold: { max_count: 500, max_percent: 100 }${adopt ? '\n  adopt: { members: [email] }' : ''}`);
      const w = world;
      await sc.handMade?.(w);
      for (const d of sc.before ?? []) expect((await w.run(d)).exitCode).toBe(0);
      const summary = await w.run(sc.desired, sc.options);
      expect(summary.failures).toEqual([]);
      expect(summary.exitCode).toBe(0);
      await sc.expect?.(summary, w);
      expect(await w.view()).toEqual(merge(expectedView(sc.desired), withoutAda(sc.extra)));
      const again = await w.plan(sc.desired);
      expect(again.plan.changes).toEqual([]);
    });
  }
});

describe('sync runs', () => {
  it('a member who leaves and is re-hired comes back under the same account', async () => {
    world = await SyncWorld.start();
    const w = world;
    await w.run(org(TREE));
    const bob = (await w.list<PlatformMember>('members')).find((m) => m.third_user_id === 'u2')!;
    const gone = await w.run(org({ ...TREE, members: TREE.members.filter((m) => m[0] !== 'u2') }));
    expect(gone.applied.members.remove).toBe(1);
    expect((await w.list<PlatformMember>('members')).some((m) => m.third_user_id === 'u2')).toBe(false);
    const back = await w.run(org(TREE));
    expect(back.plan.changes.map((c) => [c.id, c.reason])).toEqual([['members:create:u2', 're-hire: the member left and is in the source again']]);
    const rehired = (await w.list<PlatformMember>('members')).find((m) => m.third_user_id === 'u2')!;
    expect(rehired.account_id).toBe(bob.account_id);
    expect(rehired.status).toBe('active');
    expect(await w.view()).toEqual(merge(expectedView(org(TREE)), { members: ADA }));
    expect((await w.plan(org(TREE))).plan.changes).toEqual([]);
  });

  it('the delete threshold refuses (exit 3, nothing written) until --allow-deletes covers the removals', async () => {
    world = await SyncWorld.start('id: hr-sync');
    const w = world;
    await w.run(org(TREE));
    const fewer = org({ ...TREE, members: TREE.members.slice(0, 2), departments: TREE.departments.filter((d) => d[0] !== 'ops') });
    await w.resetCounts();
    const refused = await w.run(fewer);
    expect(refused.exitCode).toBe(3);
    expect(refused.result).toBe('refused');
    expect(refused.plan.refusal?.guard).toBe('delete_threshold');
    expect(refused.plan.refusal?.entities?.members).toEqual({ removals: 3, owned: 5, maxCount: 500, maxPercent: 20 });
    expect(await w.writeCalls()).toBe(0);
    expect((await w.run(fewer, { allowDeletes: 3 })).exitCode).toBe(3);
    const allowed = await w.run(fewer, { allowDeletes: 4 });
    expect(allowed.exitCode).toBe(0);
    expect(allowed.applied.members.remove).toBe(3);
    expect(allowed.applied.departments.remove).toBe(1);
    expect(await w.view()).toEqual(merge(expectedView(fewer), { members: ADA }));
    expect((await w.plan(fewer)).plan.changes).toEqual([]);
  });

  it('an empty member source is refused while the sync owns members', async () => {
    world = await SyncWorld.start();
    const w = world;
    await w.run(org(TREE));
    const s = await w.run(org({ ...TREE, members: [] }));
    expect(s.exitCode).toBe(1);
    expect(s.plan.refusal?.guard).toBe('empty_source');
  });

  it('a second run with unchanged input makes zero write calls and one list request per entity', async () => {
    world = await SyncWorld.start();
    const w = world;
    await w.run(org(TREE));
    await w.resetCounts();
    const s = await w.run(org(TREE));
    expect(s.plan.changes).toEqual([]);
    expect(s.result).toBe('in_sync');
    expect(await w.writeCalls()).toBe(0);
    const lists = (await w.requestCounts()).filter((r) => r.method === 'GET');
    expect(lists.map((r) => [r.route, r.count]).sort()).toEqual([
      ['/api/external/v1/org/departments', 1],
      ['/api/external/v1/org/members', 1],
      ['/api/external/v1/org/positions', 1],
    ]);
  });

  it('a shutdown signal lets the writes in flight finish, starts nothing new, and the next run completes', async () => {
    world = await SyncWorld.start();
    const w = world;
    const stop = new AbortController();
    let finished = 0;
    const metrics = new OrgsyncMetrics({ build: { version: 'test' }, defaultMetrics: false });
    const base = metricsRunObserver(metrics);
    const s = await w.run(org(TREE), {}, { ...base, onChangeResult: (r) => (base.onChangeResult?.(r), ++finished === 3 ? stop.abort(new Error('SIGTERM')) : undefined) }, stop.signal);
    expect(s.result).toBe('stopped');
    expect(s.exitCode).toBe(1);
    expect(s.byStatus.not_started).toBeGreaterThan(0);
    // Issue 15: what never started is counted apart from the failures, in the summary, the JSON and the metrics.
    const notStarted = s.byStatus.not_started;
    expect(s.notStarted).toHaveLength(notStarted);
    expect(s.notStarted.every((f) => f.status === 'not_started' && f.message === 'not started: the run was asked to stop')).toBe(true);
    expect(s.failures.filter((f) => f.status === 'not_started')).toEqual([]);
    expect(s.failures).toHaveLength(s.byStatus.skipped);
    expect(renderSyncSummary(s)).toContain(`failures: ${s.failures.length}, not started: ${notStarted}, `);
    expect(renderSyncSummary(s)).not.toContain('not_started: not_started');
    const doc = syncSummaryJson(s);
    expect(doc.not_started).toBe(notStarted);
    expect((doc.failures as unknown[]).length).toBe(s.failures.length);
    // --output json is written in chunks: joined, the very text JSON.stringify makes, the lists entry by entry.
    const written = [...syncSummaryJsonChunks(s)].join('');
    expect(written).toBe(`${JSON.stringify(doc, null, 2)}\n`);
    expect(JSON.parse(written).not_started_changes).toEqual(s.notStarted.map((f) => ({ id: f.id, entity: f.entity, op: f.op, third_id: f.thirdId, platform_id: f.platformId ?? null })));
    const text = await metrics.text();
    const series = [...text.matchAll(/^orgsync_operations_total\{[^}]*result="not_started"[^}]*\} (\d+)$/gm)].reduce((n, m) => n + Number(m[1]), 0);
    expect(series).toBe(notStarted);
    // Everything that was started finished and was recorded: the next plan holds exactly what was not started.
    expect(s.byStatus.applied + s.byStatus.not_started + s.byStatus.skipped).toBe(s.plan.changes.length);
    const rest = await w.plan(org(TREE));
    expect(rest.plan.changes.length).toBe(s.byStatus.not_started + s.byStatus.skipped);
    expect((await w.run(org(TREE))).exitCode).toBe(0);
    expect(await w.view()).toEqual(merge(expectedView(org(TREE)), { members: ADA }));
  });

  it('10% injected 5xx and 2% connection resets reach the same final state', async () => {
    world = await SyncWorld.start();
    const w = world;
    const big = org({
      departments: Array.from({ length: 20 }, (_, i) => [`d${i}`, `Dept ${i}`, i >= 4 ? `d${i % 4}` : undefined] as [string, string, string?]),
      positions: [['p1', 'Engineer']],
      members: Array.from({ length: 80 }, (_, i) => [`m${i}`, `Member ${i}`, `m${i}@acme.test`, `d${i % 20}`] as [string, string, string, string?]),
    });
    await w.faults({ probability: 0.1, statuses: [500, 502, 503], reset_probability: 0.02 });
    const s = await w.run(big);
    await w.faults(undefined);
    expect(s.failures).toEqual([]);
    expect(await w.view()).toEqual(merge(expectedView(big), { members: ADA }));
    expect((await w.plan(big)).plan.changes).toEqual([]);
  });
});
