/**
 * `npm run bench:commands` (issue 31 point 1): the commands a user runs, at a million members, each as its own
 * `node dist/cli.js` process, with its wall time and peak RSS against the 512 MB target of issue 31. The synthetic org
 * (1,000,000 members, 5,000 departments, 500 positions; BENCH_MEMBERS, BENCH_DEPARTMENTS, BENCH_POSITIONS) is written
 * as CSV files and planned into an empty tenant of the emulator (a child process, so its memory is not counted).
 * Commands: plan (text, json, html), plan --out, sync --dry-run, explain, then the approvals commands (list, show as
 * json, text and html, approve) on the saved plan stored as a refused run's pending approval, and last `apply FILE` of the
 * saved plan, stopped (SIGTERM) once its first BENCH_APPLY_WRITES writes reached the emulator: reading, checking
 * and starting to apply the whole file is measured; writing a million members (hours at the platform's limits) is not.
 * One JSON line per command: {command, exit, seconds, peak_rss_mb, target_mb, ok, stdout_bytes}. Slow: minutes.
 * BENCH_ONLY (names, comma-separated) measures some commands only; BENCH_KEEP=1 leaves the work folder.
 */
import type { ChildProcess } from 'node:child_process';
import { mkdtempSync, rmSync, writeFileSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { fileURLToPath } from 'node:url';
import { csvSourceConfig, memberId, writeOrgCsv } from './lib/synthetic-org.js';
import { emulatorRequests, serveEmulatorChild, startEmulatorChild, stopEmulatorChild } from './lib/emulator-child.js';
import { runMeasuredCli } from './lib/cli-process.js';
import { createRunApprovals } from '../src/daemon/approvals.js';
import { readSavedPlan } from '../src/daemon/saved-plan.js';
import type { DesiredState } from '../src/domain/index.js';
import { ApprovalStore } from '../src/mirror/approvals.js';
import { stateConfigSchema } from '../src/config/platform.js';
import { openStateDb } from '../src/mirror/db.js';
import { Mirror } from '../src/mirror/mirror.js';
import { OwnershipStore } from '../src/mirror/ownership.js';
import { TrustStateStore } from '../src/mirror/trust-state.js';

const KEY = 'ek_benchcmd_4f8a2c9e71b3d6054e2a';
const MEMBERS = Number(process.env.BENCH_MEMBERS ?? 1_000_000);
const DEPARTMENTS = Number(process.env.BENCH_DEPARTMENTS ?? 5_000);
const POSITIONS = Number(process.env.BENCH_POSITIONS ?? 500);
const TARGET_MB = 512;
const APPLY_WRITES = Number(process.env.BENCH_APPLY_WRITES ?? 200);
const SYNC_ID = 'bench-commands';
/**
 * BENCH_ONLY=approvals-show-json,apply-start measures only the named commands (the names below); the saved plan the
 * approvals and apply commands need is still made with `plan --out`, unmeasured when plan-out is not named. Unset: all.
 */
const ONLY = process.env.BENCH_ONLY ? new Set(process.env.BENCH_ONLY.split(',').map((s) => s.trim())) : undefined;
const selected = (name: string): boolean => ONLY === undefined || ONLY.has(name);
/**
 * Runs `orgsync ...args` in `dir` (bench/lib/cli-process.ts) as one JSON record against the target.
 * `meanwhile` runs while it does (given the process, to stop it); `okExit` is the exit code of a good run.
 */
async function measure(dir: string, name: string, args: readonly string[], meanwhile?: (child: ChildProcess) => Promise<void>, okExit = 0): Promise<Record<string, unknown>> {
  const r = await runMeasuredCli(dir, name, args, meanwhile);
  return { command: `orgsync ${args.join(' ').replaceAll(dir, '.')}`, exit: r.exit, seconds: r.seconds, peak_rss_mb: r.peakMb, target_mb: TARGET_MB, ok: r.exit === okExit && r.peakMb < TARGET_MB, stdout_bytes: r.stdoutBytes, ...(r.exit === okExit ? {} : { stderr: r.stderr }) };
}

/** Write requests the emulator answered. */
async function writeCount(url: string): Promise<number> {
  let n = 0;
  for (const r of await emulatorRequests(url)) if (r.method !== 'GET') n += r.count;
  return n;
}

/**
 * Stores the saved plan as the pending approval of a refused run (what a run refused by a guard does, in this
 * process: it is setup, not measured); returns its digest.
 */
function storeAsApproval(dir: string, file: string): string {
  const db = openStateDb(join(dir, 'state.db'), { busyTimeoutMs: stateConfigSchema.parse({}).busy_timeout });
  try {
    const trust = new TrustStateStore(db, SYNC_ID);
    const { plan } = readSavedPlan(file, SYNC_ID, trust.planSigningKey());
    const desired = { departments: [], positions: [], members: [], provided: { departments: true, positions: true, members: true }, quarantine: [] } as unknown as DesiredState;
    const parts = { store: new ApprovalStore(db, SYNC_ID), trust, mirror: new Mirror(db), ownership: new OwnershipStore(db, SYNC_ID), config: { sync: { id: SYNC_ID, approve: [] } } } as unknown as Parameters<typeof createRunApprovals>[0];
    const refusal = { guard: 'delete_threshold', message: 'bench: a refused plan of every change' };
    return createRunApprovals(parts).onRefusal({ plan: { ...plan, refusal }, desired, overridden: () => ({ plan, commitTrust: () => undefined }), runId: 'bench', now: Date.now() }).digest;
  } finally {
    db.close();
  }
}

async function main(): Promise<void> {
  const { child, url } = await startEmulatorChild(fileURLToPath(import.meta.url));
  const dir = mkdtempSync(join(tmpdir(), 'orgsync-bench-commands-'));
  try {
    await writeOrgCsv(dir, { members: MEMBERS, departments: DEPARTMENTS, positions: POSITIONS, seed: 31 });
    const config = join(dir, 'orgsync.yaml');
    writeFileSync(config, JSON.stringify({ platform: { base_url: url, api_key: KEY }, state: { path: './state.db' }, sync: { id: SYNC_ID }, sources: [csvSourceConfig()], log: { level: 'warn' } }));
    console.log(JSON.stringify({ bench: 'commands', members: MEMBERS, departments: DEPARTMENTS, positions: POSITIONS }));
    const runs: [string, string[]][] = [
      ['plan-text', ['plan', '--config', config]],
      ['plan-json', ['plan', '--config', config, '--output', 'json']],
      ['plan-html', ['plan', '--config', config, '--output', 'html']],
      ['plan-out', ['plan', '--config', config, '--out', join(dir, 'saved-plan.json')]],
      ['sync-dry-run', ['sync', '--config', config, '--dry-run']],
      ['explain', ['explain', '--config', config, memberId(0)]],
    ];
    for (const [name, args] of runs) {
      if (selected(name)) console.log(JSON.stringify(await measure(dir, name, args)));
      else if (name === 'plan-out') await runMeasuredCli(dir, name, args);
    }
    const names = ['approvals-list', 'approvals-show-json', 'approvals-show-text', 'approvals-show-html', 'approvals-approve'];
    // The pending approval is stored (in this process, minutes at a million) only when an approvals command is measured.
    const digest = names.some(selected) ? storeAsApproval(dir, join(dir, 'saved-plan.json')) : '';
    const approvals: [string, string[]][] = [
      ['approvals-list', ['approvals', 'list', '--config', config, '--output', 'json']],
      ['approvals-show-json', ['approvals', 'show', digest, '--config', config, '--output', 'json']],
      ['approvals-show-text', ['approvals', 'show', digest, '--config', config]],
      ['approvals-show-html', ['approvals', 'show', digest, '--config', config, '--output', 'html']],
      ['approvals-approve', ['approvals', 'approve', digest, '--config', config]],
    ];
    for (const [name, args] of approvals) if (selected(name)) console.log(JSON.stringify(await measure(dir, name, args)));
    const stopAfterFirstWrites = async (child: ChildProcess): Promise<void> => {
      while (child.exitCode === null && (await writeCount(url)) < APPLY_WRITES) await new Promise((r) => setTimeout(r, 500));
      child.kill('SIGTERM');
    };
    if (selected('apply-start')) console.log(JSON.stringify(await measure(dir, 'apply-start', ['apply', join(dir, 'saved-plan.json'), '--config', config], stopAfterFirstWrites, 143)));
  } finally {
    await stopEmulatorChild(child);
    // BENCH_KEEP=1 leaves the folder (CSV, state DB, saved plan) to measure a command again by hand.
    if (process.env.BENCH_KEEP === '1') console.log(JSON.stringify({ kept: dir }));
    else rmSync(dir, { recursive: true, force: true });
  }
}

if (process.argv.includes('--emulator-child')) await serveEmulatorChild({ keys: [KEY], limited: false });
else await main();
