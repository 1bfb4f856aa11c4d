/**
 * The daemon's side of issue 20 against the emulator: GET /plan (the HTML report) and /plan.json serve the latest
 * run's plan; a refused run's pending approval shows on /status, on /plan and as orgsync_pending_approval{guard}.
 */
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
import { getJson, until, type StatusRun } from './support.js';
import { captureContext } from '../helpers/cli.js';

/** Issue 29: /plan and /plan.json need daemon.read_token_file's token. */
const READ_TOKEN = 'approvals-read-token-1';
const withToken = { headers: { authorization: `Bearer ${READ_TOKEN}` } };

describe('daemon: /plan, /plan.json and pending approvals', { timeout: 120_000 }, () => {
  let emulator: TestEmulator;
  let dir: string;
  let url = '';
  const scheduler = new ManualScheduler(30 * 60_000);
  const cap = captureContext();
  let exit: Promise<number>;
  const writeStaff = (n: number, from = 0): void => void writeStaffCsv(join(dir, 'staff.csv'), staffRows(n, from));

  beforeAll(async () => {
    emulator = await startTestEmulator(orgTestSeed(), { adminToken: ADMIN });
    dir = tempDir('orgsync-approvals-daemon-');
    writeStaff(10);
    writeFileSync(join(dir, 'read.token'), `${READ_TOKEN}\n`);
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
daemon:
  read_token_file: read.token
sync:
  id: hr-sync
  delete_threshold: { max_count: 2, max_percent: 100 }
sources:
  - name: staff
    type: csv
    members: { file: staff.csv, fields: { id: id, display_name: name, email: email } }
`,
    );
    const config = loadConfig(join(dir, 'orgsync.yaml'), {});
    exit = daemonMain(config, cap.ctx, config.metrics.listen, { scheduler, onListening: (u) => (url = u) });
    await until('the listener', () => (url ? true : undefined));
  }, 60_000);
  afterAll(async () => {
    cap.shutdown.abort(new Error('test over'));
    await exit;
    await emulator?.close();
    rmSync(dir, { recursive: true, force: true });
  });

  const finishedRuns = (n: number) =>
    until(`${n} finished runs`, async () => {
      const list = (await getJson(`${url}/status`)).body.runs as StatusRun[];
      return list.length >= n && list.every((r) => r.result !== 'running') ? list : undefined;
    });

  it('serves the latest plan as an HTML report and as JSON', async () => {
    await finishedRuns(1);
    const res0 = await fetch(`${url}/plan.json`, withToken);
    const json = { status: res0.status, body: (await res0.json()) as Record<string, unknown> };
    expect(json.status).toBe(200);
    expect(json.body).toMatchObject({ sync_id: 'hr-sync', summary: { members: { create: 10 } }, refusal: null });
    const res = await fetch(`${url}/plan`, withToken);
    expect(res.status).toBe(200);
    expect(res.headers.get('content-type')).toBe('text/html; charset=utf-8');
    const html = await res.text();
    expect(html).toContain('<!doctype html>');
    expect(html).toContain('Member creates (10)');
    expect((await getJson(`${url}/status`)).body.pending_approvals).toEqual([]);
  });

  it('a refused run: its digest on /status, /plan and orgsync_pending_approval{guard}', async () => {
    writeStaff(10, 5);
    expect(scheduler.tick()).toBe(true);
    const [last] = await finishedRuns(2);
    expect(last).toMatchObject({ result: 'guard' });
    const digest = /pending approval (sha256:[0-9a-f]{12})/.exec(last!.error ?? '')?.[1];
    expect(digest).toMatch(/^sha256:[0-9a-f]{12}$/);
    const status = (await getJson(`${url}/status`)).body;
    expect(status.pending_approvals).toEqual([expect.objectContaining({ digest, guard: 'delete_threshold', status: 'pending', run_id: last!.id })]);
    expect(last!.summary).toMatchObject({ approval: { digest, state: 'pending' } });
    const html = await (await fetch(`${url}/plan`, withToken)).text();
    expect(html).toContain('Refused by the delete_threshold guard');
    expect(html).toContain(`orgsync approvals approve ${digest}`);
    expect(html).toContain('Member removals (5)');
    const metrics = await (await fetch(`${url}/metrics`)).text();
    const m = /^orgsync_pending_approval\{guard="delete_threshold",sync_id="hr-sync"\} (\d+(\.\d+)?)$/m.exec(metrics);
    expect(m).not.toBeNull();
    expect(Math.abs(Number(m![1]) * 1000 - Date.parse((status.pending_approvals as { created_at: string }[])[0]!.created_at))).toBeLessThan(1);
  });
});
