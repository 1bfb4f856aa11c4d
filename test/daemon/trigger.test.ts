/**
 * Issue 22: the daemon's trigger endpoints. POST /sync (and ?only=SELECTOR) with the bearer token of
 * daemon.trigger_token_file; none configured: 404; a wrong token: 401, counted; a trigger during a run is queued
 * once (later triggers join it); the response carries the run id and GET /runs/<id> its result.
 */
import { afterEach, describe, expect, it } from 'vitest';
import { openStateDb } from '../../src/mirror/db.js';
import { TEST_BUSY_TIMEOUT_MS } from '../helpers/state-db.js';
import { RunHistory } from '../../src/mirror/runs.js';
import { OrgsyncMetrics } from '../../src/observability/metrics.js';
import { runDaemon, type RunContext, type RunOutcome } from '../../src/daemon/daemon.js';
import { ManualScheduler } from '../../src/daemon/schedule.js';
import { ManualClock } from '../../src/shared/clock.js';
import { silentLogger } from '../../src/shared/logger.js';
import { OrgsyncError } from '../../src/shared/errors.js';

const TOKEN = 'trigger-token-0123456789';
/** Issue 29: /runs/<id> and /records/<selector>/history need the read token. */
const READ_TOKEN = 'read-token-9876543210';

function start(token: string | undefined) {
  const shutdown = new AbortController();
  const clock = new ManualClock(Date.UTC(2026, 10, 26, 9));
  const metrics = new OrgsyncMetrics({ build: { version: 'test' }, defaultMetrics: false });
  const runs: { ctx: RunContext; finish(o: RunOutcome): void; fail(err: Error): void }[] = [];
  const waiters: (() => void)[] = [];
  let url = '';
  let n = 0;
  const exit = runDaemon({
    runSync: (ctx) =>
      new Promise<RunOutcome>((resolve, reject) => {
        runs.push({ ctx, finish: resolve, fail: reject });
        waiters.splice(0).forEach((w) => w());
      }),
    logger: silentLogger,
    metrics,
    history: new RunHistory(openStateDb(':memory:', { busyTimeoutMs: TEST_BUSY_TIMEOUT_MS })),
    scheduler: new ManualScheduler(30 * 60_000),
    clock,
    listen: '127.0.0.1:0',
    shutdownSignal: shutdown.signal,
    stateOpen: () => true,
    info: { syncId: 'orgsync', version: 'test', schedule: '*/30 * * * *', timezone: 'UTC' },
    shutdownGraceMs: 20_000,
    onListening: (u) => (url = u),
    newRunId: () => `run-${++n}`,
    ...(token !== undefined ? { triggerToken: () => token } : {}),
    recordHistory: (selector) => [{ selector, op: 'create' }],
    listenerSecurity: { readToken: () => READ_TOKEN },
  });
  const started = async (count: number) => {
    while (runs.length < count) await new Promise<void>((r) => waiters.push(r));
    return runs[count - 1]!;
  };
  const post = async (path: string, bearer?: string) => {
    const res = await fetch(`${url}${path}`, { method: 'POST', ...(bearer !== undefined ? { headers: { authorization: `Bearer ${bearer}` } } : {}) });
    return { status: res.status, body: (await res.json()) as Record<string, unknown> };
  };
  const get = async (path: string) => {
    const res = await fetch(`${url}${path}`, { headers: { authorization: `Bearer ${READ_TOKEN}` } });
    return { status: res.status, body: (await res.json()) as Record<string, unknown> };
  };
  const settle = () => new Promise((r) => setImmediate(r));
  const stop = async () => {
    shutdown.abort(new Error('test over'));
    for (const r of runs) r.finish({ result: 'success', exitCode: 0 });
    return exit;
  };
  return { metrics, runs, started, post, get, settle, stop, clock };
}

describe('daemon trigger endpoints', () => {
  let d: ReturnType<typeof start> | undefined;
  afterEach(async () => {
    await d?.stop();
    d = undefined;
  });

  it('without daemon.trigger_token_file POST /sync answers 404 and starts nothing', async () => {
    d = start(undefined);
    const first = await d.started(1);
    first.finish({ result: 'success', exitCode: 0 });
    expect((await d.post('/sync', TOKEN)).status).toBe(404);
    await d.settle();
    expect(d.runs).toHaveLength(1);
  });

  it('a wrong or missing token is 401 and counted; the right one starts a run, queued once during a run', async () => {
    d = start(TOKEN);
    const first = await d.started(1);
    first.finish({ result: 'success', exitCode: 0 });
    await d.settle();

    expect(await d.post('/sync', 'wrong')).toEqual({ status: 401, body: { error: { code: 'unauthorized', message: 'a bearer token from daemon.trigger_token_file is required' } } });
    expect((await d.post('/sync')).status).toBe(401);
    expect(await d.metrics.registry.getSingleMetricAsString('orgsync_trigger_unauthorized_total')).toMatch(/^orgsync_trigger_unauthorized_total(\{[^}]*\})? 2$/m);
    expect(d.runs).toHaveLength(1);

    expect(await d.post('/sync?only=u3', TOKEN)).toEqual({ status: 202, body: { run_id: 'run-2', queued: false } });
    const second = await d.started(2);
    expect(second.ctx).toMatchObject({ runId: 'run-2', trigger: 'http', only: ['u3'] });
    expect(second.ctx.onlyJoined).toBeUndefined();
    expect((await d.get('/runs/run-2')).body).toMatchObject({ id: 'run-2', trigger: 'http', result: 'running' });

    // During the run: queued once; a second trigger joins the waiting one (not stacked).
    expect(await d.post('/sync?only=u4', TOKEN)).toEqual({ status: 202, body: { run_id: 'run-3', queued: true } });
    expect(await d.post('/sync?only=u5&only=u6', TOKEN)).toEqual({ status: 202, body: { run_id: 'run-3', queued: true } });
    expect((await d.get('/runs/run-3')).body).toEqual({ id: 'run-3', result: 'queued', trigger: 'http' });
    second.finish({ result: 'success', exitCode: 0, summary: { writes: 1 } });
    const third = await d.started(3);
    // Two callers' selectors in one run: one that matches nothing must not fail the other's.
    expect(third.ctx).toMatchObject({ runId: 'run-3', trigger: 'http', only: ['u4', 'u5', 'u6'], onlyJoined: true });
    third.finish({ result: 'partial', exitCode: 4 });
    await d.settle();
    await d.settle();
    expect((await d.get('/runs/run-2')).body).toMatchObject({ id: 'run-2', result: 'success', exitCode: 0, summary: { writes: 1 } });
    expect((await d.get('/runs/run-3')).body).toMatchObject({ id: 'run-3', result: 'partial', exitCode: 4 });
    expect(d.runs).toHaveLength(3);
    expect((await d.get('/runs/nope')).status).toBe(404);
    expect((await d.get('/records/ann%40acme.test/history')).body).toEqual({ selector: 'ann@acme.test', entries: [{ selector: 'ann@acme.test', op: 'create' }] });
  });

  it('a selector that matched nothing is the caller\'s error: failed with exit code 2 on GET /runs/<id>, but neither counted as a failed sync nor making /readyz fail', async () => {
    const recorded = '--only: selector 1 of 1 matched no record: not a source id, e-mail or department path in the sources or on the platform (selectors are not recorded: they may name a person)';
    const unmatched = new OrgsyncError('USAGE', '--only "typo@acme.test" matched no record: not a source id, e-mail or department path in the sources or on the platform (check the id with `orgsync explain`)', { details: { unmatched: 1, recordedMessage: recorded } });
    d = start(TOKEN);
    (await d.started(1)).finish({ result: 'guard', exitCode: 3, error: 'delete threshold' });
    await d.settle();
    // Long after the last success (never, here): a guard refusal is not a failure, so the daemon is ready.
    await d.clock.advance(2 * 3600_000);
    expect((await d.get('/readyz')).status).toBe(200);

    expect(await d.post('/sync?only=typo%40acme.test', TOKEN)).toEqual({ status: 202, body: { run_id: 'run-2', queued: false } });
    const second = await d.started(2);
    expect(second.ctx.only).toEqual(['typo@acme.test']);
    second.fail(unmatched);
    await d.settle();
    await d.settle();
    // Recorded without the selector (issue 44): GET /runs/<id> and /status name it by position only.
    expect((await d.get('/runs/run-2')).body).toMatchObject({ id: 'run-2', trigger: 'http', result: 'failed', exitCode: 2, error: recorded });
    expect(JSON.stringify((await d.get('/status')).body)).not.toContain('typo');
    expect((await d.get('/readyz')).status).toBe(200);
    const runsTotal = await d.metrics.registry.getSingleMetricAsString('orgsync_runs_total');
    expect(runsTotal).toMatch(/^orgsync_runs_total\{result="guard"[^}]*\} 1$/m);
    expect(runsTotal).not.toMatch(/result="failed"[^}]*\} [1-9]/);
  });
});
