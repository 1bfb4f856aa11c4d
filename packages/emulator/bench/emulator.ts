/**
 * Emulator benchmark (not a test): member creates per second and full 200-item page reads per second over loopback,
 * with rate limits off, and the emulator process's peak RSS. The emulator runs as its own process (this compiled file
 * with --emulator-child, which starts the package's emulator over the seed file like `orgsync emulator` does), the
 * load comes from this process through an undici Pool.
 *
 *   npm run bench -w @orgsync/emulator     # or, from the root: npm run bench:emulator
 *   BENCH_CREATES=5000 BENCH_READS=1000 BENCH_CONCURRENCY=16 npm run bench:emulator
 *   BENCH_EMULATOR_NODE_ARGS='--cpu-prof --cpu-prof-dir=/tmp/prof' npm run bench:emulator   # profile the emulator
 * Defaults: 20000 creates, 3000 page reads, 32 concurrent requests.
 *
 * Prints one JSON line per figure and a summary line.
 */
import { spawn } from 'node:child_process';
import { mkdtempSync, readFileSync, rmSync, writeFileSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { fileURLToPath } from 'node:url';
import { Pool } from 'undici';
import { loadSeedFile, startEmulator } from '../src/index.js';

const CREATES = Number(process.env.BENCH_CREATES ?? 20_000);
const READS = Number(process.env.BENCH_READS ?? 3_000);
const CONCURRENCY = Number(process.env.BENCH_CONCURRENCY ?? 32);
const KEY = 'ek_bench_0123456789abcdef';

/** The child: the emulator over the seed file at argv[3], one ready line on stdout, stopped by SIGTERM. */
async function emulatorChild(seedPath: string): Promise<void> {
  const running = await startEmulator({ seed: loadSeedFile(seedPath), host: '127.0.0.1', port: 0 });
  process.stdout.write(`emulator listening on ${running.url}\n`);
  process.once('SIGTERM', () => void running.close().then(() => process.exit(0)));
}

/** CPU seconds (user + system) the process has used so far. */
function cpuSeconds(pid: number): number {
  // /proc/<pid>/stat: fields 14 and 15 (1-based) are utime and stime in clock ticks (100 per second on Linux).
  const fields = readFileSync(`/proc/${pid}/stat`, 'utf8').split(') ')[1]!.split(' ');
  return (Number(fields[11]) + Number(fields[12])) / 100;
}

function peakRssKiB(pid: number): number {
  const status = readFileSync(`/proc/${pid}/status`, 'utf8');
  return Number(/VmHWM:\s+(\d+) kB/.exec(status)?.[1] ?? 0);
}

async function startEmulatorProcess(): Promise<{ url: string; pid: number; stop(): Promise<void> }> {
  const dir = mkdtempSync(join(tmpdir(), 'orgsync-bench-'));
  const seed = join(dir, 'seed.json');
  writeFileSync(seed, JSON.stringify({
    tenants: [{ id: 1, name: 'Bench', api_keys: [{ key: KEY, scopes: ['tenant.org.read', 'tenant.org.write'] }] }],
    limits: { per_api_key: 0, per_session_token: 0, per_tenant: 0 },
  }));
  const nodeArgs = (process.env.BENCH_EMULATOR_NODE_ARGS ?? '').split(' ').filter(Boolean);
  const child = spawn(process.execPath, [...nodeArgs, fileURLToPath(import.meta.url), '--emulator-child', seed], { stdio: ['ignore', 'pipe', 'inherit'] });
  const exited = new Promise<void>((resolve) => child.on('exit', () => resolve()));
  const url = await new Promise<string>((resolve, reject) => {
    let out = '';
    child.stdout.on('data', (c: Buffer) => {
      out += c.toString();
      const m = /listening on (http:\/\/\S+)\n/.exec(out);
      if (m) resolve(m[1]!);
    });
    void exited.then(() => reject(new Error('the emulator exited before it was ready')));
  });
  return { url, pid: child.pid!, stop: async () => { child.kill('SIGTERM'); await exited; rmSync(dir, { recursive: true, force: true }); } };
}

/** Runs `total` calls of `one(i)` with `concurrency` in flight; returns the elapsed seconds. */
async function run(total: number, concurrency: number, one: (i: number) => Promise<void>): Promise<number> {
  let next = 0;
  const started = performance.now();
  await Promise.all(Array.from({ length: concurrency }, async () => {
    for (let i = next++; i < total; i = next++) await one(i);
  }));
  return (performance.now() - started) / 1000;
}

async function main(): Promise<void> {
  const emu = await startEmulatorProcess();
  const pool = new Pool(emu.url, { connections: CONCURRENCY, pipelining: 1 });
  const headers = { authorization: `Bearer ${KEY}`, 'content-type': 'application/json' };
  try {
    // Departments to spread the members over.
    const depts: string[] = [];
    for (let i = 0; i < 20; i++) {
      const res = await pool.request({ method: 'POST', path: '/api/external/v1/org/departments', headers, body: JSON.stringify({ name: `Dept ${i}` }) });
      depts.push(((await res.body.json()) as { id: string }).id);
    }
    let failures = 0;
    const cpuBeforeCreates = cpuSeconds(emu.pid);
    const createSeconds = await run(CREATES, CONCURRENCY, async (i) => {
      const res = await pool.request({
        method: 'POST', path: '/api/external/v1/org/members', headers,
        body: JSON.stringify({ email: `m${i}@bench.test`, phone: `+1${String(2_000_000_000 + i)}`, display_name: `Member ${i}`, title: 'Engineer', third_user_id: `E${i}`, department_id: depts[i % depts.length] }),
      });
      await res.body.dump();
      if (res.statusCode !== 201) failures += 1;
    });
    const createsPerSecond = CREATES / createSeconds;
    const createCpu = cpuSeconds(emu.pid) - cpuBeforeCreates;
    console.log(JSON.stringify({ figure: 'member_creates_per_second', value: Math.round(createsPerSecond), creates: CREATES, failed: failures, seconds: +createSeconds.toFixed(2), concurrency: CONCURRENCY }));
    // Wall-clock figures depend on what else runs on the machine; per emulator CPU-second they do much less.
    console.log(JSON.stringify({ figure: 'member_creates_per_emulator_cpu_second', value: Math.round(CREATES / createCpu), emulator_cpu_seconds: +createCpu.toFixed(2) }));

    // Full 200-item pages, walking the member list (wrapping around at the end).
    const cursors: string[] = [''];
    for (;;) {
      const res = await pool.request({ method: 'GET', path: `/api/external/v1/org/members?limit=200${cursors.at(-1) ? `&cursor=${cursors.at(-1)}` : ''}`, headers });
      const page = (await res.body.json()) as { next_cursor: string; has_more: boolean };
      if (!page.has_more) break;
      cursors.push(page.next_cursor);
    }
    const fullPages = cursors.slice(0, -1);
    let short = 0;
    const cpuBeforeReads = cpuSeconds(emu.pid);
    const readSeconds = await run(READS, Math.min(CONCURRENCY, 16), async (i) => {
      const cursor = fullPages[i % fullPages.length]!;
      const res = await pool.request({ method: 'GET', path: `/api/external/v1/org/members?limit=200${cursor ? `&cursor=${cursor}` : ''}`, headers });
      // Parse a sample of the pages only, so the load generator does not starve the emulator of CPU.
      const text = await res.body.text();
      if (res.statusCode !== 200 || (i % 25 === 0 && (JSON.parse(text) as { items: unknown[] }).items.length !== 200)) short += 1;
    });
    const readsPerSecond = READS / readSeconds;
    const readCpu = cpuSeconds(emu.pid) - cpuBeforeReads;
    console.log(JSON.stringify({ figure: 'full_page_reads_per_second', value: Math.round(readsPerSecond), reads: READS, page_size: 200, not_full: short, seconds: +readSeconds.toFixed(2) }));

    console.log(JSON.stringify({ figure: 'full_page_reads_per_emulator_cpu_second', value: Math.round(READS / readCpu), emulator_cpu_seconds: +readCpu.toFixed(2) }));
    const rss = peakRssKiB(emu.pid);
    console.log(JSON.stringify({ figure: 'emulator_peak_rss_mib', value: +(rss / 1024).toFixed(1), members: CREATES }));
    console.log(`summary: ${Math.round(createsPerSecond)} member creates/s (target >= 2000), ${Math.round(readsPerSecond)} full-page reads/s (target >= 1000), emulator peak RSS ${(rss / 1024).toFixed(1)} MiB; per emulator CPU-second: ${Math.round(CREATES / createCpu)} creates, ${Math.round(READS / readCpu)} page reads`);
  } finally {
    await pool.close();
    await emu.stop();
  }
}

if (process.argv[2] === '--emulator-child') await emulatorChild(process.argv[3]!);
else await main();
