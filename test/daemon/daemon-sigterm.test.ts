import { spawn } from 'node:child_process';
import { join } from 'node:path';
import { afterAll, describe, expect, it } from 'vitest';
import { loadConfig } from '../../src/config/load.js';
import { daemonMain } from '../../src/cli/commands/daemon.js';
import { main } from '../../src/cli/main.js';
import { ManualScheduler } from '../../src/daemon/schedule.js';
import { openStateDb } from '../../src/mirror/db.js';
import { TEST_BUSY_TIMEOUT_MS } from '../helpers/state-db.js';
import { RunHistory } from '../../src/mirror/runs.js';
import { startTestEmulator, type TestEmulator } from '../helpers/emulator.js';
import { demoSeed, demoWorkspace, getJson, haveBuild, repoRoot, until, type StatusRun } from './support.js';
import { captureContext } from '../helpers/cli.js';

const ADMIN = 'admin-token-for-faults';

describe.skipIf(!haveBuild())('orgsync daemon: SIGTERM during a run (subprocess)', () => {
  let emulator: TestEmulator | undefined;
  afterAll(async () => emulator?.close());

  it('refuses a second process meanwhile; on SIGTERM exits 0 within 25 s, records the run as interrupted, and the next run converges with nothing lost', async () => {
    emulator = await startTestEmulator(demoSeed(), { adminToken: ADMIN });
    // Slow writes, so that the signal lands in the middle of the apply.
    const faults = await emulator.request('PUT', '/_emulator/faults', { token: ADMIN, body: { latency_ms: [80, 120], methods: ['POST', 'PATCH', 'DELETE'] } });
    expect(faults.status).toBeLessThan(300);
    const dir = demoWorkspace({ url: emulator.url });
    const child = spawn(process.execPath, [join(repoRoot, 'dist/cli.js'), 'daemon', '--config', join(dir, 'orgsync.yaml')], {
      env: { PATH: process.env.PATH },
      stdio: ['ignore', 'pipe', 'pipe'],
    });
    let stdout = '';
    let stderr = '';
    child.stdout.on('data', (d: Buffer) => (stdout += d.toString()));
    child.stderr.on('data', (d: Buffer) => (stderr += d.toString()));
    const exited = new Promise<number | null>((resolve) => child.once('exit', (code) => resolve(code)));

    const url = await until('the ops listener line', () => /"url":"(http:[^"]+)","msg":"ops endpoints listening/.exec(stdout)?.[1]);
    await until('30 applied writes', async () => {
      const text = await (await fetch(`${url}/metrics`)).text();
      const applied = [...text.matchAll(/^orgsync_operations_total\{[^}]*result="applied"[^}]*\} (\d+)$/gm)].reduce((n, m) => n + Number(m[1]), 0);
      return applied >= 30 ? applied : undefined;
    });
    // A second process on the same state DB is refused while the first one runs, naming it.
    const second = captureContext();
    expect(await main(['daemon', '--config', join(dir, 'orgsync.yaml')], second.ctx)).toBe(1);
    expect(second.out.stderr).toContain(`is in use by another orgsync process (pid ${child.pid} on `);

    child.kill('SIGTERM');
    const deadline = new Promise<'timeout'>((resolve) => setTimeout(() => resolve('timeout'), 25_000).unref());
    const code = await Promise.race([exited, deadline]);
    if (code === 'timeout') child.kill('SIGKILL');
    expect(code, `stderr: ${stderr}`).toBe(143); // 128 + SIGTERM
    expect(stdout).toContain('"msg":"stopping: no new runs"');
    expect(stdout).toContain('"msg":"waiting for the run in flight to finish its writes"');
    expect(stdout).toContain('"msg":"daemon stopped"');

    const db = openStateDb(join(dir, 'state/orgsync.db'), { busyTimeoutMs: TEST_BUSY_TIMEOUT_MS });
    const [interrupted] = new RunHistory(db).recent(1);
    db.close();
    expect(interrupted).toMatchObject({ trigger: 'start', result: 'interrupted' });
    const firstWrites = (interrupted!.summary as { writes: number; result: string }).writes;
    expect((interrupted!.summary as { result: string }).result).toBe('stopped');
    expect(firstWrites).toBeGreaterThanOrEqual(30);
    expect(firstWrites).toBeLessThan(417);

    // The next daemon finishes the job: exactly the remaining writes (nothing lost, nothing doubled), then a no-op.
    await emulator.request('DELETE', '/_emulator/faults', { token: ADMIN });
    const scheduler = new ManualScheduler();
    const cap = captureContext();
    let next = '';
    const config = loadConfig(join(dir, 'orgsync.yaml'), {});
    const exit = daemonMain(config, cap.ctx, '127.0.0.1:0', { scheduler, onListening: (u) => (next = u) });
    const finished = (n: number) =>
      until(`${n} runs`, async () => {
        if (!next) return undefined;
        const runs = (await getJson(`${next}/status`)).body.runs as StatusRun[];
        return runs.length >= n && runs[0]!.result !== 'running' ? runs : undefined;
      });
    const [resumed] = await finished(2);
    expect(resumed).toMatchObject({ result: 'success' });
    expect((resumed!.summary as { writes: number }).writes).toBe(417 - firstWrites);
    scheduler.tick();
    const [noop] = await finished(3);
    expect(noop!.summary).toMatchObject({ result: 'in_sync', writes: 0 });
    cap.shutdown.abort();
    expect(await exit).toBe(0);
  }, 240_000);
});
