/**
 * The pipeline's first stage, its options from the config (src/daemon/pipeline/options.ts) and the run's writes
 * behind the dry-run seam (src/daemon/pipeline/writes.ts, src/applier/seam.ts), over a real state DB in memory.
 */
import { join } from 'node:path';
import { afterEach, beforeEach, describe, expect, it } from 'vitest';
import { throughSeam, type ChangeResult } from '../../src/applier/index.js';
import { parseConfig } from '../../src/config/load.js';
import { applyOptionsFrom, daemonOptionsFrom, planOptionsFrom, refreshOptionsFrom, runSettingsFrom, settleOptionsFrom, stateDbOptionsFrom } from '../../src/daemon/pipeline/options.js';
import type { RunOnceDeps } from '../../src/daemon/pipeline/run-state.js';
import { startRun } from '../../src/daemon/pipeline/start.js';
import { DRY_RUN_WRITES, runWritesFor } from '../../src/daemon/pipeline/writes.js';
import { memberList, type Change, type Plan } from '../../src/domain/index.js';
import { openStateDb } from '../../src/mirror/db.js';
import { TEST_BUSY_TIMEOUT_MS } from '../helpers/state-db.js';
import { Mirror } from '../../src/mirror/mirror.js';
import { OwnershipStore } from '../../src/mirror/ownership.js';
import { RecordHistory } from '../../src/mirror/record-history.js';
import { silentLogger } from '../../src/shared/logger.js';
import type Database from 'better-sqlite3';

const CONFIG = `platform:
  base_url: http://127.0.0.1:9
  api_key: ek_test_key
  concurrency: 3
state:
  path: state/orgsync.db
  full_walk_every: 2h
  mirror_overlap_seconds: 7
  busy_timeout: 4s
  lease_ttl: 90s
sync:
  id: hr-sync
  policy: upsert-only
  max_failures: 12
  max_replan_rounds: 2
  exit_code_on_quarantine: 0
  delete_threshold: { max_count: 9, max_percent: 50 }
  root_department: eng
shutdown_timeout: 15s
`;

const config = parseConfig(CONFIG, '/etc/orgsync/orgsync.yaml', {});

describe('stage options from the config (options.ts)', () => {
  it('builds each option set from its config block: refresh, plan (with the delete threshold), apply, settle', () => {
    expect(refreshOptionsFrom(config)).toEqual({ overlapSeconds: 7, fullWalkEveryMs: 2 * 3600_000 });
    expect(planOptionsFrom(config)).toMatchObject({ syncId: 'hr-sync', policy: 'upsert-only', deleteThreshold: { max_count: 9, max_percent: 50 }, rootDepartment: 'eng' });
    expect(planOptionsFrom(config).lifecycle).toBeDefined();
    expect(applyOptionsFrom(config)).toMatchObject({ syncId: 'hr-sync', concurrency: 3, maxFailures: 12 });
    expect(settleOptionsFrom(config)).toEqual({ maxReplanRounds: 2, exitCodeOnQuarantine: 0 });
    expect(runSettingsFrom(config).plan).toEqual(planOptionsFrom(config));
  });

  it('resolves the state DB path against the config file and parses its durations to milliseconds', () => {
    expect(stateDbOptionsFrom(config)).toMatchObject({ path: join('/etc/orgsync', 'state/orgsync.db'), busyTimeoutMs: 4_000, leaseTtlMs: 90_000 });
    expect(daemonOptionsFrom(config)).toMatchObject({ syncId: 'hr-sync', shutdownGraceMs: 15_000, triggerTokenFile: undefined });
  });
});

const update = (thirdId: string): Change => ({
  id: `members:update:${thirdId}`,
  entity: 'members',
  op: 'update',
  thirdId,
  platformId: `acc-${thirdId}`,
  description: `update member ${thirdId}`,
  reason: 'name differs',
  fields: { display_name: 'Ann Lee' },
  request: { method: 'PATCH', path: `/org/members/acc-${thirdId}`, body: { display_name: 'Ann Lee' } },
  dependsOn: [],
});

let db: Database.Database;
let deps: RunOnceDeps;
const rows = (): number => db.prepare('SELECT count(*) FROM record_history').pluck().get() as number;

beforeEach(() => {
  db = openStateDb(':memory:', { busyTimeoutMs: TEST_BUSY_TIMEOUT_MS });
  let now = Date.parse('2026-11-27T10:00:00Z');
  deps = {
    config,
    client: {} as RunOnceDeps['client'],
    mirror: new Mirror(db),
    ownership: new OwnershipStore(db, 'hr-sync'),
    logger: silentLogger,
    clock: { now: () => (now += 1_000), sleep: async () => undefined },
    readDesiredState: async () => ({ departments: [], positions: [], members: memberList([]), quarantine: [], provided: { departments: true, positions: true, members: true } }),
    recordHistory: { store: new RecordHistory(db), runId: 'run-1', trigger: 'once', retentionDays: 1 },
  };
});
afterEach(() => db.close());

describe('the run writes behind the dry-run seam (writes.ts)', () => {
  it('a real run records its writes in the record history, commits its trust and settles owed completions', () => {
    const writes = runWritesFor(deps, false);
    const history = writes.history(undefined)!;
    history.add({ change: update('u1'), status: 'applied', platformId: 'acc-u1' } satisfies ChangeResult);
    history.add({ change: update('u2'), status: 'skipped', message: 'depends on x' } satisfies ChangeResult);
    history.flush();
    expect(rows()).toBe(1);

    let committed = 0;
    writes.commitTrust(() => (committed += 1));
    expect(committed).toBe(1);

    deps.ownership.oweCompletion('u9', { status: 'suspended' }, '2026-11-27T09:00:00Z');
    writes.settleMootCompletions(deps.ownership.owedCompletions(), { changes: [], withheld: [] } as unknown as Plan);
    expect(deps.ownership.owedCompletions().size).toBe(0);
  });

  it('a dry run writes nothing: no history, no trust commit, no settled completion, no approvals', () => {
    const writes = runWritesFor(deps, true);
    expect(writes).toBe(DRY_RUN_WRITES);
    expect(writes.history(undefined)).toBeUndefined();
    let committed = 0;
    writes.commitTrust(() => (committed += 1));
    expect(committed).toBe(0);
    deps.ownership.oweCompletion('u9', { status: 'suspended' }, '2026-11-27T09:00:00Z');
    writes.settleMootCompletions(deps.ownership.owedCompletions(), { changes: [], withheld: [] } as unknown as Plan);
    expect([...deps.ownership.owedCompletions().keys()]).toEqual(['u9']);
    expect(writes.approvals).toBeUndefined();
    expect(rows()).toBe(0);
  });

  it('the seam builds only the implementation it picks', () => {
    const built: string[] = [];
    expect(throughSeam(true, () => (built.push('real'), 'real'), () => (built.push('dry'), 'dry'))).toBe('dry');
    expect(throughSeam(false, () => (built.push('real'), 'real'), () => (built.push('dry'), 'dry'))).toBe('real');
    expect(built).toEqual(['dry', 'real']);
  });
});

describe('startRun (the options stage)', () => {
  it('fixes the settings, the writes and the clock of a run, and laps its phases', () => {
    const run = startRun(deps, { mode: 'apply', dryRun: true });
    expect(run.settings.apply).toMatchObject({ concurrency: 3, maxFailures: 12 });
    expect(run.writes).toBe(DRY_RUN_WRITES);
    expect(run.callsAtStart).toEqual({ requests: 0, rateLimited: 0 });
    run.lap('refreshMs');
    run.lap('sourcesMs');
    expect(run.phases).toEqual({ refreshMs: 1_000, sourcesMs: 1_000, planMs: 0, applyMs: 0 });
    expect(startRun(deps, { mode: 'apply' }).writes).not.toBe(DRY_RUN_WRITES);
  });
});
