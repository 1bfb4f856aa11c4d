/**
 * Shutdown on time (issue 21 point 3): with writes that take 30 s each, SIGINT to `sync` and SIGTERM to `daemon`
 * end the process within shutdown_timeout + 2 s (here shutdown_timeout: 3s), exit 130 / 143, and the platform
 * receives no request after the signal that was not already in flight (the proxy logs each request's arrival and
 * never forwards one whose client gave up). The next run then converges, nobody created twice.
 */
import { afterEach, beforeEach, describe, expect, it } from 'vitest';
import type { PlatformMember } from '../../src/domain/index.js';
import { orgTestSeed, startTestEmulator, TEST_KEYS, type TestEmulator } from '../helpers/emulator.js';
import { titledOrg, writeCsvOrg, writeFaultConfig } from './org.js';
import { CliProcess, haveBuild, killAll, tempDir, until } from './process.js';
import { FaultProxy } from './proxy.js';

const TIMEOUT_S = 3;

describe.skipIf(!haveBuild())('shutdown on time with 30 s writes', () => {
  let emulator: TestEmulator;
  const cleanup: (() => Promise<void> | void)[] = [];
  // One emulator per case: each starts from the seeded tenant (a state DB that never ran beside departments this
  // sync manages would be refused by the state_lost guard).
  beforeEach(async () => {
    emulator = await startTestEmulator(orgTestSeed());
  });
  afterEach(async () => {
    await emulator?.close();
    await killAll();
    for (const f of cleanup.splice(0).reverse()) await f();
  });

  async function members(title: string): Promise<PlatformMember[]> {
    const out: PlatformMember[] = [];
    let cursor = '';
    for (;;) {
      const r = await emulator.request('GET', `/api/external/v1/org/members?limit=200${cursor ? `&cursor=${encodeURIComponent(cursor)}` : ''}`, { token: TEST_KEYS.acmeRw });
      out.push(...(r.body.items as PlatformMember[]).filter((m) => m.title === title));
      if (!r.body.has_more) return out;
      cursor = r.body.next_cursor;
    }
  }

  it.each([
    { command: 'sync', signal: 'SIGINT' as const, code: 130 },
    { command: 'daemon', signal: 'SIGTERM' as const, code: 143 },
  ])('$command, $signal: exits $code within shutdown_timeout + 2 s, no request after the signal but those in flight', async ({ command, signal, code }) => {
    const tmp = tempDir();
    cleanup.push(() => tmp.remove());
    const proxy = await FaultProxy.start(emulator.url);
    cleanup.push(() => proxy.close());
    const title = `Shutdown ${command}`;
    const config = writeFaultConfig(tmp.dir, 'orgsync', { baseUrl: proxy.url, platform: { concurrency: 4 }, top: `shutdown_timeout: ${TIMEOUT_S}s\n` });
    const v = titledOrg({ departments: 2, members: 40, title, prefix: `${command}-` });
    writeCsvOrg(tmp.dir, v.desired, v.titles);

    // The departments go through at once; every member create takes 30 s.
    const args = command === 'daemon' ? ['daemon', '--config', config, '--listen', '127.0.0.1:0'] : ['sync', '--config', config];
    proxy.set({ kind: 'latency', ms: 30_000, methods: ['POST'], paths: /\/org\/members$/ });
    const p = CliProcess.start(args);
    const memberCreates = () => proxy.requests.filter((r) => r.method === 'POST' && r.path.endsWith('/org/members')).length;
    await until('4 member creates in flight', () => memberCreates() >= 4 || (p.hasExited && Promise.reject(new Error(p.stderr))));
    // Let a retry or a fifth write have its chance to start, if the process would start one.
    await new Promise((r) => setTimeout(r, 200));
    const inFlight = proxy.count();
    const signalledAt = p.signal(signal);

    const exit = await p.exit((TIMEOUT_S + 10) * 1000);
    expect(exit.code, `${p.stderr.slice(-2000)}\n${p.stdout.slice(-2000)}`).toBe(code);
    expect(exit.at - signalledAt).toBeLessThanOrEqual((TIMEOUT_S + 2) * 1000);
    // Requests arrived after the signal: none. Those in flight were dropped unforwarded when the process aborted them.
    expect(proxy.count({ since: signalledAt })).toBe(0);
    expect(proxy.count()).toBe(inFlight);
    expect(proxy.requests.filter((r) => r.method === 'POST' && r.path.endsWith('/org/members')).map((r) => r.outcome)).toEqual(['dropped', 'dropped', 'dropped', 'dropped']);
    if (command === 'sync') {
      expect(p.stdout).toMatch(/^sync hr-sync: stopped before the end \(exit 130\)/m);
      expect(p.stdout).toMatch(/^not started: 36 change\(s\)/m);
    } else {
      expect(p.stdout).toContain('"msg":"daemon stopped"');
    }

    // The next run does it all, nobody twice.
    proxy.set(undefined);
    const next = CliProcess.start(['sync', '--config', config]);
    expect((await next.exit(60_000)).code, next.stderr).toBe(0);
    const all = await members(title);
    expect(all).toHaveLength(40);
    expect(new Set(all.map((m) => m.third_user_id)).size).toBe(40);
  }, 90_000);
});
