/**
 * notify: webhooks (issue 20) against the emulator through the daemon: a refused run POSTs `refused` and
 * `pending_approval` (json, signed with HMAC-SHA256 of the body, no secret in it) and a Slack summary; the next good
 * run POSTs `recovered`. A webhook that never answers and one whose port is closed delay nothing: the runs finish
 * while the hanging webhook still holds the first request.
 */
import { createHmac } from 'node:crypto';
import { createServer, type IncomingMessage, type Server, type ServerResponse } from 'node:http';
import type { AddressInfo } from 'node:net';
import { rmSync, writeFileSync } from 'node:fs';
import { join } from 'node:path';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { loadConfig } from '../../src/config/load.js';
import { daemonMain } from '../../src/cli/commands/daemon.js';
import { ManualScheduler } from '../../src/daemon/schedule.js';
import { orgTestSeed, startTestEmulator, TEST_KEYS, type TestEmulator } from '../helpers/emulator.js';
import { ADMIN } from '../e2e/harness.js';
import { staffRows, writeStaffCsv } from '../helpers/fixtures.js';
import { tempDir } from '../helpers/temp.js';
import { getJson, until, type StatusRun } from '../daemon/support.js';
import { captureContext } from '../helpers/cli.js';

interface Received {
  path: string;
  headers: IncomingMessage['headers'];
  body: string;
}

async function listen(handler: (req: IncomingMessage, res: ServerResponse) => void): Promise<{ server: Server; url: string }> {
  const server = createServer(handler);
  await new Promise<void>((resolve) => server.listen(0, '127.0.0.1', resolve));
  return { server, url: `http://127.0.0.1:${(server.address() as AddressInfo).port}` };
}

describe('notify: webhooks', { timeout: 120_000 }, () => {
  let emulator: TestEmulator;
  let dir: string;
  let url = '';
  const scheduler = new ManualScheduler(30 * 60_000);
  const cap = captureContext();
  let exit: Promise<number>;
  let good: { server: Server; url: string };
  let hanging: { server: Server; url: string };
  const received: Received[] = [];
  let hangingSeen = 0;
  const held: ServerResponse[] = [];
  const SECRET = 'whsec-test-7d1f0c2a9b';
  const writeStaff = (n: number, from = 0): void => void writeStaffCsv(join(dir, 'staff.csv'), staffRows(n, from));

  beforeAll(async () => {
    good = await listen((req, res) => {
      let body = '';
      req.on('data', (c: Buffer) => (body += c.toString()));
      req.on('end', () => {
        received.push({ path: req.url ?? '', headers: req.headers, body });
        res.writeHead(204).end();
      });
    });
    hanging = await listen((req, res) => {
      hangingSeen += 1;
      held.push(res); // never answered
    });
    const closed = await listen(() => undefined);
    const closedUrl = closed.url;
    await new Promise<void>((r) => closed.server.close(() => r()));
    emulator = await startTestEmulator(orgTestSeed(), { adminToken: ADMIN });
    dir = tempDir('orgsync-notify-');
    writeFileSync(join(dir, 'hook.secret'), `${SECRET}\n`);
    writeStaff(10);
    writeFileSync(
      join(dir, 'orgsync.yaml'),
      `platform:
  base_url: ${emulator.url}
  api_key: ${TEST_KEYS.acmeRw}
  requests_per_second: 2000
state:
  path: ./state.db
metrics:
  listen: 127.0.0.1:0
sync:
  id: hr-sync
  delete_threshold: { max_count: 2, max_percent: 100 }
sources:
  - name: staff
    type: csv
    members: { file: staff.csv, fields: { id: id, display_name: name, email: email } }
notify:
  webhooks:
    - url: ${hanging.url}/hang
    - url: ${closedUrl}/closed
    - url: ${good.url}/json
      secret_file: hook.secret
      events: [refused, pending_approval, recovered]
    - url: ${good.url}/slack
      format: slack
      events: [refused]
`,
    );
    const config = loadConfig(join(dir, 'orgsync.yaml'), {});
    exit = daemonMain(config, cap.ctx, config.metrics.listen, { scheduler, onListening: (u) => (url = u) });
    await until('the listener', () => (url ? true : undefined));
  }, 60_000);
  afterAll(async () => {
    cap.shutdown.abort(new Error('test over'));
    for (const r of held) r.destroy();
    await exit;
    await emulator?.close();
    good.server.closeAllConnections();
    hanging.server.closeAllConnections();
    await new Promise<void>((r) => good.server.close(() => r()));
    await new Promise<void>((r) => hanging.server.close(() => r()));
    rmSync(dir, { recursive: true, force: true });
  });

  const finishedRuns = (n: number) =>
    until(`${n} finished runs`, async () => {
      const list = (await getJson(`${url}/status`)).body.runs as StatusRun[];
      return list.length >= n && list.every((r) => r.result !== 'running') ? list : undefined;
    });

  it('refused -> refused + pending_approval (signed json) and a slack summary; then recovered; a dead webhook delays nothing', async () => {
    await finishedRuns(1);
    writeStaff(10, 5);
    expect(scheduler.tick()).toBe(true);
    const [refused] = await finishedRuns(2);
    expect(refused).toMatchObject({ result: 'guard' });
    const digest = /pending approval (sha256:[0-9a-f]{12})/.exec(refused!.error ?? '')![1]!;

    const json = await until('refused and pending_approval', () => {
      const list = received.filter((r) => r.path === '/json');
      return list.length >= 2 ? list : undefined;
    });
    expect(json.map((r) => r.headers['x-orgsync-event'])).toEqual(['refused', 'pending_approval']);
    for (const r of json) {
      expect(r.headers['x-orgsync-signature']).toBe(`sha256=${createHmac('sha256', SECRET).update(r.body).digest('hex')}`);
      expect(r.body).not.toContain(SECRET);
      expect(r.headers['content-type']).toBe('application/json');
    }
    const event = JSON.parse(json[1]!.body) as Record<string, unknown>;
    expect(event).toMatchObject({ event: 'pending_approval', sync_id: 'hr-sync', run_id: refused!.id, result: 'refused', exit_code: 3, guard: 'delete_threshold', digest, counts: { failures: 0, quarantined: 0, blocked: 0 } });
    expect(String(event.message)).toContain(`pending approval ${digest}`);
    const slack = await until('the slack message', () => received.find((r) => r.path === '/slack'));
    const text = (JSON.parse(slack.body) as { text: string }).text;
    expect(text.split('\n')[0]).toBe(':no_entry: orgsync hr-sync: run refused by delete_threshold');
    expect(text).toContain('planned 5 (create 0, update 0, remove 5), applied 0, failed 0, quarantined 0, blocked 0');
    expect(slack.headers['x-orgsync-signature']).toBeUndefined();

    writeStaff(10);
    expect(scheduler.tick()).toBe(true);
    const [recovered] = await finishedRuns(3);
    expect(recovered).toMatchObject({ result: 'success' });
    const back = await until('recovered', () => received.find((r) => r.headers['x-orgsync-event'] === 'recovered'));
    expect(JSON.parse(back.body)).toMatchObject({ event: 'recovered', run_id: recovered!.id, result: 'in_sync' });
    // The hanging webhook still holds its first request: its queue waits, the runs did not.
    expect(hangingSeen).toBe(1);
  });
});
