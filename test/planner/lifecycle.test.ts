/**
 * Dated lifecycle (issue 18 point 5): start_date / end_date read in `timezone:`, and the planner's lifecycle rules
 * with time from an injected ManualClock: a future hire appears exactly N days before the start; a leaver goes on
 * the end date while the export still lists them as active.
 */
import { rmSync, writeFileSync } from 'node:fs';
import { join } from 'node:path';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { syncConfigSchema } from '../../src/config/sync.js';
import { lifecycleLine } from '../../src/daemon/explain.js';
import { metricsRunObserver } from '../../src/daemon/daemon.js';
import type { DesiredMember } from '../../src/domain/index.js';
import { OrgsyncMetrics } from '../../src/observability/metrics.js';
import { calculatePlan, lifecycleOptionsFrom, planToJson, renderPlanText } from '../../src/planner/index.js';
import { ManualClock } from '../../src/shared/clock.js';
import { parseHrDate } from '../../src/shared/dates.js';
import { silentLogger } from '../../src/shared/logger.js';
import { readDesiredState } from '../../src/sources/index.js';
import { sourcesConfig } from '../sources/support.js';
import { desired, member, OPTS, snapshot } from './fixtures.js';
import { tempDir } from '../helpers/temp.js';

const DAY = 86_400_000;
let dir: string;
beforeAll(() => {
  dir = tempDir('orgsync-lifecycle-');
  writeFileSync(
    join(dir, 'people.csv'),
    [
      'id,name,email,status,start,end',
      'H1,Hana Future,hana@example.com,active,2026-03-01,',
      'L1,Leo Leaving,leo@example.com,active,2020-01-01,2026-01-31',
      'T1,Tim Timed,tim@example.com,active,2026-03-01T09:00:00+01:00,',
      'B1,Bad Date,bad@example.com,active,01/03/2026,',
      'N1,No Dates,no@example.com,active,,',
    ].join('\n'),
  );
});
afterAll(() => rmSync(dir, { recursive: true, force: true }));

const read = (timezone: string) =>
  readDesiredState(
    { ...sourcesConfig([{ name: 'hr', type: 'csv', members: { file: 'people.csv', fields: { id: 'id', display_name: 'name', email: 'email', status: 'status', start_date: 'start', end_date: 'end' } } }], dir), timezone },
    { env: {}, logger: silentLogger },
  );

describe('dates from the sources', () => {
  it('reads ISO dates at midnight in timezone:, date-times with an offset as they are; a bad date is quarantined', async () => {
    const state = await read('Europe/Berlin');
    const by = Object.fromEntries([...state.members].map((m) => [m.source_id, m]));
    expect(new Date(by.H1!.start_at!).toISOString()).toBe('2026-02-28T23:00:00.000Z');
    expect(by.H1!.start_date).toBe('2026-03-01');
    expect(new Date(by.L1!.end_at!).toISOString()).toBe('2026-01-30T23:00:00.000Z');
    expect(new Date(by.T1!.start_at!).toISOString()).toBe('2026-03-01T08:00:00.000Z');
    expect(by.N1!.start_at).toBeUndefined();
    expect(state.quarantine.map((q) => [q.source_id, q.reason, q.message])).toEqual([
      ['B1', 'invalid_date', 'start_date: expected a date like 2026-11-27, got "dd/dd/dddd"'],
    ]);
    const utc = await read('UTC');
    expect(new Date([...utc.members].find((m) => m.source_id === 'H1')!.start_at!).toISOString()).toBe('2026-03-01T00:00:00.000Z');
  });

  it('handles daylight saving time and impossible dates', () => {
    const p = (t: string, tz = 'America/New_York') => {
      const r = parseHrDate(t, tz);
      return 'ms' in r ? new Date(r.ms).toISOString() : 'problem' in r ? r.problem : 'none';
    };
    expect(p('2026-07-01')).toBe('2026-07-01T04:00:00.000Z');
    expect(p('2026-01-01')).toBe('2026-01-01T05:00:00.000Z');
    expect(p('2026-03-08T12:00')).toBe('2026-03-08T16:00:00.000Z');
    expect(p('2026-02-30')).toBe('"dddd-dd-dd" is not a calendar date (a month, day or time out of range)');
    expect(p('2026-01-01T10:00:00Z')).toBe('2026-01-01T10:00:00.000Z');
    expect(p('2026-01-01 10:00:00-0230')).toBe('2026-01-01T12:30:00.000Z');
  });
});

function hire(p: Partial<DesiredMember> = {}): DesiredMember {
  return { source_id: 'H1', display_name: 'Hana Future', email: 'hana@example.com', status: 'active', start_date: '2026-03-01', start_at: Date.UTC(2026, 1, 28, 23), ...p };
}

describe('lifecycle rules with an injected clock', () => {
  const lifecycle = (days: number, end_action?: 'remove' | 'suspend', member_removal: 'left' | 'suspended' = 'left') =>
    lifecycleOptionsFrom(syncConfigSchema.parse({ lifecycle: { create_days_before_start: days, ...(end_action ? { end_action } : {}) }, member_removal }));

  it('a future hire is scheduled until exactly N days before the start, then created', async () => {
    const clock = new ManualClock(Date.UTC(2026, 1, 1));
    const plan = () => calculatePlan(desired({ members: [hire()] }), snapshot(), { ...OPTS, now: clock.now(), lifecycle: lifecycle(7) });
    let p = plan();
    expect(p.changes).toEqual([]);
    expect(p.lifecycle?.scheduled).toEqual([
      { rule: 'scheduled', thirdId: 'H1', displayName: 'Hana Future', date: '2026-03-01', at: '2026-02-28T23:00:00.000Z', createOn: '2026-02-21T23:00:00.000Z' },
    ]);
    // Day by day up to one millisecond before the moment: still scheduled.
    while (clock.now() + DAY <= Date.UTC(2026, 1, 21, 23)) await clock.advance(DAY);
    await clock.advance(Date.UTC(2026, 1, 21, 23) - 1 - clock.now());
    p = plan();
    expect(p.changes).toEqual([]);
    expect(p.lifecycle?.scheduled).toHaveLength(1);
    await clock.advance(1);
    p = plan();
    expect(p.changes.map((c) => [c.op, c.thirdId])).toEqual([['create', 'H1']]);
    expect(p.lifecycle).toBeUndefined();
  });

  it('with create_days_before_start 0 the hire appears on the start itself', () => {
    const before = calculatePlan(desired({ members: [hire()] }), snapshot(), { ...OPTS, now: Date.UTC(2026, 1, 28, 22, 59), lifecycle: lifecycle(0) });
    const at = calculatePlan(desired({ members: [hire()] }), snapshot(), { ...OPTS, now: Date.UTC(2026, 1, 28, 23), lifecycle: lifecycle(0) });
    expect(before.changes).toEqual([]);
    expect(at.changes.map((c) => c.op)).toEqual(['create']);
  });

  it('a member already on the platform is never taken out by a future start date', () => {
    const live = member({ account_id: 'a1', display_name: 'Hana Future', email: 'hana@example.com', third_user_id: 'H1' });
    const p = calculatePlan(desired({ members: [hire()] }), snapshot({ members: [live], ownedMembers: new Map([['H1', 'a1']]) }), { ...OPTS, now: Date.UTC(2026, 0, 1), lifecycle: lifecycle(7) });
    expect(p.changes).toEqual([]);
    expect(p.lifecycle).toBeUndefined();
  });

  it('a leaver goes on the end date while the export still lists them as active', () => {
    const leo: DesiredMember = { source_id: 'L1', display_name: 'Leo Leaving', email: 'leo@example.com', status: 'active', end_date: '2026-01-31', end_at: Date.UTC(2026, 0, 30, 23) };
    const live = member({ account_id: 'a2', display_name: 'Leo Leaving', email: 'leo@example.com', third_user_id: 'L1' });
    const snap = snapshot({ members: [live], ownedMembers: new Map([['L1', 'a2']]) });
    const clock = new ManualClock(Date.UTC(2026, 0, 30, 22, 59, 59, 999));
    const at = (opts: ReturnType<typeof lifecycle>, memberRemoval: 'left' | 'suspended' = 'left') => calculatePlan(desired({ members: [leo] }), snap, { ...OPTS, now: clock.now(), memberRemoval, lifecycle: opts });
    expect(at(lifecycle(0)).changes).toEqual([]);
    void clock.advance(1);
    const removed = at(lifecycle(0));
    expect(removed.changes.map((c) => [c.op, c.thirdId, c.request?.method])).toEqual([['remove', 'L1', 'DELETE']]);
    expect(removed.lifecycle?.ended).toEqual([{ rule: 'ended', thirdId: 'L1', displayName: 'Leo Leaving', date: '2026-01-31', at: '2026-01-30T23:00:00.000Z', action: 'remove' }]);
    const suspended = at(lifecycle(0, 'suspend'));
    expect(suspended.changes.map((c) => [c.op, c.request?.method, c.fields])).toEqual([['update', 'PATCH', { status: 'suspended' }]]);
    expect(suspended.lifecycle?.ended[0]!.action).toBe('suspend');
    // The default end_action follows sync.member_removal.
    expect(at(lifecycle(0, undefined, 'suspended'), 'suspended').lifecycle?.ended[0]!.action).toBe('suspend');
    // A leaver who was never created is not created.
    const never = calculatePlan(desired({ members: [leo] }), snapshot(), { ...OPTS, now: clock.now(), lifecycle: lifecycle(0) });
    expect(never.changes).toEqual([]);
    expect(never.lifecycle?.ended[0]!.action).toBe('not_created');
  });

  it('is counted in the plan (text and JSON), in metrics, and explained', async () => {
    const leo: DesiredMember = { source_id: 'L1', display_name: 'Leo Leaving', email: 'leo@example.com', status: 'active', end_date: '2026-01-31', end_at: Date.UTC(2026, 0, 30, 23) };
    const p = calculatePlan(desired({ members: [hire(), leo] }), snapshot(), { ...OPTS, now: Date.UTC(2026, 1, 1), lifecycle: lifecycle(7) });
    const text = renderPlanText(p);
    expect(text).toContain('scheduled (1)\n  > members H1: "Hana Future" starts 2026-03-01; created from 2026-02-21T23:00:00.000Z\n');
    expect(text).toContain('ended (1)\n  < members L1: "Leo Leaving" end_date 2026-01-31 has passed: not created\n');
    const json = planToJson(p);
    expect(json.summary).toMatchObject({ scheduled: 1, ended: 1 });
    expect(json.lifecycle.scheduled).toEqual([{ third_id: 'H1', display_name: 'Hana Future', start_date: '2026-03-01', start_at: '2026-02-28T23:00:00.000Z', create_on: '2026-02-21T23:00:00.000Z' }]);
    const metrics = new OrgsyncMetrics({ build: { version: 'test' }, defaultMetrics: false });
    metricsRunObserver(metrics).onPlan!(p, desired({ members: [hire(), leo] }));
    const out = await metrics.registry.metrics();
    expect(out).toContain('orgsync_lifecycle_members{rule="scheduled"} 1');
    expect(out).toContain('orgsync_lifecycle_members{rule="ended"} 1');
    expect(lifecycleLine(p.lifecycle!.scheduled[0]!)).toBe('scheduled: not created yet: start_date 2026-03-01; created from 2026-02-21T23:00:00.000Z (sync.lifecycle.create_days_before_start)');
    expect(lifecycleLine(p.lifecycle!.ended[0]!)).toBe('ended: end_date 2026-01-31 has passed (2026-01-30T23:00:00.000Z): not created, whatever status the source gives (sync.lifecycle.end_action)');
  });
});

describe('end dates ahead (issue 45)', () => {
  const lifecycle = (end_action?: 'remove' | 'suspend') => lifecycleOptionsFrom(syncConfigSchema.parse({ lifecycle: { create_days_before_start: 0, ...(end_action ? { end_action } : {}) } }));
  const leaving: DesiredMember = { source_id: 'L2', display_name: 'Lena Later', email: 'lena@example.com', status: 'active', end_date: '2026-03-15', end_at: Date.UTC(2026, 2, 14, 23) };

  it('a member whose end date is ahead is synced as the source says, and the plan lists the day it goes beside the scheduled starts', () => {
    const p = calculatePlan(desired({ members: [hire(), leaving] }), snapshot(), { ...OPTS, now: Date.UTC(2026, 1, 1), lifecycle: lifecycle() });
    expect(p.changes.map((c) => [c.op, c.thirdId])).toEqual([['create', 'L2']]);
    expect(p.lifecycle?.ending).toEqual([{ rule: 'ending', thirdId: 'L2', displayName: 'Lena Later', date: '2026-03-15', at: '2026-03-14T23:00:00.000Z', action: 'remove' }]);
    const text = renderPlanText(p);
    expect(text).toContain('scheduled (1)\n  > members H1: "Hana Future" starts 2026-03-01; created from 2026-02-28T23:00:00.000Z\n\nscheduled ends (1)\n  < members L2: "Lena Later" ends 2026-03-15; removed from 2026-03-14T23:00:00.000Z\n');
    const json = planToJson(p);
    expect(json.summary).toMatchObject({ scheduled: 1, ended: 0, ending: 1 });
    expect(json.lifecycle.ending).toEqual([{ third_id: 'L2', display_name: 'Lena Later', end_date: '2026-03-15', end_at: '2026-03-14T23:00:00.000Z', action: 'remove' }]);
    expect(lifecycleLine(p.lifecycle!.ending![0]!)).toBe('ending: end_date 2026-03-15 is ahead: synced as the source says until then; removed from 2026-03-14T23:00:00.000Z (sync.lifecycle.end_action)');
    const suspend = calculatePlan(desired({ members: [leaving] }), snapshot(), { ...OPTS, now: Date.UTC(2026, 1, 1), lifecycle: lifecycle('suspend') });
    expect(renderPlanText(suspend)).toContain('  < members L2: "Lena Later" ends 2026-03-15; suspended from 2026-03-14T23:00:00.000Z\n');
  });

  it('on the day it passes, the member is ended, no longer ending; a leaver by status is neither', () => {
    const p = calculatePlan(desired({ members: [leaving] }), snapshot(), { ...OPTS, now: Date.UTC(2026, 2, 14, 23), lifecycle: lifecycle() });
    expect(p.lifecycle?.ending).toEqual([]);
    expect(p.lifecycle?.ended.map((e) => e.thirdId)).toEqual(['L2']);
    const left = calculatePlan(desired({ members: [{ ...leaving, status: 'left' }] }), snapshot(), { ...OPTS, now: Date.UTC(2026, 1, 1), lifecycle: lifecycle() });
    expect(left.lifecycle).toBeUndefined();
  });
});
