/**
 * `npm run bench:commands` (issue 31 point 1): the commands a user runs, at a million members, each as its own
 * `node dist/cli.js` process, with its wall time and peak RSS against the 512 MB target of issue 31. The synthetic org
 * (1,000,000 members, 5,000 departments, 500 positions; BENCH_MEMBERS, BENCH_DEPARTMENTS, BENCH_POSITIONS) is written
 * as CSV files and planned into an empty tenant of the emulator (a child process, so its memory is not counted).
 * Commands: plan (text, json, html), plan --out, sync --dry-run, explain, approvals list. `apply FILE` and a real sync
 * would write a million members into the emulator (hours at the platform's limits), so they are not run here.
 * One JSON line per command: {command, exit, seconds, peak_rss_mb, target_mb, ok, stdout_bytes}. Slow: minutes.
 */
import { spawn } from 'node:child_process';
import { closeSync, mkdtempSync, openSync, readFileSync, rmSync, statSync, writeFileSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { fileURLToPath } from 'node:url';
import { csvSourceConfig, memberId, writeOrgCsv } from './lib/synthetic-org.js';
import { serveEmulatorChild, startEmulatorChild, stopEmulatorChild } from './lib/emulator-child.js';

const KEY = 'ek_benchcmd_4f8a2c9e71b3d6054e2a';
const MEMBERS = Number(process.env.BENCH_MEMBERS ?? 1_000_000);
const DEPARTMENTS = Number(process.env.BENCH_DEPARTMENTS ?? 5_000);
const POSITIONS = Number(process.env.BENCH_POSITIONS ?? 500);
const TARGET_MB = 512;
const CLI = fileURLToPath(new URL('../../dist/cli.js', import.meta.url));
/** Written into every measured process: at exit it records its peak RSS (KB, from getrusage) in ORGSYNC_BENCH_RSS_FILE. */
const PROBE = "process.on('exit', () => require('node:fs').writeFileSync(process.env.ORGSYNC_BENCH_RSS_FILE, String(process.resourceUsage().maxRSS)))";

/** Runs `orgsync ...args` in `dir`, stdout into a file; returns exit code, wall seconds, peak RSS and output size. */
async function measure(dir: string, name: string, args: readonly string[]): Promise<Record<string, unknown>> {
  const rssFile = join(dir, `${name}.rss`);
  const outFile = join(dir, `${name}.out`);
  const fd = openSync(outFile, 'w');
  const started = process.hrtime.bigint();
  let stderr = '';
  const code = await new Promise<number | null>((resolve) => {
    const child = spawn(process.execPath, ['--require', join(dir, 'probe.cjs'), CLI, ...args], { cwd: dir, env: { ...process.env, ORGSYNC_BENCH_RSS_FILE: rssFile }, stdio: ['ignore', fd, 'pipe'] });
    child.stderr!.on('data', (d: Buffer) => (stderr = (stderr + d.toString()).slice(-2000)));
    child.once('exit', resolve);
  });
  closeSync(fd);
  const seconds = Number(process.hrtime.bigint() - started) / 1e9;
  const peakMb = Math.round(Number(readFileSync(rssFile, 'utf8')) / 1024);
  const stdoutBytes = statSync(outFile).size;
  rmSync(outFile, { force: true });
  return { command: `orgsync ${args.join(' ').replaceAll(dir, '.')}`, exit: code, seconds: Math.round(seconds * 10) / 10, peak_rss_mb: peakMb, target_mb: TARGET_MB, ok: code === 0 && peakMb < TARGET_MB, stdout_bytes: stdoutBytes, ...(code === 0 ? {} : { stderr: stderr.trim() }) };
}

async function main(): Promise<void> {
  const { child, url } = await startEmulatorChild(fileURLToPath(import.meta.url));
  const dir = mkdtempSync(join(tmpdir(), 'orgsync-bench-commands-'));
  try {
    await writeOrgCsv(dir, { members: MEMBERS, departments: DEPARTMENTS, positions: POSITIONS, seed: 31 });
    writeFileSync(join(dir, 'probe.cjs'), `${PROBE};\n`);
    const config = join(dir, 'orgsync.yaml');
    writeFileSync(config, JSON.stringify({ platform: { base_url: url, api_key: KEY }, state: { path: './state.db' }, sync: { id: 'bench-commands' }, sources: [csvSourceConfig()], log: { level: 'warn' } }));
    console.log(JSON.stringify({ bench: 'commands', members: MEMBERS, departments: DEPARTMENTS, positions: POSITIONS }));
    const runs: [string, string[]][] = [
      ['plan-text', ['plan', '--config', config]],
      ['plan-json', ['plan', '--config', config, '--output', 'json']],
      ['plan-html', ['plan', '--config', config, '--output', 'html']],
      ['plan-out', ['plan', '--config', config, '--out', join(dir, 'saved-plan.json')]],
      ['sync-dry-run', ['sync', '--config', config, '--dry-run']],
      ['explain', ['explain', '--config', config, memberId(0)]],
      ['approvals-list', ['approvals', 'list', '--config', config]],
    ];
    for (const [name, args] of runs) console.log(JSON.stringify(await measure(dir, name, args)));
  } finally {
    await stopEmulatorChild(child);
    rmSync(dir, { recursive: true, force: true });
  }
}

if (process.argv.includes('--emulator-child')) await serveEmulatorChild({ keys: [KEY], limited: false });
else await main();
