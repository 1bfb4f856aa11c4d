/**
 * `npm run bench:mirror`: a full mirror refresh of 100,000 members, 5,000 departments and 500 positions from the
 * emulator (limits off), then a no-op incremental refresh.
 *
 * Targets (issue 3): mirror build >= 20,000 records/s; the no-op refresh makes exactly one list request per entity;
 * peak RSS of the mirror process < 250 MB.
 *
 * The emulator runs in a child process (this same file with --emulator-child), which also fills it through its own
 * API, concurrently; so this process does nothing but the mirror's work and its RSS is the mirror's alone.
 * The emulator's clock runs two hours behind during the fill and is then set right: the records are two hours old,
 * as in a real tenant between changes. (With records created seconds before the walk, the default 120 s overlap
 * would, correctly, list them all again.) Sizes: BENCH_MEMBERS, BENCH_DEPARTMENTS, BENCH_POSITIONS.
 * Prints JSON lines on stdout.
 */
import { fork, type ChildProcess } from 'node:child_process';
import { existsSync, mkdtempSync, rmSync, statSync } from 'node:fs';
import { loadavg, tmpdir } from 'node:os';
import { join } from 'node:path';
import { fileURLToPath } from 'node:url';
import { refreshOptionsFrom } from '../src/daemon/pipeline/options.js';
import { refreshMirror } from '../src/daemon/refresh-mirror.js';
import { parseSeed, startEmulator } from '../packages/emulator/src/index.js';
import { PLATFORM_DEFAULTS, stateConfigSchema } from '../src/config/platform.js';
import { openStateDb } from '../src/mirror/db.js';
import { Mirror } from '../src/mirror/mirror.js';
import { clientLimitsFrom, PlatformClient } from '../src/platform/client.js';
import { TokenBucket } from '../src/platform/pacing.js';
import { systemClock, type Clock } from '../src/shared/clock.js';
import { silentLogger } from '../src/shared/logger.js';

const ADMIN = 'bench-admin-token';
const KEY = 'ek_bench_0123456789abcdef';
/** The `state:` defaults as the config schema gives them: the state DB's busy timeout and the refresh's settings. */
const STATE_DEFAULTS = stateConfigSchema.parse({});
const BUSY_TIMEOUT_MS = STATE_DEFAULTS.busy_timeout;
const REFRESH = refreshOptionsFrom({ state: STATE_DEFAULTS });
const SIZE = {
  members: Number(process.env.BENCH_MEMBERS ?? 100_000),
  departments: Number(process.env.BENCH_DEPARTMENTS ?? 5_000),
  positions: Number(process.env.BENCH_POSITIONS ?? 500),
};

type ChildMessage = { url: string } | { filled: Record<string, unknown> } | { cpuSeconds: number } | 'clock-set';

/** CPU seconds (user + system) this process has used. */
const cpuSeconds = () => {
  const u = process.cpuUsage();
  return (u.user + u.system) / 1e6;
};

/** Runs `task(i)` for i in [0, count) with `width` in flight. */
async function pool(width: number, count: number, task: (i: number) => Promise<void>): Promise<void> {
  let next = 0;
  await Promise.all(
    Array.from({ length: width }, async () => {
      while (next < count) await task(next++);
    }),
  );
}

/** Fills the emulator at `url` through its API: positions, a department tree several levels deep, members. */
async function fill(url: string): Promise<Record<string, unknown>> {
  const start = performance.now();
  const writer = new PlatformClient({ ...clientLimitsFrom(PLATFORM_DEFAULTS), baseUrl: url, credential: KEY, concurrency: 32, bucket: new TokenBucket(systemClock, { ratePerSecond: 1e6, burst: 1000 }) });
  await pool(32, SIZE.positions, async (i) => {
    await writer.createPosition({ name: `Position ${i}`, third_position_id: `P${i}`, sort_order: i });
  });
  const positionsDone = performance.now();
  const departments: string[] = [];
  const batch = 500;
  for (let first = 0; first < SIZE.departments; first += batch) {
    // Each batch hangs under departments of earlier batches.
    const parents = departments.slice();
    const created: string[] = [];
    await pool(32, Math.min(batch, SIZE.departments - first), async (k) => {
      const i = first + k;
      const parent = parents.length > 0 && i % 10 !== 0 ? parents[(i * 7919) % parents.length] : undefined;
      created.push((await writer.createDepartment({ name: `Dept ${i}`, third_department_id: `D${i}`, ...(parent ? { parent_id: parent } : {}) })).id);
    });
    departments.push(...created);
  }
  const departmentsDone = performance.now();
  await pool(32, SIZE.members, async (i) => {
    await writer.createMember({
      email: `m${i}@bench.test`,
      display_name: `Member ${i}`,
      third_user_id: `E${i}`,
      title: 'Engineer',
      department_id: departments[i % departments.length] ?? '',
    });
  });
  await writer.close();
  const seconds = (performance.now() - start) / 1000;
  return {
    ...SIZE,
    seconds: round(seconds),
    seconds_by_entity: {
      positions: round((positionsDone - start) / 1000),
      departments: round((departmentsDone - positionsDone) / 1000),
      members: round((performance.now() - departmentsDone) / 1000),
    },
    records_per_second: Math.round((SIZE.members + SIZE.departments + SIZE.positions) / seconds),
  };
}

/** One tenant, one read-write key, limits off. */
function benchSeed() {
  return parseSeed(
    {
      tenants: [{ id: 1, name: 'Bench', api_keys: [{ key: KEY, scopes: ['tenant.org.read', 'tenant.org.write'] }] }],
      limits: { per_api_key: 0, per_session_token: 0, per_tenant: 0, per_client_id: 0 },
    },
    'bench seed',
  );
}

/** The child: an emulator with limits off (its SQLite file at argv[3]), filled through its API, whose clock is two hours behind until told. */
async function emulatorChild(): Promise<void> {
  let offsetMs = -2 * 3600_000;
  const clock: Clock = { now: () => Date.now() + offsetMs, sleep: systemClock.sleep };
  const running = await startEmulator({ seed: benchSeed(), port: 0, host: '127.0.0.1', adminToken: ADMIN, clock, dbPath: process.argv[3]! });
  process.on('message', (msg) => {
    if (msg === 'fill') {
      void fill(running.url).then((filled) => process.send!({ filled }));
    } else if (msg === 'cpu') {
      process.send!({ cpuSeconds: cpuSeconds() });
    } else if (msg === 'clock-now') {
      offsetMs = 0;
      process.send!('clock-set');
    } else if (msg === 'stop') {
      void running.close().then(() => process.exit(0));
    }
  });
  // The parent gone (finished, killed or crashed): stop too, never linger.
  process.on('disconnect', () => process.exit(0));
  process.send!({ url: running.url });
}

/** Sends `msg` to the child and resolves with the first answer that `accept` takes. */
function ask<T>(child: ChildProcess, msg: string, accept: (m: ChildMessage) => T | undefined): Promise<T> {
  return new Promise((resolve) => {
    const on = (m: unknown) => {
      const v = accept(m as ChildMessage);
      if (v !== undefined) {
        child.off('message', on);
        resolve(v);
      }
    };
    child.on('message', on);
    child.send(msg);
  });
}

function emit(obj: Record<string, unknown>): void {
  process.stdout.write(`${JSON.stringify(obj)}\n`);
}

/** Samples this process's RSS every 10 ms; `peak()` is the highest since the last `reset()`. */
function rssSampler() {
  let peak = process.memoryUsage.rss();
  const timer = setInterval(() => {
    peak = Math.max(peak, process.memoryUsage.rss());
  }, 10);
  return {
    peak: () => Math.max(peak, process.memoryUsage.rss()),
    reset: () => {
      peak = process.memoryUsage.rss();
    },
    stop: () => clearInterval(timer),
  };
}

async function main(): Promise<void> {
  const dir = mkdtempSync(join(tmpdir(), 'orgsync-bench-mirror-'));
  const emulatorDb = join(dir, 'emulator.db');
  const child = fork(fileURLToPath(import.meta.url), ['--emulator-child', emulatorDb], { stdio: ['ignore', 'inherit', 'inherit', 'ipc'] });
  const childExited = new Promise<void>((resolve) => child.once('exit', () => resolve()));
  const url = await new Promise<string>((resolve, reject) => {
    child.once('message', (m) => resolve((m as { url: string }).url));
    child.once('exit', (code) => reject(new Error(`emulator child exited with ${code}`)));
  });
  const rss = rssSampler();
  try {
    const filled = await ask(child, 'fill', (m) => (typeof m === 'object' && 'filled' in m ? m.filled : undefined));
    emit({ phase: 'fill', ...filled });
    await ask(child, 'clock-now', (m) => (m === 'clock-set' ? true : undefined));

    // Full refresh. The pacing rate is raised because the emulator's limits are off (default: 100/s, the platform's per-key limit).
    const db = openStateDb(join(dir, 'state.db'), { busyTimeoutMs: BUSY_TIMEOUT_MS });
    const mirror = new Mirror(db);
    const reader = new PlatformClient({ ...clientLimitsFrom(PLATFORM_DEFAULTS), baseUrl: url, credential: KEY, requestsPerSecond: 10_000 });
    let listSeconds = 0;
    const timed = {
      listPage: (async (entity, params, options) => {
        const t = performance.now();
        try {
          return await reader.listPage(entity, params, options);
        } finally {
          listSeconds += (performance.now() - t) / 1000;
        }
      }) as typeof reader.listPage,
    };
    const rssBefore = process.memoryUsage.rss();
    rss.reset();
    const load = loadavg()[0]!;
    const childCpu = () => ask(child, 'cpu', (m) => (typeof m === 'object' && 'cpuSeconds' in m ? m.cpuSeconds : undefined));
    const emulatorCpu0 = await childCpu();
    const cpu0 = cpuSeconds();
    const t0 = performance.now();
    const full = await refreshMirror({ client: timed, mirror, clock: systemClock, logger: silentLogger, ...REFRESH });
    const fullSeconds = (performance.now() - t0) / 1000;
    const mirrorCpu = cpuSeconds() - cpu0;
    const emulatorCpu = (await childCpu()) - emulatorCpu0;
    const records = full.entities.reduce((n, e) => n + e.records, 0);
    emit({
      phase: 'full_refresh',
      records,
      pages: full.entities.reduce((n, e) => n + e.pages, 0),
      seconds: round(fullSeconds),
      // List requests (HTTP, the emulator, JSON, zod) overlap the SQLite writes: the next page is fetched while one is applied.
      seconds_in_list_requests: round(listSeconds),
      records_per_second: Math.round(records / fullSeconds),
      target_records_per_second: 20_000,
      ok: records / fullSeconds >= 20_000,
      // CPU time is robust to other load on the machine: the mirror process's own cost, and the emulator's.
      mirror_cpu_seconds: round(mirrorCpu),
      records_per_mirror_cpu_second: Math.round(records / mirrorCpu),
      emulator_cpu_seconds: round(emulatorCpu),
      rss_mb_before: mb(rssBefore),
      peak_rss_mb: mb(rss.peak()),
      load_average_1m_at_start: round(load),
    });
    const fullPeakRss = rss.peak();

    // No-op incremental refresh (default overlap 120 s): exactly one list request per entity.
    const admin = { authorization: `Bearer ${ADMIN}` };
    await fetch(`${url}/_emulator/requests`, { method: 'DELETE', headers: admin });
    rss.reset();
    const t1 = performance.now();
    const noop = await refreshMirror({ client: reader, mirror, clock: systemClock, logger: silentLogger, ...REFRESH });
    const noopSeconds = (performance.now() - t1) / 1000;
    const counts = ((await (await fetch(`${url}/_emulator/requests`, { headers: admin })).json()) as { requests: { method: string; route: string; status: number; count: number }[] }).requests;
    emit({
      phase: 'noop_incremental_refresh',
      modes: noop.entities.map((e) => e.mode),
      pages: Object.fromEntries(noop.entities.map((e) => [e.entity, e.pages])),
      requests_seen_by_emulator: Object.fromEntries(counts.map((r) => [`${r.method} ${r.route} ${r.status}`, r.count])),
      seconds: round(noopSeconds),
      peak_rss_mb: mb(rss.peak()),
      ok: counts.length === 3 && counts.every((r) => r.method === 'GET' && r.count === 1 && r.status === 200),
    });
    const peakMirrorRss = Math.max(fullPeakRss, rss.peak());

    // Not a target: what the planner's snapshot of this tenant costs.
    rss.reset();
    const t2 = performance.now();
    const snap = mirror.snapshot();
    const snapSeconds = round((performance.now() - t2) / 1000);
    const snapPeakRss = mb(rss.peak());
    // The snapshot holds departments and positions; members are read by key and scan: counted here, outside the timing.
    const memberCount = mirror.counts().reduce((n, c) => (c.entity === 'members' ? n + c.count : n), 0);
    emit({
      phase: 'snapshot',
      members: memberCount,
      departments: snap.departments.byId.size,
      positions: snap.positions.byId.size,
      seconds: snapSeconds,
      peak_rss_mb: snapPeakRss,
    });
    await reader.close();
    db.close();
    // Storage: the state DB file once closed (the WAL checkpointed into it), for sizing the chart's PVC.
    const stateDb = join(dir, 'state.db');
    emit({
      phase: 'storage',
      members: memberCount,
      state_db_mb: mb(statSync(stateDb).size + (existsSync(`${stateDb}-wal`) ? statSync(`${stateDb}-wal`).size : 0)),
    });
    emit({
      phase: 'memory',
      peak_rss_mb_mirror_build_and_noop_refresh: mb(peakMirrorRss),
      max_rss_mb_process_lifetime_including_snapshot: mb(process.resourceUsage().maxRSS * 1024),
      target_mb: 250,
      ok: peakMirrorRss < 250 * 1024 * 1024,
    });

    // The same data served by an emulator inside this process (its SQLite file reopened): no cross-process round
    // trips, so the figure shows the mirror's own speed when the machine's cores are busy with other work.
    // RSS here includes the emulator.
    child.send('stop');
    await childExited;
    const local = await startEmulator({ seed: benchSeed(), port: 0, host: '127.0.0.1', dbPath: emulatorDb });
    const dbB = openStateDb(join(dir, 'state-b.db'), { busyTimeoutMs: BUSY_TIMEOUT_MS });
    const readerB = new PlatformClient({ ...clientLimitsFrom(PLATFORM_DEFAULTS), baseUrl: local.url, credential: KEY, requestsPerSecond: 10_000 });
    rss.reset();
    const t3 = performance.now();
    const again = await refreshMirror({ client: readerB, mirror: new Mirror(dbB), clock: systemClock, logger: silentLogger, ...REFRESH });
    const againSeconds = (performance.now() - t3) / 1000;
    const againRecords = again.entities.reduce((n, e) => n + e.records, 0);
    emit({
      phase: 'full_refresh_emulator_in_process',
      records: againRecords,
      seconds: round(againSeconds),
      records_per_second: Math.round(againRecords / againSeconds),
      peak_rss_mb_mirror_and_emulator: mb(rss.peak()),
      load_average_1m_at_end: round(loadavg()[0]!),
    });
    await readerB.close();
    dbB.close();
    await local.close();
  } finally {
    rss.stop();
    if (child.connected) child.send('stop');
    rmSync(dir, { recursive: true, force: true });
  }
}

const round = (n: number) => Math.round(n * 100) / 100;
const mb = (n: number) => Math.round((n / 1024 / 1024) * 10) / 10;

if (process.argv[2] === '--emulator-child') await emulatorChild();
else await main();
