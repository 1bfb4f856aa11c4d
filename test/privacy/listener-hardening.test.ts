/**
 * Issue 44 point 5 on the daemon's listener (runDaemon over real HTTP on loopback, a manual clock): malformed
 * percent-encoding answers 400, not 500; the trigger token refuses a wrong token of any length as the read token does;
 * a burst of refused requests (an empty read-token file, wrong tokens) writes one log line, and the next burst's line
 * counts the ones left unlogged.
 */
import { writeFileSync } from 'node:fs';
import { join } from 'node:path';
import { afterEach, describe, expect, it } from 'vitest';
import { runDaemon, type RunOutcome } from '../../src/daemon/daemon.js';
import { ManualScheduler } from '../../src/daemon/schedule.js';
import { openStateDb } from '../../src/mirror/db.js';
import { RunHistory } from '../../src/mirror/runs.js';
import { BURST_QUIET_MS } from '../../src/observability/burst-log.js';
import { OrgsyncMetrics } from '../../src/observability/metrics.js';
import { tokenFileReader } from '../../src/observability/route-access.js';
import { ManualClock } from '../../src/shared/clock.js';
import type { Logger } from '../../src/shared/logger.js';
import { TEST_BUSY_TIMEOUT_MS } from '../helpers/state-db.js';
import { tempDir } from '../helpers/temp.js';

const TRIGGER = 'trigger-token-0123456789';
const READ = 'read-token-9876543210';

/** A logger keeping each line's level, message and fields. */
function capturingLogger(): { logger: Logger; lines: { level: string; msg: string | undefined; fields: Record<string, unknown> }[] } {
  const lines: { level: string; msg: string | undefined; fields: Record<string, unknown> }[] = [];
  const at =
    (level: string) =>
    (fields: object, msg?: string): void => {
      lines.push({ level, msg, fields: fields as Record<string, unknown> });
    };
  const logger: Logger = { trace: at('trace'), debug: at('debug'), info: at('info'), warn: at('warn'), error: at('error'), child: () => logger };
  return { logger, lines };
}

function start(readToken: (clock: ManualClock, logger: Logger) => () => string) {
  const shutdown = new AbortController();
  const clock = new ManualClock(Date.UTC(2026, 10, 29, 9));
  const { logger, lines } = capturingLogger();
  const metrics = new OrgsyncMetrics({ build: { version: 'test' }, defaultMetrics: false });
  const history = new RunHistory(openStateDb(':memory:', { busyTimeoutMs: TEST_BUSY_TIMEOUT_MS }));
  let url = '';
  const exit = runDaemon({
    runSync: () => Promise.resolve<RunOutcome>({ result: 'success', exitCode: 0 }),
    logger,
    metrics,
    history,
    scheduler: new ManualScheduler(30 * 60_000),
    clock,
    listen: '127.0.0.1:0',
    shutdownSignal: shutdown.signal,
    stateOpen: () => true,
    info: { syncId: 'orgsync', version: 'test', schedule: '*/30 * * * *', timezone: 'UTC' },
    shutdownGraceMs: 20_000,
    onListening: (u) => (url = u),
    newRunId: (() => {
      let n = 0;
      return () => `run-${++n}`;
    })(),
    triggerToken: () => TRIGGER,
    recordHistory: () => [],
    listenerSecurity: { readToken: readToken(clock, logger) },
  });
  const listening = async (): Promise<string> => {
    while (!url) await new Promise((r) => setTimeout(r, 5));
    return url;
  };
  return { clock, lines, metrics, listening, stop: () => (shutdown.abort(new Error('test over')), exit) };
}

describe('listener hardening (issue 44)', () => {
  let d: ReturnType<typeof start> | undefined;
  afterEach(async () => {
    await d?.stop();
    d = undefined;
  });

  it('malformed percent-encoding in a personal route answers 400 with the read token (401 without), never 500', async () => {
    d = start(() => () => READ);
    const url = await d.listening();
    const read = { headers: { authorization: `Bearer ${READ}` } };
    for (const path of ['/runs/%ZZ', '/records/%E0%A4%A/history', '/runs/%', '/records/ann%40acme.test%FF/history']) {
      const res = await fetch(`${url}${path}`, read);
      expect({ path, status: res.status, body: await res.json() }).toEqual({
        path,
        status: 400,
        body: { error: { code: 'bad_request', message: 'the path has malformed percent-encoding (a % must be followed by two hex digits of valid UTF-8)' } },
      });
      // A refused request learns nothing first: without the token it is a 401, as for any personal route.
      expect((await fetch(`${url}${path}`)).status).toBe(401);
    }
    expect((await fetch(`${url}/runs/no-such-run`, read)).status).toBe(404);
    expect((await fetch(`${url}/records/ann%40acme.test/history`, read)).status).toBe(200);
  });

  it('the trigger token refuses every wrong token, shorter, longer or of the same length, and takes the right one', async () => {
    d = start(() => () => READ);
    const url = await d.listening();
    const post = (token: string) => fetch(`${url}/sync`, { method: 'POST', headers: { authorization: `Bearer ${token}` } });
    for (const wrong of ['t', TRIGGER.slice(0, -1), `${TRIGGER}x`, TRIGGER.replace(/9$/, '8'), READ, ` ${TRIGGER}x`]) expect((await post(wrong)).status).toBe(401);
    expect((await fetch(`${url}/sync`, { method: 'POST' })).status).toBe(401);
    expect((await post(TRIGGER)).status).toBe(202);
    expect(await d.metrics.registry.getSingleMetricAsString('orgsync_trigger_unauthorized_total')).toMatch(/ 7$/m);
  });

  it('an empty read-token file: every request refused, one error line per burst (the next burst counts the unlogged ones)', async () => {
    const file = join(tempDir('orgsync-burst-'), 'read.token');
    writeFileSync(file, '\n');
    d = start((clock, logger) => tokenFileReader(file, 'daemon.read_token_file', logger, clock));
    const url = await d.listening();
    const unusable = () => d!.lines.filter((l) => l.msg === 'token file unusable: every request it guards is refused');
    for (let i = 0; i < 30; i += 1) expect((await fetch(`${url}/plan`, { headers: { authorization: 'Bearer anything' } })).status).toBe(401);
    expect(unusable().map((l) => [l.level, l.fields])).toEqual([['error', { key: 'daemon.read_token_file', file, problem: 'empty' }]]);
    // Still refused within the burst: no more lines.
    await d.clock.advance(BURST_QUIET_MS - 1000);
    await fetch(`${url}/plan`);
    expect(unusable()).toHaveLength(1);
    // Quiet for longer than the window: the next refusal opens a new burst, and says how many went unlogged.
    await d.clock.advance(BURST_QUIET_MS + 1);
    await fetch(`${url}/plan`);
    expect(unusable().map((l) => l.fields.refused_unlogged)).toEqual([undefined, 30]);
  });

  it('wrong tokens: each 401 counted, one warning line per burst', async () => {
    d = start(() => () => READ);
    const url = await d.listening();
    const refused = () => d!.lines.filter((l) => l.msg === 'request refused: missing or wrong bearer token');
    for (let i = 0; i < 20; i += 1) await fetch(`${url}/plan.json`, { headers: { authorization: `Bearer guess-${i}` } });
    for (let i = 0; i < 5; i += 1) await fetch(`${url}/sync`, { method: 'POST', headers: { authorization: `Bearer guess-${i}` } });
    expect(refused().map((l) => [l.level, l.fields])).toEqual([['warn', { route: '/plan.json' }]]);
    expect(await d.metrics.registry.getSingleMetricAsString('orgsync_http_unauthorized_total')).toContain('orgsync_http_unauthorized_total{route="/plan.json"} 20');
    await d.clock.advance(BURST_QUIET_MS + 1);
    await fetch(`${url}/runs/run-1`);
    expect(refused().map((l) => l.fields)).toEqual([{ route: '/plan.json' }, { route: '/runs/<id>', refused_unlogged: 24 }]);
  });
});
