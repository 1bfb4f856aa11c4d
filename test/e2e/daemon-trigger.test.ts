/**
 * Issue 22 end to end: `orgsync daemon` against the emulator with daemon.trigger_token_file: POST /sync?only=u3
 * writes only that record (requests counted at the emulator), GET /runs/<id> gives its result and
 * GET /records/u3/history the recorded write.
 */
import { rmSync, writeFileSync } from 'node:fs';
import { join } from 'node:path';
import { afterEach, describe, expect, it } from 'vitest';
import { daemonMain } from '../../src/cli/commands/daemon.js';
import { loadConfig } from '../../src/config/load.js';
import { ManualScheduler } from '../../src/daemon/schedule.js';
import { orgTestSeed, startTestEmulator, TEST_KEYS, type TestEmulator } from '../helpers/emulator.js';
import { until } from '../daemon/support.js';
import { captureContext } from '../helpers/cli.js';
import { writeCsvConfig, writeCsvOrg } from './csv-org.js';
import { ADMIN, org } from './harness.js';
import { tempDir } from '../helpers/temp.js';

/** Issue 29: GET /runs/<id> and /records/<selector>/history need daemon.read_token_file's token. */
const READ = { headers: { authorization: 'Bearer read-abcdef-654321' } };

describe('daemon POST /sync?only= against the emulator', () => {
  let emulator: TestEmulator | undefined;
  let dir = '';
  let stop: (() => Promise<number>) | undefined;
  afterEach(async () => {
    await stop?.();
    await emulator?.close();
    rmSync(dir, { recursive: true, force: true });
  });

  /** An emulator, a one-member CSV org and `orgsync daemon` with a trigger token file, listening on a free port. */
  const startDaemon = async (): Promise<{ em: TestEmulator; url: string }> => {
    emulator = await startTestEmulator(orgTestSeed(), { adminToken: ADMIN });
    const em = emulator;
    dir = tempDir('orgsync-trigger-');
    writeCsvOrg(dir, org({ departments: [['eng', 'Engineering']], members: [['u1', 'Ann Lee', 'ann@acme.test', 'eng']] }));
    writeFileSync(join(dir, 'trigger.token'), 'tok-abcdef-123456\n');
    writeFileSync(join(dir, 'read.token'), 'read-abcdef-654321\n');
    const file = writeCsvConfig(dir, { baseUrl: em.url, apiKey: TEST_KEYS.acmeRw, extra: 'metrics:\n  listen: 127.0.0.1:0\ndaemon:\n  trigger_token_file: trigger.token\n  read_token_file: read.token\n' });
    const cap = captureContext();
    let url = '';
    const exit = daemonMain(loadConfig(file, {}), cap.ctx, '127.0.0.1:0', { scheduler: new ManualScheduler(30 * 60_000), onListening: (u) => (url = u) });
    stop = async () => {
      cap.shutdown.abort(new Error('test over'));
      return exit;
    };
    await until('the listener', () => (url ? true : undefined));
    return { em, url };
  };

  it('a triggered selection writes only the selected record; its run and the record history are served', async () => {
    const { em, url } = await startDaemon();
    await until('the start run', async () => {
      const s = (await (await fetch(`${url}/status`)).json()) as { runs: { result: string }[] };
      return s.runs.length === 1 && s.runs[0]!.result !== 'running' ? true : undefined;
    });
    writeCsvOrg(dir, org({ departments: [['eng', 'Engineering'], ['ops', 'Ops']], members: [['u1', 'Ann Changed', 'ann@acme.test', 'eng'], ['u3', 'Nina New', 'nina@acme.test', 'ops']] }));
    await em.request('DELETE', '/_emulator/requests', { token: ADMIN });

    const res = await fetch(`${url}/sync?only=${encodeURIComponent('nina@acme.test')}`, { method: 'POST', headers: { authorization: 'Bearer tok-abcdef-123456' } });
    expect(res.status).toBe(202);
    const { run_id: runId } = (await res.json()) as { run_id: string };
    const run = await until('the triggered run', async () => {
      const r = (await (await fetch(`${url}/runs/${runId}`, READ)).json()) as { result: string; trigger: string };
      return r.result !== 'running' ? r : undefined;
    });
    expect(run).toMatchObject({ id: runId, trigger: 'http', result: 'success' });
    const counts = (await em.request('GET', '/_emulator/requests', { token: ADMIN })).body.requests as { method: string; route: string; count: number }[];
    expect(counts.filter((c) => c.method !== 'GET').map((c) => `${c.method} ${c.route} ${c.count}`).sort()).toEqual(['POST /api/external/v1/org/departments 1', 'POST /api/external/v1/org/members 1']);
    const history = (await (await fetch(`${url}/records/u3/history`, READ)).json()) as { entries: { op: string; run_id: string; trigger: string; fields: Record<string, { new: string }> }[] };
    expect(history.entries).toEqual([expect.objectContaining({ op: 'create', run_id: runId, trigger: 'http' })]);
    expect(history.entries[0]!.fields.email!.new).toBe('n***@acme.test');
    expect((await fetch(`${url}/sync`, { method: 'POST', headers: { authorization: 'Bearer nope' } })).status).toBe(401);
  });

  it('a selector matching nothing: 202, then GET /runs/<id> reports failed with exit code 2 and the CLI\'s message; a malformed one: 400 at once', async () => {
    const { em, url } = await startDaemon();
    const runs = async () => ((await (await fetch(`${url}/status`)).json()) as { runs: { id: string; result: string }[] }).runs;
    await until('the start run', async () => ((await runs()).length === 1 && (await runs())[0]!.result !== 'running' ? true : undefined));
    await em.request('DELETE', '/_emulator/requests', { token: ADMIN });
    const post = (query: string) => fetch(`${url}/sync?${query}`, { method: 'POST', headers: { authorization: 'Bearer tok-abcdef-123456' } });

    const res = await post(`only=${encodeURIComponent('nobody@acme.test')}`);
    expect(res.status).toBe(202);
    const { run_id: runId } = (await res.json()) as { run_id: string };
    const run = await until('the triggered run', async () => {
      const r = (await (await fetch(`${url}/runs/${runId}`, READ)).json()) as { result: string };
      return r.result !== 'running' && r.result !== 'queued' ? r : undefined;
    });
    expect(run).toMatchObject({
      id: runId,
      trigger: 'http',
      result: 'failed',
      exitCode: 2,
      // Issue 44: the run history (and so /status) names the selector by position, never by value.
      error: '--only: selector 1 of 1 matched no record: not a source id, e-mail or department path in the sources or on the platform (selectors are not recorded: they may name a person)',
    });
    // The caller's error, not the sync's: no failed run counted (no OrgsyncSyncFailing page), still ready.
    const metrics = await (await fetch(`${url}/metrics`)).text();
    expect(metrics).toMatch(/^orgsync_runs_total\{result="failed",sync_id="[^"]+"\} 0$/m);
    expect(metrics).toMatch(/^orgsync_runs_total\{result="success",sync_id="[^"]+"\} 1$/m);
    expect((await fetch(`${url}/readyz`)).status).toBe(200);

    // Malformed selectors never start a run: empty, a bare @domain, only slashes.
    for (const [query, message] of [
      ['only=', '--only "" is empty: give a source id, an e-mail or a department path'],
      ['only=u1&only=%40acme.test', '--only "@acme.test" is not an e-mail address (one @ with a name before it and a domain after it)'],
      ['only=%2F%2F', '--only "//" is not a department path (it names no department)'],
    ] as const) {
      const bad = await post(query);
      expect({ status: bad.status, body: await bad.json() }).toEqual({ status: 400, body: { error: { code: 'invalid_selector', message } } });
    }
    expect((await runs()).map((r) => r.id)).toHaveLength(2);
    const counts = (await em.request('GET', '/_emulator/requests', { token: ADMIN })).body.requests as { method: string }[];
    expect(counts.filter((c) => c.method !== 'GET')).toEqual([]);
  });
});
