/**
 * `npm run bench:mirror`: a full mirror refresh of 100,000 members, 5,000 departments and 500 positions from the
 * emulator (limits off), then a no-op incremental refresh.
 *
 * Targets (issue 3): mirror build >= 20,000 records/s; the no-op refresh makes exactly one list request per entity;
 * peak RSS of the mirror process < 250 MB.
 *
 * The emulator runs in a child process (this same file with --emulator-child), so the RSS measured here is the
 * mirror's alone. It is filled through its API, concurrently, with its clock two hours behind; then its clock is set
 * right. The records are thus two hours old, as in a real tenant between changes; with records created seconds
 * before the walk, the 120 s overlap would (correctly) list them all again.
 * Prints JSON lines on stdout.
 */
import { fork, type ChildProcess } from 'node:child_process';
import { mkdtempSync, rmSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { fileURLToPath } from 'node:url';
import { refreshMirror } from '../src/daemon/refresh-mirror.js';
import { parseSeed, startEmulator } from '../src/emulator/index.js';
import { openStateDb } from '../src/mirror/db.js';
import { Mirror } from '../src/mirror/mirror.js';
import { PlatformClient } from '../src/platform/client.js';
import { TokenBucket } from '../src/platform/pacing.js';
import { systemClock, type Clock } from '../src/shared/clock.js';
import { silentLogger } from '../src/shared/logger.js';

const ADMIN = 'bench-admin-token';
const KEY = 'ek_bench_0123456789abcdef';
const SIZE = {
  members: Number(process.env.BENCH_MEMBERS ?? 100_000),
  departments: Number(process.env.BENCH_DEPARTMENTS ?? 5_000),
  positions: Number(process.env.BENCH_POSITIONS ?? 500),
};

/** The child: an emulator with limits off whose clock can be moved from two hours behind to now. */
async function emulatorChild(): Promise<void> {
  let offsetMs = -2 * 3600_000;
  const clock: Clock = { now: () => Date.now() + offsetMs, sleep: systemClock.sleep };
  const seed = parseSeed(
    {
      tenants: [{ id: 1, name: 'Bench', api_keys: [{ key: KEY, scopes: ['tenant.org.read', 'tenant.org.write'] }] }],
      limits: { per_api_key: 0, per_session_token: 0, per_tenant: 0, per_client_id: 0 },
    },
    'bench seed',
  );
  const running = await startEmulator({ seed, port: 0, host: '127.0.0.1', adminToken: ADMIN, clock });
  process.on('message', (msg) => {
    if (msg === 'clock-now') {
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

function request(child: ChildProcess, msg: string, reply: string): Promise<void> {
  return new Promise((resolve) => {
    const on = (m: unknown) => {
      if (m === reply) {
        child.off('message', on);
        resolve();
      }
    };
    child.on('message', on);
    child.send(msg);
  });
}

/** Runs `task(i)` for i in [0, count) with `width` in flight. */
async function pool(width: number, count: number, task: (i: number) => Promise<void>): Promise<void> {
  let next = 0;
  await Promise.all(
    Array.from({ length: width }, async () => {
      while (next < count) await task(next++);
    }),
  );
}

function emit(obj: Record<string, unknown>): void {
  process.stdout.write(`${JSON.stringify(obj)}\n`);
}

async function main(): Promise<void> {
  const child = fork(fileURLToPath(import.meta.url), ['--emulator-child'], { stdio: ['ignore', 'inherit', 'inherit', 'ipc'] });
  const url = await new Promise<string>((resolve, reject) => {
    child.once('message', (m) => resolve((m as { url: string }).url));
    child.once('exit', (code) => reject(new Error(`emulator child exited with ${code}`)));
  });
  const dir = mkdtempSync(join(tmpdir(), 'orgsync-bench-mirror-'));
  let peakRss = 0;
  const sampler = setInterval(() => {
    peakRss = Math.max(peakRss, process.memoryUsage.rss());
  }, 20);
  try {
    // Fill, through the API, concurrently.
    const fillStart = performance.now();
    const writer = new PlatformClient({ baseUrl: url, credential: KEY, concurrency: 32, bucket: new TokenBucket(systemClock, { ratePerSecond: 1e6, burst: 1000 }) });
    await pool(32, SIZE.positions, async (i) => {
      await writer.createPosition({ name: `Position ${i}`, third_position_id: `P${i}`, sort_order: i });
    });
    const positionsDone = performance.now();
    const departments: string[] = [];
    const batch = 500;
    for (let start = 0; start < SIZE.departments; start += batch) {
      // Each batch hangs under departments of earlier batches, so the tree is several levels deep.
      const parents = departments.slice();
      const created: string[] = [];
      await pool(32, Math.min(batch, SIZE.departments - start), async (k) => {
        const i = start + k;
        const parent = parents.length > 0 && i % 10 !== 0 ? parents[(i * 7919) % parents.length] : undefined;
        const d = await writer.createDepartment({ name: `Dept ${i}`, third_department_id: `D${i}`, ...(parent ? { parent_id: parent } : {}) });
        created.push(d.id);
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
    const fillSeconds = (performance.now() - fillStart) / 1000;
    emit({
      phase: 'fill',
      ...SIZE,
      seconds: round(fillSeconds),
      seconds_by_entity: {
        positions: round((positionsDone - fillStart) / 1000),
        departments: round((departmentsDone - positionsDone) / 1000),
        members: round((performance.now() - departmentsDone) / 1000),
      },
      records_per_second: Math.round((SIZE.members + SIZE.departments + SIZE.positions) / fillSeconds),
    });
    await request(child, 'clock-now', 'clock-set');

    // Full refresh: the pacing rate is set high because the emulator's limits are off (the default is 100/s, the platform's per-key limit).
    peakRss = process.memoryUsage.rss();
    const db = openStateDb(join(dir, 'state.db'));
    const mirror = new Mirror(db);
    const reader = new PlatformClient({ baseUrl: url, credential: KEY, requestsPerSecond: 10_000 });
    // Time spent in list requests (HTTP, the emulator, JSON and zod).
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
    const t0 = performance.now();
    const full = await refreshMirror({ client: timed, mirror, clock: systemClock, logger: silentLogger });
    const fullSeconds = (performance.now() - t0) / 1000;
    const records = full.entities.reduce((n, e) => n + e.records, 0);
    emit({
      phase: 'full_refresh',
      records,
      pages: full.entities.reduce((n, e) => n + e.pages, 0),
      seconds: round(fullSeconds),
      // List requests overlap the writes (the next page is fetched while one is applied), so this is not a share of `seconds`.
      seconds_in_list_requests: round(listSeconds),
      records_per_second: Math.round(records / fullSeconds),
      target_records_per_second: 20_000,
      ok: records / fullSeconds >= 20_000,
    });

    // No-op incremental refresh (default overlap 120 s): exactly one list request per entity.
    await fetch(`${url}/_emulator/requests`, { method: 'DELETE', headers: { authorization: `Bearer ${ADMIN}` } });
    const t1 = performance.now();
    const noop = await refreshMirror({ client: reader, mirror, clock: systemClock, logger: silentLogger });
    const noopSeconds = (performance.now() - t1) / 1000;
    const counts = (await (await fetch(`${url}/_emulator/requests`, { headers: { authorization: `Bearer ${ADMIN}` } })).json()) as { requests: { method: string; route: string; status: number; count: number }[] };
    const listRequests = Object.fromEntries(counts.requests.map((r) => [`${r.method} ${r.route} ${r.status}`, r.count]));
    const total = counts.requests.reduce((n, r) => n + r.count, 0);
    emit({
      phase: 'noop_incremental_refresh',
      modes: noop.entities.map((e) => e.mode),
      pages: Object.fromEntries(noop.entities.map((e) => [e.entity, e.pages])),
      requests_seen_by_emulator: listRequests,
      seconds: round(noopSeconds),
      ok: total === 3 && counts.requests.every((r) => r.method === 'GET' && r.count === 1 && r.status === 200),
    });

    const t2 = performance.now();
    const snap = mirror.snapshot();
    emit({ phase: 'snapshot', members: snap.members.byId.size, departments: snap.departments.byId.size, positions: snap.positions.byId.size, seconds: round((performance.now() - t2) / 1000) });

    await reader.close();
    db.close();
    clearInterval(sampler);
    peakRss = Math.max(peakRss, process.memoryUsage.rss());
    const maxRssLifetime = process.resourceUsage().maxRSS * 1024;
    emit({ phase: 'memory', peak_rss_mb_during_refresh: mb(peakRss), max_rss_mb_process_lifetime: mb(maxRssLifetime), target_mb: 250, ok: maxRssLifetime < 250 * 1024 * 1024 });
  } finally {
    clearInterval(sampler);
    child.send('stop');
    rmSync(dir, { recursive: true, force: true });
  }
}

const round = (n: number) => Math.round(n * 100) / 100;
const mb = (n: number) => Math.round((n / 1024 / 1024) * 10) / 10;

if (process.argv[2] === '--emulator-child') await emulatorChild();
else await main();
