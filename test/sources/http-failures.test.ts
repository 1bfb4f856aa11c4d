/**
 * HTTP source errors that say where to fix (issue 43 point 2), through `orgsync sources check` against loopback
 * doubles: a 401 or 403 names the `auth` setting with the environment variable or file its secret was read from and
 * the permission the source's preset needs; a certificate no trusted CA signed names `ca_file`, which then makes the
 * read work. The server's own words come after it.
 */
import { spawnSync } from 'node:child_process';
import { createServer as createHttpServer, type Server } from 'node:http';
import { createServer as createHttpsServer } from 'node:https';
import { readFileSync, writeFileSync } from 'node:fs';
import { join } from 'node:path';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { runCli } from '../helpers/cli.js';
import { tempDir } from '../helpers/temp.js';

const GRAPH_DENIED = '{"error":{"code":"Authorization_RequestDenied","message":"Insufficient privileges to complete the operation."}}';
const PEOPLE = JSON.stringify({ items: [{ id: 'p1', name: 'Ada Lovelace', email: 'ada@example.org' }] });

function openssl(args: string[]): void {
  const r = spawnSync('openssl', args, { encoding: 'utf8' });
  if (r.status !== 0) throw new Error(`openssl ${args[0]} failed: ${r.stderr}`);
}

/** A CA and a server certificate for 127.0.0.1 signed by it, and a second CA that signed nothing. */
function makeCerts(dir: string): { ca: string; otherCa: string; key: string; cert: string } {
  const ca = (name: string) => {
    openssl(['req', '-x509', '-newkey', 'rsa:2048', '-nodes', '-keyout', join(dir, `${name}.key`), '-out', join(dir, `${name}.pem`), '-days', '2', '-subj', `/CN=orgsync test ${name}`]);
    return join(dir, `${name}.pem`);
  };
  const caFile = ca('ca');
  const otherCa = ca('other-ca');
  writeFileSync(join(dir, 'server.ext'), 'subjectAltName=IP:127.0.0.1\nbasicConstraints=CA:FALSE\nextendedKeyUsage=serverAuth\n');
  openssl(['req', '-newkey', 'rsa:2048', '-nodes', '-keyout', join(dir, 'server.key'), '-out', join(dir, 'server.csr'), '-subj', '/CN=hr.example.test']);
  openssl(['x509', '-req', '-in', join(dir, 'server.csr'), '-CA', caFile, '-CAkey', join(dir, 'ca.key'), '-CAcreateserial', '-out', join(dir, 'server.pem'), '-days', '2', '-extfile', join(dir, 'server.ext')]);
  return { ca: caFile, otherCa, key: join(dir, 'server.key'), cert: join(dir, 'server.pem') };
}

const listen = (server: Server) => new Promise<number>((resolve) => server.listen(0, '127.0.0.1', () => resolve((server.address() as { port: number }).port)));
const close = (server: Server | undefined) => new Promise<void>((resolve) => (server ? server.close(() => resolve()) : resolve()));

describe('HTTP source errors that name the setting to change', () => {
  let dir: string;
  let denied: Server;
  let refused: Server;
  let tls: Server;
  let certs: ReturnType<typeof makeCerts>;
  const ports: Record<string, number> = {};
  beforeAll(async () => {
    dir = tempDir('orgsync-http-failures-');
    certs = makeCerts(dir);
    denied = createHttpServer((_req, res) => res.writeHead(403, { 'content-type': 'application/json' }).end(GRAPH_DENIED));
    refused = createHttpServer((_req, res) => res.writeHead(401, { 'content-type': 'application/json' }).end('{"error":"invalid_token","error_description":"The access token expired"}'));
    tls = createHttpsServer({ key: readFileSync(certs.key), cert: readFileSync(certs.cert) }, (_req, res) => res.writeHead(200, { 'content-type': 'application/json' }).end(PEOPLE));
    ports.denied = await listen(denied);
    ports.refused = await listen(refused);
    ports.tls = await listen(tls);
  });
  afterAll(async () => {
    await Promise.all([close(denied), close(refused), close(tls)]);
  });

  function config(source: string): string {
    const file = join(dir, `c${Math.random().toString(36).slice(2)}.yaml`);
    writeFileSync(file, `platform:\n  base_url: http://127.0.0.1:1\nlog:\n  level: silent\nsources:\n${source}`);
    return file;
  }
  const people = (url: string, extra = '') =>
    `  - name: hr\n    type: hris-json\n${extra}    members:\n      url: ${url}\n      items_path: items\n      fields: { id: id, display_name: name, email: email }\n`;

  it('403 from Microsoft Graph: the preset\'s permission (User.Read.All) and auth.token with the variable it came from', async () => {
    const file = config(`  - name: graph\n    preset: microsoft-graph\n    base_url: http://127.0.0.1:${ports.denied}\n    members:\n      delta: false\n    auth:\n      type: bearer\n      token: \${GRAPH_TOKEN}\n`);
    const r = await runCli(['sources', 'check', '--config', file], { GRAPH_TOKEN: 'graph-token-value-1' });
    expect(r.code).toBe(1);
    expect(r.stderr).toMatch(/^orgsync: source "graph": members: GET http:\/\/127\.0\.0\.1:\d+\/v1\.0\/users\?\S+ answered HTTP 403: /);
    expect(r.stderr).toContain(
      `answered HTTP 403: the credential is valid but may not read this: the app registration needs the Microsoft Graph application permission User.Read.All, with admin consent; the credential is auth (bearer; auth.token read from $GRAPH_TOKEN); the server said: ${GRAPH_DENIED}\n`,
    );
    expect(r.stderr).not.toContain('graph-token-value-1');
  });

  it('401 with the token from a file: auth.token and the file it was read from', async () => {
    writeFileSync(join(dir, 'hr-token'), 'hr-token-value-1\n');
    const file = config(people(`http://127.0.0.1:${ports.refused}/people`, '    auth:\n      type: bearer\n      token_file: hr-token\n'));
    const r = await runCli(['sources', 'check', '--config', file]);
    expect(r.code).toBe(1);
    expect(r.stderr).toBe(
      `orgsync: source "hr": members: GET http://127.0.0.1:${ports.refused}/people answered HTTP 401: the HR system refused the credential: check auth (bearer; auth.token read from file ${join(dir, 'hr-token')} (token_file)): it must be current (not revoked or expired) and of this tenant, and the credential needs read access to this URL; the server said: {"error":"invalid_token","error_description":"The access token expired"}\n`,
    );
  });

  it('a certificate no trusted CA signed names ca_file; with the CA in ca_file the read works; another CA is named by its path', async () => {
    const url = `https://127.0.0.1:${ports.tls}/people`;
    const untrusted = await runCli(['sources', 'check', '--config', config(people(url, '    max_attempts: 1\n'))]);
    expect(untrusted.code).toBe(1);
    expect(untrusted.stderr).toMatch(
      new RegExp(
        `^orgsync: source "hr": members: GET ${url.replace(/[./]/g, '\\$&')}: the server's certificate is not signed by a CA this system trusts \\(no ca_file is set\\): set ca_file to the PEM of the CA that signed it \\(an internal CA, or the TLS-inspecting proxy's\\); the connection failed with: (UNABLE_TO_VERIFY_LEAF_SIGNATURE|SELF_SIGNED_CERT_IN_CHAIN|UNABLE_TO_GET_ISSUER_CERT_LOCALLY): `,
      ),
    );
    const trusted = await runCli(['sources', 'check', '--config', config(people(url, `    ca_file: ${certs.ca}\n`))]);
    expect([trusted.code, trusted.stderr]).toEqual([0, '']);
    expect(trusted.stdout).toContain('source hr (hris-json): 0 departments, 0 positions, 1 member, 0 quarantined\n');
    const other = await runCli(['sources', 'check', '--config', config(people(url, `    max_attempts: 1\n    ca_file: ${certs.otherCa}\n`))]);
    expect(other.code).toBe(1);
    expect(other.stderr).toContain(`: the server's certificate is not signed by the CA in ca_file ${certs.otherCa}: set ca_file to the PEM of the CA that signed it`);
  });
});
