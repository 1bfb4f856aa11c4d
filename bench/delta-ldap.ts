/**
 * `npm run bench:delta-ldap` (not a test; issue 31 point 4): an LDAP directory of BENCH_LDAP_ENTRIES (50,000)
 * inetOrgPerson entries under 200 nested OUs in a private slapd, BENCH_CHANGED_PERCENT (1) % of them modified with
 * ldapmodify after a full read, then the members read by delta (id-only listing plus the changed entries) against
 * a full read of the same directory, alternating for BENCH_ROUNDS (5) rounds; the fastest of each counts, the
 * medians are printed beside.
 *
 * The entries are generated as bench/sources.ts generates them (writeLdif) and loaded offline with slapadd (as every
 * LDAP test and bench here; ldapadd of 50,000 entries over the protocol takes minutes and measures nothing of the
 * connector), stamped as last modified in 2020: a directory in its steady state, where the watermark of the last
 * read is after every entry but the changed ones. Each delta round reads the same saved snapshot and watermark.
 *
 * slapd indexes `modifyTimestamp eq`, as docs/sources/ldap.md advises for delta reads (BENCH_LDAP_INDEX=0: without,
 * when slapd tests every member entry against the changed-entries filter).
 *
 * Printed as JSON lines: per read its wall time, the entries the server sent (full: every member with its
 * attributes; delta: the listing's entries, key attribute only, and the changed entries with their attributes), and
 * slapd's CPU time (from /proc); the result line says whether the delta read's batch equals the full read's.
 */
import { spawnSync } from 'node:child_process';
import { readFileSync, rmSync, writeFileSync } from 'node:fs';
import { loadavg } from 'node:os';
import { join } from 'node:path';
import { isDeepStrictEqual } from 'node:util';
import { sourcesConfigSchema, type LdapSourceConfig } from '../src/config/sources.js';
import { readLdapSource } from '../src/sources/ldap/read-ldap.js';
import type { Clock } from '../src/shared/clock.js';
import type { Logger } from '../src/shared/logger.js';
import { MemorySnapshot } from '../test/helpers/memory-snapshot.js';
import { slapdAvailable, startSlapd, type Slapd } from '../test/helpers/slapd.js';
import { tempDir } from '../test/helpers/temp.js';
import { writeLdif } from './sources.js';

const ENTRIES = Number(process.env.BENCH_LDAP_ENTRIES ?? 50_000);
const CHANGED_PERCENT = Number(process.env.BENCH_CHANGED_PERCENT ?? 1);
const ROUNDS = Number(process.env.BENCH_ROUNDS ?? 5);
const BASE = 'dc=bench,dc=example';
const INDEXED = process.env.BENCH_LDAP_INDEX !== '0';
/** After the entries' 2020 stamps, before the changes made now: the watermark is this minus the 10-minute overlap. */
const clock: Clock = { now: () => Date.UTC(2021, 0, 1), sleep: async () => {} };

const line = (o: Record<string, unknown>) => process.stdout.write(`${JSON.stringify(o)}\n`);

/** The connector's info lines, for the counts of what the server sent. */
function countingLogger(): { logger: Logger; last: () => Record<string, unknown> } {
  let last: Record<string, unknown> = {};
  const noop = () => {};
  const logger: Logger = { trace: noop, debug: noop, info: (obj) => (last = obj as Record<string, unknown>), warn: noop, error: noop, child: () => logger };
  return { logger, last: () => last };
}

/** slapd's CPU time so far (user + system, ms), from /proc; undefined elsewhere. */
function slapdCpuMs(slapd: Slapd): number | undefined {
  try {
    const pid = readFileSync(join(slapd.dir, 'slapd.pid'), 'utf8').trim();
    const fields = readFileSync(`/proc/${pid}/stat`, 'utf8').split(') ')[1]!.split(' ');
    return ((Number(fields[11]) + Number(fields[12])) * 1000) / 100; // utime, stime in clock ticks (100/s on Linux)
  } catch {
    return undefined;
  }
}

/** One read of the members with a snapshot context, timed; not committed unless `commit`. */
async function timedRead(slapd: Slapd, source: LdapSourceConfig, store: MemorySnapshot, mode: 'full' | 'delta', commit = false) {
  const { logger, last } = countingLogger();
  const c = store.context(mode, mode === 'full' ? 'bench full read' : 'bench delta read');
  const cpu0 = slapdCpuMs(slapd);
  const t0 = performance.now();
  const batch = await readLdapSource(source, { env: {}, logger, clock, resolvePath: (p) => p, delta: c.ctx });
  const ms = Math.round(performance.now() - t0);
  const cpu1 = slapdCpuMs(slapd);
  if (commit) c.commit();
  if (c.fallbacks.length > 0) throw new Error(`the delta read fell back to a full read: ${c.fallbacks.join('; ')}`);
  return { batch, ms, serverCpuMs: cpu0 === undefined || cpu1 === undefined ? undefined : Math.round(cpu1 - cpu0), counts: last() };
}

/** Modifies every `step`-th member (its title, then its phone): one ldapmodify of all the changes. */
function modifyMembers(slapd: Slapd, ldif: string, step: number): number {
  const dns = Array.from(ldif.matchAll(/^dn: (uid=[^\n]+)$/gm), (m) => m[1]!);
  let changes = '';
  let count = 0;
  for (let i = 0; i < dns.length; i += step) {
    changes += `dn: ${dns[i]}\nchangetype: modify\nreplace: title\ntitle: Changed ${i}\n-\nreplace: telephoneNumber\ntelephoneNumber: +1 201 555 ${String(i % 10_000).padStart(4, '0')}\n\n`;
    count++;
  }
  const r = spawnSync('ldapmodify', ['-x', '-H', slapd.url, '-D', slapd.rootDn, '-w', slapd.rootPassword], { input: changes, encoding: 'utf8', maxBuffer: 64 << 20 });
  if (r.status !== 0) throw new Error(`ldapmodify failed (${r.status}): ${r.stderr}`);
  return count;
}

async function main(): Promise<void> {
  if (!slapdAvailable()) {
    line({ bench: 'delta-ldap', skipped: 'slapd is not installed (apt-get install slapd ldap-utils)' });
    return;
  }
  const dir = tempDir('orgsync-bench-delta-ldap-');
  try {
    const t0 = performance.now();
    const ldifFile = join(dir, 'bench.ldif');
    await writeLdif(ldifFile, BASE, ENTRIES);
    // Every entry last modified in 2020 (slapadd keeps given operational attributes): the steady state.
    const ldif = readFileSync(ldifFile, 'utf8').replace(/\n\n/g, '\nmodifyTimestamp: 20200101000000Z\n\n');
    writeFileSync(ldifFile, ldif);
    const slapd = await startSlapd({ suffixes: [BASE], ldif: [{ file: ldifFile }], indexes: INDEXED ? ['modifyTimestamp eq'] : [] });
    line({ bench: 'delta-ldap', step: 'load-slapd', entries: ENTRIES, modify_timestamp_indexed: INDEXED, ms: Math.round(performance.now() - t0) });
    try {
      await rounds(slapd, ldif);
    } finally {
      await slapd.stop();
    }
  } finally {
    rmSync(dir, { recursive: true, force: true });
  }
}

async function rounds(slapd: Slapd, ldif: string): Promise<void> {
  const source = sourcesConfigSchema.parse([{ name: 'bench', type: 'ldap', url: slapd.url, bind_dn: slapd.rootDn, bind_password: slapd.rootPassword, base_dn: BASE, phone_region: 'US' }])[0] as LdapSourceConfig;
  const store = new MemorySnapshot();
  const first = await timedRead(slapd, source, store, 'full', true);
  line({ bench: 'delta-ldap', step: 'first-full-read', ms: first.ms, members_read: first.counts.listed, server_cpu_ms: first.serverCpuMs });
  const changed = modifyMembers(slapd, ldif, Math.max(1, Math.round(100 / CHANGED_PERCENT)));
  line({ bench: 'delta-ldap', step: 'modify', entries: changed, percent: CHANGED_PERCENT });
  const fulls: Awaited<ReturnType<typeof timedRead>>[] = [];
  const deltas: Awaited<ReturnType<typeof timedRead>>[] = [];
  for (let i = 0; i < ROUNDS; i++) {
    fulls.push(await timedRead(slapd, source, new MemorySnapshot(), 'full'));
    deltas.push(await timedRead(slapd, source, store, 'delta'));
  }
  const fastest = <T extends { ms: number }>(xs: T[]) => xs.reduce((a, b) => (b.ms < a.ms ? b : a));
  // On a loaded machine single rounds vary by 2x: the median is printed beside the fastest.
  const median = (xs: { ms: number }[]) => xs.map((x) => x.ms).sort((a, b) => a - b)[xs.length >> 1]!;
  const full = fastest(fulls);
  const delta = fastest(deltas);
  line({ bench: 'delta-ldap', step: 'full-read', ms: full.ms, median_ms: median(fulls), runs_ms: fulls.map((x) => x.ms), members_read: full.counts.listed, attributes: 'all mapped', server_cpu_ms: full.serverCpuMs });
  line({
    bench: 'delta-ldap',
    step: 'delta-read',
    ms: delta.ms,
    median_ms: median(deltas),
    runs_ms: deltas.map((x) => x.ms),
    listed_id_only: delta.counts.listed,
    changed_read: delta.counts.changed,
    removed: delta.counts.removed,
    server_cpu_ms: delta.serverCpuMs,
  });
  line({
    bench: 'delta-ldap',
    step: 'result',
    entries: ENTRIES,
    changed,
    modify_timestamp_indexed: INDEXED,
    speedup: Number((full.ms / delta.ms).toFixed(2)),
    median_speedup: Number((median(fulls) / median(deltas)).toFixed(2)),
    full_entries_with_attributes: full.counts.listed,
    delta_entries_with_attributes: delta.counts.changed,
    same_batch_as_full_read: isDeepStrictEqual(delta.batch, full.batch),
    load_average: loadavg().map((x) => Number(x.toFixed(2))),
  });
}

await main();
