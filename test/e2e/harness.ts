/**
 * End-to-end harness of the reconcile: a real emulator on loopback, the real platform client, a state DB file,
 * runOnce with a desired state given as data, and a lister that reads the final state through the API.
 */
import { rmSync } from 'node:fs';
import { join } from 'node:path';
import type Database from 'better-sqlite3';
import { parseConfig } from '../../src/config/load.js';
import type { Config } from '../../src/config/schema.js';
import { runOnce, type RunObserver, type RunOnceOptions, type RunSummary } from '../../src/daemon/run-once.js';
import { memberList, type DesiredDepartment, type DesiredMember, type DesiredMemberStatus, type DesiredPosition, type DesiredState, type PlatformDepartment, type PlatformMember, type PlatformPosition } from '../../src/domain/index.js';
import { openStateDb } from '../../src/mirror/db.js';
import { TEST_BUSY_TIMEOUT_MS } from '../helpers/state-db.js';
import { Mirror } from '../../src/mirror/mirror.js';
import { OwnershipStore } from '../../src/mirror/ownership.js';
import { createPlatformClient, type PlatformClient } from '../../src/platform/client.js';
import type { OrgPlatformPort } from '../../src/platform/port.js';
import { systemClock } from '../../src/shared/clock.js';
import { silentLogger } from '../../src/shared/logger.js';
import { orgTestSeed, startTestEmulator, TEST_KEYS, type TestEmulator } from '../helpers/emulator.js';
import { tempDir } from '../helpers/temp.js';

export const ADMIN = 'admin-token-for-tests';

/** A compact way to write a desired org: departments [id, name, parent?], members [id, name, email, dept?, status?]. */
export interface OrgSpec {
  departments?: [string, string, string?][];
  positions?: [string, string][];
  members?: [string, string, string, string?, DesiredMemberStatus?][];
}

/** A desired state written as lists, as tests build them; `desiredOf` gives the DesiredState a run reads. */
export type OrgState = Omit<DesiredState, 'members'> & { members: DesiredMember[] };

/** The DesiredState of an OrgState (its members as a list: memberList). */
export function desiredOf(o: OrgState): DesiredState {
  return { ...o, members: memberList(o.members) };
}

/** Builds a desired org from an OrgSpec. */
export function org(spec: OrgSpec): OrgState {
  const departments: DesiredDepartment[] = (spec.departments ?? []).map(([source_id, name, parent]) => ({ source_id, name, ...(parent ? { parent_source_id: parent } : {}) }));
  const positions: DesiredPosition[] = (spec.positions ?? []).map(([source_id, name]) => ({ source_id, name }));
  const members: DesiredMember[] = (spec.members ?? []).map(([source_id, display_name, email, dept, status]) => ({
    source_id,
    display_name,
    email,
    ...(dept ? { department_source_id: dept } : {}),
    status: status ?? 'active',
  }));
  return { departments, positions, members, quarantine: [], provided: { departments: true, positions: true, members: true } };
}

/** The platform's organisation as compared by the tests (live records only). */
export interface OrgView {
  /** path -> third id and owner. */
  departments: Record<string, { third: string; managedBy: string }>;
  positions: Record<string, { name: string; managedBy: string }>;
  /** third_user_id (or e-mail when none) -> name, e-mail, department path, status. */
  members: Record<string, { name: string; email: string; department: string; status: string }>;
}

/** One sync's world: emulator, config, state DB, client. */
export class SyncWorld {
  readonly dir: string;
  config!: Config;
  client!: PlatformClient;
  db!: Database.Database;
  mirror!: Mirror;
  ownership!: OwnershipStore;
  requests = 0;
  rateLimited = 0;
  /** When set, runs use this port instead of the client (tests that change the platform between plan and apply). */
  port: OrgPlatformPort | undefined;

  private constructor(
    readonly emulator: TestEmulator,
    private readonly syncYaml: string,
  ) {
    this.dir = tempDir('orgsync-e2e-');
  }

  /** Starts an emulator (limits off) and opens a state DB. `syncYaml` is the body of the `sync:` block. */
  static async start(syncYaml = 'id: hr-sync\n  delete_threshold: { max_count: 500, max_percent: 100 }', seed?: Record<string, unknown>): Promise<SyncWorld> {
    const emulator = await startTestEmulator(seed ?? orgTestSeed(), { adminToken: ADMIN });
    const world = new SyncWorld(emulator, syncYaml);
    world.open();
    return world;
  }

  /** (Re)opens config, client and state DB (after a close, to simulate a new process). */
  open(): void {
    this.config = parseConfig(
      `platform:\n  base_url: ${this.emulator.url}\n  api_key: ${TEST_KEYS.acmeRw}\n  requests_per_second: 10000\n  max_retry_time_ms: 20000\nstate:\n  path: ${join(this.dir, 'state.db')}\nsync:\n  ${this.syncYaml}\n`,
      join(this.dir, 'orgsync.yaml'),
      {},
    );
    this.client = createPlatformClient(this.config.platform, {
      observer: {
        onResponse: () => {
          this.requests += 1;
        },
        onRateLimited: () => {
          this.rateLimited += 1;
        },
      },
      random: () => 0.1,
    });
    this.db = openStateDb(this.config.state.path, { busyTimeoutMs: TEST_BUSY_TIMEOUT_MS });
    this.mirror = new Mirror(this.db);
    this.ownership = new OwnershipStore(this.db, this.config.sync.id);
  }

  /** One run of the sync against `desired`. */
  run(desired: OrgState, options: Partial<RunOnceOptions> = {}, observer?: RunObserver, signal?: AbortSignal): Promise<RunSummary> {
    return runOnce(
      {
        config: this.config,
        client: this.port ?? this.client,
        mirror: this.mirror,
        ownership: this.ownership,
        logger: silentLogger,
        clock: systemClock,
        readDesiredState: async () => desiredOf(structuredClone(desired)),
        callStats: () => ({ requests: this.requests, rateLimited: this.rateLimited }),
        ...(observer ? { observer } : {}),
        ...(signal ? { signal } : {}),
      },
      { mode: 'apply', ...options },
    );
  }

  /** A plan only. */
  plan(desired: OrgState, options: Partial<RunOnceOptions> = {}): Promise<RunSummary> {
    return this.run(desired, { ...options, mode: 'plan' });
  }

  /** Sends a request as the tenant (read-write key). */
  // eslint-disable-next-line @typescript-eslint/no-explicit-any
  async api(method: string, path: string, body?: unknown): Promise<any> {
    const res = await this.emulator.request(method, `/api/external/v1${path}`, { token: TEST_KEYS.acmeRw, ...(body !== undefined ? { body } : {}) });
    if (res.status >= 300) throw new Error(`${method} ${path}: ${res.status} ${JSON.stringify(res.body)}`);
    return res.body;
  }

  /** Every live record of an entity, through the API. */
  async list<T>(entity: 'departments' | 'members' | 'positions'): Promise<T[]> {
    const out: T[] = [];
    let cursor = '';
    for (;;) {
      const page = await this.api('GET', `/org/${entity}?limit=200${cursor ? `&cursor=${encodeURIComponent(cursor)}` : ''}`);
      out.push(...(page.items as T[]));
      if (!page.has_more) return out;
      cursor = page.next_cursor;
    }
  }

  /** The platform's organisation, listed through the API. */
  async view(): Promise<OrgView> {
    const depts = await this.list<PlatformDepartment>('departments');
    const byId = new Map(depts.map((d) => [d.id, d]));
    const view: OrgView = { departments: {}, positions: {}, members: {} };
    for (const d of depts) if (d.depth > 0) view.departments[d.path] = { third: d.third_department_id, managedBy: String(d.metadata.managed_by ?? '') };
    for (const p of await this.list<PlatformPosition>('positions')) view.positions[p.third_position_id || p.id] = { name: p.name, managedBy: String(p.metadata.managed_by ?? '') };
    for (const m of await this.list<PlatformMember>('members')) {
      view.members[m.third_user_id || m.email] = { name: m.display_name, email: m.email, department: byId.get(m.department_id)?.path ?? '', status: m.status };
    }
    return view;
  }

  /** Write requests counted by the emulator (GET /_emulator/requests). */
  async writeCalls(): Promise<number> {
    const res = await this.emulator.request('GET', '/_emulator/requests', { token: ADMIN });
    return (res.body.requests as { method: string; count: number }[]).filter((r) => r.method !== 'GET').reduce((n, r) => n + r.count, 0);
  }

  /** List requests counted by the emulator, per route. */
  async requestCounts(): Promise<{ method: string; route: string; status: number; count: number }[]> {
    const res = await this.emulator.request('GET', '/_emulator/requests', { token: ADMIN });
    return res.body.requests;
  }

  async resetCounts(): Promise<void> {
    await this.emulator.request('DELETE', '/_emulator/requests', { token: ADMIN });
  }

  async faults(config: Record<string, unknown> | undefined): Promise<void> {
    if (config === undefined) await this.emulator.request('DELETE', '/_emulator/faults', { token: ADMIN });
    else await this.emulator.request('PUT', '/_emulator/faults', { token: ADMIN, body: config });
  }

  /** Closes the client and the state DB (the emulator keeps running). */
  async closeSync(): Promise<void> {
    this.db.close();
    await this.client.close();
  }

  async close(): Promise<void> {
    await this.closeSync();
    await this.emulator.close();
    rmSync(this.dir, { recursive: true, force: true });
  }
}

/** The view a desired state should produce (for records this sync manages), tenant root named `Acme`. */
export function expectedView(desired: OrgState, syncId = 'hr-sync'): OrgView {
  const byId = new Map(desired.departments.map((d) => [d.source_id, d]));
  const pathOf = (id: string): string => {
    const d = byId.get(id)!;
    return `${d.parent_source_id ? pathOf(d.parent_source_id) : '/Acme'}/${d.name}`;
  };
  const view: OrgView = { departments: {}, positions: {}, members: {} };
  for (const d of desired.departments) view.departments[pathOf(d.source_id)] = { third: d.source_id, managedBy: syncId };
  for (const p of desired.positions) view.positions[p.source_id] = { name: p.name, managedBy: syncId };
  for (const m of desired.members) {
    if (m.status === 'left') continue;
    view.members[m.source_id] = { name: m.display_name, email: m.email ?? '', department: m.department_source_id ? pathOf(m.department_source_id) : '', status: m.status };
  }
  return view;
}

/** The seeded admin member as it shows in a view. */
export const ADA = { 'ada@acme.test': { name: 'Ada Admin', email: 'ada@acme.test', department: '', status: 'active' } };
