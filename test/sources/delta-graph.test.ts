/**
 * Microsoft Graph read by delta (issue 31 point 3), through `orgsync sync` into the emulator, against a loopback
 * Graph that speaks /users/delta (test/sources/delta-support.ts): the first read is full (the latest delta token taken
 * before /users), later runs read the delta (changed, new and @removed users over nextLink pages), and each is followed
 * by a full read that must find the same state. An expired token (410, syncStateNotFound) falls back to a full read;
 * a changed config, `full_read_interval` and `sync --full-read` force one; a dry run does not save the snapshot; the
 * shrink guard refuses a delta that removes too many users as it refuses a full read.
 */
import { TEST_BUSY_TIMEOUT_MS } from '../helpers/state-db.js';
import { rmSync, readFileSync, writeFileSync } from 'node:fs';
import { join } from 'node:path';
import { afterEach, beforeEach, describe, expect, it } from 'vitest';
import { loadConfig } from '../../src/config/load.js';
import { openStateDb } from '../../src/mirror/db.js';
import { SourceSnapshotStore } from '../../src/mirror/source-snapshot.js';
import { silentLogger } from '../../src/shared/logger.js';
import { systemClock } from '../../src/shared/clock.js';
import { DeltaSession, readSourcesReport } from '../../src/sources/index.js';
import { orgTestSeed, startTestEmulator, type TestEmulator } from '../helpers/emulator.js';
import { tempDir } from '../helpers/temp.js';
import { comparable, graphUser, platformMembers, startGraph, syncJson, writeSyncConfig, type GraphDouble } from './delta-support.js';

const ENV = { GRAPH_TOKEN: 'graph-token-1' };
const source = (base: string, extra = '') => `  - name: entra
    preset: microsoft-graph
    base_url: ${base}
    auth: { type: bearer, token: "\${GRAPH_TOKEN}" }
${extra}`;

let dir: string;
let emulator: TestEmulator;
let graph: GraphDouble;
let file: string;

beforeEach(async () => {
  dir = tempDir('orgsync-delta-graph-');
  emulator = await startTestEmulator(orgTestSeed());
  graph = await startGraph(Array.from({ length: 10 }, (_, i) => graphUser(i + 1)));
  file = writeSyncConfig(dir, emulator, source(graph.base));
});

afterEach(async () => {
  await graph.close();
  await emulator.close();
  rmSync(dir, { recursive: true, force: true });
});

/** The watermark and record count of the state DB's snapshot of `entra`. */
function snapshotOf(): { watermark: string | undefined; records: number } {
  const db = openStateDb(join(dir, 'state.db'), { busyTimeoutMs: TEST_BUSY_TIMEOUT_MS });
  try {
    const store = new SourceSnapshotStore(db);
    return { watermark: store.head('entra')?.watermark, records: store.count('entra') };
  } finally {
    db.close();
  }
}

/** The desired members of the config read by delta from the saved snapshot (nothing saved) and read in full. */
async function deltaAndFull(): Promise<{ delta: unknown[]; full: unknown[]; mode: string | undefined }> {
  const config = loadConfig(file, ENV);
  const db = openStateDb(join(dir, 'state.db'), { busyTimeoutMs: TEST_BUSY_TIMEOUT_MS });
  try {
    const session = new DeltaSession({ store: new SourceSnapshotStore(db), sources: config.sources, timezone: config.timezone, clock: systemClock, logger: silentLogger, fullRead: false, keep: false });
    const byDelta = await readSourcesReport(config, { env: ENV, logger: silentLogger, delta: session });
    const inFull = await readSourcesReport(config, { env: ENV, logger: silentLogger });
    return { delta: comparable([...byDelta.state.members]), full: comparable([...inFull.state.members]), mode: byDelta.sources[0]!.read?.mode };
  } finally {
    db.close();
  }
}

/** What the platform holds of the Graph world: third id -> display name and title. */
async function platformView(): Promise<Record<string, string>> {
  const out: Record<string, string> = {};
  for (const [id, m] of await platformMembers(emulator)) out[id] = `${m.display_name}|${m.title ?? ''}`;
  return out;
}
const worldView = (): Record<string, string> => Object.fromEntries([...graph.users.values()].map((u) => [u.id, `${String(u.displayName)}|${String(u.jobTitle ?? '')}`]));

describe('Microsoft Graph by delta', () => {
  it('reads in full first (the latest token before /users), then only the changes over nextLink pages; a full read then agrees', async () => {
    const first = await syncJson(file, ENV);
    expect([first.code, first.stderr]).toEqual([0, '']);
    expect(first.doc.source_reads).toEqual([{ source: 'entra', mode: 'full', reason: 'first read', records_read: 10 }]);
    const paths = graph.requests.map((r) => `${r.path}${r.query.get('$deltatoken') ? `?$deltatoken=${r.query.get('$deltatoken')}` : ''}`);
    expect(paths.slice(0, 2)).toEqual(['/v1.0/users/delta?$deltatoken=latest', '/v1.0/users']);
    expect(snapshotOf()).toEqual({ watermark: expect.stringMatching(/\/v1\.0\/users\/delta\?.*%24deltatoken=1$/), records: 10 });
    expect(await platformView()).toEqual(worldView());

    graph.update('u0003', { jobTitle: 'Staff Engineer' });
    graph.update('u0003', { displayName: 'Third User' });
    graph.add(graphUser(11));
    graph.add(graphUser(12, { department: 'Research' }));
    graph.remove('u0007');
    const mark = graph.requests.length;
    const second = await syncJson(file, ENV);
    expect([second.code, second.stderr]).toEqual([0, '']);
    expect(second.doc.source_reads).toEqual([{ source: 'entra', mode: 'delta', reason: expect.stringMatching(/^changes since the read of \d{4}-/), records_read: 4 }]);
    // Four changes at three a page: two delta pages, and no request to /users.
    expect(graph.since(mark).map((r) => r.path)).toEqual(['/v1.0/users/delta', '/v1.0/users/delta']);
    expect(await platformView()).toEqual(worldView());
    expect(snapshotOf()).toEqual({ watermark: expect.stringMatching(/%24deltatoken=6$/), records: 11 });

    // The snapshot-built state is the one a full read finds, and a full read has nothing to do.
    const both = await deltaAndFull();
    expect(both.mode).toBe('delta');
    expect(both.delta).toEqual(both.full);
    const full = await syncJson(file, ENV, '--full-read', '--dry-run');
    expect(full.doc.source_reads).toEqual([{ source: 'entra', mode: 'full', reason: '--full-read', records_read: 11 }]);
    expect(full.doc.result).toBe('in_sync');
  });

  for (const how of ['410', 'syncStateNotFound'] as const) {
    it(`an expired delta token (${how === '410' ? 'HTTP 410' : 'HTTP 400 syncStateNotFound'}) is answered by a full read in the same run`, async () => {
      expect((await syncJson(file, ENV)).code).toBe(0);
      graph.update('u0002', { jobTitle: 'Manager' });
      graph.forget(how);
      graph.remove('u0004');
      const mark = graph.requests.length;
      const r = await syncJson(file, ENV);
      expect([r.code, r.stderr]).toEqual([0, '']);
      const said = how === '410' ? 'Graph answered HTTP 410 resyncRequired' : 'Graph answered HTTP 400 syncStateNotFound';
      expect(r.doc.source_reads).toEqual([{ source: 'entra', mode: 'full', reason: `fell back to a full read: ${said}`, records_read: 9 }]);
      expect(graph.since(mark).map((q) => `${q.path} ${q.query.get('$deltatoken') ?? ''}`.trim())).toEqual(['/v1.0/users/delta 1', '/v1.0/users/delta latest', '/v1.0/users', '/v1.0/users', '/v1.0/users']);
      expect(await platformView()).toEqual(worldView());
      // The fresh token is used by the next run, which reads by delta again.
      graph.update('u0005', { jobTitle: 'Lead' });
      const next = await syncJson(file, ENV);
      expect(next.doc.source_reads).toEqual([{ source: 'entra', mode: 'delta', reason: expect.any(String), records_read: 1 }]);
      expect(await platformView()).toEqual(worldView());
    });
  }

  it('a Graph without /users/delta (404) is still read, in full, every run: the reason is said, nothing is lost', async () => {
    graph.dropDelta();
    const first = await syncJson(file, ENV);
    expect([first.code, first.stderr]).toEqual([0, '']);
    expect(first.doc.source_reads).toEqual([{ source: 'entra', mode: 'full', reason: 'first read', records_read: 10 }]);
    expect(await platformView()).toEqual(worldView());
    graph.update('u0002', { jobTitle: 'Manager' });
    const next = await syncJson(file, ENV);
    expect([next.code, next.stderr]).toEqual([0, '']);
    expect(next.doc.source_reads).toEqual([
      { source: 'entra', mode: 'full', reason: expect.stringMatching(/^fell back to a full read: no delta watermark \(members: GET .*\/v1\.0\/users\/delta.* answered HTTP 404 Request_ResourceNotFound\)$/), records_read: 10 },
    ]);
    expect(await platformView()).toEqual(worldView());
  });

  it('a changed config or mapping forces a full read; full_read_interval and --full-read do too', async () => {
    expect((await syncJson(file, ENV)).code).toBe(0);
    writeFileSync(file, readFileSync(file, 'utf8').replace('    auth:', '    phone_region: US\n    auth:'));
    const changed = await syncJson(file, ENV);
    expect(changed.doc.source_reads).toEqual([{ source: 'entra', mode: 'full', reason: 'config changed', records_read: 10 }]);
    // An unchanged config reads by delta again; --full-read reads in full on demand.
    expect((await syncJson(file, ENV)).doc.source_reads![0]!.mode).toBe('delta');
    expect((await syncJson(file, ENV, '--full-read')).doc.source_reads![0]!.reason).toBe('--full-read');
    // A timeout is not part of the mapping: no full read for it.
    writeFileSync(file, readFileSync(file, 'utf8').replace('    auth:', '    timeout_ms: 20000\n    auth:'));
    expect((await syncJson(file, ENV)).doc.source_reads![0]!.mode).toBe('delta');
    // A full read at least every full_read_interval (1ms: every run).
    writeFileSync(file, readFileSync(file, 'utf8').replace('    auth:', '    full_read_interval: 1ms\n    auth:'));
    const interval = await syncJson(file, ENV);
    expect(interval.doc.source_reads).toEqual([{ source: 'entra', mode: 'full', reason: 'full_read_interval 1ms elapsed', records_read: 10 }]);
  });

  it('a dry run and plan read by delta but leave the snapshot and its watermark as they were', async () => {
    expect((await syncJson(file, ENV)).code).toBe(0);
    const before = snapshotOf();
    graph.update('u0001', { jobTitle: 'Director' });
    graph.remove('u0009');
    const dry = await syncJson(file, ENV, '--dry-run');
    expect(dry.doc.result).toBe('dry_run');
    expect(dry.doc.source_reads).toEqual([{ source: 'entra', mode: 'delta', reason: expect.any(String), records_read: 2 }]);
    expect(snapshotOf()).toEqual(before);
    const { runCli } = await import('../helpers/cli.js');
    const plan = await runCli(['plan', '--config', file, '--output', 'json'], ENV);
    expect(plan.code).toBe(0);
    expect(snapshotOf()).toEqual(before);
    // The real run then reads the same changes from the same watermark.
    const real = await syncJson(file, ENV);
    expect(real.doc.source_reads).toEqual([{ source: 'entra', mode: 'delta', reason: expect.any(String), records_read: 2 }]);
    expect(snapshotOf().records).toBe(9);
    expect(await platformView()).toEqual(worldView());
  });

  it('the shrink guard refuses a delta that removes more users than it allows, as it refuses the same full read', async () => {
    expect((await syncJson(file, ENV)).code).toBe(0);
    for (const id of ['u0002', 'u0004', 'u0006']) graph.remove(id);
    const delta = await syncJson(file, ENV);
    expect(delta.doc.source_reads![0]!.mode).toBe('delta');
    expect([delta.code, delta.doc.result]).toEqual([3, 'refused']);
    expect(delta.doc.error).toContain('the sources shrank against the last good read');
    expect((await platformMembers(emulator)).size).toBe(10);
    const full = await syncJson(file, ENV, '--full-read');
    expect(full.doc.source_reads![0]!.mode).toBe('full');
    expect([full.code, full.doc.result, full.doc.error]).toEqual([3, 'refused', delta.doc.error]);
    // Accepted (and past the delete threshold), the delta's removals are applied.
    const accepted = await syncJson(file, ENV, '--allow-source-shrink', '--allow-deletes', '3');
    expect([accepted.code, accepted.doc.source_reads![0]!.mode]).toEqual([0, 'delta']);
    expect(await platformView()).toEqual(worldView());
  });
});
