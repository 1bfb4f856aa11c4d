/**
 * Fencing (issue 21 point 1): a writer frozen past the lease TTL (SIGSTOP) while a second run takes the lease over
 * writes nothing more once it wakes (SIGCONT), exits 1 with `lease lost to <holder> at <time>: stopped after N
 * writes`, and the second run's plan is what the platform ends with. Each process talks through its own fault
 * proxy, so the requests of each are counted apart.
 */
import { afterAll, afterEach, beforeAll, describe, expect, it } from 'vitest';
import type { PlatformMember } from '../../src/domain/index.js';
import { orgTestSeed, startTestEmulator, TEST_KEYS, type TestEmulator } from '../helpers/emulator.js';
import { titledOrg, writeCsvOrg, writeFaultConfig } from './org.js';
import { CliProcess, haveBuild, killAll, tempDir, until } from './process.js';
import { FaultProxy, WRITES } from './proxy.js';

describe.skipIf(!haveBuild())('fencing: a writer that lost its lease', () => {
  let emulator: TestEmulator;
  const cleanup: (() => Promise<void> | void)[] = [];
  beforeAll(async () => {
    emulator = await startTestEmulator(orgTestSeed());
  });
  afterEach(async () => {
    await killAll();
    for (const f of cleanup.splice(0).reverse()) await f();
  });
  afterAll(async () => emulator?.close());

  async function members(): Promise<PlatformMember[]> {
    const out: PlatformMember[] = [];
    let cursor = '';
    for (;;) {
      const r = await emulator.request('GET', `/api/external/v1/org/members?limit=200${cursor ? `&cursor=${encodeURIComponent(cursor)}` : ''}`, { token: TEST_KEYS.acmeRw });
      out.push(...(r.body.items as PlatformMember[]));
      if (!r.body.has_more) return out;
      cursor = r.body.next_cursor;
    }
  }

  it('frozen past the TTL while a second run takes over: after SIGCONT it sends nothing, exits 1 naming the new holder', async () => {
    const tmp = tempDir();
    cleanup.push(() => tmp.remove());
    const pa = await FaultProxy.start(emulator.url);
    const pb = await FaultProxy.start(emulator.url);
    cleanup.push(() => pa.close(), () => pb.close());
    // Slow writes, so that each run is still applying when it matters.
    pa.set({ kind: 'latency', ms: 150, methods: WRITES });
    pb.set({ kind: 'latency', ms: 60, methods: WRITES });
    const lease = { lease_ttl: '3s' };
    const configA = writeFaultConfig(tmp.dir, 'a', { baseUrl: pa.url, platform: { concurrency: 2 }, state: lease });
    const configB = writeFaultConfig(tmp.dir, 'b', { baseUrl: pb.url, platform: { concurrency: 2 }, state: lease });
    const v1 = titledOrg({ departments: 4, members: 120, title: 'Stale title' });
    writeCsvOrg(tmp.dir, v1.desired, v1.titles);

    const a = CliProcess.start(['sync', '--config', configA]);
    await until('A to make 10 writes', () => pa.count({ writes: true }) >= 10 || (a.hasExited && Promise.reject(new Error(`A exited early: ${a.stderr}`))));
    a.signal('SIGSTOP');
    // What A sent before it froze has arrived within a moment; from here on A may send nothing.
    await new Promise((r) => setTimeout(r, 300));
    const sentByA = pa.count();
    const writesByA = pa.count({ writes: true });

    // The source changes; the lease expires; a second run takes over with the new plan.
    const v2 = titledOrg({ departments: 4, members: 120, title: 'Fresh title' });
    writeCsvOrg(tmp.dir, v2.desired, v2.titles);
    await new Promise((r) => setTimeout(r, 3_500));
    const b = CliProcess.start(['sync', '--config', configB]);
    await until('B to make 10 writes', () => pb.count({ writes: true }) >= 10 || (b.hasExited && Promise.reject(new Error(`B exited early: ${b.stderr}`))));

    a.signal('SIGCONT');
    const exitA = await a.exit(20_000);
    expect(exitA.code, a.stderr).toBe(1);
    expect(a.stderr).toMatch(/^orgsync: lease lost to \S+:\d+:[0-9a-f]{8} at \d{4}-\d\d-\d\dT\d\d:\d\d:\d\d\.\d{3}Z: stopped after \d+ writes$/m);
    const writesReported = Number(/stopped after (\d+) writes/.exec(a.stderr)![1]);
    expect(writesReported).toBeLessThanOrEqual(writesByA);
    // Nothing at all after the wake-up: no write, no retry, no read.
    expect(pa.count()).toBe(sentByA);

    const exitB = await b.exit(60_000);
    expect(exitB.code, b.stderr).toBe(0);
    // The second run's plan stands: every title is the fresh one, nobody twice.
    const all = (await members()).filter((m) => m.third_user_id.startsWith('m'));
    expect(all).toHaveLength(120);
    expect(new Set(all.map((m) => m.email)).size).toBe(120);
    expect(all.filter((m) => m.title !== 'Fresh title')).toEqual([]);
    expect(pa.count()).toBe(sentByA);

    // And the next run, with a fresh plan, has nothing left to do.
    const again = CliProcess.start(['sync', '--config', configA]);
    pa.set(undefined);
    expect((await again.exit(30_000)).code, again.stderr).toBe(0);
    expect(pa.count({ writes: true })).toBe(writesByA);
  }, 120_000);
});
