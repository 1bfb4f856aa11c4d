/**
 * Issue 19 point 1, end to end: several API keys of one tenant against the emulator with its per-key (100/s) and
 * per-tenant (500/s) limits on. The same final state as one key, zero 429s, requests spread over the keys, parents
 * written before children; a key revoked mid-run is dropped and the run completes on the others; with no key left
 * the run stops as with one refused key.
 */
import { join } from 'node:path';
import { PassThrough } from 'node:stream';
import { openRunEnvironment } from '../../src/app/run-environment.js';
import { loadConfig } from '../../src/config/load.js';
import { writeCsvConfig, writeCsvOrg } from './csv-org.js';
import { cli } from '../helpers/cli.js';
import { afterEach, describe, expect, it } from 'vitest';
import { parseConfig } from '../../src/config/load.js';
import { runOnce, type RunSummary } from '../../src/daemon/run-once.js';
import type { PlatformDepartment, PlatformMember, PlatformPosition } from '../../src/domain/index.js';
import { openStateDb } from '../../src/mirror/db.js';
import { TEST_BUSY_TIMEOUT_MS } from '../helpers/state-db.js';
import { Mirror } from '../../src/mirror/mirror.js';
import { OwnershipStore } from '../../src/mirror/ownership.js';
import { createPlatformClient } from '../../src/platform/client.js';
import { keyFingerprint } from '../../src/platform/key-pool.js';
import { systemClock } from '../../src/shared/clock.js';
import { silentLogger } from '../../src/shared/logger.js';
import { orgTestSeed, startTestEmulator, TEST_KEYS, type TestEmulator } from '../helpers/emulator.js';
import { tempDir } from '../helpers/temp.js';
import { ADA, ADMIN, desiredOf, expectedView, org, type OrgState, type OrgView } from './harness.js';

const KEYS = [1, 2, 3, 4, 5].map((n) => `ek_acmemk${n}_0123456789abcdef${n}`);
const REAL_LIMITS = { per_api_key: 100, per_session_token: 50, per_tenant: 500, per_client_id: 10 };

/** 3 levels of departments (children depend on parents), 5 positions, `members` members. */
function bigOrg(members: number): OrgState {
  const departments: [string, string, string?][] = [];
  for (let a = 0; a < 4; a++) {
    departments.push([`d${a}`, `Division ${a}`]);
    for (let b = 0; b < 3; b++) {
      departments.push([`d${a}-${b}`, `Group ${a}.${b}`, `d${a}`]);
      for (let c = 0; c < 2; c++) departments.push([`d${a}-${b}-${c}`, `Team ${a}.${b}.${c}`, `d${a}-${b}`]);
    }
  }
  const leaves = departments.filter(([id]) => id.split('-').length === 3).map(([id]) => id);
  const spec = {
    departments,
    positions: [0, 1, 2, 3, 4].map((p): [string, string] => [`p${p}`, `Role ${p}`]),
    members: Array.from({ length: members }, (_, i): [string, string, string, string] => [`u${i}`, `Person ${i}`, `person.${i}@acme.test`, leaves[i % leaves.length]!]),
  };
  return org(spec);
}

function seedWithKeys(): Record<string, unknown> {
  const seed = orgTestSeed(REAL_LIMITS) as { tenants: { api_keys: { key: string; scopes: string[] }[] }[] };
  seed.tenants[0]!.api_keys.push(...KEYS.map((key) => ({ key, scopes: ['tenant.org.read', 'tenant.org.write'] })));
  return seed as unknown as Record<string, unknown>;
}

interface Counts {
  requests: number;
  rateLimited: number;
  byKey: Map<string, number>;
  dropped: string[];
  /** Requests sent on a key after it was dropped. */
  afterDrop: number;
}

/** One sync against `emu` with the `platform:` lines given; runs once, then plans again (must be empty). */
async function syncOnce(
  emu: TestEmulator,
  platformYaml: string,
  desired: OrgState,
  onKeyRequest?: (key: string, counts: Counts) => void,
  counts: Counts = { requests: 0, rateLimited: 0, byKey: new Map(), dropped: [], afterDrop: 0 },
): Promise<{ summary: RunSummary; second: RunSummary; counts: Counts }> {
  const dir = tempDir('orgsync-keys-e2e-');
  const config = parseConfig(`platform:\n  base_url: ${emu.url}\n${platformYaml}  max_retry_time_ms: 20000\nstate:\n  path: ${join(dir, 'state.db')}\nsync:\n  id: hr-sync\n`, join(dir, 'orgsync.yaml'), {});
  const client = createPlatformClient(config.platform, {
    observer: {
      onResponse: () => (counts.requests += 1),
      onRateLimited: () => (counts.rateLimited += 1),
      onKeyRequest: (key) => {
        counts.byKey.set(key, (counts.byKey.get(key) ?? 0) + 1);
        if (counts.dropped.includes(key)) counts.afterDrop += 1;
        onKeyRequest?.(key, counts);
      },
      onKeyDropped: (key) => counts.dropped.push(key),
    },
    random: () => 0.1,
  });
  const db = openStateDb(config.state.path, { busyTimeoutMs: TEST_BUSY_TIMEOUT_MS });
  try {
    const deps = {
      config,
      client,
      mirror: new Mirror(db),
      ownership: new OwnershipStore(db, config.sync.id),
      logger: silentLogger,
      clock: systemClock,
      readDesiredState: async () => desiredOf(structuredClone(desired)),
      callStats: () => ({ requests: counts.requests, rateLimited: counts.rateLimited }),
    };
    const summary = await runOnce(deps, { mode: 'apply' });
    const second = await runOnce(deps, { mode: 'plan' });
    return { summary, second, counts };
  } finally {
    db.close();
    await client.close();
  }
}

/** The tenant's organisation as the test compares it, read with the seed's own key. */
async function view(emu: TestEmulator): Promise<OrgView> {
  const list = async <T>(entity: string): Promise<T[]> => {
    const out: T[] = [];
    let cursor = '';
    for (;;) {
      const res = await emu.request('GET', `/api/external/v1/org/${entity}?limit=200${cursor ? `&cursor=${encodeURIComponent(cursor)}` : ''}`, { token: TEST_KEYS.acmeRw });
      expect(res.status).toBe(200);
      out.push(...(res.body.items as T[]));
      if (!res.body.has_more) return out;
      cursor = res.body.next_cursor;
    }
  };
  const depts = await list<PlatformDepartment>('departments');
  const byId = new Map(depts.map((d) => [d.id, d]));
  const v: OrgView = { departments: {}, positions: {}, members: {} };
  for (const d of depts) if (d.depth > 0) v.departments[d.path] = { third: d.third_department_id, managedBy: String(d.metadata.managed_by ?? '') };
  for (const p of await list<PlatformPosition>('positions')) v.positions[p.third_position_id || p.id] = { name: p.name, managedBy: String(p.metadata.managed_by ?? '') };
  for (const m of await list<PlatformMember>('members')) v.members[m.third_user_id || m.email] = { name: m.display_name, email: m.email, department: byId.get(m.department_id)?.path ?? '', status: m.status };
  return v;
}

/** The emulator's answers by status (GET /_emulator/requests). */
async function statuses(emu: TestEmulator): Promise<Map<number, number>> {
  const res = await emu.request('GET', '/_emulator/requests', { token: ADMIN });
  const out = new Map<number, number>();
  for (const r of res.body.requests as { status: number; count: number }[]) out.set(r.status, (out.get(r.status) ?? 0) + r.count);
  return out;
}

const keysYaml = (keys: readonly string[]) => `  api_keys:\n${keys.map((k) => `    - key: ${k}\n`).join('')}`;

const emulators: TestEmulator[] = [];
async function emulator(): Promise<TestEmulator> {
  const emu = await startTestEmulator(seedWithKeys(), { adminToken: ADMIN });
  emulators.push(emu);
  return emu;
}
afterEach(async () => {
  for (const e of emulators.splice(0)) await e.close();
});

describe('several API keys of one tenant, emulator limits on (100/s per key, 500/s per tenant)', () => {
  it('5 keys at 100/s with a 500/s share: the same final state as one key, zero 429s, every key used, parents before children', { timeout: 90_000 }, async () => {
    const desired = bigOrg(260);
    const expected = { ...expectedView(desired), members: { ...ADA, ...expectedView(desired).members } };

    const one = await emulator();
    const single = await syncOnce(one, `  api_key: ${KEYS[0]}\n`, desired);
    expect(single.summary.exitCode).toBe(0);

    const many = await emulator();
    const multi = await syncOnce(many, `${keysYaml(KEYS)}  tenant_requests_per_second: 500\n  concurrency: 16\n`, desired);
    expect(multi.summary.exitCode).toBe(0);
    expect(multi.summary.failures).toEqual([]);
    expect(multi.second.plan.changes).toEqual([]);
    // Zero 429s: none seen by the client, none answered by the emulator.
    expect(multi.counts.rateLimited).toBe(0);
    expect((await statuses(many)).get(429)).toBeUndefined();
    // Parents before children: no department or member write was refused (a child before its parent is a 404 or 400).
    expect([...(await statuses(many)).keys()].filter((s) => s >= 400)).toEqual([]);
    // Spread over the keys: each carried about a fifth of the requests.
    expect([...multi.counts.byKey.keys()].sort()).toEqual(KEYS.map(keyFingerprint).sort());
    const total = [...multi.counts.byKey.values()].reduce((a, b) => a + b, 0);
    for (const n of multi.counts.byKey.values()) expect(n).toBeGreaterThanOrEqual(Math.floor((total / 5) * 0.9));

    const multiView = await view(many);
    expect(multiView).toEqual(await view(one));
    expect(multiView).toEqual(expected);
  });

  it('a key revoked mid-run is dropped with its fingerprint; the run completes on the others with the full state and no 429', { timeout: 60_000 }, async () => {
    const emu = await emulator();
    const desired = bigOrg(150);
    const revoked = KEYS[1]!;
    let revocation: Promise<unknown> | undefined;
    const run = await syncOnce(emu, `${keysYaml(KEYS.slice(0, 3))}  tenant_requests_per_second: 300\n  concurrency: 12\n`, desired, (_key, counts) => {
      const sent = [...counts.byKey.values()].reduce((a, b) => a + b, 0);
      if (sent === 60 && !revocation) revocation = emu.request('POST', '/_emulator/api-keys/revoke', { token: ADMIN, body: { key: revoked } });
    });
    expect((await revocation) as { status: number }).toMatchObject({ status: 200 });
    expect(run.summary.exitCode).toBe(0);
    expect(run.summary.failures).toEqual([]);
    expect(run.counts.dropped).toEqual([keyFingerprint(revoked)]);
    expect(run.counts.afterDrop).toBe(0);
    expect(run.counts.rateLimited).toBe(0);
    const answered = await statuses(emu);
    expect(answered.get(401)).toBeGreaterThanOrEqual(1);
    expect(answered.get(429)).toBeUndefined();
    expect(run.second.plan.changes).toEqual([]);
    expect(await view(emu)).toEqual({ ...expectedView(desired), members: { ...ADA, ...expectedView(desired).members } });
  });

  it('with every key refused, the last refusal fails the run as one refused key does (exit 1, the same message)', { timeout: 30_000 }, async () => {
    const emu = await emulator();
    for (const key of KEYS.slice(0, 3)) expect((await emu.request('POST', '/_emulator/api-keys/revoke', { token: ADMIN, body: { key } })).status).toBe(200);
    const counts: Counts = { requests: 0, rateLimited: 0, byKey: new Map(), dropped: [], afterDrop: 0 };
    // The same message but for the setting the key came from (issue 32): its URL, fingerprint and what to check.
    const refused = (setting: string, key: string) =>
      new RegExp(
        `^the platform rejected the credential \\(GET /org/\\w+: 401 invalid_api_key: invalid or expired credential\\): the platform at http://127\\.0\\.0\\.1:\\d+ refused the API key from ${setting.replace(/[.[\]]/g, '\\$&')} \\(read from the config file; key fingerprint sha256:${keyFingerprint(key)}\\); check that the key is current \\(not revoked or expired\\) and belongs to this tenant \\(CREDENTIAL_REJECTED, docs/errors\\.md#credential_rejected\\)$`,
      );
    await expect(syncOnce(emu, keysYaml(KEYS.slice(0, 3)), bigOrg(10), undefined, counts)).rejects.toThrow(refused('platform.api_keys[2]', KEYS[2]!));
    // Two keys dropped with a warning each; the third, the last, is the run's failure.
    expect(counts.dropped).toEqual([keyFingerprint(KEYS[0]!), keyFingerprint(KEYS[1]!)]);
    // One key alone fails the same way.
    await expect(syncOnce(emu, `  api_key: ${KEYS[2]}\n`, bigOrg(10))).rejects.toThrow(refused('platform.api_key', KEYS[2]!));
  });

  it('keys revoked during the apply: one is dropped, the last one\'s refusal fails the run exactly as one revoked key does', { timeout: 60_000 }, async () => {
    /** Runs with `platformYaml` and revokes `revoke` once the apply has started (20 requests: past the refresh's lists). */
    const revokedDuringApply = async (platformYaml: string, revoke: readonly string[]): Promise<{ error: unknown; counts: Counts }> => {
      const emu = await emulator();
      let revocation: Promise<unknown> | undefined;
      const counts: Counts = { requests: 0, rateLimited: 0, byKey: new Map(), dropped: [], afterDrop: 0 };
      const error = await syncOnce(
        emu,
        platformYaml,
        bigOrg(100),
        (_key, c) => {
          const sent = [...c.byKey.values()].reduce((a, b) => a + b, 0);
          if (sent === 20 && !revocation) revocation = Promise.all(revoke.map((key) => emu.request('POST', '/_emulator/api-keys/revoke', { token: ADMIN, body: { key } })));
        },
        counts,
      ).then(
        () => undefined,
        (err: unknown) => err,
      );
      await revocation;
      return { error, counts };
    };
    const one = await revokedDuringApply(`  api_key: ${KEYS[0]}\n  concurrency: 4\n`, KEYS.slice(0, 1));
    const two = await revokedDuringApply(`${keysYaml(KEYS.slice(0, 2))}  tenant_requests_per_second: 200\n  concurrency: 4\n`, KEYS.slice(0, 2));
    expect(String(one.error)).toMatch(/the platform rejected the credential \(\w+ \/org\/\w+.*: 401 invalid_api_key/);
    expect(String(two.error)).toMatch(/the platform rejected the credential \(\w+ \/org\/\w+.*: 401 invalid_api_key/);
    expect(one.counts.dropped).toEqual([]);
    expect(two.counts.dropped).toHaveLength(1);
  });

  it('orgsync sync with a revoked key among api_keys: exit 0, one warning naming the key\'s fingerprint, never a key, in any output', { timeout: 60_000 }, async () => {
    const emu = await emulator();
    expect((await emu.request('POST', '/_emulator/api-keys/revoke', { token: ADMIN, body: { key: KEYS[1] } })).status).toBe(200);
    const dir = tempDir('orgsync-keys-cli-');
    const desired = bigOrg(20);
    writeCsvOrg(dir, desired);
    const config = writeCsvConfig(dir, { baseUrl: emu.url, apiKey: KEYS[0]!, platformExtra: `  api_keys:\n    - key: ${KEYS[1]}\n    - key: ${KEYS[2]}\n  tenant_requests_per_second: 300\n` });
    const r = await cli('sync', '--config', config, '--output', 'json');
    expect(r.code).toBe(0);
    const warnings = r.stderr
      .split('\n')
      .filter((l) => l.includes('platform key refused'))
      .map((l) => JSON.parse(l) as Record<string, unknown>);
    expect(warnings).toHaveLength(1);
    expect(warnings[0]).toMatchObject({ msg: 'platform key refused: dropped from this run, continuing on the other keys', key: keyFingerprint(KEYS[1]!), status: 401, code: 'invalid_api_key', keys_left: 2 });
    for (const key of KEYS.slice(0, 3)) {
      expect(r.stdout).not.toContain(key);
      expect(r.stderr).not.toContain(key);
    }
    expect(JSON.parse(r.stdout)).toMatchObject({ result: 'applied', exit_code: 0 });
    expect(await view(emu)).toEqual({ ...expectedView(desired), members: { ...ADA, ...expectedView(desired).members } });
    // orgsync mirror refresh reads with the keys too, and says the same when it drops one.
    const m = await cli('mirror', 'refresh', '--config', config, '--full');
    expect(m.code).toBe(0);
    expect(m.stderr).toContain('platform key refused: dropped from this run, continuing on the other keys');
    expect(m.stderr).toContain(keyFingerprint(KEYS[1]!));
    expect(m.stderr + m.stdout).not.toContain(KEYS[1]!);
  });

  it('the daemon tries a dropped key again at its next run (dropped from the run, not for good)', { timeout: 60_000 }, async () => {
    const emu = await emulator();
    expect((await emu.request('POST', '/_emulator/api-keys/revoke', { token: ADMIN, body: { key: KEYS[1] } })).status).toBe(200);
    const dir = tempDir('orgsync-keys-daemon-');
    writeCsvOrg(dir, bigOrg(10));
    const config = loadConfig(writeCsvConfig(dir, { baseUrl: emu.url, apiKey: KEYS[0]!, platformExtra: `  api_keys:\n    - key: ${KEYS[1]}\n` }), {});
    const logs = new PassThrough();
    let text = '';
    logs.on('data', (c: Buffer) => (text += c.toString()));
    const env = openRunEnvironment(config, { env: {} }, { logDestination: logs, logIsTTY: false });
    try {
      const warnings = () => text.split('\n').filter((l) => l.includes('platform key refused')).length;
      expect((await env.run({ mode: 'apply' }, {})).exitCode).toBe(0);
      expect(warnings()).toBe(1);
      expect(env.client.activeKeys()).toEqual([keyFingerprint(KEYS[0]!)]);
      // The next run starts with both keys again; the revoked one is refused and dropped again, with a new warning.
      expect((await env.run({ mode: 'apply' }, {})).exitCode).toBe(0);
      expect(warnings()).toBe(2);
      expect(text).not.toContain(KEYS[1]);
    } finally {
      await env.close();
    }
  });
});
