/**
 * The benches' emulator, in a child process of the bench (the bench file started with `--emulator-child`), so the
 * RSS and CPU a bench measures are the sync's alone. Its clock runs two hours behind until told `clock-now`, so later
 * runs see records hours old; `limits-real` switches on the spec's rate limits in the running emulator.
 */
import { fork, type ChildProcess } from 'node:child_process';
import { systemClock, type Clock } from '../../src/shared/clock.js';

export const BENCH_ADMIN = 'bench-admin-token';
/** The platform's published rate limits (per API key, session token, tenant and OAuth client). */
export const REAL_LIMITS = { per_api_key: 100, per_session_token: 50, per_tenant: 500, per_client_id: 10 };
export const NO_LIMITS = { per_api_key: 0, per_session_token: 0, per_tenant: 0, per_client_id: 0 };

/**
 * In the child: serves one tenant holding `keys` (read and write) until the parent says `stop` or goes away; with
 * `dbPath` its data lives in that SQLite file and survives a restart (bench:steady's cached tenant), with
 * `clockOffsetMs` its clock runs that far from the wall clock (`clock+<ms>` moves it on).
 */
export async function serveEmulatorChild(options: { keys: readonly string[]; limited: boolean; dbPath?: string; clockOffsetMs?: number }): Promise<void> {
  let offsetMs = options.clockOffsetMs ?? -2 * 3600_000;
  const clock: Clock = { now: () => Date.now() + offsetMs, sleep: systemClock.sleep };
  // Imported here, in the child only: loaded in a bench's own process it added about 27 MB to the RSS measured as the sync's.
  const { parseSeed, startEmulator } = await import('../../packages/emulator/src/index.js');
  const apiKeys = options.keys.map((key) => ({ key, scopes: ['tenant.org.read', 'tenant.org.write'] }));
  const seed = parseSeed({ tenants: [{ id: 1, name: 'Bench', api_keys: apiKeys }], limits: options.limited ? { ...REAL_LIMITS } : { ...NO_LIMITS } }, 'bench seed');
  const running = await startEmulator({ seed, port: 0, host: '127.0.0.1', adminToken: BENCH_ADMIN, clock, ...(options.dbPath ? { dbPath: options.dbPath } : {}) });
  process.on('message', (msg) => {
    if (msg === 'clock-now') {
      offsetMs = 0;
      process.send!('clock-set');
    } else if (typeof msg === 'string' && msg.startsWith('clock+')) {
      offsetMs += Number(msg.slice(6));
      process.send!('clock-set');
    } else if (msg === 'limits-real') {
      // The limits are read at every request (seed.limits), so the running emulator enforces them from now on.
      Object.assign(running.ctx.seed.limits, REAL_LIMITS);
      process.send!('limits-set');
    } else if (msg === 'stop') void running.close().then(() => process.exit(0));
  });
  process.on('disconnect', () => process.exit(0));
  process.send!({ url: running.url });
}

/** In the bench: starts `script --emulator-child ...args` and waits for the emulator's URL. */
export async function startEmulatorChild(script: string, args: readonly string[] = []): Promise<{ child: ChildProcess; url: string }> {
  const child = fork(script, ['--emulator-child', ...args], { stdio: ['ignore', 'inherit', 'inherit', 'ipc'] });
  const url = await new Promise<string>((resolve, reject) => {
    child.once('message', (m) => resolve((m as { url: string }).url));
    child.once('exit', (code) => reject(new Error(`emulator child exited with ${code}`)));
  });
  return { child, url };
}

/** Stops the child (asked to close its server; killed when the channel is already gone) and waits for its exit. */
export async function stopEmulatorChild(child: ChildProcess): Promise<void> {
  if (child.exitCode !== null || child.signalCode !== null) return;
  const exited = new Promise((resolve) => child.once('exit', resolve));
  if (child.connected) child.send('stop');
  else child.kill('SIGTERM');
  await exited;
}

/** Sends `msg` to the child and waits for `reply`. */
export function ask(child: ChildProcess, msg: string, reply: string): Promise<void> {
  return new Promise((resolve) => {
    const on = (m: unknown) => {
      if (m === reply) {
        child.off('message', on);
        resolve();
      }
    };
    child.on('message', on);
    child.send(msg);
  });
}

/** The requests the emulator answered since the last reset, by method, route and status. */
export async function emulatorRequests(url: string): Promise<{ method: string; route: string; status: number; count: number }[]> {
  const r = await fetch(`${url}/_emulator/requests`, { headers: { authorization: `Bearer ${BENCH_ADMIN}` } });
  return ((await r.json()) as { requests: { method: string; route: string; status: number; count: number }[] }).requests;
}

export async function resetRequests(url: string): Promise<void> {
  await fetch(`${url}/_emulator/requests`, { method: 'DELETE', headers: { authorization: `Bearer ${BENCH_ADMIN}` } });
}
