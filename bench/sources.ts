/**
 * `npm run bench:sources` (not a test): the source connectors against their bare libraries, on the same data in
 * the same run.
 *
 * 1. CSV: a deterministic 300,000-member synthetic org (bench/lib/synthetic-org.ts) read, mapped and validated by the
 *    CSV connector (readDesiredState), against csv-parse alone streaming the same members.csv. Target: <= 2x.
 *    Peak RSS of the connector's process for 300,000 members: target < 400 MB.
 * 2. LDAP: 50,000 inetOrgPerson entries (same generator) in a private slapd, read by the LDAP connector, against
 *    `ldapsearch -E pr=500/noprompt` of the same entries and attributes to /dev/null. Target: <= 2.5x (issue 19).
 *    The two alternate (ldapsearch, connector, ldapsearch, ...; BENCH_LDAP_ROUNDS rounds, default 3), so a change
 *    in the machine's load hits both; the faster of each counts, and the medians are printed too.
 *
 * The phone field is validated by libphonenumber-js (13-20 µs a number, most of the connector's time), so the
 * connector is also timed without the phone field, to show its own overhead over csv-parse.
 *
 * Every measurement runs in a fresh child process (this file with --child), so timings exclude start-up and the peak
 * RSS (process.resourceUsage().maxRSS) is that measurement's alone. Each is taken twice; the faster counts.
 * Sizes: BENCH_MEMBERS (300000), BENCH_LDAP_ENTRIES (50000). Prints JSON lines on stdout.
 */
import { spawnSync } from 'node:child_process';
import { createReadStream, createWriteStream, mkdtempSync, openSync, rmSync } from 'node:fs';
import { once } from 'node:events';
import { loadavg, tmpdir } from 'node:os';
import { join } from 'node:path';
import { Writable } from 'node:stream';
import { pipeline } from 'node:stream/promises';
import { fileURLToPath } from 'node:url';
import { parse } from 'csv-parse';
import { sourcesConfigSchema } from '../src/config/sources.js';
import { readDesiredState } from '../src/sources/index.js';
import { silentLogger } from '../src/shared/logger.js';
import { csvSourceConfig, generateOrg, writeOrgCsv } from './lib/synthetic-org.js';
import { slapdAvailable, startSlapd } from '../test/helpers/slapd.js';

const SELF = fileURLToPath(import.meta.url);
const MEMBERS = Number(process.env.BENCH_MEMBERS ?? 300_000);
const LDAP_ENTRIES = Number(process.env.BENCH_LDAP_ENTRIES ?? 50_000);
const SEED = 42;
const LDAP_ROUNDS = Number(process.env.BENCH_LDAP_ROUNDS ?? 3);
/** What the connector asks for with the openldap profile: the mapped attributes plus the profile's status and expiry ones. */
const LDAP_ATTRIBUTES = ['uid', 'displayName', 'cn', 'mail', 'telephoneNumber', 'mobile', 'title', 'pwdAccountLockedTime', 'nsAccountLock', 'shadowExpire'];
const LDAP_TARGET_RATIO = 2.5;

interface Measurement {
  ms: number;
  maxRssMb: number;
  [k: string]: unknown;
}

const maxRssMb = () => Math.round(process.resourceUsage().maxRSS / 1024);

/** Child measurements: each prints one JSON line. */
async function child(mode: string, args: string[]): Promise<void> {
  const t0 = performance.now();
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
    // --no-phone: the same read without the phone field, to show what libphonenumber-js costs.
    if (args[1] === '--no-phone') delete source.members.fields.phone;
    const config = { sources: sourcesConfigSchema.parse([source]), meta: { file: join(dir, 'orgsync.yaml'), dir, secrets: [] } };
    const state = await readDesiredState(config, { env: {}, logger: silentLogger });
    result = { departments: state.departments.length, positions: state.positions.length, members: state.members.length, quarantined: state.quarantine.length };
  } else if (mode === 'ldap-connector') {
    const [url, bindDn, password, base] = args as [string, string, string, string];
    const source = { name: 'bench', type: 'ldap', url, bind_dn: bindDn, bind_password: password, base_dn: base, phone_region: 'US' };
    const config = { sources: sourcesConfigSchema.parse([source]), meta: { file: '/dev/null', dir: '/', secrets: [] } };
    const state = await readDesiredState(config, { env: {}, logger: silentLogger });
    result = { departments: state.departments.length, members: state.members.length, quarantined: state.quarantine.length };
  } else throw new Error(`unknown child mode ${mode}`);
  process.stdout.write(`${JSON.stringify({ ms: Math.round(performance.now() - t0), maxRssMb: maxRssMb(), ...result })}\n`);
}

function runChild(mode: string, args: string[]): Measurement {
  const r = spawnSync(process.execPath, [SELF, '--child', mode, ...args], { encoding: 'utf8', maxBuffer: 1 << 24 });
  if (r.status !== 0) throw new Error(`${mode} failed: ${r.stderr}`);
  return JSON.parse(r.stdout.trim().split('\n').pop()!) as Measurement;
}

function best(mode: string, args: string[]): Measurement {
  const a = runChild(mode, args);
  const b = runChild(mode, args);
  return a.ms <= b.ms ? a : b;
}

function ldapsearchMs(url: string, bindDn: string, password: string, base: string): number {
  const devNull = openSync('/dev/null', 'w');
  const t0 = performance.now();
  const r = spawnSync('ldapsearch', ['-x', '-LLL', '-H', url, '-D', bindDn, '-w', password, '-b', base, '-E', 'pr=500/noprompt', '(objectClass=inetOrgPerson)', ...LDAP_ATTRIBUTES], {
    stdio: ['ignore', devNull, 'pipe'],
  });
  const ms = performance.now() - t0;
  if (r.status !== 0) throw new Error(`ldapsearch failed (${r.status}): ${r.stderr.toString()}`);
  return Math.round(ms);
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
    const conn = best('csv-connector', [dir]);
    const noPhone = best('csv-connector', [dir, '--no-phone']);
    line({ bench: 'sources', step: 'csv-parse-alone', ...bare });
    line({ bench: 'sources', step: 'csv-connector', ...conn });
    line({ bench: 'sources', step: 'csv-connector-without-phone-field', ...noPhone, ratio: Number((noPhone.ms / bare.ms).toFixed(2)) });
    line({
      bench: 'sources',
      step: 'csv-result',
      ratio: Number((conn.ms / bare.ms).toFixed(2)),
      target_ratio: 2,
      peak_rss_mb: conn.maxRssMb,
      target_rss_mb: 400,
      ok: conn.ms <= 2 * bare.ms && conn.maxRssMb < 400,
    });

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
      ldapsearchMs(...args); // warm slapd's caches
      const searches: number[] = [];
      const connectors: Measurement[] = [];
      for (let i = 0; i < LDAP_ROUNDS; i++) {
        searches.push(ldapsearchMs(...args));
        connectors.push(runChild('ldap-connector', args));
      }
      const search = Math.min(...searches);
      const ldapConn = connectors.reduce((a, b) => (b.ms < a.ms ? b : a));
      const median = (xs: number[]) => [...xs].sort((a, b) => a - b)[xs.length >> 1]!;
      line({ bench: 'sources', step: 'ldapsearch-pr500', ms: search, runs_ms: searches });
      line({ bench: 'sources', step: 'ldap-connector', ...ldapConn, runs_ms: connectors.map((c) => c.ms) });
      line({
        bench: 'sources',
        step: 'ldap-result',
        entries: LDAP_ENTRIES,
        ratio: Number((ldapConn.ms / search).toFixed(2)),
        median_ratio: Number((median(connectors.map((c) => c.ms)) / median(searches)).toFixed(2)),
        target_ratio: LDAP_TARGET_RATIO,
        load_average: loadavg().map((x) => Number(x.toFixed(2))),
        ok: ldapConn.ms <= LDAP_TARGET_RATIO * search,
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
