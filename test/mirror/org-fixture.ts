/**
 * Shared pieces of the mirror tests against the emulator: a writer client, an organisation built through the API,
 * and the comparison of the mirror with the emulator's state.
 */
import { expect } from 'vitest';
import type { Dispatcher } from 'undici';
import { Agent } from 'undici';
import { ENTITY_KINDS, type EntityKind } from '../../src/domain/entities.js';
import type { Mirror } from '../../src/mirror/mirror.js';
import { PLATFORM_DEFAULTS } from '../../src/config/platform.js';
import { clientLimitsFrom, PlatformClient } from '../../src/platform/client.js';
import { TokenBucket } from '../../src/platform/pacing.js';
import { systemClock, type Clock } from '../../src/shared/clock.js';
import { TEST_KEYS } from '../helpers/emulator.js';

/** A read-write client on the real clock, fast, with its own bucket (setup and checks, not under test). */
export function writerClient(url: string): PlatformClient {
  return new PlatformClient({
    ...clientLimitsFrom(PLATFORM_DEFAULTS),
    baseUrl: url,
    credential: TEST_KEYS.acmeRw,
    clock: systemClock,
    bucket: new TokenBucket(systemClock, { ratePerSecond: 100_000, burst: 100 }),
    concurrency: 8,
  });
}

/** The client under test: read-only key, its own bucket on `clock`. */
export function readerClient(url: string, clock: Clock, over: Partial<ConstructorParameters<typeof PlatformClient>[0]> = {}): PlatformClient {
  return new PlatformClient({
    ...clientLimitsFrom(PLATFORM_DEFAULTS),
    baseUrl: url,
    credential: TEST_KEYS.acmeRead,
    clock,
    bucket: new TokenBucket(clock, { ratePerSecond: over.requestsPerSecond ?? 1000 }),
    ...over,
  });
}

/** What buildOrg created. */
export interface BuiltOrg {
  positions: string[];
  departments: string[];
  /** Leaf departments without members (deletable). */
  emptyLeaves: string[];
  members: string[];
}

/** Creates positions, a department tree and members through the API. */
export async function buildOrg(writer: PlatformClient, size: { positions: number; departments: number; members: number }): Promise<BuiltOrg> {
  const positions: string[] = [];
  for (let i = 0; i < size.positions; i += 1) {
    positions.push((await writer.createPosition({ name: `Position ${i}`, third_position_id: `P${i}`, sort_order: i, metadata: { managed_by: 'orgsync' } })).id);
  }
  const departments: string[] = [];
  for (let i = 0; i < size.departments; i += 1) {
    // A small tree: every third department nests under the previous one.
    const parent = i % 3 === 2 ? departments[i - 1] : undefined;
    const d = await writer.createDepartment({ name: `Dept ${i}`, third_department_id: `D${i}`, ...(parent ? { parent_id: parent } : {}) });
    departments.push(d.id);
  }
  const members: string[] = [];
  const withMembers = new Set<string>();
  for (let i = 0; i < size.members; i += 1) {
    const department = departments[i % Math.max(1, Math.floor(departments.length / 2))] ?? '';
    if (department) withMembers.add(department);
    const m = await writer.createMember({ email: `user${i}@acme.test`, display_name: `User ${i}`, third_user_id: `E${i}`, title: 'Engineer', department_id: department });
    members.push(m.account_id);
  }
  const parents = new Set<string>();
  for (const id of departments) parents.add((await writer.getDepartment(id)).parent_id);
  const emptyLeaves = departments.filter((d) => !parents.has(d) && !withMembers.has(d));
  return { positions, departments, emptyLeaves, members };
}

/** Every record of an entity on the platform: live only, or with every tombstone (updated_since at the epoch). */
export async function listAll<K extends EntityKind>(client: PlatformClient, entity: K, withTombstones: boolean) {
  const out = [];
  let cursor = '';
  for (;;) {
    const page = await client.listPage(entity, { limit: 200, ...(cursor ? { cursor } : {}), ...(withTombstones ? { updated_since: '1970-01-01T00:00:00.000Z' } : {}) });
    out.push(...page.items);
    if (!page.has_more) break;
    cursor = page.next_cursor;
  }
  return out;
}

const keyOf = (entity: EntityKind, r: object) => (entity === 'members' ? (r as { account_id: string }).account_id : (r as { id: string }).id);
/** Every mirrored record of an entity, ordered by id (members by scan: Mirror.all reads departments and positions). */
const allOf = (mirror: Mirror, entity: EntityKind): object[] => (entity === 'members' ? [...mirror.scanMembers()] : mirror.all(entity));
const byKey = (entity: EntityKind, list: object[]) => [...list].sort((a, b) => keyOf(entity, a).localeCompare(keyOf(entity, b)));

/** After a full walk: the mirror holds exactly the platform's live records, field for field. */
export async function expectMirrorEqualsLive(mirror: Mirror, writer: PlatformClient): Promise<void> {
  for (const entity of ENTITY_KINDS) {
    const live = await listAll(writer, entity, false);
    expect(byKey(entity, allOf(mirror, entity)), entity).toEqual(byKey(entity, live));
  }
}

/**
 * After incremental walks: every live platform record is in the mirror as it is now, and every mirror record equals
 * the platform's current version of it (tombstones included).
 */
export async function expectMirrorMatches(mirror: Mirror, writer: PlatformClient): Promise<void> {
  for (const entity of ENTITY_KINDS) {
    const everything = new Map((await listAll(writer, entity, true)).map((r) => [keyOf(entity, r), r]));
    const mirrored = allOf(mirror, entity);
    for (const r of mirrored) expect(r, `${entity} ${keyOf(entity, r)}`).toEqual(everything.get(keyOf(entity, r)));
    const inMirror = new Set(mirrored.map((r) => keyOf(entity, r)));
    const live = [...everything.values()].filter((r) => !['left', 'deleted'].includes((r as { status: string }).status));
    for (const r of live) expect(inMirror.has(keyOf(entity, r)), `${entity} ${keyOf(entity, r)} mirrored`).toBe(true);
  }
}

/** A dispatcher that records the clock time of every request it sends (to check pacing). */
export function recordingDispatcher(clock: Clock, sends: { at: number; path: string }[]): Dispatcher {
  return new Agent().compose((dispatch) => (opts, handler) => {
    sends.push({ at: clock.now(), path: String(opts.path) });
    return dispatch(opts, handler);
  });
}

/** The emulator's request counts (GET /_emulator/requests). */
export async function requestCounts(url: string, adminToken: string): Promise<{ method: string; route: string; status: number; count: number }[]> {
  const res = await fetch(`${url}/_emulator/requests`, { headers: { authorization: `Bearer ${adminToken}` } });
  return ((await res.json()) as { requests: { method: string; route: string; status: number; count: number }[] }).requests;
}

/** Sets (or with `undefined` clears) the emulator's fault injection. */
export async function setFaults(url: string, adminToken: string, faults: Record<string, unknown> | undefined): Promise<void> {
  const res = await fetch(`${url}/_emulator/faults`, {
    method: faults ? 'PUT' : 'DELETE',
    headers: { authorization: `Bearer ${adminToken}`, ...(faults ? { 'content-type': 'application/json' } : {}) },
    ...(faults ? { body: JSON.stringify(faults) } : {}),
  });
  if (res.status >= 300) throw new Error(`faults: ${res.status} ${await res.text()}`);
}

/** Resets the emulator's request counts. */
export async function resetCounts(url: string, adminToken: string): Promise<void> {
  await fetch(`${url}/_emulator/requests`, { method: 'DELETE', headers: { authorization: `Bearer ${adminToken}` } });
}
