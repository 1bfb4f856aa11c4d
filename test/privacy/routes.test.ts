/**
 * Issue 29 point 1 on the listener itself: open routes answer anyone; the personal ones (/plan, /plan.json,
 * /runs/<id>, /records/<selector>/history) answer 404 naming daemon.read_token_file when it is not configured, 401
 * (counted by route template) without or with a wrong token (the trigger token included), and 200 with the read
 * token, read at each request. metrics.tls: HTTPS whose certificate is replaced by the next connection after the
 * files change.
 */
import { execFileSync } from 'node:child_process';
import { readFileSync, renameSync } from 'node:fs';
import { request as httpsRequest } from 'node:https';
import { join } from 'node:path';
import { connect } from 'node:tls';
import { afterEach, describe, expect, it } from 'vitest';
import { startOpsServer, type OpsHandlers, type OpsServer } from '../../src/observability/http-server.js';
import { OrgsyncMetrics } from '../../src/observability/metrics.js';
import { tokenMatches } from '../../src/observability/route-access.js';
import { isOrgsyncError } from '../../src/shared/errors.js';
import { tempDir } from '../helpers/temp.js';

const PERSONAL = ['/plan', '/plan.json', '/runs/run-1', '/records/ann%40acme.test/history'];
const TEMPLATES: Record<string, string> = { '/plan': '/plan', '/plan.json': '/plan.json', '/runs/run-1': '/runs/<id>', '/records/ann%40acme.test/history': '/records/<selector>/history' };

let server: OpsServer | undefined;
afterEach(async () => {
  await server?.close();
  server = undefined;
});

function handlers(metrics: OrgsyncMetrics, readToken: (() => string) | undefined): OpsHandlers {
  return {
    registry: metrics.registry,
    readiness: () => ({ ready: true, checks: {} }),
    status: () => ({ state: 'idle' }),
    plan: () => ({ html: '<p>Ann Lee</p>', json: { changes: [{ email: 'ann@acme.test' }] } }),
    extra: ({ method, path, authorization }) => {
      if (path === '/sync') return authorization === 'Bearer trigger-tok' && method === 'POST' ? { status: 202, body: { run_id: 'run-2' } } : { status: 401, body: {} };
      if (path === '/runs/run-1') return { status: 200, body: { id: 'run-1' } };
      if (path.startsWith('/records/')) return { status: 200, body: { entries: [] } };
      return undefined;
    },
    access: { ...(readToken ? { readToken } : {}), onUnauthorized: (route) => metrics.httpUnauthorizedTotal.inc({ route }) },
  };
}

const get = async (url: string, token?: string) => {
  const res = await fetch(url, token === undefined ? {} : { headers: { authorization: `Bearer ${token}` } });
  return { status: res.status, body: await res.text() };
};

describe('listener routes by sensitivity', () => {
  it('without daemon.read_token_file the personal routes answer 404 naming the key; the open ones answer', async () => {
    const metrics = new OrgsyncMetrics({ build: { version: 't' }, defaultMetrics: false });
    server = await startOpsServer('127.0.0.1:0', handlers(metrics, undefined));
    for (const path of PERSONAL) {
      const res = await get(`${server.url}${path}`, 'anything');
      expect(res.status).toBe(404);
      expect(JSON.parse(res.body)).toEqual({ error: { code: 'not_found', message: `${TEMPLATES[path]} carries personal data and is served only with a read token: set daemon.read_token_file` } });
    }
    for (const path of ['/metrics', '/healthz', '/readyz', '/status']) expect((await get(`${server.url}${path}`)).status).toBe(200);
  });

  it('no token, a wrong one and the trigger token: 401, counted per route; the read token: 200; a rotated token applies at the next request', async () => {
    const metrics = new OrgsyncMetrics({ build: { version: 't' }, defaultMetrics: false });
    let token = 'read-tok-1';
    server = await startOpsServer('127.0.0.1:0', handlers(metrics, () => token));
    for (const path of PERSONAL) {
      for (const given of [undefined, 'wrong', 'trigger-tok', 'read-tok-1x', '']) {
        const res = await get(`${server.url}${path}`, given);
        expect(res.status).toBe(401);
        expect(JSON.parse(res.body)).toEqual({ error: { code: 'unauthorized', message: `${TEMPLATES[path]} requires a bearer token from daemon.read_token_file` } });
        expect(res.body).not.toContain('Ann');
      }
      expect((await get(`${server.url}${path}`, 'read-tok-1')).status).toBe(200);
    }
    expect((await get(`${server.url}/plan`, 'read-tok-1')).body).toBe('<p>Ann Lee</p>');
    const text = await (await fetch(`${server.url}/metrics`)).text();
    for (const route of Object.values(TEMPLATES)) expect(text).toContain(`orgsync_http_unauthorized_total{route="${route}"} 5`);
    // The read token does not trigger runs, and the trigger route keeps its own token.
    expect((await fetch(`${server.url}/sync`, { method: 'POST', headers: { authorization: 'Bearer read-tok-1' } })).status).toBe(401);
    expect((await fetch(`${server.url}/sync`, { method: 'POST', headers: { authorization: 'Bearer trigger-tok' } })).status).toBe(202);
    token = 'read-tok-2';
    expect((await get(`${server.url}/plan.json`, 'read-tok-1')).status).toBe(401);
    expect((await get(`${server.url}/plan.json`, 'read-tok-2')).status).toBe(200);
  });

  it('compares tokens of any length without throwing, and an empty token never matches', () => {
    expect(tokenMatches('abc', 'abc')).toBe(true);
    expect(tokenMatches('abc', 'abcd')).toBe(false);
    expect(tokenMatches('', '')).toBe(false);
  });
});

/** A self-signed certificate for 127.0.0.1 made by openssl in `dir`, as `<name>.crt` / `<name>.key`. */
function selfSigned(dir: string, name: string): { cert: string; key: string } {
  const cert = join(dir, `${name}.crt`);
  const key = join(dir, `${name}.key`);
  execFileSync('openssl', ['req', '-x509', '-newkey', 'rsa:2048', '-nodes', '-keyout', key, '-out', cert, '-days', '2', '-subj', `/CN=${name}`, '-addext', 'subjectAltName=IP:127.0.0.1'], { stdio: 'ignore' });
  return { cert, key };
}

/** The subject CN of the certificate the listener presents on a new connection. */
function presentedCn(port: number): Promise<string> {
  return new Promise((resolve, reject) => {
    const socket = connect({ host: '127.0.0.1', port, rejectUnauthorized: false }, () => {
      const cn = socket.getPeerCertificate().subject.CN;
      socket.end();
      resolve(String(cn));
    });
    socket.on('error', reject);
  });
}

describe('metrics.tls', () => {
  it('serves HTTPS verified against the certificate, and the next connection gets a renewed certificate', async () => {
    const dir = tempDir('orgsync-tls-');
    const first = selfSigned(dir, 'first');
    const metrics = new OrgsyncMetrics({ build: { version: 't' }, defaultMetrics: false });
    server = await startOpsServer('127.0.0.1:0', { ...handlers(metrics, () => 'tok'), tls: { certFile: first.cert, keyFile: first.key } });
    expect(server.url).toMatch(/^https:\/\/127\.0\.0\.1:\d+$/);
    const body = await new Promise<string>((resolve, reject) => {
      const req = httpsRequest(`${server!.url}/healthz`, { ca: readFileSync(first.cert) }, (res) => {
        let text = '';
        res.on('data', (c: Buffer) => (text += c.toString()));
        res.on('end', () => resolve(`${res.statusCode} ${text.trim()}`));
      });
      req.on('error', reject);
      req.end();
    });
    expect(body).toBe('200 {\n  "status": "ok"\n}');
    expect(await presentedCn(server.port)).toBe('first');
    // A renewal as a Secret update does it: new files put in place by rename.
    const second = selfSigned(dir, 'second');
    renameSync(second.key, first.key);
    renameSync(second.cert, first.cert);
    expect(await presentedCn(server.port)).toBe('second');
  });

  it('a missing certificate file stops the start with CONFIG_INVALID naming metrics.tls and the file', async () => {
    const dir = tempDir('orgsync-tls-');
    const metrics = new OrgsyncMetrics({ build: { version: 't' }, defaultMetrics: false });
    const err = await startOpsServer('127.0.0.1:0', { ...handlers(metrics, undefined), tls: { certFile: join(dir, 'nope.crt'), keyFile: join(dir, 'nope.key') } }).catch((e: unknown) => e);
    expect(isOrgsyncError(err) && err.code).toBe('CONFIG_INVALID');
    expect((err as Error).message).toBe(`metrics.tls: cannot read ${join(dir, 'nope.crt')}: ENOENT`);
  });
});
