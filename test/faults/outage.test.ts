/**
 * Outages (issue 21 point 6): the platform unreachable for 3 s in mid-apply — connections refused, connections reset
 * before a request is sent, or a gateway answering 502, 503 or 504 — costs time, not writes: the run retries within
 * its retry budget and ends with every write applied, exit 0, nobody created twice, and nothing left to do.
 */
import { afterEach, beforeEach, describe, expect, it } from 'vitest';
import { main } from '../../src/cli/main.js';
import type { PlatformDepartment, PlatformMember } from '../../src/domain/index.js';
import { captureContext } from '../helpers/cli.js';
import { orgTestSeed, startTestEmulator, TEST_KEYS, type TestEmulator } from '../helpers/emulator.js';
import { titledOrg, writeCsvOrg, writeFaultConfig } from './org.js';
import { tempDir, until } from './process.js';
import { FaultProxy, WRITES } from './proxy.js';

type Outage = 'refused' | 'reset' | 502 | 503 | 504;

describe('a 3 s platform outage in mid-apply', () => {
  let emulator: TestEmulator;
  const cleanup: (() => Promise<void> | void)[] = [];
  // One emulator per case: each starts from the seeded tenant (a state DB that never ran beside departments this
  // sync manages would be refused by the state_lost guard).
  beforeEach(async () => {
    emulator = await startTestEmulator(orgTestSeed());
  });
  afterEach(async () => {
    await emulator?.close();
    for (const f of cleanup.splice(0).reverse()) await f();
  });

  async function list<T>(entity: string): Promise<T[]> {
    const out: T[] = [];
    let cursor = '';
    for (;;) {
      const r = await emulator.request('GET', `/api/external/v1/org/${entity}?limit=200${cursor ? `&cursor=${encodeURIComponent(cursor)}` : ''}`, { token: TEST_KEYS.acmeRw });
      out.push(...(r.body.items as T[]));
      if (!r.body.has_more) return out;
      cursor = r.body.next_cursor;
    }
  }

  async function startOutage(proxy: FaultProxy, kind: Outage): Promise<() => Promise<void>> {
    if (kind === 'refused') {
      await proxy.refuse();
      return () => proxy.accept();
    }
    if (kind === 'reset') {
      proxy.set({ kind: 'reset' });
      proxy.dropConnections();
      return async () => {
        proxy.set({ kind: 'latency', ms: 15, methods: WRITES });
      };
    }
    proxy.set({ kind: 'status', status: kind });
    return async () => {
      proxy.set({ kind: 'latency', ms: 15, methods: WRITES });
    };
  }

  it.each<Outage>(['refused', 'reset', 502, 503, 504])('%s: every write applied, exit 0, no duplicate', async (kind) => {
    const tmp = tempDir();
    cleanup.push(() => tmp.remove());
    const proxy = await FaultProxy.start(emulator.url);
    cleanup.push(() => proxy.close());
    proxy.set({ kind: 'latency', ms: 15, methods: WRITES });
    // The run's retry budget is the default (120 s); the attempt count would run out within 3 s of fast failures.
    const config = writeFaultConfig(tmp.dir, 'orgsync', { baseUrl: proxy.url, platform: { concurrency: 4 } });
    const v = titledOrg({ departments: 4, members: 150, title: `Outage ${kind}` });
    writeCsvOrg(tmp.dir, v.desired, v.titles);
    const ours = (m: PlatformMember) => m.title === `Outage ${kind}`;

    const cap = captureContext();
    const run = main(['sync', '--config', config], cap.ctx);
    await until('30 writes', () => proxy.count({ writes: true }) >= 30);
    const end = await startOutage(proxy, kind);
    await new Promise((r) => setTimeout(r, 3_000));
    await end();
    const code = await run;
    expect(code, cap.out.stderr.slice(-3000)).toBe(0);
    expect(cap.out.stdout).toMatch(/^sync hr-sync: applied \(exit 0\)/m);

    const members = (await list<PlatformMember>('members')).filter(ours);
    expect(members).toHaveLength(150);
    expect(new Set(members.map((m) => m.third_user_id)).size).toBe(150);
    const depts = (await list<PlatformDepartment>('departments')).filter((d) => /^d\d$/.test(d.third_department_id));
    expect(new Set(depts.map((d) => d.third_department_id)).size).toBe(depts.length);

    const again = captureContext();
    const before = proxy.count({ writes: true });
    expect(await main(['sync', '--config', config], again.ctx), again.out.stderr.slice(-2000)).toBe(0);
    expect(proxy.count({ writes: true })).toBe(before);
  }, 60_000);
});
