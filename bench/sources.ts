/**
 * `npm run bench:sources` (not a test): the source connectors against their bare libraries, on the same data in
 * the same run.
 *
 * 1. CSV: a deterministic 300,000-member synthetic org (bench/lib/synthetic-org.ts) read, mapped and validated by the
 *    CSV connector (readDesiredState), against csv-parse alone streaming the same members.csv. Target (issue 19):
 *    <= 2x with the phone field mapped, on the FIRST run (an empty state DB, so an empty phone cache); the repeat run
 *    of the same export on that state DB is reported beside it. A run's time is the phone cache's load plus the read;
 *    the cache's save (after the read, by the sync) is reported apart as save_ms.
 *    Peak RSS of the connector's process for 300,000 members: target < 400 MB.
 *    The connector parses a file of 4 MiB or more on a worker thread while it maps on the main one (src/sources/csv/
 *    row-thread.ts), so its wall time (the target) overlaps the two; its CPU time (`cpu_ratio`, printed beside) adds
 *    them up, and on a loaded machine, where the second CPU is busy, the wall time approaches it.
 *    The synthetic phones are national ("(201) 555-0123"), which the phone fast path answers. A second export with a
 *    trunk prefix ("1 (201) 555-0123"), which only libphonenumber-js answers, shows what the phone cache saves: its
 *    first run asks the library 300,000 times, its repeat run not once (informative, no target).
 * 2. LDAP: 50,000 inetOrgPerson entries (same generator) in a private slapd, read by the LDAP connector, against
 *    `ldapsearch -E pr=500/noprompt` of the same entries and attributes to /dev/null. Target: <= 2.5x (issue 19).
 *    The two alternate (ldapsearch, connector, ldapsearch, ...; BENCH_LDAP_ROUNDS rounds, default 5), so a change
 *    in the machine's load hits both; the faster of each counts (`ratio`, the target), the medians are printed too,
 *    and `cpu_ratio` compares CPU time, client plus slapd (from /proc), which the load disturbs less.
 *
 * The connector is also timed without the phone field, to show its own overhead over csv-parse.
 *
 * Every measurement runs in a fresh child process (this file with --child), so timings exclude start-up and the peak
 * RSS (process.resourceUsage().maxRSS) is that measurement's alone. Each is taken twice; the faster counts.
 * Sizes: BENCH_MEMBERS (300000), BENCH_LDAP_ENTRIES (50000); BENCH_ONLY=csv runs the CSV half alone. Prints JSON
 * lines on stdout.
 */
import { spawnSync } from 'node:child_process';
import { copyFileSync, createReadStream, createWriteStream, mkdirSync, mkdtempSync, readFileSync, rmSync, writeFileSync } from 'node:fs';
import { once } from 'node:events';
import { loadavg, tmpdir } from 'node:os';
import { join } from 'node:path';
import { Writable } from 'node:stream';
import { pipeline } from 'node:stream/promises';
import { fileURLToPath } from 'node:url';
import { parse } from 'csv-parse';
import { stateConfigSchema } from '../src/config/platform.js';
import { sourcesConfigSchema } from '../src/config/sources.js';
import { readDesiredState } from '../src/sources/index.js';
import { openStateDb } from '../src/mirror/db.js';
import { PhoneCacheStore } from '../src/mirror/phone-cache.js';
import { silentLogger } from '../src/shared/logger.js';
import { csvSourceConfig, generateOrg, writeOrgCsv } from './lib/synthetic-org.js';
import { slapdAvailable, startSlapd } from '../test/helpers/slapd.js';

const SELF = fileURLToPath(import.meta.url);
const MEMBERS = Number(process.env.BENCH_MEMBERS ?? 300_000);
const LDAP_ENTRIES = Number(process.env.BENCH_LDAP_ENTRIES ?? 50_000);
const SEED = 42;
const LDAP_ROUNDS = Number(process.env.BENCH_LDAP_ROUNDS ?? 5);
/** What the connector asks for with the openldap profile: the mapped attributes plus the profile's status and expiry ones. */
const LDAP_ATTRIBUTES = ['uid', 'displayName', 'cn', 'mail', 'telephoneNumber', 'mobile', 'title', 'pwdAccountLockedTime', 'nsAccountLock', 'shadowExpire'];
const LDAP_TARGET_RATIO = 2.5;

interface Measurement {
  ms: number;
  cpuMs: number;
  maxRssMb: number;
  [k: string]: unknown;
}

const maxRssMb = () => Math.round(process.resourceUsage().maxRSS / 1024);
/** CPU time (user + system, every thread of the process) since `from`: steadier than wall time on a loaded machine. */
const cpuMsSince = (from: NodeJS.CpuUsage) => {
  const c = process.cpuUsage(from);
  return Math.round((c.user + c.system) / 1000);
};

/** Child measurements: each prints one JSON line. */
async function child(mode: string, args: string[]): Promise<void> {
  const t0 = performance.now();
  const c0 = process.cpuUsage();
  let result: Record<string, unknown>;
  if (mode === 'csv-parse') {
    let records = 0;
    await pipeline(
      createReadStream(args[0]!),
      parse({ bom: true }),
      new Writable({
        objectMode: true,
        write(_row, _enc, cb) {
          records++;
          cb();
        },
      }),
    );
    result = { records: records - 1 };
  } else if (mode === 'csv-connector') {
    const dir = args[0]!;
    const source = csvSourceConfig() as { members: { fields: Record<string, unknown> } };
    // --no-phone: the same read without the phone field, to show what phone normalisation costs.
    if (args[1] === '--no-phone') delete source.members.fields.phone;
    const config = { sources: sourcesConfigSchema.parse([source]), meta: { file: join(dir, 'orgsync.yaml'), dir, secrets: [] } };
    // --state DB: as sync reads the sources: the phone cache loaded from the state DB first, saved after (timed apart).
    const db = args[1] === '--state' ? openStateDb(args[2]!, { busyTimeoutMs: stateConfigSchema.parse({}).busy_timeout }) : undefined;
    const t1 = performance.now();
    const c1 = process.cpuUsage();
    const store = db ? new PhoneCacheStore(db) : undefined;
    const phoneCache = store?.load();
    const state = await readDesiredState(config, { env: {}, logger: silentLogger, ...(phoneCache ? { phoneCache } : {}) });
    const ms = performance.now() - t1;
    const cpuMs = cpuMsSince(c1);
    const t2 = performance.now();
    const saved = store && phoneCache ? store.save(phoneCache) : undefined;
    const saveMs = performance.now() - t2;
    db?.close();
    process.stdout.write(
      `${JSON.stringify({
        ms: Math.round(ms),
        cpuMs,
        maxRssMb: maxRssMb(),
        departments: state.departments.length,
        positions: state.positions.length,
        members: state.members.length,
        quarantined: state.quarantine.length,
        ...(saved ? { phone_cache_loaded: phoneCache!.size, phone_cache_added: saved.added, save_ms: Math.round(saveMs) } : {}),
      })}\n`,
    );
    return;
  } else if (mode === 'ldap-connector') {
    const [url, bindDn, password, base] = args as [string, string, string, string];
    const source = { name: 'bench', type: 'ldap', url, bind_dn: bindDn, bind_password: password, base_dn: base, phone_region: 'US' };
    const config = { sources: sourcesConfigSchema.parse([source]), meta: { file: '/dev/null', dir: '/', secrets: [] } };
    const state = await readDesiredState(config, { env: {}, logger: silentLogger });
    result = { departments: state.departments.length, members: state.members.length, quarantined: state.quarantine.length };
  } else throw new Error(`unknown child mode ${mode}`);
  process.stdout.write(`${JSON.stringify({ ms: Math.round(performance.now() - t0), cpuMs: cpuMsSince(c0), maxRssMb: maxRssMb(), ...result })}\n`);
}

function runChild(mode: string, args: string[]): Measurement {
  const r = spawnSync(process.execPath, [SELF, '--child', mode, ...args], { encoding: 'utf8', maxBuffer: 1 << 24 });
  if (r.status !== 0) throw new Error(`${mode} failed: ${r.stderr}`);
  return JSON.parse(r.stdout.trim().split('\n').pop()!) as Measurement;
}

function best(mode: string, args: string[], before?: () => void): Measurement {
  before?.();
  const a = runChild(mode, args);
  before?.();
  const b = runChild(mode, args);
  return a.ms <= b.ms ? a : b;
}

/** First and repeat run of the CSV connector on a state DB of its own (the phone cache). */
function firstAndRepeat(dir: string, db: string): { first: Measurement; repeat: Measurement } {
  const wipe = () => {
    rmSync(db, { force: true });
    rmSync(`${db}-wal`, { force: true });
    rmSync(`${db}-shm`, { force: true });
  };
  const first = best('csv-connector', [dir, '--state', db], wipe);
  // The repeat runs: a state DB the first run left (the faster of two repeats counts).
  wipe();
  runChild('csv-connector', [dir, '--state', db]);
  const repeat = best('csv-connector', [dir, '--state', db]);
  return { first, repeat };
}

/** The same export with a trunk prefix on every phone ("1 (201) 555-0123"): a shape only libphonenumber-js answers. */
function withTrunkPrefix(dir: string, into: string): void {
  mkdirSync(into, { recursive: true });
  for (const f of ['departments.csv', 'positions.csv']) copyFileSync(join(dir, f), join(into, f));
  writeFileSync(join(into, 'members.csv'), readFileSync(join(dir, 'members.csv'), 'utf8').replace(/,\((\d{3})\) /g, ',1 ($1) '));
}

/**
 * One `ldapsearch -E pr=500/noprompt` of the connector's entries and attributes to /dev/null: its wall time and CPU
 * time, both as bash's `time` reports them for ldapsearch alone.
 */
function ldapsearchRun(url: string, bindDn: string, password: string, base: string): { ms: number; cpuMs: number } {
  const script = `TIMEFORMAT='orgsync-bench %3R %3U %3S'; time ldapsearch "$@" > /dev/null`;
  const args = ['-x', '-LLL', '-H', url, '-D', bindDn, '-w', password, '-b', base, '-E', 'pr=500/noprompt', '(objectClass=inetOrgPerson)', ...LDAP_ATTRIBUTES];
  const r = spawnSync('bash', ['-c', script, 'ldapsearch', ...args], { stdio: ['ignore', 'ignore', 'pipe'], encoding: 'utf8' });
  const t = /orgsync-bench ([\d.]+) ([\d.]+) ([\d.]+)/.exec(r.stderr);
  if (r.status !== 0 || !t) throw new Error(`ldapsearch failed (${r.status}): ${r.stderr}`);
  return { ms: Math.round(Number(t[1]) * 1000), cpuMs: Math.round((Number(t[2]) + Number(t[3])) * 1000) };
}

/** CPU time slapd (pid) has used so far, from /proc (undefined elsewhere). */
function processCpuMs(pid: number | undefined): number | undefined {
  if (pid === undefined) return undefined;
  try {
    const fields = readFileSync(`/proc/${pid}/stat`, 'utf8').split(') ')[1]!.split(' ');
    return (Number(fields[11]) + Number(fields[12])) * 10; // utime + stime in clock ticks (USER_HZ = 100 on Linux)
  } catch {
    return undefined;
  }
}

/** slapd's pid from its pidfile, undefined when it cannot be read. */
function slapdPid(dir: string): number | undefined {
  try {
    const pid = Number(readFileSync(join(dir, 'slapd.pid'), 'utf8').trim());
    return Number.isInteger(pid) && pid > 0 ? pid : undefined;
  } catch {
    return undefined;
  }
}

/** What the server spent on one run of `f` (undefined where /proc is not readable). */
function withServerCpu<T>(pid: number | undefined, f: () => T): T & { serverCpuMs?: number } {
  const before = processCpuMs(pid);
  const out = f();
  const after = processCpuMs(pid);
  return before === undefined || after === undefined ? (out as T & { serverCpuMs?: number }) : { ...out, serverCpuMs: after - before };
}

const line = (o: Record<string, unknown>) => process.stdout.write(`${JSON.stringify(o)}\n`);

/** Writes the synthetic org as an LDIF: departments as nested OUs, members as inetOrgPerson under their OU. */
export async function writeLdif(path: string, base: string, members: number): Promise<void> {
  const org = generateOrg({ members, departments: 200, positions: 60, seed: SEED });
  const dnOf = new Map<string, string>();
  for (const d of org.departments) {
    const parent = d.parent_source_id ? dnOf.get(d.parent_source_id)! : base;
    dnOf.set(d.source_id, `ou=${d.name},${parent}`);
  }
  const out = createWriteStream(path);
  let buf = '';
  const flush = async () => {
    if (!out.write(buf)) await once(out, 'drain');
    buf = '';
  };
  for (const d of org.departments) buf += `dn: ${dnOf.get(d.source_id)}\nobjectClass: organizationalUnit\nou: ${d.name}\n\n`;
  for (const m of org.members) {
    const [given, ...rest] = m.display_name.split(' ');
    const dn = `uid=${m.source_id},${m.department_source_id ? dnOf.get(m.department_source_id) : base}`;
    buf += `dn: ${dn}\nobjectClass: inetOrgPerson\nuid: ${m.source_id}\ncn: ${m.display_name}\ngivenName: ${given}\nsn: ${rest.join(' ') || given}\nmail: ${m.email}\ntelephoneNumber: ${m.phone}\n${m.title ? `title: ${m.title}\n` : ''}\n`;
    if (buf.length > 1 << 16) await flush();
  }
  await flush();
  out.end();
  await once(out, 'finish');
}

async function main(): Promise<void> {
  const dir = mkdtempSync(join(tmpdir(), 'orgsync-bench-sources-'));
  try {
    // --- CSV ---
    const t0 = performance.now();
    const files = await writeOrgCsv(dir, { members: MEMBERS, departments: 2_000, positions: 200, seed: SEED });
    line({ bench: 'sources', step: 'generate-csv', members: MEMBERS, ms: Math.round(performance.now() - t0) });
    runChild('csv-parse', [files.members]); // warm the page cache
    const bare = best('csv-parse', [files.members]);
    const { first: conn, repeat } = firstAndRepeat(dir, join(dir, 'state.db'));
    const noPhone = best('csv-connector', [dir, '--no-phone']);
    const trunkDir = join(dir, 'trunk');
    withTrunkPrefix(dir, trunkDir);
    const trunk = firstAndRepeat(trunkDir, join(trunkDir, 'state.db'));
    // Wall time decides (as for every ratio here); the CPU-time ratio is printed beside it, steadier on a loaded machine.
    const ratio = (m: Measurement) => Number((m.ms / bare.ms).toFixed(2));
    const ratios = (m: Measurement) => ({ ratio: ratio(m), cpu_ratio: Number((m.cpuMs / bare.cpuMs).toFixed(2)) });
    line({ bench: 'sources', step: 'csv-parse-alone', ...bare });
    line({ bench: 'sources', step: 'csv-connector-first-run', ...conn, ...ratios(conn) });
    line({ bench: 'sources', step: 'csv-connector-repeat-run', ...repeat, ...ratios(repeat) });
    line({ bench: 'sources', step: 'csv-connector-without-phone-field', ...noPhone, ...ratios(noPhone) });
    line({ bench: 'sources', step: 'csv-trunk-prefix-first-run', ...trunk.first, ...ratios(trunk.first) });
    line({ bench: 'sources', step: 'csv-trunk-prefix-repeat-run', ...trunk.repeat, ...ratios(trunk.repeat) });
    line({
      bench: 'sources',
      step: 'csv-result',
      ratio: ratio(conn),
      cpu_ratio: ratios(conn).cpu_ratio,
      repeat_ratio: ratio(repeat),
      repeat_cpu_ratio: ratios(repeat).cpu_ratio,
      target_ratio: 2,
      peak_rss_mb: Math.max(conn.maxRssMb, repeat.maxRssMb),
      target_rss_mb: 400,
      ok: conn.ms <= 2 * bare.ms && Math.max(conn.maxRssMb, repeat.maxRssMb) < 400,
    });

    // BENCH_ONLY=csv: the CSV half alone.
    if (process.env.BENCH_ONLY === 'csv') return;

    // --- LDAP ---
    if (!slapdAvailable()) {
      line({ bench: 'sources', step: 'ldap', skipped: 'slapd is not installed (apt-get install slapd ldap-utils)' });
      return;
    }
    const base = 'dc=bench,dc=example';
    const ldif = join(dir, 'bench.ldif');
    const t1 = performance.now();
    await writeLdif(ldif, base, LDAP_ENTRIES);
    const slapd = await startSlapd({ suffixes: [base], ldif: [{ file: ldif }] });
    line({ bench: 'sources', step: 'load-slapd', entries: LDAP_ENTRIES, ms: Math.round(performance.now() - t1) });
    try {
      const args = [slapd.url, slapd.rootDn, slapd.rootPassword, base] as [string, string, string, string];
      const pid = slapdPid(slapd.dir);
      ldapsearchRun(...args); // warm slapd's caches
      const searches: { ms: number; cpuMs: number; serverCpuMs?: number }[] = [];
      const connectors: (Measurement & { serverCpuMs?: number })[] = [];
      for (let i = 0; i < LDAP_ROUNDS; i++) {
        searches.push(withServerCpu(pid, () => ldapsearchRun(...args)));
        connectors.push(withServerCpu(pid, () => runChild('ldap-connector', args)));
      }
      const fastest = <T extends { ms: number }>(xs: T[]) => xs.reduce((a, b) => (b.ms < a.ms ? b : a));
      const least = (xs: (number | undefined)[]) => (xs.every((x) => x !== undefined) ? Math.min(...(xs as number[])) : undefined);
      const median = (xs: number[]) => [...xs].sort((a, b) => a - b)[xs.length >> 1]!;
      const search = fastest(searches);
      const ldapConn = fastest(connectors);
      // CPU, steadier than wall time on a loaded machine: the client's plus the server's, least of the rounds.
      const searchCpu = least(searches.map((x) => x.serverCpuMs));
      const connCpu = least(connectors.map((x) => x.serverCpuMs));
      const clientAndServer = (client: number, server: number | undefined) => (server === undefined ? undefined : client + server);
      const searchTotal = clientAndServer(Math.min(...searches.map((x) => x.cpuMs)), searchCpu);
      const connTotal = clientAndServer(Math.min(...connectors.map((x) => x.cpuMs)), connCpu);
      line({ bench: 'sources', step: 'ldapsearch-pr500', ms: search.ms, cpuMs: search.cpuMs, runs_ms: searches.map((x) => x.ms), runs_cpu_ms: searches.map((x) => x.cpuMs), server_cpu_ms: searches.map((x) => x.serverCpuMs) });
      line({ bench: 'sources', step: 'ldap-connector', ...ldapConn, runs_ms: connectors.map((c) => c.ms), runs_cpu_ms: connectors.map((c) => c.cpuMs), server_cpu_ms: connectors.map((x) => x.serverCpuMs) });
      line({
        bench: 'sources',
        step: 'ldap-result',
        entries: LDAP_ENTRIES,
        ratio: Number((ldapConn.ms / search.ms).toFixed(2)),
        median_ratio: Number((median(connectors.map((c) => c.ms)) / median(searches.map((x) => x.ms))).toFixed(2)),
        cpu_ratio: searchTotal && connTotal ? Number((connTotal / searchTotal).toFixed(2)) : null,
        target_ratio: LDAP_TARGET_RATIO,
        load_average: loadavg().map((x) => Number(x.toFixed(2))),
        ok: ldapConn.ms <= LDAP_TARGET_RATIO * search.ms,
      });
    } finally {
      await slapd.stop();
    }
  } finally {
    rmSync(dir, { recursive: true, force: true });
  }
}

// Run only as the entry point (the LDIF writer is importable for profiling).
if (process.argv[1] === SELF) {
  if (process.argv[2] === '--child') await child(process.argv[3]!, process.argv.slice(4));
  else await main();
}
