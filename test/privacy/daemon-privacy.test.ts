/**
 * Issue 29 end to end: `orgsync daemon` on the demo data against the emulator, at the default log level, with a read
 * token, a trigger token and two webhooks (json and slack). A first run creates 300 members, a second is refused by
 * the delete guard (webhooks `refused` and `pending_approval`), a third recovers (`recovered`). Every log line, every
 * open route (/metrics /status /healthz /readyz) and every webhook body is searched for every demo member's name and
 * e-mail: none appears. The personal routes answer 401 without a token, with a wrong one and with the trigger token,
 * and serve the people only with the read token.
 */
import { readFileSync, writeFileSync } from 'node:fs';
import { createServer, type Server } from 'node:http';
import type { AddressInfo } from 'node:net';
import { join } from 'node:path';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { loadConfig } from '../../src/config/load.js';
import { daemonMain } from '../../src/cli/commands/daemon.js';
import { ManualScheduler } from '../../src/daemon/schedule.js';
import { startTestEmulator, type TestEmulator } from '../helpers/emulator.js';
import { captureContext } from '../helpers/cli.js';
import { demoDir, demoSeed, demoWorkspace, until, type StatusRun } from '../daemon/support.js';

const READ = 'read-token-for-the-dpo-0001';
const TRIGGER = 'trigger-token-for-hr-0002';

/** Every demo member's display name and e-mail, as the demo config maps them. */
function demoPeople(): string[] {
  const out = new Set<string>();
  for (const line of readFileSync(join(demoDir, 'members.csv'), 'utf8').trim().split('\n').slice(1)) {
    const [, first, last, email] = line.split(',');
    out.add(`${first} ${last}`);
    out.add(email!);
  }
  const json = JSON.parse(readFileSync(join(demoDir, 'employees.json'), 'utf8')) as { data: { employees: { firstName: string; lastName: string; workEmail: string }[] } };
  for (const e of json.data.employees) {
    out.add(`${e.firstName} ${e.lastName}`);
    out.add(e.workEmail);
  }
  return [...out];
}

/** The people of `people` that `text` names, e-mails compared case-insensitively. */
const named = (text: string, people: readonly string[]): string[] => people.filter((p) => (p.includes('@') ? text.toLowerCase().includes(p.toLowerCase()) : text.includes(p)));

describe('no personal data without the read token (daemon, demo data)', { timeout: 240_000 }, () => {
  let emulator: TestEmulator;
  let hooks: Server;
  const bodies: string[] = [];
  let dir: string;
  let url = '';
  const scheduler = new ManualScheduler(30 * 60_000);
  const cap = captureContext();
  let exit: Promise<number>;
  const openBodies: string[] = [];
  const people = demoPeople();

  const finishedRuns = (n: number) =>
    until(`${n} finished runs`, async () => {
      const list = ((await (await fetch(`${url}/status`)).json()) as { runs: StatusRun[] }).runs;
      return list.length >= n && list.every((r) => r.result !== 'running') ? list : undefined;
    });
  const readOpenRoutes = async (): Promise<void> => {
    for (const path of ['/metrics', '/status', '/healthz', '/readyz']) openBodies.push(await (await fetch(`${url}${path}`)).text());
  };

  beforeAll(async () => {
    hooks = createServer((req, res) => {
      let body = '';
      req.on('data', (c: Buffer) => (body += c.toString()));
      req.on('end', () => {
        bodies.push(`${req.url} ${body}`);
        res.writeHead(204).end();
      });
    });
    await new Promise<void>((resolve) => hooks.listen(0, '127.0.0.1', resolve));
    const hookUrl = `http://127.0.0.1:${(hooks.address() as AddressInfo).port}`;
    emulator = await startTestEmulator(demoSeed());
    dir = demoWorkspace({
      url: emulator.url,
      extra: `daemon:\n  read_token_file: read.token\n  trigger_token_file: trigger.token\nnotify:\n  webhooks:\n    - url: ${hookUrl}/json\n    - url: ${hookUrl}/slack\n      format: slack\n`,
    });
    writeFileSync(join(dir, 'read.token'), `${READ}\n`);
    writeFileSync(join(dir, 'trigger.token'), `${TRIGGER}\n`);
    const config = loadConfig(join(dir, 'orgsync.yaml'), {});
    expect(config.log.level).toBe('info');
    exit = daemonMain(config, cap.ctx, config.metrics.listen, { scheduler, onListening: (u) => (url = u) });
    await until('the listener', () => (url ? true : undefined));
  }, 180_000);
  afterAll(async () => {
    cap.shutdown.abort(new Error('test over'));
    await exit;
    await emulator?.close();
    await new Promise<void>((resolve) => hooks?.close(() => resolve()));
  });

  it('a created, a refused and a recovered run: no name or e-mail in the logs, the open routes or the webhooks', async () => {
    const [first] = await finishedRuns(1);
    expect(first).toMatchObject({ result: 'success' });
    await readOpenRoutes();
    // The person-level data is there, behind the read token.
    const plan = await (await fetch(`${url}/plan.json`, { headers: { authorization: `Bearer ${READ}` } })).text();
    expect(named(plan, people).length).toBeGreaterThan(250);

    const csv = join(dir, 'members.csv');
    const full = readFileSync(csv, 'utf8');
    const lines = full.split('\n');
    writeFileSync(csv, lines.slice(0, 120).join('\n') + '\n');
    expect(scheduler.tick()).toBe(true);
    const [refused] = await finishedRuns(2);
    expect(refused).toMatchObject({ result: 'guard' });
    await readOpenRoutes();
    writeFileSync(csv, full);
    expect(scheduler.tick()).toBe(true);
    const [recovered] = await finishedRuns(3);
    expect(recovered).toMatchObject({ result: 'success' });
    await readOpenRoutes();
    await until('the webhooks', () => (bodies.some((b) => b.startsWith('/json') && b.includes('"recovered"')) ? true : undefined));

    expect(bodies.flatMap((b) => /"(?:event|type)":\s*"(\w+)"/.exec(b)?.slice(1) ?? [])).toEqual(expect.arrayContaining(['refused', 'pending_approval', 'recovered']));
    expect(bodies.some((b) => b.startsWith('/slack'))).toBe(true);
    const logs = cap.out.stdout;
    expect(logs.split('\n').filter((l) => l.includes('"msg":"change applied"')).length).toBeGreaterThan(300);
    expect(named(logs, people)).toEqual([]);
    expect(named(openBodies.join('\n'), people)).toEqual([]);
    expect(named(bodies.join('\n'), people)).toEqual([]);
  });

  it('personal routes: 401 without a token, with a wrong one and with the trigger token; 200 with the read token', async () => {
    const routes = ['/plan', '/plan.json', `/runs/${(await finishedRuns(3))[0]!.id}`, `/records/${encodeURIComponent('E1007')}/history`];
    for (const path of routes) {
      for (const auth of [undefined, 'Bearer wrong-token', `Bearer ${TRIGGER}`]) {
        const res = await fetch(`${url}${path}`, auth ? { headers: { authorization: auth } } : {});
        expect([path, res.status]).toEqual([path, 401]);
        expect(named(await res.text(), people)).toEqual([]);
      }
      const ok = await fetch(`${url}${path}`, { headers: { authorization: `Bearer ${READ}` } });
      expect([path, ok.status]).toEqual([path, 200]);
    }
    const history = await (await fetch(`${url}/records/E1007/history`, { headers: { authorization: `Bearer ${READ}` } })).text();
    expect(history).toContain('Emeka Petrov');
    const metrics = await (await fetch(`${url}/metrics`)).text();
    for (const route of ['/plan', '/plan.json', '/runs/<id>', '/records/<selector>/history']) expect(metrics).toMatch(new RegExp(`^orgsync_http_unauthorized_total\\{route="${route.replace(/[/<>.]/g, '\\$&')}",sync_id="daemon-e2e"\\} 3$`, 'm'));
  });
});
