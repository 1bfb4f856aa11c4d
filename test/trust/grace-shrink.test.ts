/** Grace period and shrink guard end to end: runOnce against the emulator over loopback, time from a set clock. */
import { afterEach, describe, expect, it } from 'vitest';
import { org, type OrgState } from '../e2e/harness.js';
import { TrustWorld } from './harness.js';

const HOUR = 3_600_000;
const TEN = org({
  departments: [['eng', 'Engineering']],
  members: Array.from({ length: 10 }, (_, i) => [`u${i}`, `Person ${i}`, `p${i}@acme.test`, 'eng'] as [string, string, string, string]),
});
const without = (d: OrgState, ...ids: string[]): OrgState => ({ ...d, members: [...d.members].filter((m) => !ids.includes(m.source_id)) });

let t: TrustWorld | undefined;
afterEach(async () => {
  await t?.close();
  t = undefined;
});

async function memberStatus(id: string): Promise<string | undefined> {
  const view = await t!.world.view();
  return view.members[id]?.status;
}

describe('grace period (sync.removal_grace)', () => {
  it('keeps a member missing for less than the grace period, shows the due time, and removes it after', async () => {
    t = await TrustWorld.start('id: hr-sync\n  delete_threshold: { max_count: 500, max_percent: 100 }\n  removal_grace: 72h');
    expect((await t.run(TEN)).exitCode).toBe(0);
    const firstMissing = t.clock.now();
    const held = await t.run(without(TEN, 'u9'));
    expect(held.exitCode).toBe(0);
    expect(held.plan.changes).toEqual([]);
    expect(held.plan.withheld).toHaveLength(1);
    expect(held.plan.withheld[0]).toMatchObject({ change: { entity: 'members', op: 'remove', thirdId: 'u9' }, dueAt: new Date(firstMissing + 72 * HOUR).toISOString() });
    expect(held.plan.withheld[0]!.why).toMatch(/^grace: missing from the sources since /);
    expect(await memberStatus('u9')).toBe('active');

    t.clock.advance(71 * HOUR);
    const still = await t.run(without(TEN, 'u9'));
    expect(still.exitCode).toBe(0);
    expect(still.plan.withheld[0]?.dueAt).toBe(new Date(firstMissing + 72 * HOUR).toISOString());
    expect(await memberStatus('u9')).toBe('active');

    t.clock.advance(1 * HOUR);
    const due = await t.run(without(TEN, 'u9'));
    expect(due.exitCode).toBe(0);
    expect(due.plan.changes.map((c) => c.id)).toEqual(['members:remove:u9']);
    expect(due.applied.members.remove).toBe(1);
    expect(await memberStatus('u9')).toBeUndefined();
  });

  it('forgets a member that reappears within the grace period: nothing happens, and a later absence starts afresh', async () => {
    t = await TrustWorld.start('id: hr-sync\n  delete_threshold: { max_count: 500, max_percent: 100 }\n  removal_grace: 30m');
    await t.run(TEN);
    await t.run(without(TEN, 'u3'));
    expect([...t.trustStore.missing().keys()]).toEqual(['members:u3']);
    t.clock.advance(20 * 60_000);
    const back = await t.run(TEN);
    expect(back.plan.changes).toEqual([]);
    expect(back.plan.withheld).toEqual([]);
    expect(t.trustStore.missing().size).toBe(0);
    t.clock.advance(20 * 60_000);
    const again = await t.run(without(TEN, 'u3'));
    expect(again.plan.withheld[0]?.dueAt).toBe(new Date(t.clock.now() + 30 * 60_000).toISOString());
    expect(await memberStatus('u3')).toBe('active');
  });

  it('{ runs: 3 } removes on the third consecutive run that misses the record', async () => {
    t = await TrustWorld.start('id: hr-sync\n  delete_threshold: { max_count: 500, max_percent: 100 }\n  removal_grace: { runs: 3 }');
    await t.run(TEN);
    const one = await t.run(without(TEN, 'u0'));
    expect(one.plan.withheld[0]?.why).toBe('grace: missing from the sources in 1 of 3 consecutive runs; removed on run 3');
    // A plan (no apply) does not count as a run.
    const planned = await t.run(without(TEN, 'u0'), { mode: 'plan' });
    expect(planned.plan.withheld[0]?.why).toContain('in 2 of 3');
    const two = await t.run(without(TEN, 'u0'));
    expect(two.plan.withheld[0]?.why).toContain('in 2 of 3');
    expect(await memberStatus('u0')).toBe('active');
    const three = await t.run(without(TEN, 'u0'));
    expect(three.plan.changes.map((c) => c.id)).toEqual(['members:remove:u0']);
    expect(await memberStatus('u0')).toBeUndefined();
  });

  it('a member marked left in the source is removed at once (an explicit leave is no disappearance)', async () => {
    t = await TrustWorld.start('id: hr-sync\n  delete_threshold: { max_count: 500, max_percent: 100 }\n  removal_grace: 7d');
    await t.run(TEN);
    const left: OrgState = { ...TEN, members: [...TEN.members].map((m) => (m.source_id === 'u1' ? { ...m, status: 'left' as const } : m)) };
    const r = await t.run(left);
    expect(r.plan.changes.map((c) => c.id)).toEqual(['members:remove:u1']);
    expect(await memberStatus('u1')).toBeUndefined();
  });
});

describe('shrink guard (sync.max_source_shrink_percent)', () => {
  it('a 30% smaller export plans no member removals, writes nothing and exits 3; --allow-source-shrink accepts it', async () => {
    t = await TrustWorld.start('id: hr-sync\n  delete_threshold: { max_count: 500, max_percent: 100 }');
    expect((await t.run(TEN)).exitCode).toBe(0);
    await t.world.resetCounts();
    const smaller = without(TEN, 'u7', 'u8', 'u9');
    const refused = await t.run(smaller);
    expect(refused.exitCode).toBe(3);
    expect(refused.result).toBe('refused');
    expect(refused.plan.refusal?.guard).toBe('source_shrink');
    expect(refused.plan.refusal?.message).toContain('members 10 -> 7 (-30%)');
    expect(refused.plan.changes.filter((c) => c.op === 'remove')).toEqual([]);
    expect(refused.plan.withheld.map((w) => w.change.id).sort()).toEqual(['members:remove:u7', 'members:remove:u8', 'members:remove:u9']);
    expect(await t.world.writeCalls()).toBe(0);
    // The refused read is not "good": the guard still compares with 10.
    expect(t.trustStore.snapshotCounts().members).toBe(10);
    expect((await t.run(smaller)).exitCode).toBe(3);

    const accepted = await t.run(smaller, { allowSourceShrink: true });
    expect(accepted.exitCode).toBe(0);
    expect(accepted.applied.members.remove).toBe(3);
    expect(t.trustStore.snapshotCounts().members).toBe(7);
    expect((await t.run(smaller)).plan.changes).toEqual([]);
  });

  it('a drop within the limit passes (10 -> 9 with the default 10%)', async () => {
    t = await TrustWorld.start('id: hr-sync\n  delete_threshold: { max_count: 500, max_percent: 100 }');
    await t.run(TEN);
    const r = await t.run(without(TEN, 'u9'));
    expect(r.exitCode).toBe(0);
    expect(r.applied.members.remove).toBe(1);
  });
});
