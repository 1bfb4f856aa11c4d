/**
 * `npm run bench:memory` (issue 31 point 2): the peak RSS of the two commands the memory targets are about, each run
 * as a user runs it, as its own `node dist/cli.js` process with no heap flag:
 *
 * - `plan_text`: `orgsync plan` of 1,000,000 members, 5,000 departments and 500 positions (CSV source) into an empty
 *   tenant (BENCH_PLAN_MEMBERS, BENCH_DEPARTMENTS, BENCH_POSITIONS). Target < 512 MB.
 * - `initial_sync`: the real `orgsync sync` of 100,000 members (BENCH_SYNC_MEMBERS, same departments and positions)
 *   into an empty tenant: every create is written to the emulator. Target < 160 MB.
 *
 * The emulator runs in a child process of this bench (its memory is not counted) with its rate limits off and the
 * config pacing at 10,000 requests/s, so the 105,000 writes take a couple of minutes, not the hours the platform's
 * 100/s would. Peak RSS is the CLI process's own getrusage maxRSS, recorded at exit by a `--require`d probe.
 * Each phase runs twice: with Node's defaults (`node_options` empty: the targets' "no heap flag"), and with the
 * NODE_OPTIONS the container image and the chart set (IMAGE_NODE_OPTIONS: V8's young generation at 8 MiB, the
 * Dockerfile's ENV and the chart's nodeSemiSpaceMiB). BENCH_ONLY=plan or BENCH_ONLY=sync runs one phase,
 * BENCH_RUNTIME=node or BENCH_RUNTIME=image one of the two. One JSON line per run; run it under `uptime`.
 */
import { mkdtempSync, rmSync, writeFileSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { fileURLToPath } from 'node:url';
import { csvSourceConfig, writeOrgCsv } from './lib/synthetic-org.js';
import { serveEmulatorChild, startEmulatorChild, stopEmulatorChild } from './lib/emulator-child.js';
import { runMeasuredCli } from './lib/cli-process.js';

const KEY = 'ek_benchmem_4f8a2c9e71b3d6054e2a';
const PLAN_MEMBERS = Number(process.env.BENCH_PLAN_MEMBERS ?? 1_000_000);
const SYNC_MEMBERS = Number(process.env.BENCH_SYNC_MEMBERS ?? 100_000);
const DEPARTMENTS = Number(process.env.BENCH_DEPARTMENTS ?? 5_000);
const POSITIONS = Number(process.env.BENCH_POSITIONS ?? 500);
/** What the Dockerfile's ENV and the chart (nodeSemiSpaceMiB, without a memory limit's heap size) set. */
const IMAGE_NODE_OPTIONS = '--max-semi-space-size=4';
/** Writes the org's CSV files and a config on `url` into a fresh folder; returns the folder and the config's path. */
async function prepare(url: string, members: number, label: string): Promise<{ dir: string; config: string }> {
  const dir = mkdtempSync(join(tmpdir(), `orgsync-bench-memory-${label}-`));
  await writeOrgCsv(dir, { members, departments: DEPARTMENTS, positions: POSITIONS, seed: 31 });
  const config = join(dir, 'orgsync.yaml');
  const platform = { base_url: url, api_key: KEY, requests_per_second: 10_000, tenant_requests_per_second: 10_000 };
  writeFileSync(config, JSON.stringify({ platform, state: { path: './state.db' }, sync: { id: `bench-memory-${label}` }, sources: [csvSourceConfig()], log: { level: 'warn' } }));
  return { dir, config };
}

/** One phase: a fresh empty tenant, the org's files, the command with NODE_OPTIONS `nodeOptions`; prints its JSON line. */
async function phase(name: string, members: number, command: string[], targetMb: number, nodeOptions: string): Promise<void> {
  const { child, url } = await startEmulatorChild(fileURLToPath(import.meta.url));
  const { dir, config } = await prepare(url, members, name);
  try {
    const r = await runMeasuredCli(dir, name, [...command, '--config', config], undefined, { NODE_OPTIONS: nodeOptions });
    const ok = r.exit === 0 && r.peakMb < targetMb;
    const line = { phase: name, command: `orgsync ${command.join(' ')}`, node_options: nodeOptions, members, departments: DEPARTMENTS, positions: POSITIONS, exit: r.exit, seconds: r.seconds, peak_rss_mb: r.peakMb, target_mb: targetMb, ok, stdout_bytes: r.stdoutBytes };
    console.log(JSON.stringify(r.exit === 0 ? line : { ...line, stderr: r.stderr }));
  } finally {
    await stopEmulatorChild(child);
    rmSync(dir, { recursive: true, force: true });
  }
}

async function main(): Promise<void> {
  const only = process.env.BENCH_ONLY;
  const runtime = process.env.BENCH_RUNTIME;
  const runtimes = [...(runtime === undefined || runtime === 'node' ? [''] : []), ...(runtime === undefined || runtime === 'image' ? [IMAGE_NODE_OPTIONS] : [])];
  for (const nodeOptions of runtimes) {
    if (only === undefined || only === 'plan') await phase('plan_text', PLAN_MEMBERS, ['plan'], 512, nodeOptions);
    if (only === undefined || only === 'sync') await phase('initial_sync', SYNC_MEMBERS, ['sync'], 160, nodeOptions);
  }
}

if (process.argv.includes('--emulator-child')) await serveEmulatorChild({ keys: [KEY], limited: false });
else await main();
