/**
 * A private OpenLDAP server for tests and benchmarks: a temporary slapd.conf (mdb, Debian's core, cosine,
 * inetorgperson and nis schemas plus test/fixtures/ldap/ad.schema), LDIF loaded offline with slapadd, slapd on free
 * loopback ports (ldap:// always, ldaps:// and StartTLS with a CA made here by openssl when `tls` is set).
 *
 * `slapdAvailable()` says whether slapd is installed; `requireSlapd()` prints a visible notice and returns false
 * when it is not (tests then skip), but under CI=true it throws: CI must run the LDAP tests.
 */
import { spawn, spawnSync, type ChildProcess } from 'node:child_process';
import { existsSync, readFileSync, rmSync, writeFileSync } from 'node:fs';
import { createConnection, createServer } from 'node:net';
import { join } from 'node:path';
import { fileURLToPath } from 'node:url';
import { tempDir } from './temp.js';

const SLAPD = ['/usr/sbin/slapd', '/usr/local/libexec/slapd', '/usr/libexec/slapd'].find((p) => existsSync(p));
const SLAPADD = ['/usr/sbin/slapadd', '/usr/local/sbin/slapadd'].find((p) => existsSync(p));
const SCHEMA_DIR = '/etc/ldap/schema';
const MODULE_DIR = ['/usr/lib/ldap', '/usr/lib/x86_64-linux-gnu/ldap', '/usr/lib/aarch64-linux-gnu/ldap'].find((p) => existsSync(join(p, 'back_mdb.la')) || existsSync(join(p, 'back_mdb.so')));
/** The AD schema file of the tests. */
export const AD_SCHEMA = [
  new URL('../fixtures/ldap/ad.schema', import.meta.url),
  // Compiled into dist-bench/test/helpers/ for the benchmarks: the schema stays in the source tree.
  new URL('../../../test/fixtures/ldap/ad.schema', import.meta.url),
]
  .map((u) => fileURLToPath(u))
  .find((p) => existsSync(p))!;

/** True when slapd, slapadd and Debian's schema files are installed. */
export function slapdAvailable(): boolean {
  return !!SLAPD && !!SLAPADD && existsSync(join(SCHEMA_DIR, 'core.schema'));
}

/** For describe.skipIf: prints why LDAP tests skip; under CI=true a missing slapd is an error, never a skip. */
export function requireSlapd(): boolean {
  if (slapdAvailable()) return true;
  if (process.env.CI === 'true') throw new Error('slapd is not installed but CI=true: LDAP tests must run (apt-get install slapd ldap-utils)');
  console.warn('NOTICE: slapd/slapadd not installed: LDAP tests are SKIPPED (install Debian\'s slapd and ldap-utils to run them)');
  return false;
}

/** What startSlapd needs. */
export interface SlapdOptions {
  /** One mdb database per suffix; a missing suffix entry is added (dcObject + organization). */
  suffixes: string[];
  /** LDIF files or texts to load; entries outside every suffix are left out, `changetype: add` lines dropped. */
  ldif?: { file?: string; text?: string }[];
  /** Also listen on ldaps:// and offer StartTLS with a CA made for this server. */
  tls?: boolean;
  /** slapd's size limit (default unlimited). */
  sizeLimit?: number;
  /** The backend of every database: mdb (default) or ldif (which does not implement the paged-results control). */
  backend?: 'mdb' | 'ldif';
  /** slapd `limits` lines for every database, before the default unlimited one (e.g. `dn.exact="uid=x,..." size.pr=disabled`). */
  limits?: string[];
  /** false: load with `slapadd -s` (no schema check), for public files with incomplete entries. Default true. */
  schemaCheck?: boolean;
  /** `index` lines of every mdb database besides `objectClass eq` (e.g. `modifyTimestamp eq`). */
  indexes?: string[];
  /** `access` lines of every mdb database (the root DN is never limited by them), e.g. `to attrs=x by * none`. */
  access?: string[];
  /** The syncprov overlay on every mdb database: the suffix entry then carries contextCSN, the newest change. */
  syncprov?: boolean;
  /** Attributes added to the rootDSE (an LDIF entry with `dn:` empty), e.g. Active Directory's highestCommittedUSN. */
  rootDse?: string;
}

/** A running slapd. */
export interface Slapd {
  url: string;
  ldapsUrl?: string;
  /** PEM of the CA that signed the server certificate (when tls). */
  caFile?: string;
  /** A CA that did not sign it (for the "wrong CA" case). */
  otherCaFile?: string;
  /** Manager DN of the first suffix and its password. */
  rootDn: string;
  rootPassword: string;
  dir: string;
  stop(): Promise<void>;
}

async function freePort(): Promise<number> {
  return new Promise((resolve, reject) => {
    const s = createServer();
    s.once('error', reject);
    s.listen(0, '127.0.0.1', () => {
      const port = (s.address() as { port: number }).port;
      s.close(() => resolve(port));
    });
  });
}

function run(cmd: string, args: string[], input?: string): void {
  const r = spawnSync(cmd, args, { input, encoding: 'utf8' });
  if (r.status !== 0) throw new Error(`${cmd} ${args.join(' ')} failed (${r.status}): ${r.stderr || r.stdout}`);
}

function makeCa(dir: string, name: string): { key: string; cert: string } {
  const key = join(dir, `${name}.key`);
  const cert = join(dir, `${name}.pem`);
  run('openssl', ['req', '-x509', '-newkey', 'rsa:2048', '-nodes', '-keyout', key, '-out', cert, '-days', '2', '-subj', `/CN=orgsync test ${name}`]);
  return { key, cert };
}

function makeTls(dir: string): { ca: string; otherCa: string; cert: string; key: string } {
  const ca = makeCa(dir, 'ca');
  const other = makeCa(dir, 'other-ca');
  const key = join(dir, 'server.key');
  const csr = join(dir, 'server.csr');
  const cert = join(dir, 'server.pem');
  const ext = join(dir, 'server.ext');
  writeFileSync(ext, 'subjectAltName=IP:127.0.0.1,DNS:localhost\nbasicConstraints=CA:FALSE\nkeyUsage=digitalSignature,keyEncipherment\nextendedKeyUsage=serverAuth\n');
  run('openssl', ['req', '-newkey', 'rsa:2048', '-nodes', '-keyout', key, '-out', csr, '-subj', '/CN=localhost']);
  run('openssl', ['x509', '-req', '-in', csr, '-CA', ca.cert, '-CAkey', ca.key, '-CAcreateserial', '-out', cert, '-days', '2', '-extfile', ext]);
  return { ca: ca.cert, otherCa: other.cert, cert, key };
}

/** Keeps the entries under `suffixes`, drops `changetype: add`, and adds missing suffix entries first. */
export function prepareLdif(texts: string[], suffixes: string[]): string {
  const norm = (dn: string) => dn.toLowerCase().replace(/\s*,\s*/g, ',').replace(/\s*=\s*/g, '=').trim();
  const sfx = suffixes.map(norm);
  const present = new Set<string>();
  const kept: string[] = [];
  for (const text of texts) {
    // Unfold continuation lines only to read the DN; the entry text itself is kept as written.
    for (const block of text.replace(/\r\n/g, '\n').split(/\n{2,}/)) {
      const lines = block.split('\n').filter((l) => !l.startsWith('#') && !/^changetype:\s*add\s*$/i.test(l));
      const body = lines.join('\n').trim();
      if (!body) continue;
      const unfolded = body.replace(/\n /g, '');
      const m = /^dn(::?)\s*(.*)$/im.exec(unfolded);
      if (!m) continue;
      const dn = norm(m[1] === '::' ? Buffer.from(m[2]!, 'base64').toString('utf8') : m[2]!);
      if (!sfx.some((s) => dn === s || dn.endsWith(`,${s}`))) continue;
      present.add(dn);
      kept.push(body);
    }
  }
  const heads = suffixes
    .filter((s) => !present.has(norm(s)))
    .map((s) => {
      const first = s.split(',')[0]!.trim();
      const value = first.split('=')[1]!.trim();
      return `dn: ${s}\nobjectClass: dcObject\nobjectClass: organization\no: ${value}\ndc: ${value}`;
    });
  return `${[...heads, ...kept].join('\n\n')}\n`;
}

/** Starts a private slapd with the given data. Call stop() when done. */
export async function startSlapd(opts: SlapdOptions): Promise<Slapd> {
  if (!slapdAvailable()) throw new Error('slapd is not installed');
  const dir = tempDir('orgsync-slapd-');
  const rootPassword = 'secret';
  const rootDn = `cn=admin,${opts.suffixes[0]}`;
  const tls = opts.tls ? makeTls(dir) : undefined;
  const dbs = opts.suffixes.map((suffix, i) => {
    const db = join(dir, `db${i}`);
    spawnSync('mkdir', ['-p', db]);
    if (opts.backend === 'ldif') return `database ldif\nsuffix "${suffix}"\nrootdn "cn=admin,${suffix}"\nrootpw ${rootPassword}\ndirectory ${db}\n${(opts.limits ?? []).map((l) => `limits ${l}\n`).join('')}limits * size=unlimited time=unlimited\n`;
    return `database mdb\nmaxsize 1073741824\nsuffix "${suffix}"\nrootdn "cn=admin,${suffix}"\nrootpw ${rootPassword}\ndirectory ${db}\nindex objectClass eq\n${(opts.indexes ?? []).map((i) => `index ${i}\n`).join('')}${(opts.access ?? []).map((a) => `access ${a}\n`).join('')}${(opts.limits ?? []).map((l) => `limits ${l}\n`).join('')}limits * size=unlimited time=unlimited\n${opts.syncprov ? 'overlay syncprov\n' : ''}`;
  });
  const conf = [
    ...['core', 'cosine', 'inetorgperson', 'nis'].map((s) => `include ${SCHEMA_DIR}/${s}.schema`),
    `include ${AD_SCHEMA}`,
    `pidfile ${join(dir, 'slapd.pid')}`,
    opts.rootDse !== undefined ? `rootDSE ${rootDseFile(dir, opts.rootDse)}` : '',
    MODULE_DIR ? `modulepath ${MODULE_DIR}\nmoduleload back_mdb${opts.syncprov ? '\nmoduleload syncprov' : ''}` : '',
    `sizelimit ${opts.sizeLimit ?? 'unlimited'}`,
    'timelimit unlimited',
    tls ? `TLSCACertificateFile ${tls.ca}\nTLSCertificateFile ${tls.cert}\nTLSCertificateKeyFile ${tls.key}` : '',
    'database config\nrootdn "cn=config"',
    ...dbs,
  ].join('\n');
  const confFile = join(dir, 'slapd.conf');
  writeFileSync(confFile, `${conf}\n`);

  const texts = (opts.ldif ?? []).map((l) => l.text ?? readFileSync(l.file!, 'utf8'));
  for (let i = 0; i < opts.suffixes.length; i++) {
    const ldifFile = join(dir, `load${i}.ldif`);
    writeFileSync(ldifFile, prepareLdif(texts, [opts.suffixes[i]!]));
    run(SLAPADD!, ['-q', ...(opts.schemaCheck === false ? ['-s'] : []), '-f', confFile, '-b', opts.suffixes[i]!, '-l', ldifFile]);
  }

  const port = await freePort();
  const tlsPort = tls ? await freePort() : undefined;
  const urls = [`ldap://127.0.0.1:${port}/`, ...(tlsPort ? [`ldaps://127.0.0.1:${tlsPort}/`] : [])];
  const child: ChildProcess = spawn(SLAPD!, ['-d', '0', '-f', confFile, '-h', urls.join(' ')], { stdio: ['ignore', 'ignore', 'pipe'] });
  let stderr = '';
  child.stderr!.on('data', (d: Buffer) => {
    stderr += d.toString();
  });
  const exited = new Promise<void>((r) => child.once('exit', () => r()));
  await waitForPort(port, child, () => stderr);
  if (tlsPort) await waitForPort(tlsPort, child, () => stderr);

  return {
    url: `ldap://127.0.0.1:${port}`,
    ...(tlsPort ? { ldapsUrl: `ldaps://127.0.0.1:${tlsPort}`, caFile: tls!.ca, otherCaFile: tls!.otherCa } : {}),
    rootDn,
    rootPassword,
    dir,
    async stop() {
      if (child.exitCode === null) child.kill('SIGTERM');
      await Promise.race([exited, new Promise((r) => setTimeout(r, 5000))]);
      if (child.exitCode === null) child.kill('SIGKILL');
      rmSync(dir, { recursive: true, force: true });
    },
  };
}

/** Writes the rootDSE's extra attributes (global, after the schema that defines them). */
function rootDseFile(dir: string, ldif: string): string {
  const file = join(dir, 'root-dse.ldif');
  writeFileSync(file, ldif);
  return file;
}

async function waitForPort(port: number, child: ChildProcess, stderr: () => string): Promise<void> {
  for (let i = 0; i < 200; i++) {
    if (child.exitCode !== null) throw new Error(`slapd exited (${child.exitCode}): ${stderr()}`);
    const ok = await new Promise<boolean>((resolve) => {
      const s = createConnection({ host: '127.0.0.1', port }, () => {
        s.destroy();
        resolve(true);
      });
      s.once('error', () => resolve(false));
    });
    if (ok) return;
    await new Promise((r) => setTimeout(r, 50));
  }
  throw new Error(`slapd did not listen on ${port}: ${stderr()}`);
}
