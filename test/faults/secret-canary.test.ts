/**
 * Issue 21 point 4, the canary: known secrets are put where an operator's would be (an API key file, a header
 * and a URL query from ${VAR}, URL userinfo, an LDAP bind password, an access token in the HRIS's `next`
 * links), every error path is run through the real CLI, and stdout, stderr, the logs, /status, /metrics, the
 * run history, the state DB (with its WAL) and the plan files are searched for them.
 */
import { createServer, type Server } from 'node:http';
import { readFileSync, rmSync, writeFileSync } from 'node:fs';
import type { AddressInfo } from 'node:net';
import { join } from 'node:path';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { daemonMain } from '../../src/cli/commands/daemon.js';
import { loadConfig } from '../../src/config/load.js';
import { ManualScheduler } from '../../src/daemon/schedule.js';
import { startTestEmulator, type TestEmulator } from '../helpers/emulator.js';
import { DEMO_KEY, demoSeed, demoWorkspace, getJson, until, type StatusRun } from '../daemon/support.js';
import { captureContext, runCli } from '../helpers/cli.js';
import { findCanaries } from './canary.js';

const HRIS_TOKEN = 'canary-hris-Tk9f2LmQ';
const HRIS_PASSWORD = 'canary-userinfo-Pw77';
const NEXT_TOKEN = 'canary-next-link-Zq31';
const WRONG_KEY = 'canary-wrong-api-key-55';
const LDAP_PW = 'canary-ldap-bind-Pw19';
const CANARIES = [DEMO_KEY, HRIS_TOKEN, HRIS_PASSWORD, NEXT_TOKEN, WRONG_KEY, LDAP_PW];

type Mode = 'next' | '500' | 'malformed' | '401';

describe('secrets never leave, on any error path (canary)', { timeout: 240_000 }, () => {
  let emulator: TestEmulator;
  let hris: Server;
  let hrisBase = '';
  let closedPort = 0;
  let mode: Mode = 'next';
  let dir = '';
  const env = { HRIS_TOKEN, HRIS_PASSWORD, LDAP_PW, RPS: HRIS_TOKEN };
  const texts: Record<string, string> = {};

  beforeAll(async () => {
    emulator = await startTestEmulator(demoSeed());
    hris = createServer((req, res) => {
      const url = new URL(req.url!, 'http://x');
      const json = (status: number, body: string) => {
        res.writeHead(status, { 'content-type': 'application/json' });
        res.end(body);
      };
      if (mode === '500') return json(500, `{"error":"token ${HRIS_TOKEN} rejected upstream"}`);
      if (mode === '401') return json(401, `{"error":"bad token ${HRIS_TOKEN}"}`);
      if (mode === 'malformed') return json(200, `{"data": [], "echo": "${HRIS_TOKEN}" oops}`);
      if (url.searchParams.get('page') !== '2') {
        const people = [1, 2, 3].map((i) => ({ id: `u${i}`, name: `Person ${i}`, email: `p${i}@example.com` }));
        return json(200, JSON.stringify({ data: people, next: `/people?page=2&access_token=${NEXT_TOKEN}` }));
      }
      return json(200, JSON.stringify({ data: [{ id: 'u4', name: 'Person 4', email: 'not-an-email' }], next: null }));
    });
    await new Promise<void>((r) => hris.listen(0, '127.0.0.1', r));
    hrisBase = `http://127.0.0.1:${(hris.address() as AddressInfo).port}`;
    const probe = createServer();
    await new Promise<void>((r) => probe.listen(0, '127.0.0.1', r));
    closedPort = (probe.address() as AddressInfo).port;
    await new Promise((r) => probe.close(r));
  });

  afterAll(async () => {
    await emulator?.close();
    await new Promise((r) => hris?.close(r));
    if (dir) rmSync(dir, { recursive: true, force: true });
  });

  const hrisSource = (url: string) => `sources:
  - name: hris
    type: hris-json
    max_attempts: 1
    headers: { Authorization: "Bearer \${HRIS_TOKEN}" }
    members:
      url: ${url}
      items_path: data
      pagination: { type: next-link, next_path: next }
      fields: { id: id, display_name: name, email: email }
`;

  /** Writes a config variant next to the main one (same state DB) and returns its path. */
  const variant = (name: string, replace: (text: string) => string) => {
    const file = join(dir, `${name}.yaml`);
    writeFileSync(file, replace(readFileSync(join(dir, 'orgsync.yaml'), 'utf8')));
    return file;
  };

  /** Runs the CLI and keeps what it printed under `name`, for the canary search at the end. */
  async function cli(name: string, args: string[]): Promise<number> {
    const r = await runCli(args, env);
    texts[`${name} stdout`] = r.stdout;
    texts[`${name} stderr`] = r.stderr;
    return r.code;
  }

  it('runs every error path, each failing with a message that still says where', async () => {
    dir = demoWorkspace({
      url: emulator.url,
      apiKeyLine: 'api_key_file: api-key.txt',
      sourcesYaml: hrisSource(`${hrisBase}/people?key=\${HRIS_TOKEN}`),
      logLevel: 'trace',
    });
    writeFileSync(join(dir, 'api-key.txt'), `${DEMO_KEY}\n`);
    writeFileSync(join(dir, 'wrong-key.txt'), `${WRONG_KEY}\n`);
    const config = join(dir, 'orgsync.yaml');
    const where = `${hrisBase}/people?key=[redacted]`;

    // The good path with a quarantined record whose location is a `next` link carrying an access token.
    mode = 'next';
    expect(await cli('sync next', ['sync', '--config', config])).toBe(4);
    expect(texts['sync next stdout']).toContain(`members u4 (hris ${hrisBase}/people?page=2&access_token=[redacted]#$.data[0]): invalid_email`);
    expect(await cli('plan next', ['plan', '--config', config, '--output', 'json', '--out', join(dir, 'plan.json')])).toBe(0);
    expect(JSON.parse(texts['plan next stdout']!)).toMatchObject({ quarantine: [{ source_id: 'u4', location: `${hrisBase}/people?page=2&access_token=[redacted]#$.data[0]` }] });

    mode = '500';
    expect(await cli('sync 500', ['sync', '--config', config])).toBe(1);
    expect(texts['sync 500 stderr']).toContain(`GET ${where} answered HTTP 500`);
    mode = 'malformed';
    expect(await cli('sync malformed', ['sync', '--config', config])).toBe(1);
    expect(texts['sync malformed stderr']).toContain(`${where}: malformed JSON`);
    mode = '401';
    expect(await cli('plan 401', ['plan', '--config', config])).toBe(1);
    expect(texts['plan 401 stderr']).toContain(`GET ${where} answered HTTP 401`);

    mode = 'next';
    const userinfo = variant('userinfo', (t) => t.replace(`${hrisBase}/people?key=\${HRIS_TOKEN}`, `http://svc:\${HRIS_PASSWORD}@${hrisBase.slice(7)}/people`));
    expect(await cli('sync userinfo', ['sync', '--config', userinfo])).not.toBe(0);
    const refused = variant('refused', (t) => t.replace(hrisBase, `http://127.0.0.1:${closedPort}`));
    expect(await cli('sync refused', ['sync', '--config', refused])).toBe(1);
    expect(texts['sync refused stderr']).toContain(`GET http://127.0.0.1:${closedPort}/people?key=[redacted] failed: ECONNREFUSED`);
    const wrongKey = variant('wrong-key', (t) => t.replace('api_key_file: api-key.txt', 'api_key_file: wrong-key.txt'));
    expect(await cli('sync wrong key', ['sync', '--config', wrongKey])).toBe(1);
    const ldap = variant('ldap', (t) =>
      t.replace(
        /sources:[\s\S]*?(?=schedule:)/,
        `sources:
  - name: dir
    type: ldap
    url: ldap://127.0.0.1:${closedPort}
    bind_dn: cn=admin,dc=example,dc=org
    bind_password: \${LDAP_PW}
    base_dn: dc=example,dc=org
    members: { filter: "(objectClass=person)", fields: { id: uid, display_name: cn, email: mail } }
`,
      ),
    );
    expect(await cli('sync ldap', ['sync', '--config', ldap])).toBe(1);
    // A config error with a secret as the wrong value: exit 2, the message names the key, never the value.
    const badValue = variant('bad-value', (t) => t.replace('requests_per_second: 2000', 'requests_per_second: ${RPS}'));
    expect(await cli('validate bad value', ['config', 'validate', '--config', badValue])).toBe(2);
    expect(texts['validate bad value stderr']).toContain('platform.requests_per_second');

    // The daemon: its run history (every run above is in it), /status, /readyz and /metrics.
    const cap = captureContext(env);
    let url = '';
    const exit = daemonMain(loadConfig(refused, env), cap.ctx, '127.0.0.1:0', { scheduler: new ManualScheduler(), onListening: (u) => (url = u) });
    const runs = await until('the daemon run to finish', async () => {
      if (!url) return undefined;
      const list = (await getJson(`${url}/status`)).body.runs as StatusRun[];
      return list[0] && list[0].result !== 'running' ? list : undefined;
    });
    expect(runs[0]!.error).toContain(`GET http://127.0.0.1:${closedPort}/people?key=[redacted] failed: ECONNREFUSED`);
    expect(runs.map((r) => r.result)).toContain('partial');
    texts['daemon /status'] = await (await fetch(`${url}/status`)).text();
    texts['daemon /readyz'] = await (await fetch(`${url}/readyz`)).text();
    texts['daemon /metrics'] = await (await fetch(`${url}/metrics`)).text();
    cap.shutdown.abort();
    expect(await exit).toBe(0);
    texts['daemon stdout (logs)'] = cap.out.stdout;
    texts['daemon stderr'] = cap.out.stderr;
    expect(texts['daemon /status']).toContain('[redacted]');
  });

  it('no canary in stdout, stderr, the logs, /status, /readyz, /metrics, the run history, the state DB or the plan file', () => {
    expect(Object.keys(texts).length).toBeGreaterThan(20);
    // The logs were written at trace level, so every request and config line was there to leak.
    expect(texts['sync next stderr']!.split('\n').length).toBeGreaterThan(10);
    expect(readFileSync(join(dir, 'plan.json'), 'utf8')).toContain('"kind": "orgsync-saved-plan"');
    expect(findCanaries(CANARIES, texts, [dir]).filter((h) => !h.where.endsWith('.txt') && !h.where.endsWith('.yaml'))).toEqual([]);
  });
});
