/**
 * `npm run bench:sync`: the reconcile core at volume, with the shared synthetic org (bench/lib/synthetic-org.ts).
 *
 * 1. initial sync of 100,000 members / 5,000 departments / 500 positions, emulator limits off
 *    (writes/s, wall time, peak RSS; target peak RSS < 250 MB, issue 19: the process's own peak, the generated desired
 *    state included, as a real run holds its desired state)
 * 2. no-op run at 100,000 members, after one settling run (target: zero writes, one list request per entity, < 10 s)
 * 3. 1% churn run (target: writes equal to the changes, no more)
 * 4. the same org at 5,000 members with the real limits (100/s per key): sustained write rate >= 95% of the limit,
 *    zero 429s
 * 4b. `multi_key_sync` (issue 19): 20,000 members / 1,000 departments / 200 positions with 5 keys of one tenant at 100/s
 *    each and a tenant share of 500/s, against the emulator's real limits (100/s per key, 500/s per tenant): target
 *    >= 475 writes/s (95% of the budget), zero 429s, and >= 4.5x the single-key rate of `limited_sync` in the same run
 *    (BENCH_ONLY=limited runs phases 4 and 4b alone; BENCH_ONLY=multi_key 4b alone, for tuning: no ratio, ok false;
 *    BENCH_MULTI_CONCURRENCY sets its writes in flight)
 * 5. a plan for 1,000,000 synthetic members against an empty tenant, in a child process with Node's default heap
 *    settings, no heap flag (target < 60 s, peak RSS < 1 GB = 1024 MB, issue 19; BENCH_ONLY=plan_1m runs it alone)
 * 6. `history_growth` (issue 22): the state DB's growth per 100,000 changes recorded in the per-record history, through
 *    the real recording path (an initial sync of the same org with the history on, ~105,000 writes), measured as the
 *    pages of the record_history table and its indexes (SQLite's dbstat) before and after
 *    (BENCH_ONLY=history_growth runs this phase alone)
 *
 * The emulator runs in a child process (this file with --emulator-child) so the RSS measured is the sync's alone.
 * As in bench:mirror, its clock runs two hours behind while the org is written and is then set right, so the
 * no-op and churn runs see a tenant whose records are hours old (records written seconds before a refresh are,
 * correctly, listed again by the 120 s overlap).
 * Prints one JSON line per phase on stdout.
 */
import { fork } from 'node:child_process';
import { mkdtempSync, rmSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { fileURLToPath } from 'node:url';
import { parseConfig } from '../src/config/load.js';
import { runOnce, type RunSummary } from '../src/daemon/run-once.js';
import { memberList, type DesiredState, type PlatformDepartment } from '../src/domain/index.js';
import { openStateDb } from '../src/mirror/db.js';
import { Mirror } from '../src/mirror/mirror.js';
import { OwnershipStore } from '../src/mirror/ownership.js';
import { RecordHistory } from '../src/mirror/record-history.js';
import { createPlatformClient } from '../src/platform/client.js';
import { calculatePlan, listMembers } from '../src/planner/index.js';
import { systemClock } from '../src/shared/clock.js';
import { silentLogger } from '../src/shared/logger.js';
import { ask, emulatorRequests, resetRequests, serveEmulatorChild, startEmulatorChild, stopEmulatorChild } from './lib/emulator-child.js';
import { generateOrg } from './lib/synthetic-org.js';

const KEY = 'ek_bench_0123456789abcdef';
const SEED = 42;
const BIG = { members: Number(process.env.BENCH_MEMBERS ?? 100_000), departments: Number(process.env.BENCH_DEPARTMENTS ?? 5_000), positions: Number(process.env.BENCH_POSITIONS ?? 500) };
const LIMITED_MEMBERS = Number(process.env.BENCH_LIMITED_MEMBERS ?? 5_000);
/** Writes in flight (platform.concurrency; the default is 8). */
const CONCURRENCY = Number(process.env.BENCH_CONCURRENCY ?? 8);
const PLAN_MEMBERS = Number(process.env.BENCH_PLAN_MEMBERS ?? 1_000_000);
/** The multi-key phase: 5 more keys of the bench tenant, and its org and writes in flight. */
const MULTI_KEYS = [1, 2, 3, 4, 5].map((n) => `ek_benchk${n}_0123456789abcdef`);
const MULTI = { members: Number(process.env.BENCH_MULTI_MEMBERS ?? 20_000), departments: Number(process.env.BENCH_MULTI_DEPARTMENTS ?? 1_000), positions: Number(process.env.BENCH_MULTI_POSITIONS ?? 200) };
const MULTI_CONCURRENCY = Number(process.env.BENCH_MULTI_CONCURRENCY ?? 64);

const round = (n: number, digits = 2) => Math.round(n * 10 ** digits) / 10 ** digits;
const mb = (bytes: number) => Math.round(bytes / 1024 / 1024);
function emit(obj: Record<string, unknown>): void {
  process.stdout.write(`${JSON.stringify(obj)}\n`);
}

/** One sync's parts against an emulator; `recordHistory`: record every write per record, as the CLI does. */
function syncParts(url: string, dir: string, requestsPerSecond: number, recordHistory = false, keys?: { keys: string[]; tenantRequestsPerSecond: number; concurrency: number }) {
  const credentials = keys
    ? `  api_keys:\n${keys.keys.map((k) => `    - key: ${k}\n`).join('')}  tenant_requests_per_second: ${keys.tenantRequestsPerSecond}\n  concurrency: ${keys.concurrency}\n`
    : `  api_key: ${KEY}\n  concurrency: ${CONCURRENCY}\n`;
  const config = parseConfig(
    `platform:\n  base_url: ${url}\n${credentials}  requests_per_second: ${requestsPerSecond}\nstate:\n  path: ${join(dir, 'state.db')}\nsync:\n  id: bench\n`,
    join(dir, 'orgsync.yaml'),
    {},
  );
  const stats = { requests: 0, rateLimited: 0 };
  /** Time on the wire and waiting for a pacing slot, summed over the requests (for the multi-key phase's line). */
  const timing = { wireSeconds: 0, paceSeconds: 0, firstWriteSentMs: Infinity, lastWriteAnsweredMs: -Infinity };
  const client = createPlatformClient(config.platform, {
    observer: {
      onResponse: (method, _r, _s, seconds) => {
        stats.requests += 1;
        timing.wireSeconds += seconds;
        if (method !== 'GET') {
          // The write window: from the first write sent to the last write answered.
          const now = performance.now();
          timing.firstWriteSentMs = Math.min(timing.firstWriteSentMs, now - seconds * 1000);
          timing.lastWriteAnsweredMs = Math.max(timing.lastWriteAnsweredMs, now);
        }
      },
      onThrottled: (seconds) => {
        timing.paceSeconds += seconds;
      },
      onRateLimited: () => {
        stats.rateLimited += 1;
      },
    },
  });
  const db = openStateDb(config.state.path, { busyTimeoutMs: config.state.busy_timeout });
  const mirror = new Mirror(db);
  const ownership = new OwnershipStore(db, config.sync.id);
  let applyStartedAt = 0;
  const run = async (desired: DesiredState, allowDeletes?: number): Promise<{ summary: RunSummary; applySeconds: number; seconds: number; writeWindowSeconds: number }> => {
    const t0 = performance.now();
    timing.firstWriteSentMs = Infinity;
    timing.lastWriteAnsweredMs = -Infinity;
    applyStartedAt = 0;
    const summary = await runOnce(
      {
        config,
        client,
        mirror,
        ownership,
        logger: silentLogger,
        clock: systemClock,
        readDesiredState: async () => desired,
        callStats: () => ({ ...stats }),
        ...(recordHistory ? { recordHistory: { store: new RecordHistory(db), runId: `bench-${Date.now()}`, trigger: 'once', retentionDays: 90 } } : {}),
        observer: {
          onApplyStart: () => {
            applyStartedAt = performance.now();
          },
        },
      },
      { mode: 'apply', ...(allowDeletes !== undefined ? { allowDeletes } : {}) },
    );
    const end = performance.now();
    return { summary, applySeconds: applyStartedAt ? (end - applyStartedAt) / 1000 : 0, seconds: (end - t0) / 1000, writeWindowSeconds: Math.max(0, (timing.lastWriteAnsweredMs - timing.firstWriteSentMs) / 1000) };
  };
  return {
    run,
    timing,
    stats,
    db,
    async close() {
      db.close();
      await client.close();
    },
  };
}

function desiredOf(opts: { members: number; departments: number; positions: number }): DesiredState {
  const o = generateOrg({ ...opts, seed: SEED });
  return { ...o, members: memberList(o.members), quarantine: [], provided: { departments: true, positions: true, members: true } };
}

const writesOf = (s: RunSummary) => Object.values(s.applied).reduce((n, ops) => n + Object.values(ops).reduce((a, b) => a + b, 0), 0);

/** 1% churn of the members: title changes, department moves, leavers and joiners; returns the expected writes. */
function churn(desired: DesiredState): { next: DesiredState; changes: number } {
  const members = [...desired.members].map((m) => ({ ...m }));
  const active = members.map((m, i) => [m, i] as const).filter(([m]) => m.status === 'active');
  const n = Math.round(desired.members.length / 100);
  const titles = Math.round(n * 0.4);
  const moves = Math.round(n * 0.3);
  const leavers = Math.round(n * 0.15);
  const joiners = n - titles - moves - leavers;
  const step = Math.floor(active.length / n);
  const picked = Array.from({ length: n }, (_, k) => active[k * step]![0]);
  picked.slice(0, titles).forEach((m) => (m.title = `${m.title ?? ''} (acting)`.trim()));
  picked.slice(titles, titles + moves).forEach((m, k) => {
    const current = m.department_source_id;
    const other = desired.departments[(k * 37) % desired.departments.length]!.source_id;
    m.department_source_id = other === current ? desired.departments[(k * 37 + 1) % desired.departments.length]!.source_id : other;
  });
  const gone = new Set(picked.slice(titles + moves, titles + moves + leavers).map((m) => m.source_id));
  const next = members.filter((m) => !gone.has(m.source_id));
  for (let k = 0; k < joiners; k++) {
    next.push({ source_id: `J${String(k).padStart(6, '0')}`, display_name: `Joiner ${k}`, email: `joiner.${k}@example.com`, department_source_id: desired.departments[k % desired.departments.length]!.source_id, status: 'active' });
  }
  return { next: { ...desired, members: memberList(next) }, changes: n };
}

async function planChild(): Promise<void> {
  const t0 = performance.now();
  const desired = desiredOf({ members: PLAN_MEMBERS, departments: BIG.departments, positions: BIG.positions });
  const generated = performance.now();
  const root: PlatformDepartment = { id: 'root', parent_id: '', name: 'Bench', path: '/Bench', depth: 0, sort_order: 0, third_department_id: '', member_count: 0, metadata: {}, status: 'active', updated_at: new Date().toISOString() };
  const plan = calculatePlan(desired, { departments: [root], positions: [], members: listMembers([], new Map()) }, { syncId: 'bench', policy: 'sync', memberRemoval: 'left', deleteThreshold: { max_count: 500, max_percent: 20 }, adopt: { members: [], departments: [], positions: [] }, now: Date.now() });
  const planned = performance.now();
  process.send!({
    phase: 'plan_1m',
    members: PLAN_MEMBERS,
    changes: plan.changes.length,
    generate_seconds: round((generated - t0) / 1000),
    plan_seconds: round((planned - generated) / 1000),
    peak_rss_mb: Math.round(process.resourceUsage().maxRSS / 1024),
    target: { plan_seconds: 60, peak_rss_mb: 1024 },
    ok: (planned - generated) / 1000 < 60 && process.resourceUsage().maxRSS / 1024 < 1024,
  });
}

/** Phase 5 in a child of its own (its own peak RSS), with no heap flag: Node's default heap settings. */
async function planPhase(): Promise<Record<string, unknown>> {
  const planner = fork(fileURLToPath(import.meta.url), ['--plan-child'], { stdio: ['ignore', 'inherit', 'inherit', 'ipc'], execArgv: [] });
  const result = await new Promise<Record<string, unknown>>((resolve, reject) => {
    planner.once('message', (m) => resolve(m as Record<string, unknown>));
    planner.once('exit', (code) => reject(new Error(`plan child exited with ${code}`)));
  });
  planner.kill();
  return result;
}

/** Bytes of the record_history table and its indexes (dbstat), and its rows. */
function historyBytes(db: ReturnType<typeof openStateDb>): { bytes: number; entries: number } {
  const row = db.prepare("SELECT coalesce(sum(pgsize), 0) AS bytes FROM dbstat WHERE name = 'record_history' OR name LIKE 'record_history_%'").get() as { bytes: number };
  const { n } = db.prepare('SELECT count(*) AS n FROM record_history').get() as { n: number };
  return { bytes: row.bytes, entries: n };
}

/** 6. The state DB's growth per 100,000 recorded changes: an initial sync with the per-record history on. */
async function historyGrowth(dir: string): Promise<void> {
  const { child, url } = await startEmulatorChild(fileURLToPath(import.meta.url));
  const parts = syncParts(url, join(dir, 'history'), 10_000, true);
  try {
    const before = historyBytes(parts.db);
    const fileBefore = (parts.db.pragma('page_count', { simple: true }) as number) * (parts.db.pragma('page_size', { simple: true }) as number);
    const r = await parts.run(desiredOf(BIG));
    const after = historyBytes(parts.db);
    const fileAfter = (parts.db.pragma('page_count', { simple: true }) as number) * (parts.db.pragma('page_size', { simple: true }) as number);
    const entries = after.entries - before.entries;
    const perEntry = (after.bytes - before.bytes) / entries;
    emit({
      phase: 'history_growth',
      members: BIG.members,
      writes: writesOf(r.summary),
      entries,
      history_bytes: after.bytes - before.bytes,
      bytes_per_entry: Math.round(perEntry),
      bytes_per_100k_changes: Math.round(perEntry * 100_000),
      mb_per_100k_changes: round((perEntry * 100_000) / 1024 / 1024, 1),
      state_db_file_growth_mb: mb(fileAfter - fileBefore),
      seconds: round(r.seconds),
      ok: r.summary.exitCode === 0 && entries === writesOf(r.summary),
    });
  } finally {
    await parts.close();
    await stopEmulatorChild(child);
  }
}

/** Phases 4 and 4b: one key at the real limits, then five keys of the tenant at the real limits, side by side. */
async function limitedPhases(dir: string, multiOnly = false): Promise<void> {
  const single = multiOnly ? undefined : await limitedSync(dir);

  // 4b. Five keys at 100/s each, a tenant share of 500/s, the emulator's real limits, 20,000 members.
  const { child, url } = await startEmulatorChild(fileURLToPath(import.meta.url), ['limited']);
  const multi = desiredOf(MULTI);
  const mparts = syncParts(url, join(dir, 'multi'), 100, false, { keys: MULTI_KEYS, tenantRequestsPerSecond: 500, concurrency: MULTI_CONCURRENCY });
  const cpu0 = process.cpuUsage();
  const mrun = await mparts.run(multi);
  const cpu = process.cpuUsage(cpu0);
  const answered429 = (await emulatorRequests(url)).filter((r) => r.status === 429).reduce((n, r) => n + r.count, 0);
  const mwrites = writesOf(mrun.summary);
  // Writes per second over the write window (first write sent to last write answered), as the target means it; the
  // apply's wall time also holds the state DB's bookkeeping after the last write (apply_writes_per_second).
  const mrate = mwrites / mrun.writeWindowSeconds;
  const ratio = single ? mrate / single.windowRate : Number.NaN;
  emit({
    phase: 'multi_key_sync',
    ...MULTI,
    keys: MULTI_KEYS.length,
    key_requests_per_second: 100,
    tenant_requests_per_second: 500,
    concurrency: MULTI_CONCURRENCY,
    exit_code: mrun.summary.exitCode,
    writes: mwrites,
    apply_seconds: round(mrun.applySeconds),
    apply_writes_per_second: round(mwrites / mrun.applySeconds, 1),
    write_window_seconds: round(mrun.writeWindowSeconds),
    writes_per_second: round(mrate, 1),
    sync_cpu_seconds: round((cpu.user + cpu.system) / 1e6, 1),
    mean_answer_ms: round((mparts.timing.wireSeconds / mparts.stats.requests) * 1000, 1),
    mean_pacing_wait_ms: round((mparts.timing.paceSeconds / mparts.stats.requests) * 1000, 1),
    rate_limited_429s: mrun.summary.rateLimited,
    emulator_429s: answered429,
    compared_with: single
      ? `limited_sync of this run: 1 key at 100/s, ${LIMITED_MEMBERS} members, ${round(single.windowRate, 1)} writes/s over its write window`
      : 'nothing (BENCH_ONLY=multi_key: no single-key phase in this run)',
    single_key_writes_per_second: single ? round(single.windowRate, 1) : null,
    ratio_to_single_key: single ? round(ratio, 2) : null,
    target: { writes_per_second: 475, rate_limited_429s: 0, ratio_to_single_key: 4.5 },
    ok: single !== undefined && mrun.summary.exitCode === 0 && mrate >= 475 && mrun.summary.rateLimited === 0 && answered429 === 0 && ratio >= 4.5,
  });
  await mparts.close();
  await stopEmulatorChild(child);
}

/** Phase 4: one key at the real limits; returns its writes per second. */
async function limitedSync(dir: string): Promise<{ rate: number; windowRate: number }> {
  // 4. Real limits (100/s per key) at 5,000 members.
  const { child, url } = await startEmulatorChild(fileURLToPath(import.meta.url), ['limited']);
  const limited = desiredOf({ ...BIG, members: LIMITED_MEMBERS });
  const lparts = syncParts(url, join(dir, 'limited'), 100);
  const lrun = await lparts.run(limited);
  const lwrites = writesOf(lrun.summary);
  const rate = lwrites / lrun.applySeconds;
  const windowRate = lwrites / lrun.writeWindowSeconds;
  emit({
    phase: 'limited_sync',
    members: LIMITED_MEMBERS,
    departments: BIG.departments,
    positions: BIG.positions,
    writes: lwrites,
    apply_seconds: round(lrun.applySeconds),
    writes_per_second: round(rate, 1),
    write_window_seconds: round(lrun.writeWindowSeconds),
    write_window_writes_per_second: round(windowRate, 1),
    limit_per_second: 100,
    rate_limited_429s: lrun.summary.rateLimited,
    target: { writes_per_second: 95, rate_limited_429s: 0 },
    ok: rate >= 95 && lrun.summary.rateLimited === 0,
  });
  await lparts.close();
  await stopEmulatorChild(child);
  return { rate, windowRate };
}

async function main(): Promise<void> {
  const dir = mkdtempSync(join(tmpdir(), 'orgsync-bench-sync-'));
  try {
    if (process.env.BENCH_ONLY === 'history_growth') {
      await historyGrowth(dir);
      return;
    }
    if (process.env.BENCH_ONLY === 'plan_1m') {
      emit(await planPhase());
      return;
    }
    if (process.env.BENCH_ONLY === 'limited' || process.env.BENCH_ONLY === 'multi_key') {
      await limitedPhases(dir, process.env.BENCH_ONLY === 'multi_key');
      return;
    }
    // 1. Initial sync, limits off.
    const { child, url } = await startEmulatorChild(fileURLToPath(import.meta.url));
    const big = desiredOf(BIG);
    const parts = syncParts(url, join(dir, 'big'), 10_000);
    let peak = process.memoryUsage.rss();
    let peakHeap = 0;
    const sampler = setInterval(() => {
      const m = process.memoryUsage();
      peak = Math.max(peak, m.rss);
      peakHeap = Math.max(peakHeap, m.heapTotal);
    }, 50);
    const initial = await parts.run(big);
    clearInterval(sampler);
    // The process's own high-water mark as well (nothing ran before this phase): a peak between two samples counts.
    peak = Math.max(peak, process.resourceUsage().maxRSS * 1024);
    const writes = writesOf(initial.summary);
    emit({
      phase: 'initial_sync',
      ...BIG,
      concurrency: CONCURRENCY,
      exit_code: initial.summary.exitCode,
      writes,
      failures: initial.summary.failures.length,
      wall_seconds: round(initial.seconds),
      apply_seconds: round(initial.applySeconds),
      phases_ms: initial.summary.phases,
      writes_per_second: Math.round(writes / initial.applySeconds),
      peak_rss_mb: mb(peak),
      peak_heap_total_mb: mb(peakHeap),
      target: { peak_rss_mb: 250 },
      ok: initial.summary.exitCode === 0 && mb(peak) < 250,
    });

    if (process.env.BENCH_ONLY === 'initial') {
      await parts.close();
      await stopEmulatorChild(child);
      return;
    }

    // 2. No-op run. Watermarks are platform time (the Date of the refresh's first page), taken before the initial
    // sync wrote anything, so the first run after it re-reads, once, every record that sync itself wrote (correct: the
    // mirror cannot tell its own writes from another client's). That settling run is reported apart; the no-op
    // target is for the steady state after it, as in any later scheduled run.
    await ask(child, 'clock-now', 'clock-set');
    await resetRequests(url);
    const settle = await parts.run(big);
    const settleLists = (await emulatorRequests(url)).filter((r) => r.method === 'GET').reduce((n, r) => n + r.count, 0);
    emit({ phase: 'noop_settle', members: BIG.members, changes_planned: settle.summary.plan.changes.length, list_requests: settleLists, seconds: round(settle.seconds), note: 'first run after the initial sync: re-reads the records it wrote since the pre-sync watermark' });
    await resetRequests(url);
    const noop = await parts.run(big);
    const reqs = await emulatorRequests(url);
    const noopWrites = reqs.filter((r) => r.method !== 'GET').reduce((n, r) => n + r.count, 0);
    const lists = Object.fromEntries(reqs.filter((r) => r.method === 'GET').map((r) => [r.route.replace('/api/external/v1', ''), r.count]));
    emit({
      phase: 'noop_run',
      members: BIG.members,
      changes_planned: noop.summary.plan.changes.length,
      phases_ms: noop.summary.phases,
      writes: noopWrites,
      list_requests: lists,
      seconds: round(noop.seconds),
      target: { writes: 0, list_requests_per_entity: 1, seconds: 10 },
      ok: noopWrites === 0 && Object.values(lists).every((n) => n === 1) && Object.keys(lists).length === 3 && noop.seconds < 10,
    });

    // 3. 1% churn.
    const { next, changes } = churn(big);
    await resetRequests(url);
    const churned = await parts.run(next);
    const churnWrites = (await emulatorRequests(url)).filter((r) => r.method !== 'GET').reduce((n, r) => n + r.count, 0);
    emit({
      phase: 'churn_1pct',
      changes,
      planned: churned.summary.plan.changes.length,
      writes: churnWrites,
      exit_code: churned.summary.exitCode,
      seconds: round(churned.seconds),
      ok: churnWrites === changes && churned.summary.exitCode === 0,
    });
    await parts.close();
    await stopEmulatorChild(child);

    await limitedPhases(dir);

    // 5. A plan for 1,000,000 members, in its own process (its own peak RSS).
    emit(await planPhase());

    // 6. The per-record history's growth of the state DB.
    await historyGrowth(dir);
  } finally {
    rmSync(dir, { recursive: true, force: true });
  }
}

if (process.argv.includes('--emulator-child')) await serveEmulatorChild({ keys: [KEY, ...MULTI_KEYS], limited: process.argv.includes('limited') });
else if (process.argv.includes('--plan-child')) await planChild();
else await main();
