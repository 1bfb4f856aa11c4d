/**
 * A private Samba Active Directory domain controller for tests (issue 43), started the way test/helpers/slapd.ts
 * starts slapd: `samba-tool domain provision --targetdir` into a temporary folder (its smb.conf, databases, pid
 * directory, sockets and logs all there: nothing under /etc, /var/lib or /run), then `samba -i -M single` with the LDAP
 * service only, listening on a loopback address of its own (127.43.x.y: Samba's LDAP ports are 389 and 636, so
 * each DC gets its own address instead of its own ports). The DC makes its own CA and a certificate for
 * DC1.corp.example.test, as a real AD's certificate services would; it names no IP address.
 *
 * Samba 4.17 (Debian's samba-ad-dc) provisions in 7-11 s here, so a test file shares one DC. `requireSamba()` prints a
 * visible notice and returns false when Samba is not installed (tests then skip), but under CI=true it throws: CI
 * must run the Active Directory tests (.ci/run installs samba-ad-dc).
 */
import { spawn, spawnSync, type ChildProcess } from 'node:child_process';
import { existsSync, rmSync } from 'node:fs';
import { createConnection, createServer } from 'node:net';
import { join } from 'node:path';
import { tempDir } from './temp.js';

const SAMBA = ['/usr/sbin/samba', '/usr/local/samba/sbin/samba'].find((p) => existsSync(p));
const SAMBA_TOOL = ['/usr/bin/samba-tool', '/usr/local/samba/bin/samba-tool'].find((p) => existsSync(p));
/** The AD schema files provisioning reads (Debian's samba-ad-provision). */
const AD_SCHEMA = '/usr/share/samba/setup/ad-schema';

/** The domain every test DC has. */
export const AD_REALM = 'CORP.EXAMPLE.TEST';
export const AD_DOMAIN = 'corp.example.test';
export const AD_BASE = 'DC=corp,DC=example,DC=test';

/** True when samba, samba-tool, the AD schema and ldap-utils (ldapmodify) are installed. */
export function sambaAvailable(): boolean {
  return !!SAMBA && !!SAMBA_TOOL && existsSync(AD_SCHEMA) && spawnSync('ldapmodify', ['-VV'], { encoding: 'utf8' }).error === undefined;
}

/** For describe.skipIf: prints why Active Directory tests skip; under CI=true a missing Samba is an error, never a skip. */
export function requireSamba(): boolean {
  if (sambaAvailable() && process.getuid?.() === 0) return true;
  const why = process.getuid?.() !== 0 ? 'not running as root (samba binds ports 389 and 636 on its loopback address)' : 'samba-ad-dc, samba-ad-provision or ldap-utils not installed';
  if (process.env.CI === 'true') throw new Error(`Active Directory tests cannot run but CI=true: ${why} (apt-get install samba-ad-dc samba-ad-provision ldap-utils, as .ci/run does)`);
  console.warn(`NOTICE: ${why}: the Samba Active Directory tests are SKIPPED (install Debian's samba-ad-dc, samba-ad-provision and ldap-utils as root to run them)`);
  return false;
}

/** A running Samba AD DC. */
export interface SambaDc {
  /** Its loopback address (127.43.x.y). */
  host: string;
  /** ldap://host:389 (simple binds need StartTLS here: Samba refuses them in clear, as AD does). */
  url: string;
  /** ldaps://host:636. */
  ldapsUrl: string;
  /** PEM of the CA that signed the DC's certificate. */
  caFile: string;
  /** The domain's Administrator: userPrincipalName and DN, and its password. */
  adminUpn: string;
  adminDn: string;
  adminPassword: string;
  dir: string;
  /** ldapmodify over LDAPS as Administrator, in one call (LDIF with changetype lines). */
  modify(ldif: string): void;
  /** ldapadd over LDAPS as Administrator, in one call. */
  add(ldif: string): void;
  /** samba-tool on this DC's own database (e.g. ['dsacl', 'set', ...]), beside the running server. */
  tool(args: string[]): string;
  stop(): Promise<void>;
}

/** The password every test account gets (meets AD's default complexity). */
export const AD_PASSWORD = 'Corp-Pass-2026!';

/** unicodePwd's value: the password in double quotes, UTF-16LE, base64 (for `unicodePwd::`). */
export function unicodePwd(password: string): string {
  return Buffer.from(`"${password}"`, 'utf16le').toString('base64');
}

function run(cmd: string, args: string[], opts: { input?: string; env?: NodeJS.ProcessEnv } = {}): string {
  const r = spawnSync(cmd, args, { input: opts.input, encoding: 'utf8', env: opts.env ?? process.env, maxBuffer: 64 * 1024 * 1024 });
  if (r.status !== 0) throw new Error(`${cmd} ${args.slice(0, 3).join(' ')} failed (${r.status ?? r.signal}): ${(r.stderr || r.stdout).slice(-2000)}`);
  return r.stdout;
}

/** True when nothing listens on host:port and it can be bound. */
async function bindable(host: string, port: number): Promise<boolean> {
  return new Promise((resolve) => {
    const s = createServer();
    s.once('error', () => resolve(false));
    s.listen(port, host, () => s.close(() => resolve(true)));
  });
}

/** A loopback address whose LDAP ports are free (several DCs may run at once, each on its own address). */
async function freeLoopback(): Promise<string> {
  for (let i = 0; i < 50; i++) {
    const host = `127.43.${1 + Math.floor(Math.random() * 250)}.${2 + Math.floor(Math.random() * 250)}`;
    if ((await bindable(host, 389)) && (await bindable(host, 636)) && (await bindable(host, 3268)) && (await bindable(host, 3269))) return host;
  }
  throw new Error('no free loopback address for a Samba DC');
}

/** Provisions a domain into `dir` (everything under it) and returns its smb.conf. */
function provision(dir: string, host: string, adminPassword: string): string {
  const at = (p: string) => join(dir, p);
  const options = [
    `pid directory = ${at('pid')}`,
    `ncalrpc dir = ${at('ncalrpc')}`,
    `winbindd socket directory = ${at('winbindd')}`,
    `ntp signd socket directory = ${at('ntp_signd')}`,
    `log file = ${at('log.%m')}`,
    `interfaces = ${host}/8`,
    'bind interfaces only = yes',
    // LDAP only: no KDC, DNS, SMB, RPC or replication services; nothing else listens.
    'server services = ldap',
    // The domain policy of a fresh AD keeps: simple binds only over TLS (ldap server require strong auth = yes).
  ];
  run(SAMBA_TOOL!, [
    'domain',
    'provision',
    `--targetdir=${dir}`,
    `--realm=${AD_REALM}`,
    '--domain=CORP',
    '--server-role=dc',
    '--dns-backend=NONE',
    '--host-name=dc1',
    `--adminpass=${adminPassword}`,
    ...options.map((o) => `--option=${o}`),
  ]);
  return at('etc/smb.conf');
}

/** Provisions and starts a DC; `ldif` (changetype-less entries) is added over LDAPS once it listens. */
export async function startSamba(opts: { ldif?: string } = {}): Promise<SambaDc> {
  if (!sambaAvailable()) throw new Error('samba is not installed');
  const dir = tempDir('orgsync-samba-');
  const host = await freeLoopback();
  const adminPassword = 'Adm1n-Pass-2026!';
  const conf = provision(dir, host, adminPassword);
  const child: ChildProcess = spawn(SAMBA!, ['-i', '-M', 'single', '-s', conf, '--debuglevel=0'], { stdio: ['ignore', 'pipe', 'pipe'] });
  let output = '';
  const keep = (d: Buffer) => {
    output = (output + d.toString()).slice(-8000);
  };
  child.stdout!.on('data', keep);
  child.stderr!.on('data', keep);
  const exited = new Promise<void>((r) => child.once('exit', () => r()));
  const stop = async () => {
    if (child.exitCode === null && child.signalCode === null) child.kill('SIGTERM');
    await Promise.race([exited, new Promise((r) => setTimeout(r, 5000))]);
    if (child.exitCode === null && child.signalCode === null) child.kill('SIGKILL');
    await exited;
    rmSync(dir, { recursive: true, force: true });
  };
  const caFile = join(dir, 'private', 'tls', 'ca.pem');
  try {
    await waitForPort(host, 636, child, () => output);
    await waitForPort(host, 389, child, () => output);
    if (!existsSync(caFile)) throw new Error(`samba made no CA at ${caFile}`);
  } catch (err) {
    await stop();
    throw err;
  }
  // The tests' own admin tool: the DC's CA, but its certificate names DC1.corp.example.test, not this address.
  const ldapEnv = { ...process.env, LDAPTLS_CACERT: caFile, LDAPTLS_REQCERT: 'allow', LDAPCONF: '/dev/null' };
  const adminUpn = `Administrator@${AD_DOMAIN}`;
  const ldap = (cmd: 'ldapmodify' | 'ldapadd', ldif: string) => {
    run(cmd, ['-x', '-H', `ldaps://${host}`, '-D', adminUpn, '-w', adminPassword], { input: ldif, env: ldapEnv });
  };
  const dc: SambaDc = {
    host,
    url: `ldap://${host}:389`,
    ldapsUrl: `ldaps://${host}:636`,
    caFile,
    adminUpn,
    adminDn: `CN=Administrator,CN=Users,${AD_BASE}`,
    adminPassword,
    dir,
    modify: (ldif) => ldap('ldapmodify', ldif),
    add: (ldif) => ldap('ldapadd', ldif),
    tool: (args) => run(SAMBA_TOOL!, [...args, `--configfile=${conf}`, '-H', join(dir, 'private', 'sam.ldb')]),
    stop,
  };
  if (opts.ldif) {
    try {
      dc.add(opts.ldif);
    } catch (err) {
      await stop();
      throw err;
    }
  }
  return dc;
}

async function waitForPort(host: string, port: number, child: ChildProcess, output: () => string): Promise<void> {
  // Samba makes its TLS keys before listening: up to 60 s on a loaded 2-core machine (4096-bit RSA).
  for (let i = 0; i < 1200; i++) {
    if (child.exitCode !== null || child.signalCode !== null) throw new Error(`samba exited (${child.exitCode ?? child.signalCode}): ${output()}`);
    const ok = await new Promise<boolean>((resolve) => {
      const s = createConnection({ host, port }, () => {
        s.destroy();
        resolve(true);
      });
      s.once('error', () => resolve(false));
    });
    if (ok) return;
    await new Promise((r) => setTimeout(r, 50));
  }
  throw new Error(`samba did not listen on ${host}:${port}: ${output()}`);
}
