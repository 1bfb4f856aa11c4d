/**
 * `npm run bench:latency` (issue 22 point 4): how long one person takes, as a user sees it, against the emulator with
 * a 20,000-member tenant already in sync.
 *
 * 1. `sync_only`: `node dist/cli.js sync --config F --only <source id>` for one member whose title changed in the
 *    CSV source (20,000 members), timed from process start to exit, with the write accepted by the emulator
 *    (exactly one PATCH seen, exit 0). Target: median < 5 s.
 * 2. `trigger_only`: a real `orgsync daemon` process on the same config; `POST /sync?only=<source id>` for one changed
 *    member, timed from the POST until `GET /runs/<id>` (polled every 20 ms) reports the run done with `success`,
 *    the write accepted (one PATCH). Target: median < 3 s.
 *
 * Setup: the synthetic org (bench/lib/synthetic-org.ts) as CSV files, a first full `orgsync sync` (the state DB then
 * in sync) and a no-op `sync` to show it is. The emulator runs in a child process (this file with --emulator-child).
 * To save minutes, the first full run (~21,000 writes) is made with the emulator's limits off
 * (BENCH_SETUP_LIMITED=1 keeps the real ones); every measured run then sees the spec's real limits (100/s per key,
 * 500/s per tenant), set in the running emulator. As in bench:sync, the emulator's clock runs two hours behind while
 * the org is written, so the measured runs see records that are hours old (the incremental refresh's 120 s overlap
 * would otherwise list the whole tenant again).
 *
 * Prints one JSON line per phase on stdout, each with its target and `ok`; medians of BENCH_RUNS runs (default 5).
 * BENCH_CPU_PROF=DIR profiles every CLI and daemon process (node --cpu-prof) into DIR.
 */
import { spawn } from 'node:child_process';
import { mkdtempSync, readFileSync, rmSync, writeFileSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join, resolve } from 'node:path';
import { fileURLToPath } from 'node:url';
import { ask, emulatorRequests, resetRequests, serveEmulatorChild, startEmulatorChild, stopEmulatorChild } from './lib/emulator-child.js';
import { csvSourceConfig, writeOrgCsv } from './lib/synthetic-org.js';

const KEY = 'ek_latency_0123456789abcdef';
const TRIGGER_TOKEN = 'bench-trigger-token-0123456789abcdef';
const SEED = 22;
const ORG = { members: Number(process.env.BENCH_MEMBERS ?? 20_000), departments: Number(process.env.BENCH_DEPARTMENTS ?? 1_000), positions: Number(process.env.BENCH_POSITIONS ?? 200), seed: SEED };
const RUNS = Number(process.env.BENCH_RUNS ?? 5);
/** The real CLI (`npm run build`), as a user runs it. */
const CLI = resolve(fileURLToPath(import.meta.url), '../../../dist/cli.js');

/** BENCH_CPU_PROF=DIR: every CLI and daemon process writes a V8 CPU profile into DIR (node --cpu-prof). */
const NODE_ARGS = process.env.BENCH_CPU_PROF ? ['--cpu-prof', `--cpu-prof-dir=${process.env.BENCH_CPU_PROF}`] : [];

const round = (n: number, digits = 2) => Math.round(n * 10 ** digits) / 10 ** digits;
const median = (xs: number[]): number => {
  const s = [...xs].sort((a, b) => a - b);
  const m = Math.floor(s.length / 2);
  return s.length % 2 ? s[m]! : (s[m - 1]! + s[m]!) / 2;
};
function emit(obj: Record<string, unknown>): void {
  process.stdout.write(`${JSON.stringify(obj)}\n`);
}

/** Writes the emulator answered since the last reset, by status. */
async function writesSeen(url: string): Promise<{ accepted: number; other: number }> {
  const writes = (await emulatorRequests(url)).filter((r) => r.method !== 'GET');
  const accepted = writes.filter((r) => r.status >= 200 && r.status < 300).reduce((n, r) => n + r.count, 0);
  return { accepted, other: writes.reduce((n, r) => n + r.count, 0) - accepted };
}

/** Runs the CLI to its exit: exit code, wall seconds (process start to exit), stdout and stderr. */
function cli(args: string[]): Promise<{ code: number; seconds: number; stdout: string; stderr: string }> {
  return new Promise((resolve, reject) => {
    const t0 = performance.now();
    const p = spawn(process.execPath, [...NODE_ARGS, CLI, ...args], { stdio: ['ignore', 'pipe', 'pipe'] });
    let stdout = '';
    let stderr = '';
    p.stdout.on('data', (d: Buffer) => (stdout += d.toString()));
    p.stderr.on('data', (d: Buffer) => (stderr += d.toString()));
    p.once('error', reject);
    p.once('exit', (code) => resolve({ code: code ?? -1, seconds: (performance.now() - t0) / 1000, stdout, stderr }));
  });
}

/** members.csv, one line per member, with a way to change one member's title. */
class MembersCsv {
  private lines: string[];
  private readonly toggled = new Set<string>();
  constructor(private readonly path: string) {
    this.lines = readFileSync(path, 'utf8').split('\n');
  }
  /** Source ids of active members on plain lines (no quoting), spread over the file. */
  pick(n: number): string[] {
    const out: string[] = [];
    const step = Math.floor(this.lines.length / (n + 1));
    for (let i = step; out.length < n && i < this.lines.length; i += step) {
      for (let j = i; j < this.lines.length; j += 1) {
        const line = this.lines[j]!;
        const cols = line.split(',');
        if (!line.includes('"') && cols.length === 8 && cols[7] === 'active' && !out.includes(cols[0]!)) {
          out.push(cols[0]!);
          break;
        }
      }
    }
    return out;
  }
  /** Changes the member's title (adds or drops " (acting)") and writes the file. */
  change(id: string): void {
    const i = this.lines.findIndex((l) => l.startsWith(`${id},`));
    if (i < 0) throw new Error(`no member ${id} in ${this.path}`);
    const cols = this.lines[i]!.split(',');
    const on = !this.toggled.has(id);
    cols[5] = on ? `${cols[5]} (acting)` : cols[5]!.replace(/ \(acting\)$/, '');
    if (on) this.toggled.add(id);
    else this.toggled.delete(id);
    this.lines[i] = cols.join(',');
    writeFileSync(this.path, this.lines.join('\n'));
  }
}

/** The config; `setup`: the first full run may go as fast as the emulator (limits off) takes it. */
function configYaml(dir: string, url: string, hrDir: string, setup = false): string {
  const source = JSON.stringify(csvSourceConfig(hrDir));
  return [
    'platform:',
    `  base_url: ${url}`,
    `  api_key: ${KEY}`,
    // The measured runs pace at the platform's 100/s per key, as a user's config does.
    `  requests_per_second: ${setup && process.env.BENCH_SETUP_LIMITED !== '1' ? 10_000 : 100}`,
    `  concurrency: ${setup ? 16 : 8}`,
    'state:',
    `  path: ${join(dir, 'state.db')}`,
    'sync:',
    '  id: bench',
    'metrics:',
    '  listen: 127.0.0.1:0',
    'daemon:',
    `  trigger_token_file: ${join(dir, 'trigger-token')}`,
    // The daemon's own schedule stays out of the way of the measured triggers.
    "schedule: '0 3 1 1 *'",
    `sources: [${source}]`,
    '',
  ].join('\n');
}

/** A real `orgsync daemon` process; resolves once its listener is up and its start run has finished. */
async function startDaemon(config: string): Promise<{ url: string; stop(): Promise<number | null>; log(): string }> {
  const p = spawn(process.execPath, [...NODE_ARGS, CLI, 'daemon', '--config', config], { stdio: ['ignore', 'pipe', 'pipe'] });
  let out = '';
  let buffered = '';
  const url = await new Promise<string>((resolve, reject) => {
    p.stdout.on('data', (d: Buffer) => {
      out += d.toString();
      buffered += d.toString();
      let nl: number;
      while ((nl = buffered.indexOf('\n')) >= 0) {
        const line = buffered.slice(0, nl);
        buffered = buffered.slice(nl + 1);
        try {
          const rec = JSON.parse(line) as { url?: string; msg?: string };
          if (rec.url && rec.msg?.startsWith('ops endpoints listening')) resolve(rec.url.replace('0.0.0.0', '127.0.0.1'));
        } catch {
          // not a JSON line
        }
      }
    });
    p.stderr.on('data', (d: Buffer) => (out += d.toString()));
    p.once('exit', (code) => reject(new Error(`daemon exited with ${code} before listening:\n${out}`)));
  });
  // The start run: wait until no run is in progress and one has finished (a daemon that fails here is stopped).
  try {
    for (;;) {
      const s = (await (await fetch(`${url}/status`)).json()) as { current_run: unknown; runs: { result: string }[] };
      if (s.current_run === null && s.runs.length > 0 && s.runs[0]!.result !== 'running') {
        if (s.runs[0]!.result !== 'success') throw new Error(`the daemon's start run ended ${s.runs[0]!.result}:\n${out}`);
        break;
      }
      await new Promise((r) => setTimeout(r, 100));
    }
  } catch (err) {
    p.kill('SIGTERM');
    throw err;
  }
  return {
    url,
    log: () => out,
    stop: () =>
      new Promise((resolve) => {
        p.once('exit', (code) => resolve(code));
        p.kill('SIGTERM');
      }),
  };
}

/** POST /sync?only=id, then GET /runs/<id> every 20 ms until the run is done: seconds and the run record. */
async function trigger(url: string, only: string): Promise<{ seconds: number; status: number; run: { result?: string; exitCode?: number; error?: string } }> {
  const t0 = performance.now();
  const res = await fetch(`${url}/sync?only=${encodeURIComponent(only)}`, { method: 'POST', headers: { authorization: `Bearer ${TRIGGER_TOKEN}` } });
  const body = (await res.json()) as { run_id?: string };
  if (res.status !== 202 || !body.run_id) return { seconds: (performance.now() - t0) / 1000, status: res.status, run: {} };
  for (;;) {
    if (performance.now() - t0 > 120_000) throw new Error(`run ${body.run_id} not done after 120 s`);
    const r = await fetch(`${url}/runs/${encodeURIComponent(body.run_id)}`);
    const run = (await r.json()) as { result?: string; exitCode?: number; error?: string };
    if (r.status === 200 && run.result !== 'running' && run.result !== 'queued') return { seconds: (performance.now() - t0) / 1000, status: res.status, run };
    await new Promise((resolve) => setTimeout(resolve, 20));
  }
}

async function main(): Promise<void> {
  const dir = mkdtempSync(join(tmpdir(), 'orgsync-bench-latency-'));
  const { child, url } = await startEmulatorChild(fileURLToPath(import.meta.url), process.env.BENCH_SETUP_LIMITED === '1' ? ['limited'] : []);
  try {
    const hrDir = join(dir, 'hr');
    await writeOrgCsv(hrDir, ORG);
    writeFileSync(join(dir, 'trigger-token'), `${TRIGGER_TOKEN}\n`);
    const config = join(dir, 'orgsync.yaml');
    writeFileSync(config, configYaml(dir, url, hrDir, true));

    // Setup: the first full run puts the tenant in sync.
    const first = await cli(['sync', '--config', config, '--output', 'json']);
    writeFileSync(config, configYaml(dir, url, hrDir));
    if (first.code !== 0) throw new Error(`the first full sync exited ${first.code}:\n${first.stderr.slice(-4000)}\n${first.stdout.slice(-2000)}`);
    const firstSummary = JSON.parse(first.stdout) as { api_calls: number };
    await ask(child, 'clock-now', 'clock-set');
    await ask(child, 'limits-real', 'limits-set');
    await resetRequests(url);
    const noop = await cli(['sync', '--config', config, '--output', 'json']);
    const noopWrites = await writesSeen(url);
    emit({
      phase: 'setup',
      ...ORG,
      first_sync_seconds: round(first.seconds),
      first_sync_api_calls: firstSummary.api_calls,
      first_sync_limits: process.env.BENCH_SETUP_LIMITED === '1' ? 'real' : 'off',
      noop_sync_seconds: round(noop.seconds),
      noop_exit_code: noop.code,
      noop_writes: noopWrites.accepted + noopWrites.other,
      ok: noop.code === 0 && noopWrites.accepted + noopWrites.other === 0,
    });

    const csv = new MembersCsv(join(hrDir, 'members.csv'));
    const picked = csv.pick(RUNS * 2);
    /** For each id: change that member in HR, run `one` for it, and count the writes the emulator saw meanwhile. */
    const measure = async <T>(ids: string[], one: (id: string) => Promise<T>): Promise<(T & { accepted: number; other: number })[]> => {
      const runs: (T & { accepted: number; other: number })[] = [];
      for (const id of ids) {
        csv.change(id);
        await resetRequests(url);
        const r = await one(id);
        runs.push({ ...r, ...(await writesSeen(url)) });
      }
      return runs;
    };

    // 1. sync --only, the CLI process from start to exit.
    const cliRuns = await measure(picked.slice(0, RUNS), async (id) => {
      const r = await cli(['sync', '--config', config, '--only', id, '--output', 'json']);
      if (r.code !== 0) process.stderr.write(`sync --only ${id} exited ${r.code}:\n${r.stderr.slice(-2000)}\n`);
      return { seconds: r.seconds, code: r.code };
    });
    /** What both phases' lines carry: the runs' seconds, their median and the writes each run had accepted. */
    const timings = (runs: { seconds: number; accepted: number }[]) => ({
      members: ORG.members,
      runs: runs.length,
      median_seconds: round(median(runs.map((r) => r.seconds))),
      seconds: runs.map((r) => round(r.seconds)),
      writes_accepted: runs.map((r) => r.accepted),
    });
    const cliMedian = median(cliRuns.map((r) => r.seconds));
    emit({
      phase: 'sync_only',
      ...timings(cliRuns),
      exit_codes: cliRuns.map((r) => r.code),
      target: { median_seconds: 5, exit_code: 0, writes_accepted: 1 },
      ok: cliMedian < 5 && cliRuns.every((r) => r.code === 0 && r.accepted === 1 && r.other === 0),
    });

    // 2. POST /sync?only= to a real daemon, until GET /runs/<id> reports it done.
    const daemon = await startDaemon(config);
    let triggerRuns: { seconds: number; status: number; result: string; accepted: number; other: number }[];
    try {
      triggerRuns = await measure(picked.slice(RUNS, 2 * RUNS), async (id) => {
        const r = await trigger(daemon.url, id);
        if (r.run.result !== 'success') process.stderr.write(`POST /sync?only=${id}: ${r.status} ${JSON.stringify(r.run)}\n`);
        return { seconds: r.seconds, status: r.status, result: r.run.result ?? '' };
      });
    } finally {
      const code = await daemon.stop();
      if (code !== 0 && code !== 143) process.stderr.write(`daemon exited ${code}:\n${daemon.log().slice(-4000)}\n`);
    }
    const trigMedian = median(triggerRuns.map((r) => r.seconds));
    emit({
      phase: 'trigger_only',
      ...timings(triggerRuns),
      results: triggerRuns.map((r) => r.result),
      target: { median_seconds: 3, result: 'success', writes_accepted: 1 },
      ok: trigMedian < 3 && triggerRuns.every((r) => r.status === 202 && r.result === 'success' && r.accepted === 1 && r.other === 0),
    });
  } finally {
    await stopEmulatorChild(child);
    rmSync(dir, { recursive: true, force: true });
  }
}

if (process.argv.includes('--emulator-child')) await serveEmulatorChild({ keys: [KEY], limited: process.argv.includes('limited') });
else await main();
