/**
 * Each stage of the run pipeline (src/daemon/pipeline/) on its own, against the emulator in-process (real HTTP on
 * loopback) and a state DB file: refresh, read, plan, select, guard, apply, settle and record.
 */
import { afterEach, beforeEach, describe, expect, it } from 'vitest';
import { applyStage } from '../../src/daemon/pipeline/apply.js';
import { guardStage } from '../../src/daemon/pipeline/guard.js';
import { planStage } from '../../src/daemon/pipeline/plan.js';
import { readSources } from '../../src/daemon/pipeline/read-sources.js';
import { recordStage } from '../../src/daemon/pipeline/record.js';
import { refreshStage } from '../../src/daemon/pipeline/refresh.js';
import type { RunOnceDeps, RunOnceOptions } from '../../src/daemon/pipeline/run-state.js';
import { selectStage } from '../../src/daemon/pipeline/select.js';
import { settleStage } from '../../src/daemon/pipeline/settle.js';
import { startRun, type RunContext } from '../../src/daemon/pipeline/start.js';
import { openSummary } from '../../src/daemon/pipeline/summary.js';
import type { DesiredState } from '../../src/domain/index.js';
import { PlatformError } from '../../src/platform/errors.js';
import { isOrgsyncError } from '../../src/shared/errors.js';
import { systemClock } from '../../src/shared/clock.js';
import { silentLogger } from '../../src/shared/logger.js';
import { desiredOf, org, SyncWorld, type OrgState } from '../e2e/harness.js';

const ORG = org({
  departments: [
    ['eng', 'Engineering'],
    ['sales', 'Sales'],
  ],
  members: [
    ['u1', 'Ann Lee', 'ann@acme.test', 'eng'],
    ['u2', 'Bob Roy', 'bob@acme.test', 'sales'],
  ],
});

let world: SyncWorld;
beforeEach(async () => {
  world = await SyncWorld.start('id: hr-sync\n  delete_threshold: { max_count: 0, max_percent: 100 }');
});
afterEach(async () => {
  await world.close();
});

function depsFor(desired: OrgState): RunOnceDeps {
  return { config: world.config, client: world.client, mirror: world.mirror, ownership: world.ownership, logger: silentLogger, clock: systemClock, readDesiredState: async () => desiredOf(structuredClone(desired)) };
}

/** A run up to its plan and selection: the context and what the stages before the guard returned. */
async function planned(desired: OrgState, options: Partial<RunOnceOptions> = {}) {
  const run: RunContext = startRun(depsFor(desired), { mode: 'apply', ...options });
  await refreshStage(run.deps, run.settings.refresh);
  const read = await readSources(run.deps);
  const plan = planStage(run, read);
  const selected = selectStage(run, plan, read);
  return { run, desired: read, planned: plan, selected, summary: openSummary(run, selected) };
}

/** Runs every stage to the end (as runOnce does). */
async function fullRun(desired: OrgState, options: Partial<RunOnceOptions> = {}) {
  const p = await planned(desired, options);
  const gate = guardStage(p.run, p.planned, p.selected, p.desired, p.summary);
  if (gate.kind !== 'go') throw new Error('refused');
  const applied = await applyStage(p.run, gate, p.planned, p.selected, p.desired, p.summary);
  settleStage(p.run, gate, p.summary);
  return recordStage(p.run, p.summary, p.selected, applied.results, true);
}

describe('refreshStage and readSources', () => {
  it('fills an empty mirror from the platform, and reads the desired state the sources give', async () => {
    const run = startRun(depsFor(ORG), { mode: 'plan' });
    expect(world.mirror.all('departments')).toEqual([]);
    await refreshStage(run.deps, run.settings.refresh);
    expect(world.mirror.all('departments').some((d) => d.depth === 0 && d.name === 'Acme')).toBe(true);
    expect([...world.mirror.scanMembers()].map((m) => m.email)).toContain('ada@acme.test');
    const desired = await readSources(run.deps);
    expect([...desired.members].map((m) => m.source_id)).toEqual(['u1', 'u2']);
  });

  it('turns a platform failure into PLATFORM_ERROR naming what the platform said', async () => {
    const failing = { listPage: async () => Promise.reject(new PlatformError({ kind: 'server', status: 503, code: 'unavailable', message: 'the service is down for maintenance', method: 'GET', route: '/org/departments' })) };
    const run = startRun({ ...depsFor(ORG), client: failing as unknown as RunOnceDeps['client'] }, { mode: 'plan' });
    const err = await refreshStage(run.deps, run.settings.refresh).catch((e: unknown) => e);
    expect(isOrgsyncError(err) && err.code).toBe('PLATFORM_ERROR');
    expect((err as Error).message).toContain('the service is down for maintenance');
  });

  it('turns a refused credential into CREDENTIAL_REJECTED (issue 32), keeping what the platform said', async () => {
    const refusing = { listPage: async () => Promise.reject(new PlatformError({ kind: 'unauthorized', status: 401, code: 'invalid_api_key', message: 'invalid or expired credential', method: 'GET', route: '/org/departments' })) };
    const run = startRun({ ...depsFor(ORG), client: refusing as unknown as RunOnceDeps['client'] }, { mode: 'plan' });
    const err = await refreshStage(run.deps, run.settings.refresh).catch((e: unknown) => e);
    expect(isOrgsyncError(err) && err.code).toBe('CREDENTIAL_REJECTED');
    expect((err as Error).message).toMatch(/^the platform rejected the credential \(invalid or expired credential\): .*\(CREDENTIAL_REJECTED, docs\/errors\.md#credential_rejected\)$/);
  });
});

describe('planStage and selectStage', () => {
  it('plans the creates of a new org over the refreshed mirror, with the config`s plan options', async () => {
    const { planned: p, selected } = await planned(ORG);
    expect(p.plan.counts.departments.create).toBe(2);
    expect(p.plan.counts.members.create).toBe(2);
    expect(p.planOptions).toMatchObject({ syncId: 'hr-sync', deleteThreshold: { max_count: 0, max_percent: 100 } });
    expect(p.trust).toBeUndefined();
    expect(selected.plan).toBe(p.plan);
    expect(selected.selection).toBeUndefined();
  });

  it('--only narrows the plan to the record and what it needs first; a selector that matches nothing fails', async () => {
    const { selected } = await planned(ORG, { only: ['u1'] });
    expect(selected.plan.changes.map((c) => c.id).sort()).toEqual(['departments:create:eng', 'members:create:u1']);
    expect(selected.selection?.records.map((r) => r.thirdId)).toEqual(['u1']);
    const err = await planned(ORG, { only: ['nobody@acme.test'] }).catch((e: unknown) => e);
    expect(isOrgsyncError(err) && err.code).toBe('USAGE');
    const joined = await planned(ORG, { only: ['u2', 'nobody@acme.test'], onlyJoined: true });
    expect(joined.selected.selection?.unmatched).toEqual(['nobody@acme.test']);
  });
});

describe('guardStage', () => {
  it('lets an unrefused plan through with its changes', async () => {
    const p = await planned(ORG);
    const gate = guardStage(p.run, p.planned, p.selected, p.desired, p.summary);
    expect(gate.kind).toBe('go');
    expect(gate.kind === 'go' && gate.changes.length).toBe(p.planned.plan.changes.length);
    expect(p.summary.result).toBe('planned');
  });

  it('refuses a plan over the delete threshold: the summary says refused, exit 3, and nothing is applied', async () => {
    await fullRun(ORG);
    // Removals where sync.delete_threshold (max_count 0) allows none.
    const p = await planned(org({ departments: [['eng', 'Engineering']], members: [['u1', 'Ann Lee', 'ann@acme.test', 'eng']] }));
    const gate = guardStage(p.run, p.planned, p.selected, p.desired, p.summary);
    expect(gate).toEqual({ kind: 'refused' });
    expect(p.summary).toMatchObject({ result: 'refused', exitCode: 3 });
    expect(p.summary.error).toMatch(/delete/);
  });
});

describe('applyStage, settleStage and recordStage', () => {
  it('applies the plan, settles the run as applied (exit 0) and records its figures', async () => {
    const summary = await fullRun(ORG);
    expect(summary).toMatchObject({ result: 'applied', exitCode: 0, replanRounds: 0 });
    expect(summary.applied.members.create).toBe(2);
    expect(summary.durationMs).toBeGreaterThanOrEqual(0);
    const view = await world.view();
    expect(Object.keys(view.members).sort()).toEqual(['ada@acme.test', 'u1', 'u2']);
  });

  it('a dry run goes through the same stages and writes nothing to the platform or the state DB', async () => {
    const summary = await fullRun(ORG, { dryRun: true });
    expect(summary).toMatchObject({ result: 'dry_run', exitCode: 0, dryRun: true });
    expect(summary.applied.members.create).toBe(2);
    expect(await world.writeCalls()).toBe(0);
    expect(world.ownership.ownedMembers().size).toBe(0);
  });

  it('settles a run whose only problem is quarantine with sync.exit_code_on_quarantine (4 by default)', async () => {
    const quarantined: OrgState = { ...ORG, quarantine: [{ source: 'hr', entity: 'members', source_id: 'u3', reason: 'invalid_email', message: 'bad e-mail' }] as DesiredState['quarantine'] };
    const summary = await fullRun(quarantined);
    expect(summary).toMatchObject({ result: 'partial', exitCode: 4 });
  });

  it('records what --only did to each selected record', async () => {
    const summary = await fullRun(ORG, { only: ['u2'] });
    expect(summary.selection).toEqual([expect.objectContaining({ thirdId: 'u2', done: ['create applied'], neededFirst: ['departments sales: create applied'] })]);
  });
});
