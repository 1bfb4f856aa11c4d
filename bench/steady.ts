/**
 * `npm run bench:steady` (issue 42): the daily run on a populated tenant, every day after the first.
 *
 * For each size of BENCH_STEADY_MEMBERS (default `100000,1000000`; 5,000 departments and 500 positions,
 * BENCH_DEPARTMENTS, BENCH_POSITIONS) a tenant is filled once by the CLI itself and cached in
 * `.bench-out/steady/<members>-<departments>-<positions>/` (the emulator's `--db` file, the state DB, the CSV files):
 * the initial `orgsync sync` into the empty tenant, the first `sync` after it (which re-lists what the import wrote
 * after its watermark), and a `sync` a day later (the emulator's clock moved on). Their figures are kept in the cache's
 * `fill.json` and printed with every run of the bench. BENCH_STEADY_REFILL=1 fills again.
 *
 * Then, on copies of the cached emulator and state DB (the cache never changes), each as its own `node dist/cli.js`
 * process with no heap flag (peak RSS from getrusage at exit, wall time from spawn to exit):
 * - `sync_nochange`: `orgsync sync`, nothing changed;
 * - with 1% of the members' titles changed in the export: `plan_churn`, `dry_run_churn` (`sync --dry-run`),
 *   `explain` (a changed member), and `daemon_churn`: `orgsync daemon` until its start run is done (it applies the
 *   1%), then SIGTERM (its good exit is 143).
 * Targets: 512 MB at a million, 160 MB at 100,000 (issue 42 point 1); `sync_nochange` within 60 s at a million
 * (point 2). One JSON line per run; BENCH_ONLY (phase names, comma-separated) measures some. Run it under `uptime`.
 */
import { copyFileSync, existsSync, mkdirSync, readFileSync, rmSync, statSync, writeFileSync } from 'node:fs';
import { createServer } from 'node:net';
import { join } from 'node:path';
import { fileURLToPath } from 'node:url';
import type { ChildProcess } from 'node:child_process';
import { csvSourceConfig, memberId, writeOrgCsv } from './lib/synthetic-org.js';
import { ask, emulatorRequests, resetRequests, serveEmulatorChild, startEmulatorChild, stopEmulatorChild } from './lib/emulator-child.js';
import { runMeasuredCli, type CliRun } from './lib/cli-process.js';

const KEY = 'ek_benchsteady_4f8a2c9e71b3d6054e2a';
const SIZES = (process.env.BENCH_STEADY_MEMBERS ?? '100000,1000000').split(',').map(Number);
const DEPARTMENTS = Number(process.env.BENCH_DEPARTMENTS ?? 5_000);
const POSITIONS = Number(process.env.BENCH_POSITIONS ?? 500);
const ONLY = process.env.BENCH_ONLY?.split(',');
const ROOT = fileURLToPath(new URL('../../.bench-out/steady/', import.meta.url));
const DAY_MS = 86_400_000;
/** 1% of the members (every hundredth) gets another title. */
const CHURN_EVERY = 100;

const targetMb = (members: number): number => (members >= 1_000_000 ? 512 : members >= 100_000 ? 160 : 512);

/** A free loopback port for the daemon's listener. */
async function freePort(): Promise<number> {
  const server = createServer();
  await new Promise<void>((resolve) => server.listen(0, '127.0.0.1', resolve));
  const port = (server.address() as { port: number }).port;
  await new Promise((resolve) => server.close(resolve));
  return port;
}

/** A config on `url` reading the CSV files in `hrDir`, the state DB in `dir`. */
function writeConfig(path: string, url: string, dir: string, hrDir: string, port: number): void {
  const platform = { base_url: url, api_key: KEY, requests_per_second: 10_000, tenant_requests_per_second: 10_000, concurrency: 16 };
  const config = {
    platform,
    state: { path: join(dir, 'state.db') },
    sync: { id: 'bench-steady' },
    sources: [csvSourceConfig(hrDir)],
    log: { level: 'warn' },
    metrics: { listen: `127.0.0.1:${port}` },
    schedule: '0 3 1 1 *',
  };
  writeFileSync(path, JSON.stringify(config));
}

const mb = (path: string): number => (existsSync(path) ? Math.round(statSync(path).size / 1048576) : 0);

/** Fills the cached tenant of `members` (when not done yet): the initial sync, then the first sync after it. */
async function fill(members: number, cache: string): Promise<Record<string, unknown>> {
  const marker = join(cache, 'fill.json');
  if (existsSync(marker) && process.env.BENCH_STEADY_REFILL !== '1') return JSON.parse(readFileSync(marker, 'utf8')) as Record<string, unknown>;
  rmSync(cache, { recursive: true, force: true });
  mkdirSync(join(cache, 'hr'), { recursive: true });
  mkdirSync(join(cache, 'churn'), { recursive: true });
  await writeOrgCsv(join(cache, 'hr'), { members, departments: DEPARTMENTS, positions: POSITIONS, seed: 42 });
  await writeOrgCsv(join(cache, 'churn'), { members, departments: DEPARTMENTS, positions: POSITIONS, seed: 42, titleChurnEvery: CHURN_EVERY });
  const { child, url } = await startEmulatorChild(fileURLToPath(import.meta.url), [`--db=${join(cache, 'emulator.db')}`]);
  const config = join(cache, 'orgsync.yaml');
  writeConfig(config, url, cache, join(cache, 'hr'), await freePort());
  const figures: Record<string, unknown> = { members, departments: DEPARTMENTS, positions: POSITIONS, date: new Date().toISOString() };
  try {
    for (const name of ['initial_sync', 'first_sync_after', 'next_day_sync']) {
      // The next day: past the mirror's overlap, so the cached tenant's watermark is clear of the import.
      if (name === 'next_day_sync') await ask(child, `clock+${DAY_MS}`, 'clock-set');
      await resetRequests(url);
      const r = await runMeasuredCli(cache, name, ['sync', '--config', config]);
      if (r.exit !== 0) throw new Error(`${name} exited ${r.exit}: ${r.stderr}`);
      const calls = (await emulatorRequests(url)).reduce((n, x) => n + x.count, 0);
      figures[name] = { seconds: r.seconds, peak_rss_mb: r.peakMb, api_calls: calls, state_db_mb: mb(join(cache, 'state.db')) + mb(join(cache, 'state.db-wal')) };
      console.log(JSON.stringify({ phase: name, members, ...(figures[name] as object) }));
    }
  } finally {
    await stopEmulatorChild(child);
  }
  figures.state_db_bytes_per_member = Math.round(statSync(join(cache, 'state.db')).size / members);
  writeFileSync(marker, JSON.stringify(figures, null, 2));
  return figures;
}

/** Waits for the daemon's start run to finish (its /status), then stops it with SIGTERM. */
function stopAfterFirstRun(port: number): (child: ChildProcess) => Promise<void> {
  return async (child) => {
    for (;;) {
      await new Promise((r) => setTimeout(r, 250));
      if (child.exitCode !== null) return;
      try {
        const s = (await (await fetch(`http://127.0.0.1:${port}/status`)).json()) as { current_run: unknown; runs: { result: string }[] };
        if (s.current_run === null && s.runs.length > 0 && s.runs[0]!.result !== 'running') break;
      } catch {
        // the listener is not up yet
      }
    }
    // BENCH_DAEMON_SNAPSHOT=1: a heap snapshot of the daemon after its start run (node --heapsnapshot-signal=SIGUSR2).
    if (process.env.BENCH_DAEMON_SNAPSHOT === '1') {
      child.kill('SIGUSR2');
      await new Promise((r) => setTimeout(r, 5000));
    }
    child.kill('SIGTERM');
  };
}

/** The measured runs on copies of the cached tenant. */
async function measure(members: number, cache: string): Promise<void> {
  const work = join(cache, 'work');
  rmSync(work, { recursive: true, force: true });
  mkdirSync(work);
  copyFileSync(join(cache, 'emulator.db'), join(work, 'emulator.db'));
  copyFileSync(join(cache, 'state.db'), join(work, 'state.db'));
  // Two days after the fill's first day (a day after its last run): the runs of a day on which nothing was imported.
  const { child, url } = await startEmulatorChild(fileURLToPath(import.meta.url), [`--db=${join(work, 'emulator.db')}`, `--offset=${2 * DAY_MS}`]);
  const port = await freePort();
  const base = join(work, 'base.yaml');
  const churn = join(work, 'churn.yaml');
  writeConfig(base, url, work, join(cache, 'hr'), port);
  writeConfig(churn, url, work, join(cache, 'churn'), port);
  const phases: [string, string[], ((c: ChildProcess) => Promise<void>)?][] = [
    ['sync_nochange', ['sync', '--config', base]],
    ['plan_churn', ['plan', '--config', churn]],
    ['dry_run_churn', ['sync', '--dry-run', '--config', churn]],
    ['explain', ['explain', '--config', churn, memberId(CHURN_EVERY)]],
    ['daemon_churn', ['daemon', '--config', churn], stopAfterFirstRun(port)],
  ];
  try {
    for (const [name, args, meanwhile] of phases) {
      if (ONLY && !ONLY.includes(name)) continue;
      await resetRequests(url);
      const r: CliRun = await runMeasuredCli(work, name, args, meanwhile);
      const calls = (await emulatorRequests(url)).reduce((n, x) => n + x.count, 0);
      const good = name === 'daemon_churn' ? r.exit === 143 : name === 'plan_churn' || name === 'dry_run_churn' || name === 'explain' ? r.exit === 0 || r.exit === 5 : r.exit === 0;
      const target = targetMb(members);
      const line = { phase: name, command: `orgsync ${args.filter((a) => !a.endsWith('.yaml') && a !== '--config').join(' ')}`, members, exit: r.exit, seconds: r.seconds, peak_rss_mb: r.peakMb, target_mb: target, api_calls: calls, ok: good && r.peakMb < target && (name !== 'sync_nochange' || members < 1_000_000 || r.seconds < 60), stdout_bytes: r.stdoutBytes, state_db_mb: mb(join(work, 'state.db')) };
      console.log(JSON.stringify(good ? line : { ...line, stderr: r.stderr }));
    }
  } finally {
    await stopEmulatorChild(child);
    if (process.env.BENCH_KEEP === '1') console.log(JSON.stringify({ kept: work, url_note: 'the emulator is stopped; start it on emulator.db to run more' }));
    else rmSync(work, { recursive: true, force: true });
  }
}

async function main(): Promise<void> {
  for (const members of SIZES) {
    const cache = join(ROOT, `${members}-${DEPARTMENTS}-${POSITIONS}`);
    const figures = await fill(members, cache);
    console.log(JSON.stringify({ phase: 'fill (cached)', ...figures }));
    await measure(members, cache);
  }
}

const arg = (name: string): string | undefined => process.argv.find((a) => a.startsWith(`--${name}=`))?.slice(name.length + 3);
const dbPath = arg('db');
if (process.argv.includes('--emulator-child')) await serveEmulatorChild({ keys: [KEY], limited: false, clockOffsetMs: Number(arg('offset') ?? 0), ...(dbPath ? { dbPath } : {}) });
else await main();
