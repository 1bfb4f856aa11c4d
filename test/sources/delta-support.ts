/**
 * Loopback doubles of the delta protocols (issue 31) and what the delta tests share: a Microsoft Graph that speaks
 * /users and /users/delta (deltaLink, nextLink pages, `$deltatoken=latest`, `@removed`, changed properties only,
 * 410 and syncStateNotFound for tokens it forgot), a BambooHR that speaks the custom report (with
 * `filters.employeeIds`) and `/v1/employees/changed?since=`, and a sync config that reads one of them into the
 * emulator. Each double keeps a world that the test changes between runs, and records every request.
 */
import { createServer, type IncomingMessage, type Server, type ServerResponse } from 'node:http';
import type { AddressInfo } from 'node:net';
import { writeFileSync } from 'node:fs';
import { join } from 'node:path';
import type { DesiredMember, PlatformMember } from '../../src/domain/index.js';
import { TEST_KEYS, type TestEmulator } from '../helpers/emulator.js';
import { runCli } from '../helpers/cli.js';

/** One request a double saw. */
export interface SeenRequest {
  method: string;
  path: string;
  query: URLSearchParams;
  body: string;
  authorization: string | undefined;
}

type Handler = (req: SeenRequest, res: ServerResponse) => void;

/** Starts an HTTP server on 127.0.0.1 port 0 that records requests and answers through `handle`. */
async function serve(handle: Handler): Promise<{ base: string; requests: SeenRequest[]; close(): Promise<void> }> {
  const requests: SeenRequest[] = [];
  const server: Server = createServer((req: IncomingMessage, res: ServerResponse) => {
    const chunks: Buffer[] = [];
    req.on('data', (c: Buffer) => chunks.push(c));
    req.on('end', () => {
      const url = new URL(req.url!, 'http://127.0.0.1');
      const seen = { method: req.method!, path: url.pathname, query: url.searchParams, body: Buffer.concat(chunks).toString('utf8'), authorization: req.headers.authorization };
      requests.push(seen);
      handle(seen, res);
    });
  });
  await new Promise<void>((resolve) => server.listen(0, '127.0.0.1', resolve));
  const { port } = server.address() as AddressInfo;
  return { base: `http://127.0.0.1:${port}`, requests, close: () => new Promise<void>((resolve) => server.close(() => resolve())) };
}

const json = (res: ServerResponse, status: number, body: unknown, headers: Record<string, string> = {}): void => {
  res.writeHead(status, { 'content-type': 'application/json', ...headers }).end(JSON.stringify(body));
};

// --- Microsoft Graph ---------------------------------------------------------------------------------------------

/** A Graph user as the double keeps it. */
export type GraphUser = Record<string, unknown> & { id: string };

/** A Graph user of the tests' tenant. */
export function graphUser(n: number, over: Partial<GraphUser> = {}): GraphUser {
  const id = `u${String(n).padStart(4, '0')}`;
  return {
    id,
    displayName: `User ${n}`,
    mail: `user${n}@acme.test`,
    userPrincipalName: `user${n}@acme.test`,
    mobilePhone: null,
    businessPhones: [],
    jobTitle: `Engineer ${n % 3}`,
    department: n % 2 === 0 ? 'Engineering' : 'Sales',
    accountEnabled: true,
    userType: 'Member',
    employeeHireDate: null,
    employeeLeaveDateTime: null,
    ...over,
  };
}

/** What happened to a user at one version of the Graph world. */
interface GraphChange {
  version: number;
  id: string;
  /** The properties set (a whole user when created); undefined: removed. */
  props: Record<string, unknown> | undefined;
  created: boolean;
}

/** The Graph double. */
export interface GraphDouble {
  base: string;
  requests: SeenRequest[];
  users: Map<string, GraphUser>;
  /** Tokens the double no longer knows, and how it says so. */
  forget(how: '410' | 'syncStateNotFound'): void;
  /** From now on /users/delta answers 404, as a gateway that does not pass it on. */
  dropDelta(): void;
  add(user: GraphUser): void;
  update(id: string, props: Record<string, unknown>): void;
  remove(id: string): void;
  /** Requests since the mark (`mark()` returns the current count). */
  since(mark: number): SeenRequest[];
  close(): Promise<void>;
}

/** Starts a Graph double serving `users`, `pageSize` records per page of /users and of a delta. */
export async function startGraph(initial: GraphUser[], pageSize = 3): Promise<GraphDouble> {
  const users = new Map(initial.map((u) => [u.id, u]));
  const log: GraphChange[] = [];
  let version = 1;
  let forgotten: { below: number; how: '410' | 'syncStateNotFound' } | undefined;
  let deltaDropped = false;
  const select = (u: GraphUser, q: URLSearchParams): Record<string, unknown> => {
    const sel = q.get('$select');
    if (sel === null) return u;
    const names = new Set(['id', ...sel.split(',')]);
    return Object.fromEntries(Object.entries(u).filter(([k]) => names.has(k)));
  };
  const link = (path: string, params: Record<string, string>): string => `${double.base}${path}?${new URLSearchParams(params).toString()}`;
  const deltaItems = (from: number, q: URLSearchParams): unknown[] => {
    const touched = new Map<string, { created: boolean; props: Record<string, unknown> }>();
    for (const c of log) {
      if (c.version <= from) continue;
      const before = touched.get(c.id);
      if (c.props === undefined) touched.set(c.id, { created: false, props: {} });
      else touched.set(c.id, { created: (before?.created ?? false) || c.created, props: { ...(before?.props ?? {}), ...c.props } });
    }
    const items: unknown[] = [];
    for (const [id, t] of [...touched].sort(([a], [b]) => a.localeCompare(b))) {
      const now = users.get(id);
      if (now === undefined) items.push({ id, '@removed': { reason: 'deleted' } });
      else if (t.created) items.push(select(now, q));
      else items.push({ id, ...select({ id, ...t.props }, q) });
    }
    return items;
  };
  const handle: Handler = (req, res) => {
    const q = req.query;
    if (req.path === '/v1.0/users') {
      const all = [...users.values()].sort((a, b) => a.id.localeCompare(b.id));
      const from = Number(q.get('$skiptoken') ?? 0);
      const next = from + pageSize < all.length ? { '@odata.nextLink': link('/v1.0/users', { ...Object.fromEntries(q), $skiptoken: String(from + pageSize) }) } : {};
      return json(res, 200, { ...(from === 0 ? { '@odata.count': all.length } : {}), value: all.slice(from, from + pageSize).map((u) => select(u, q)), ...next });
    }
    if (req.path !== '/v1.0/users/delta' || deltaDropped) return json(res, 404, { error: { code: 'Request_ResourceNotFound', message: 'not found' } });
    const token = q.get('$deltatoken');
    if (token === 'latest') return json(res, 200, { value: [], '@odata.deltaLink': link('/v1.0/users/delta', { $select: q.get('$select') ?? '', $deltatoken: String(version) }) });
    // A delta session: `$deltatoken=<version>` starts it, `$skiptoken=<version>-<offset>` continues it.
    const [fromText, offsetText] = (q.get('$skiptoken') ?? `${token}-0`).split('-');
    const from = Number(fromText);
    if (forgotten && from < forgotten.below) {
      if (forgotten.how === '410') return json(res, 410, { error: { code: 'resyncRequired', message: 'Resync required.' } });
      return json(res, 400, { error: { code: 'syncStateNotFound', message: 'The sync state generation is not found. The delta token is expired and data must be synchronized again.' } });
    }
    const items = deltaItems(from, q);
    const offset = Number(offsetText);
    const page = items.slice(offset, offset + pageSize);
    const more = offset + pageSize < items.length;
    const params = { $select: q.get('$select') ?? '' };
    return json(res, 200, {
      value: page,
      ...(more ? { '@odata.nextLink': link('/v1.0/users/delta', { ...params, $skiptoken: `${from}-${offset + pageSize}` }) } : { '@odata.deltaLink': link('/v1.0/users/delta', { ...params, $deltatoken: String(version) }) }),
    });
  };
  const server = await serve(handle);
  const double: GraphDouble = {
    base: server.base,
    requests: server.requests,
    users,
    forget(how) {
      forgotten = { below: version + 1, how };
    },
    dropDelta() {
      deltaDropped = true;
    },
    add(user) {
      version += 1;
      users.set(user.id, user);
      log.push({ version, id: user.id, props: user, created: true });
    },
    update(id, props) {
      version += 1;
      users.set(id, { ...users.get(id)!, ...props });
      log.push({ version, id, props, created: false });
    },
    remove(id) {
      version += 1;
      users.delete(id);
      log.push({ version, id, props: undefined, created: false });
    },
    since: (mark) => server.requests.slice(mark),
    close: server.close,
  };
  return double;
}

// --- BambooHR ----------------------------------------------------------------------------------------------------

/** A BambooHR employee as the custom report returns it. */
export type BambooEmployee = Record<string, string | null> & { id: string };

/** An employee of the tests' company. */
export function bambooEmployee(n: number, over: Partial<BambooEmployee> = {}): BambooEmployee {
  return {
    id: String(n),
    firstName: `First${n}`,
    lastName: `Last${n}`,
    displayName: `First${n} Last${n}`,
    workEmail: `e${n}@acme.test`,
    mobilePhone: null,
    workPhone: null,
    jobTitle: `Analyst ${n % 2}`,
    department: n % 2 === 0 ? 'Finance' : 'Operations',
    status: 'Active',
    hireDate: '2020-01-01',
    terminationDate: '0000-00-00',
    ...over,
  };
}

/** The BambooHR double. */
export interface BambooDouble {
  base: string;
  requests: SeenRequest[];
  employees: Map<string, BambooEmployee>;
  put(e: BambooEmployee): void;
  remove(id: string): void;
  /** Moves the double's clock (its Date header and the lastChanged of what changes next) on by `ms`. */
  tick(ms: number): void;
  close(): Promise<void>;
}

/**
 * Starts a BambooHR double for company `acme` (HTTP Basic with API key `bamboo-key`). Its clock is its own (moved by
 * `tick`): every answer carries it as the Date header, and a change is stamped with it.
 */
export async function startBamboo(initial: BambooEmployee[]): Promise<BambooDouble> {
  const employees = new Map(initial.map((e) => [e.id, e]));
  let now = Date.UTC(2026, 10, 27, 12, 0, 0);
  // When each employee last changed (ms), and the ids deleted; the initial ones changed an hour before the start.
  const changed = new Map<string, { at: number; action: 'Inserted' | 'Updated' | 'Deleted' }>();
  for (const e of initial) changed.set(e.id, { at: now - 3_600_000, action: 'Inserted' });
  const want = `Basic ${Buffer.from('bamboo-key:x').toString('base64')}`;
  const server = await serve((req, res) => {
    const reply = (status: number, body: unknown): void => json(res, status, body, { date: new Date(now).toUTCString() });
    if (req.authorization !== want) return reply(401, { error: 'unauthorized' });
    if (req.path.startsWith('/api/gateway.php/acme/') === false) return reply(404, {});
    const path = req.path.slice('/api/gateway.php/acme'.length);
    if (path === '/v1/reports/custom' && req.method === 'POST' && req.query.get('format') === 'JSON') {
      const body = JSON.parse(req.body) as { fields: string[]; filters?: { employeeIds?: (number | string)[] } };
      const only = body.filters?.employeeIds?.map(String);
      const list = [...employees.values()].filter((e) => only === undefined || only.includes(e.id));
      return reply(200, { title: 'orgsync', fields: body.fields.map((id) => ({ id, name: id })), employees: list.map((e) => Object.fromEntries(body.fields.map((f) => [f, e[f] ?? null]))) });
    }
    if (path === '/v1/employees/changed' && req.method === 'GET') {
      const since = Date.parse(req.query.get('since') ?? '');
      if (!Number.isFinite(since)) return reply(400, { error: 'since is required' });
      const out: Record<string, unknown> = {};
      for (const [id, c] of changed) if (c.at >= since) out[id] = { id, action: c.action, lastChanged: new Date(c.at).toISOString() };
      return reply(200, { latest: new Date(now).toISOString(), employees: out });
    }
    return reply(404, {});
  });
  return {
    base: `${server.base}/api/gateway.php/acme`,
    requests: server.requests,
    employees,
    put(e) {
      changed.set(e.id, { at: now, action: employees.has(e.id) ? 'Updated' : 'Inserted' });
      employees.set(e.id, e);
    },
    remove(id) {
      employees.delete(id);
      changed.set(id, { at: now, action: 'Deleted' });
    },
    tick(ms) {
      now += ms;
    },
    close: server.close,
  };
}

// --- The sync --------------------------------------------------------------------------------------------------

/** Writes a config that syncs `source` (YAML under `sources:`) into the emulator; returns its path. */
export function writeSyncConfig(dir: string, emulator: TestEmulator, source: string, sync = ''): string {
  const file = join(dir, 'orgsync.yaml');
  writeFileSync(file, `platform:\n  base_url: ${emulator.url}\n  api_key: ${TEST_KEYS.acmeRw}\nstate:\n  path: ./state.db\nsync:\n  id: delta-sync\n${sync}log:\n  level: silent\nsources:\n${source}`);
  return file;
}

/** One source's read in a sync's JSON summary. */
export interface SourceRead {
  source: string;
  mode: 'full' | 'delta';
  reason: string;
  records_read: number;
}

/** `orgsync sync --output json` with extra flags: exit code, summary document and stderr. */
export async function syncJson(file: string, env: Record<string, string>, ...flags: string[]): Promise<{ code: number; doc: { result: string; source_reads?: SourceRead[]; error: string | null; applied: unknown }; stderr: string }> {
  const r = await runCli(['sync', '--config', file, '--output', 'json', ...flags], env);
  return { code: r.code, doc: JSON.parse(r.stdout) as never, stderr: r.stderr };
}

/** The members orgsync manages on the emulator (those with a third_user_id), by third id. */
export async function platformMembers(emulator: TestEmulator): Promise<Map<string, PlatformMember>> {
  const res = await emulator.request('GET', '/api/external/v1/org/members?limit=200', { token: TEST_KEYS.acmeRw });
  const out = new Map<string, PlatformMember>();
  for (const m of res.body.items as PlatformMember[]) if (m.third_user_id !== '' && m.status !== 'left') out.set(m.third_user_id, m);
  return out;
}

/** Desired members in a comparable form: sorted by source id, without their origin (a delta read names the snapshot). */
export function comparable(members: readonly DesiredMember[]): unknown[] {
  return [...members].sort((a, b) => a.source_id.localeCompare(b.source_id)).map((m) => ({ ...m, origin: undefined }));
}
