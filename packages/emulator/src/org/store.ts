/**
 * The organisation store: departments, positions, accounts and memberships of every tenant in SQLite, with the
 * rules of the spec and docs/decisions.md (soft deletes, third-id uniqueness among live records, path/depth/member_count
 * kept right, `seq` for live walks and `rev` for incremental walks). Every write runs in one transaction.
 */
import { randomUUID } from 'node:crypto';
import type Database from 'better-sqlite3';
import { parsePhoneNumberFromString } from 'libphonenumber-js';
import type { Clock } from '../core/clock.js';
import { ApiError } from '../core/errors.js';
import type { Seed } from '../core/seed.js';
import type { DirectoryMember, OrgDirectory } from '../core/types.js';

/** A department as the API returns it. */
export interface Department {
  id: string;
  parent_id: string;
  name: string;
  path: string;
  depth: number;
  sort_order: number;
  third_department_id: string;
  member_count: number;
  metadata: Record<string, unknown>;
  status: 'active' | 'deleted';
  updated_at: string;
}

/** A member as the API returns it. */
export interface Member {
  account_id: string;
  display_name: string;
  email: string;
  phone: string;
  third_user_id: string;
  title: string;
  department_id: string;
  status: 'active' | 'invited' | 'suspended' | 'left';
  roles: string[];
  updated_at: string;
}

/** A position as the API returns it. */
export interface Position {
  id: string;
  name: string;
  description: string;
  sort_order: number;
  third_position_id: string;
  is_system: boolean;
  member_count: number;
  agent_count: number;
  metadata: Record<string, unknown>;
  status: 'active' | 'deleted';
  updated_at: string;
}

/** One page of a list. */
export interface Page<T> {
  items: T[];
  next_cursor: string;
  has_more: boolean;
}

/** Turns the last row of a page into the cursor of the next one. */
export type CursorEncoder = (q: ListQuery, last: { seq: number; rev: number }) => string;

/** Where a list walk is: live records by `seq`, or changes since a time by `rev`. */
export type ListQuery = { mode: 'seq'; after: number; limit: number } | { mode: 'rev'; after: number; since: number; limit: number };

interface DepartmentRow {
  seq: number;
  id: string;
  tenant_id: number;
  parent_id: string;
  name: string;
  path: string;
  depth: number;
  sort_order: number;
  third_department_id: string;
  member_count: number;
  metadata: string;
  status: 'active' | 'deleted';
  updated_ms: number;
  rev: number;
}

interface PositionRow {
  seq: number;
  id: string;
  tenant_id: number;
  name: string;
  description: string;
  sort_order: number;
  third_position_id: string;
  is_system: number;
  metadata: string;
  status: 'active' | 'deleted';
  updated_ms: number;
  rev: number;
}

interface MemberRow {
  seq: number;
  tenant_id: number;
  account_id: string;
  display_name: string;
  email: string;
  phone: string;
  third_user_id: string;
  title: string;
  department_id: string;
  status: 'active' | 'invited' | 'suspended' | 'left';
  roles: string;
  updated_ms: number;
  rev: number;
}

interface AccountRow {
  account_id: string;
  email: string;
  phone: string;
}

/** updated_at in SQL, built from integer ms so it is exact: 2026-11-22T15:04:05.123Z. */
const SQL_UPDATED_AT = "strftime('%Y-%m-%dT%H:%M:%S', updated_ms / 1000, 'unixepoch') || printf('.%03dZ', updated_ms % 1000)";

// Each row carries its API JSON as a STORED generated column `j`, kept current by SQLite on every write, so a list
// page is one string per row: no row objects, no re-serialisation.
// The field order matches toDepartment / toMember / toPosition.
const DEPARTMENT_JSON = `json_object('id', id, 'parent_id', parent_id, 'name', name, 'path', path, 'depth', depth, 'sort_order', sort_order,
  'third_department_id', third_department_id, 'member_count', member_count, 'metadata', json(metadata), 'status', status, 'updated_at', ${SQL_UPDATED_AT})`;
const MEMBER_JSON = `json_object('account_id', account_id, 'display_name', display_name, 'email', email, 'phone', phone, 'third_user_id', third_user_id,
  'title', title, 'department_id', department_id, 'status', status, 'roles', json(roles), 'updated_at', ${SQL_UPDATED_AT})`;
const POSITION_JSON = `json_object('id', id, 'name', name, 'description', description, 'sort_order', sort_order, 'third_position_id', third_position_id,
  'is_system', json(CASE WHEN is_system = 1 THEN 'true' ELSE 'false' END), 'member_count', 0, 'agent_count', 0, 'metadata', json(metadata),
  'status', status, 'updated_at', ${SQL_UPDATED_AT})`;

/** One list row as read: its walk positions and its JSON. */
interface JsonRow {
  seq: number;
  rev: number;
  j: string;
}

/** Creates the org tables (idempotent). */
export function migrateOrg(db: Database.Database): void {
  db.exec(`
    CREATE TABLE IF NOT EXISTS org_tenants (
      id INTEGER PRIMARY KEY,
      name TEXT NOT NULL,
      root_department_id TEXT NOT NULL
    );
    CREATE TABLE IF NOT EXISTS org_departments (
      seq INTEGER PRIMARY KEY AUTOINCREMENT,
      id TEXT NOT NULL UNIQUE,
      tenant_id INTEGER NOT NULL,
      parent_id TEXT NOT NULL,
      name TEXT NOT NULL,
      path TEXT NOT NULL,
      depth INTEGER NOT NULL,
      sort_order INTEGER NOT NULL,
      third_department_id TEXT NOT NULL,
      member_count INTEGER NOT NULL DEFAULT 0,
      metadata TEXT NOT NULL,
      status TEXT NOT NULL,
      updated_ms INTEGER NOT NULL,
      rev INTEGER NOT NULL,
      j TEXT GENERATED ALWAYS AS (${DEPARTMENT_JSON}) STORED
    );
    CREATE INDEX IF NOT EXISTS org_departments_tenant_seq ON org_departments(tenant_id, status, seq);
    CREATE INDEX IF NOT EXISTS org_departments_tenant_rev ON org_departments(tenant_id, rev);
    CREATE INDEX IF NOT EXISTS org_departments_parent ON org_departments(tenant_id, parent_id, status);
    CREATE INDEX IF NOT EXISTS org_departments_third ON org_departments(tenant_id, third_department_id, status);
    CREATE TABLE IF NOT EXISTS org_positions (
      seq INTEGER PRIMARY KEY AUTOINCREMENT,
      id TEXT NOT NULL UNIQUE,
      tenant_id INTEGER NOT NULL,
      name TEXT NOT NULL,
      description TEXT NOT NULL,
      sort_order INTEGER NOT NULL,
      third_position_id TEXT NOT NULL,
      is_system INTEGER NOT NULL DEFAULT 0,
      metadata TEXT NOT NULL,
      status TEXT NOT NULL,
      updated_ms INTEGER NOT NULL,
      rev INTEGER NOT NULL,
      j TEXT GENERATED ALWAYS AS (${POSITION_JSON}) STORED
    );
    CREATE INDEX IF NOT EXISTS org_positions_tenant_seq ON org_positions(tenant_id, status, seq);
    CREATE INDEX IF NOT EXISTS org_positions_tenant_rev ON org_positions(tenant_id, rev);
    CREATE INDEX IF NOT EXISTS org_positions_third ON org_positions(tenant_id, third_position_id, status);
    CREATE TABLE IF NOT EXISTS org_accounts (
      account_id TEXT PRIMARY KEY,
      email TEXT NOT NULL,
      email_key TEXT NOT NULL,
      phone TEXT NOT NULL,
      phone_key TEXT NOT NULL
    );
    CREATE INDEX IF NOT EXISTS org_accounts_email ON org_accounts(email_key);
    CREATE INDEX IF NOT EXISTS org_accounts_phone ON org_accounts(phone_key);
    CREATE TABLE IF NOT EXISTS org_members (
      seq INTEGER PRIMARY KEY AUTOINCREMENT,
      tenant_id INTEGER NOT NULL,
      account_id TEXT NOT NULL,
      display_name TEXT NOT NULL,
      email TEXT NOT NULL,
      phone TEXT NOT NULL,
      third_user_id TEXT NOT NULL,
      title TEXT NOT NULL,
      department_id TEXT NOT NULL,
      status TEXT NOT NULL,
      roles TEXT NOT NULL,
      updated_ms INTEGER NOT NULL,
      rev INTEGER NOT NULL,
      j TEXT GENERATED ALWAYS AS (${MEMBER_JSON}) STORED,
      UNIQUE (tenant_id, account_id)
    );
    -- Partial: the live walk (status != 'left') then reads in seq order without sorting.
    CREATE INDEX IF NOT EXISTS org_members_live_seq ON org_members(tenant_id, seq) WHERE status != 'left';
    CREATE INDEX IF NOT EXISTS org_members_tenant_rev ON org_members(tenant_id, rev);
    CREATE INDEX IF NOT EXISTS org_members_third ON org_members(tenant_id, third_user_id, status);
    CREATE INDEX IF NOT EXISTS org_members_department ON org_members(tenant_id, department_id, status);
  `);
}

/** The key an e-mail is matched on (case-insensitive). */
export function emailKey(email: string): string {
  return email.trim().toLowerCase();
}

/** The key a phone number is matched on: E.164 when it parses, else its digits (and a leading +). */
export function phoneKey(phone: string): string {
  const trimmed = phone.trim();
  if (trimmed === '') return '';
  // Already in E.164 form: nothing to normalise (and parsing is the costly part of a member create).
  if (/^\+[1-9]\d{6,14}$/.test(trimmed)) return trimmed;
  const parsed = parsePhoneNumberFromString(trimmed);
  return parsed?.number ?? trimmed.replace(/[^\d+]/g, '');
}

/** RFC 3339 with milliseconds, UTC. */
export function timestamp(ms: number): string {
  return new Date(ms).toISOString();
}

function parseMetadata(text: string): Record<string, unknown> {
  return JSON.parse(text) as Record<string, unknown>;
}

function toDepartment(row: DepartmentRow): Department {
  return {
    id: row.id,
    parent_id: row.parent_id,
    name: row.name,
    path: row.path,
    depth: row.depth,
    sort_order: row.sort_order,
    third_department_id: row.third_department_id,
    member_count: row.member_count,
    metadata: parseMetadata(row.metadata),
    status: row.status,
    updated_at: timestamp(row.updated_ms),
  };
}

function toPosition(row: PositionRow): Position {
  return {
    id: row.id,
    name: row.name,
    description: row.description,
    sort_order: row.sort_order,
    third_position_id: row.third_position_id,
    is_system: row.is_system === 1,
    member_count: 0,
    agent_count: 0,
    metadata: parseMetadata(row.metadata),
    status: row.status,
    updated_at: timestamp(row.updated_ms),
  };
}

function toMember(row: MemberRow): Member {
  return {
    account_id: row.account_id,
    display_name: row.display_name,
    email: row.email,
    phone: row.phone,
    third_user_id: row.third_user_id,
    title: row.title,
    department_id: row.department_id,
    status: row.status,
    roles: JSON.parse(row.roles) as string[],
    updated_at: timestamp(row.updated_ms),
  };
}

/** Fields of a department create. */
export interface DepartmentCreate {
  name: string;
  parent_id?: string | undefined;
  sort_order?: number | undefined;
  third_department_id?: string | undefined;
  metadata?: Record<string, unknown> | undefined;
}
/** Fields of a department patch. */
export type DepartmentPatch = Partial<DepartmentCreate>;

/** Fields of a position create. */
export interface PositionCreate {
  name: string;
  description?: string | undefined;
  sort_order?: number | undefined;
  third_position_id?: string | undefined;
  metadata?: Record<string, unknown> | undefined;
}
/** Fields of a position patch. */
export type PositionPatch = Partial<PositionCreate>;

/** Fields of a member create. */
export interface MemberCreate {
  phone?: string | undefined;
  email?: string | undefined;
  display_name?: string | undefined;
  title?: string | undefined;
  third_user_id?: string | undefined;
  department_id?: string | undefined;
  role_code?: string | undefined;
}
/** Fields of a member patch. */
export interface MemberPatch {
  display_name?: string | undefined;
  title?: string | undefined;
  third_user_id?: string | undefined;
  department_id?: string | undefined;
  status?: 'active' | 'suspended' | undefined;
}

const notFound = (what: string) => new ApiError(404, 'not_found', `${what} not found`);

/** The org store of one emulator. */
export class OrgStore implements OrgDirectory {
  private rev: number;
  private readonly s;

  constructor(
    private readonly db: Database.Database,
    private readonly clock: Clock,
  ) {
    const max = db
      .prepare<[], { rev: number | null }>(
        `SELECT MAX(rev) AS rev FROM (SELECT MAX(rev) AS rev FROM org_departments UNION ALL SELECT MAX(rev) FROM org_positions UNION ALL SELECT MAX(rev) FROM org_members)`,
      )
      .get();
    this.rev = max?.rev ?? 0;
    this.s = {
      tenant: db.prepare<[number], { id: number; name: string; root_department_id: string }>('SELECT * FROM org_tenants WHERE id = ?'),
      insertTenant: db.prepare('INSERT INTO org_tenants (id, name, root_department_id) VALUES (?, ?, ?)'),
      dept: db.prepare<[number, string], DepartmentRow>('SELECT * FROM org_departments WHERE tenant_id = ? AND id = ?'),
      liveDept: db.prepare<[number, string], DepartmentRow>("SELECT * FROM org_departments WHERE tenant_id = ? AND id = ? AND status = 'active'"),
      deptByThird: db.prepare<[number, string], { id: string }>(
        "SELECT id FROM org_departments WHERE tenant_id = ? AND third_department_id = ? AND status = 'active'",
      ),
      insertDept: db.prepare(
        `INSERT INTO org_departments (id, tenant_id, parent_id, name, path, depth, sort_order, third_department_id, member_count, metadata, status, updated_ms, rev)
         VALUES (@id, @tenant_id, @parent_id, @name, @path, @depth, @sort_order, @third_department_id, 0, @metadata, 'active', @updated_ms, @rev)`,
      ),
      updateDept: db.prepare(
        `UPDATE org_departments SET parent_id = @parent_id, name = @name, path = @path, depth = @depth, sort_order = @sort_order,
           third_department_id = @third_department_id, metadata = @metadata, status = @status, updated_ms = @updated_ms, rev = @rev
         WHERE seq = @seq`,
      ),
      liveChildren: db.prepare<[number, string], DepartmentRow>(
        "SELECT * FROM org_departments WHERE tenant_id = ? AND parent_id = ? AND status = 'active' ORDER BY seq",
      ),
      setPathDepth: db.prepare('UPDATE org_departments SET path = ?, depth = ?, updated_ms = ?, rev = ? WHERE seq = ?'),
      adjustCount: db.prepare('UPDATE org_departments SET member_count = member_count + ?, updated_ms = ?, rev = ? WHERE tenant_id = ? AND id = ?'),
      liveChildCount: db.prepare<[number, string], { n: number }>(
        "SELECT COUNT(*) AS n FROM org_departments WHERE tenant_id = ? AND parent_id = ? AND status = 'active'",
      ),
      deptsBySeq: db.prepare<[number, number, number], JsonRow>(
        `SELECT seq, rev, j FROM org_departments WHERE tenant_id = ? AND status = 'active' AND seq > ? ORDER BY seq LIMIT ?`,
      ),
      deptsByRev: db.prepare<[number, number, number, number], JsonRow>(
        `SELECT seq, rev, j FROM org_departments WHERE tenant_id = ? AND updated_ms >= ? AND rev > ? ORDER BY rev LIMIT ?`,
      ),

      position: db.prepare<[number, string], PositionRow>("SELECT * FROM org_positions WHERE tenant_id = ? AND id = ? AND status = 'active'"),
      positionByThird: db.prepare<[number, string], { id: string }>(
        "SELECT id FROM org_positions WHERE tenant_id = ? AND third_position_id = ? AND status = 'active'",
      ),
      insertPosition: db.prepare(
        `INSERT INTO org_positions (id, tenant_id, name, description, sort_order, third_position_id, is_system, metadata, status, updated_ms, rev)
         VALUES (@id, @tenant_id, @name, @description, @sort_order, @third_position_id, 0, @metadata, 'active', @updated_ms, @rev)`,
      ),
      updatePosition: db.prepare(
        `UPDATE org_positions SET name = @name, description = @description, sort_order = @sort_order, third_position_id = @third_position_id,
           metadata = @metadata, status = @status, updated_ms = @updated_ms, rev = @rev WHERE seq = @seq`,
      ),
      positionsBySeq: db.prepare<[number, number, number], JsonRow>(
        `SELECT seq, rev, j FROM org_positions WHERE tenant_id = ? AND status = 'active' AND seq > ? ORDER BY seq LIMIT ?`,
      ),
      positionsByRev: db.prepare<[number, number, number, number], JsonRow>(
        `SELECT seq, rev, j FROM org_positions WHERE tenant_id = ? AND updated_ms >= ? AND rev > ? ORDER BY rev LIMIT ?`,
      ),

      accountByPhone: db.prepare<[string], AccountRow>('SELECT account_id, email, phone FROM org_accounts WHERE phone_key = ? ORDER BY rowid LIMIT 1'),
      accountByEmail: db.prepare<[string], AccountRow>('SELECT account_id, email, phone FROM org_accounts WHERE email_key = ? ORDER BY rowid LIMIT 1'),
      accountById: db.prepare<[string], AccountRow>('SELECT account_id, email, phone FROM org_accounts WHERE account_id = ?'),
      insertAccount: db.prepare('INSERT INTO org_accounts (account_id, email, email_key, phone, phone_key) VALUES (?, ?, ?, ?, ?)'),
      fillAccount: db.prepare(
        `UPDATE org_accounts SET
           email = CASE WHEN email = '' THEN @email ELSE email END, email_key = CASE WHEN email_key = '' THEN @email_key ELSE email_key END,
           phone = CASE WHEN phone = '' THEN @phone ELSE phone END, phone_key = CASE WHEN phone_key = '' THEN @phone_key ELSE phone_key END
         WHERE account_id = @account_id`,
      ),
      membership: db.prepare<[number, string], MemberRow>('SELECT * FROM org_members WHERE tenant_id = ? AND account_id = ?'),
      liveMemberByEmail: db.prepare<[number, string], MemberRow>(
        "SELECT * FROM org_members WHERE tenant_id = ? AND lower(email) = ? AND status != 'left' ORDER BY seq LIMIT 1",
      ),
      memberByThird: db.prepare<[number, string], { account_id: string }>(
        "SELECT account_id FROM org_members WHERE tenant_id = ? AND third_user_id = ? AND status != 'left'",
      ),
      insertMember: db.prepare(
        `INSERT INTO org_members (tenant_id, account_id, display_name, email, phone, third_user_id, title, department_id, status, roles, updated_ms, rev)
         VALUES (@tenant_id, @account_id, @display_name, @email, @phone, @third_user_id, @title, @department_id, @status, @roles, @updated_ms, @rev)`,
      ),
      updateMember: db.prepare(
        `UPDATE org_members SET display_name = @display_name, email = @email, phone = @phone, third_user_id = @third_user_id, title = @title,
           department_id = @department_id, status = @status, roles = @roles, updated_ms = @updated_ms, rev = @rev WHERE seq = @seq`,
      ),
      liveMemberCount: db.prepare<[number, string], { n: number }>(
        "SELECT COUNT(*) AS n FROM org_members WHERE tenant_id = ? AND department_id = ? AND status != 'left'",
      ),
      membersBySeq: db.prepare<[number, number, number], JsonRow>(
        `SELECT seq, rev, j FROM org_members WHERE tenant_id = ? AND status != 'left' AND seq > ? ORDER BY seq LIMIT ?`,
      ),
      membersByRev: db.prepare<[number, number, number, number], JsonRow>(
        `SELECT seq, rev, j FROM org_members WHERE tenant_id = ? AND updated_ms >= ? AND rev > ? ORDER BY rev LIMIT ?`,
      ),
    };
  }

  private nextRev(): number {
    this.rev += 1;
    return this.rev;
  }

  private tenant(tenantId: number): { id: number; name: string; root_department_id: string } {
    const tenant = this.s.tenant.get(tenantId);
    if (!tenant) throw notFound('tenant');
    return tenant;
  }

  // ---- seed -------------------------------------------------------------------------------------------------

  /** Creates the seed's tenants (with their root department) and members; idempotent across restarts. */
  applySeed(seed: Seed): void {
    this.db.transaction(() => {
      for (const t of seed.tenants) {
        if (!this.s.tenant.get(t.id)) {
          const rootId = randomUUID();
          const now = this.clock.now();
          this.s.insertDept.run({
            id: rootId, tenant_id: t.id, parent_id: '', name: t.name, path: `/${t.name}`, depth: 0, sort_order: 0,
            third_department_id: '', metadata: '{}', updated_ms: now, rev: this.nextRev(),
          });
          this.s.insertTenant.run(t.id, t.name, rootId);
        }
        for (const m of t.members) {
          const email = m.email ?? '';
          const phone = m.phone ?? '';
          if (m.account_id && this.s.membership.get(t.id, m.account_id)) continue;
          const account = this.findOrCreateAccount(phone, email, m.account_id);
          if (this.s.membership.get(t.id, account.account_id)) continue;
          this.s.insertMember.run({
            tenant_id: t.id, account_id: account.account_id, display_name: m.display_name, email, phone,
            third_user_id: m.third_user_id ?? '', title: m.title ?? '', department_id: '', status: 'active',
            roles: JSON.stringify(m.roles), updated_ms: this.clock.now(), rev: this.nextRev(),
          });
        }
      }
    })();
  }

  // ---- directory (for other areas) ---------------------------------------------------------------------------

  private toDirectory(row: MemberRow): DirectoryMember {
    return {
      account_id: row.account_id, tenant_id: row.tenant_id, display_name: row.display_name, email: row.email, phone: row.phone,
      status: row.status, roles: JSON.parse(row.roles) as string[],
    };
  }

  memberByAccountId(tenantId: number, accountId: string): DirectoryMember | undefined {
    const row = this.s.membership.get(tenantId, accountId);
    return row ? this.toDirectory(row) : undefined;
  }

  memberByEmail(tenantId: number, email: string): DirectoryMember | undefined {
    const row = this.s.liveMemberByEmail.get(tenantId, emailKey(email));
    return row ? this.toDirectory(row) : undefined;
  }

  // ---- lists -------------------------------------------------------------------------------------------------

  /** One page as the JSON text of { items, next_cursor, has_more }. */
  private page(q: ListQuery, bySeq: (after: number, n: number) => JsonRow[], byRev: (since: number, after: number, n: number) => JsonRow[], encode: CursorEncoder): string {
    const rows = q.mode === 'seq' ? bySeq(q.after, q.limit + 1) : byRev(q.since, q.after, q.limit + 1);
    const hasMore = rows.length > q.limit;
    if (hasMore) rows.length = q.limit;
    const last = rows[rows.length - 1];
    const nextCursor = hasMore && last ? encode(q, last) : '';
    let items = '';
    for (const row of rows) items += items === '' ? row.j : `,${row.j}`;
    return `{"items":[${items}],"next_cursor":${JSON.stringify(nextCursor)},"has_more":${hasMore}}`;
  }

  /** A page of departments (JSON text). */
  listDepartments(tenantId: number, q: ListQuery, encode: CursorEncoder): string {
    return this.page(q, (a, n) => this.s.deptsBySeq.all(tenantId, a, n), (s, a, n) => this.s.deptsByRev.all(tenantId, s, a, n), encode);
  }

  /** A page of positions (JSON text). */
  listPositions(tenantId: number, q: ListQuery, encode: CursorEncoder): string {
    return this.page(q, (a, n) => this.s.positionsBySeq.all(tenantId, a, n), (s, a, n) => this.s.positionsByRev.all(tenantId, s, a, n), encode);
  }

  /** A page of members (JSON text). */
  listMembers(tenantId: number, q: ListQuery, encode: CursorEncoder): string {
    return this.page(q, (a, n) => this.s.membersBySeq.all(tenantId, a, n), (s, a, n) => this.s.membersByRev.all(tenantId, s, a, n), encode);
  }

  // ---- departments -------------------------------------------------------------------------------------------

  getDepartment(tenantId: number, id: string): Department {
    const row = this.s.liveDept.get(tenantId, id);
    if (!row) throw notFound('department');
    return toDepartment(row);
  }

  /** The live parent named by a body's parent_id ("" or absent: the root). */
  private parentFor(tenantId: number, parentId: string | undefined): DepartmentRow {
    const id = parentId === undefined || parentId === '' ? this.tenant(tenantId).root_department_id : parentId;
    const row = this.s.liveDept.get(tenantId, id);
    if (!row) throw new ApiError(400, 'invalid_argument', `parent_id: no department ${id} in this tenant`);
    return row;
  }

  private assertThirdDepartmentFree(tenantId: number, third: string, self?: string): void {
    if (third === '') return;
    const other = this.s.deptByThird.get(tenantId, third);
    if (other && other.id !== self) throw new ApiError(409, 'third_id_conflict', `third_department_id ${third} is already used by department ${other.id}`);
  }

  createDepartment(tenantId: number, body: DepartmentCreate): Department {
    return this.db.transaction(() => {
      const parent = this.parentFor(tenantId, body.parent_id);
      const third = body.third_department_id ?? '';
      this.assertThirdDepartmentFree(tenantId, third);
      const id = randomUUID();
      this.s.insertDept.run({
        id, tenant_id: tenantId, parent_id: parent.id, name: body.name, path: `${parent.path}/${body.name}`, depth: parent.depth + 1,
        sort_order: body.sort_order ?? 0, third_department_id: third, metadata: JSON.stringify(body.metadata ?? {}),
        updated_ms: this.clock.now(), rev: this.nextRev(),
      });
      return this.getDepartment(tenantId, id);
    })();
  }

  updateDepartment(tenantId: number, id: string, patch: DepartmentPatch): Department {
    return this.db.transaction(() => {
      const row = this.s.liveDept.get(tenantId, id);
      if (!row) throw notFound('department');
      const isRoot = row.depth === 0;
      let parent: DepartmentRow | undefined;
      if (patch.parent_id !== undefined) {
        if (isRoot) {
          // The root has no parent; "" restates that, anything else would move it.
          if (patch.parent_id !== '') throw new ApiError(409, 'department_is_root', 'the root department cannot be moved');
        } else {
          if (patch.parent_id === id) throw new ApiError(409, 'department_cycle', 'a department cannot be its own parent');
          parent = this.parentFor(tenantId, patch.parent_id);
          // Walk up from the new parent: meeting this department means the move would make a cycle.
          for (let cur: DepartmentRow | undefined = parent; cur && cur.parent_id !== ''; cur = this.s.dept.get(tenantId, cur.parent_id)) {
            if (cur.parent_id === id) throw new ApiError(409, 'department_cycle', 'a department cannot move into its own subtree');
          }
        }
      }
      if (patch.third_department_id !== undefined) this.assertThirdDepartmentFree(tenantId, patch.third_department_id, id);

      const next = {
        parent_id: parent ? parent.id : row.parent_id,
        name: patch.name ?? row.name,
        sort_order: patch.sort_order ?? row.sort_order,
        third_department_id: patch.third_department_id ?? row.third_department_id,
        metadata: patch.metadata !== undefined ? JSON.stringify(patch.metadata) : row.metadata,
      };
      const parentRow = isRoot ? undefined : (parent ?? this.s.dept.get(tenantId, row.parent_id));
      const path = parentRow ? `${parentRow.path}/${next.name}` : `/${next.name}`;
      const depth = parentRow ? parentRow.depth + 1 : 0;
      const changed =
        next.parent_id !== row.parent_id || next.name !== row.name || next.sort_order !== row.sort_order ||
        next.third_department_id !== row.third_department_id || next.metadata !== row.metadata || path !== row.path || depth !== row.depth;
      if (!changed) return toDepartment(row);
      const now = this.clock.now();
      this.s.updateDept.run({ seq: row.seq, ...next, path, depth, status: 'active', updated_ms: now, rev: this.nextRev() });
      if (path !== row.path || depth !== row.depth) this.rewriteDescendants(tenantId, id, path, depth, now);
      return this.getDepartment(tenantId, id);
    })();
  }

  /** After a rename or move: every live descendant gets its new path and depth, a new rev and updated_at. */
  private rewriteDescendants(tenantId: number, id: string, path: string, depth: number, now: number): void {
    // Breadth-first from the moved department, so each parent is rewritten before its children.
    const queue: { id: string; path: string; depth: number }[] = [{ id, path, depth }];
    for (let parent = queue.shift(); parent; parent = queue.shift()) {
      for (const child of this.s.liveChildren.all(tenantId, parent.id)) {
        const childPath = `${parent.path}/${child.name}`;
        const childDepth = parent.depth + 1;
        this.s.setPathDepth.run(childPath, childDepth, now, this.nextRev(), child.seq);
        queue.push({ id: child.id, path: childPath, depth: childDepth });
      }
    }
  }

  deleteDepartment(tenantId: number, id: string): void {
    this.db.transaction(() => {
      const row = this.s.liveDept.get(tenantId, id);
      if (!row) throw notFound('department');
      if (row.depth === 0) throw new ApiError(409, 'department_is_root', 'the root department cannot be deleted');
      if ((this.s.liveChildCount.get(tenantId, id)?.n ?? 0) > 0) throw new ApiError(409, 'department_has_children', 'the department has child departments');
      if ((this.s.liveMemberCount.get(tenantId, id)?.n ?? 0) > 0) throw new ApiError(409, 'department_has_members', 'the department has members');
      this.s.updateDept.run({ ...row, status: 'deleted', updated_ms: this.clock.now(), rev: this.nextRev() });
    })();
  }

  // ---- positions ---------------------------------------------------------------------------------------------

  getPosition(tenantId: number, id: string): Position {
    const row = this.s.position.get(tenantId, id);
    if (!row) throw notFound('position');
    return toPosition(row);
  }

  private assertThirdPositionFree(tenantId: number, third: string, self?: string): void {
    if (third === '') return;
    const other = this.s.positionByThird.get(tenantId, third);
    if (other && other.id !== self) throw new ApiError(409, 'third_id_conflict', `third_position_id ${third} is already used by position ${other.id}`);
  }

  createPosition(tenantId: number, body: PositionCreate): Position {
    return this.db.transaction(() => {
      this.tenant(tenantId);
      const third = body.third_position_id ?? '';
      this.assertThirdPositionFree(tenantId, third);
      const id = randomUUID();
      this.s.insertPosition.run({
        id, tenant_id: tenantId, name: body.name, description: body.description ?? '', sort_order: body.sort_order ?? 0,
        third_position_id: third, metadata: JSON.stringify(body.metadata ?? {}), updated_ms: this.clock.now(), rev: this.nextRev(),
      });
      return this.getPosition(tenantId, id);
    })();
  }

  updatePosition(tenantId: number, id: string, patch: PositionPatch): Position {
    return this.db.transaction(() => {
      const row = this.s.position.get(tenantId, id);
      if (!row) throw notFound('position');
      if (patch.third_position_id !== undefined) this.assertThirdPositionFree(tenantId, patch.third_position_id, id);
      const next = {
        name: patch.name ?? row.name,
        description: patch.description ?? row.description,
        sort_order: patch.sort_order ?? row.sort_order,
        third_position_id: patch.third_position_id ?? row.third_position_id,
        metadata: patch.metadata !== undefined ? JSON.stringify(patch.metadata) : row.metadata,
      };
      const changed = (Object.keys(next) as (keyof typeof next)[]).some((k) => next[k] !== row[k]);
      if (!changed) return toPosition(row);
      this.s.updatePosition.run({ seq: row.seq, ...next, status: 'active', updated_ms: this.clock.now(), rev: this.nextRev() });
      return this.getPosition(tenantId, id);
    })();
  }

  deletePosition(tenantId: number, id: string): void {
    this.db.transaction(() => {
      const row = this.s.position.get(tenantId, id);
      if (!row) throw notFound('position');
      this.s.updatePosition.run({ ...row, status: 'deleted', updated_ms: this.clock.now(), rev: this.nextRev() });
    })();
  }

  // ---- members -----------------------------------------------------------------------------------------------

  getMember(tenantId: number, accountId: string): Member {
    const row = this.s.membership.get(tenantId, accountId);
    if (!row || row.status === 'left') throw notFound('member');
    return toMember(row);
  }

  /** Accounts are platform-wide: phone first, then e-mail; none found creates one. */
  private findOrCreateAccount(phone: string, email: string, fixedId?: string): AccountRow {
    const pKey = phoneKey(phone);
    const eKey = emailKey(email);
    const found =
      (fixedId ? this.s.accountById.get(fixedId) : undefined) ??
      (pKey ? this.s.accountByPhone.get(pKey) : undefined) ??
      (eKey ? this.s.accountByEmail.get(eKey) : undefined);
    if (found) {
      this.s.fillAccount.run({ account_id: found.account_id, email, email_key: eKey, phone, phone_key: pKey });
      return found;
    }
    const accountId = fixedId ?? randomUUID();
    this.s.insertAccount.run(accountId, email, eKey, phone, pKey);
    return { account_id: accountId, email, phone };
  }

  private liveDepartmentFor(tenantId: number, departmentId: string): string {
    if (departmentId === '') return '';
    if (!this.s.liveDept.get(tenantId, departmentId)) throw new ApiError(400, 'invalid_argument', `department_id: no department ${departmentId} in this tenant`);
    return departmentId;
  }

  private assertThirdUserFree(tenantId: number, third: string, self?: string): void {
    if (third === '') return;
    const other = this.s.memberByThird.get(tenantId, third);
    if (other && other.account_id !== self) throw new ApiError(409, 'third_id_conflict', `third_user_id ${third} is already used by member ${other.account_id}`);
  }

  /** Moves one member's weight in the departments' member_count (bumping their rev so incremental readers see it). */
  private adjustCount(tenantId: number, departmentId: string, delta: number, now: number): void {
    if (departmentId === '' || delta === 0) return;
    this.s.adjustCount.run(delta, now, this.nextRev(), tenantId, departmentId);
  }

  createMember(tenantId: number, body: MemberCreate): Member {
    return this.db.transaction(() => {
      this.tenant(tenantId);
      const phone = body.phone ?? '';
      const email = body.email ?? '';
      if (phone.trim() === '' && email.trim() === '') throw new ApiError(400, 'invalid_argument', 'phone or email: one of them is required');
      if (body.role_code !== undefined && body.role_code !== 'tenant.member') {
        throw new ApiError(400, 'invalid_argument', 'role_code: only tenant.member is accepted');
      }
      const departmentId = this.liveDepartmentFor(tenantId, body.department_id ?? '');
      const account = this.findOrCreateAccount(phone, email);
      const existing = this.s.membership.get(tenantId, account.account_id);
      if (existing && existing.status !== 'left') {
        throw new ApiError(409, 'member_exists', `the account ${account.account_id} is already a member of this tenant`);
      }
      const third = body.third_user_id ?? '';
      this.assertThirdUserFree(tenantId, third, account.account_id);
      const now = this.clock.now();
      const fields = {
        tenant_id: tenantId,
        account_id: account.account_id,
        display_name: body.display_name ?? '',
        email: email !== '' ? email : account.email,
        phone: phone !== '' ? phone : account.phone,
        third_user_id: third,
        title: body.title ?? '',
        department_id: departmentId,
        status: 'active',
        roles: JSON.stringify(['tenant.member']),
        updated_ms: now,
        rev: this.nextRev(),
      };
      // A re-hire re-activates the tombstone under the same account id.
      if (existing) this.s.updateMember.run({ ...fields, seq: existing.seq });
      else this.s.insertMember.run(fields);
      this.adjustCount(tenantId, departmentId, 1, now);
      return this.getMember(tenantId, account.account_id);
    })();
  }

  updateMember(tenantId: number, accountId: string, patch: MemberPatch): Member {
    return this.db.transaction(() => {
      const row = this.s.membership.get(tenantId, accountId);
      if (!row || row.status === 'left') throw notFound('member');
      if (patch.third_user_id !== undefined) this.assertThirdUserFree(tenantId, patch.third_user_id, accountId);
      const departmentId = patch.department_id !== undefined ? this.liveDepartmentFor(tenantId, patch.department_id) : row.department_id;
      const next = {
        display_name: patch.display_name ?? row.display_name,
        title: patch.title ?? row.title,
        third_user_id: patch.third_user_id ?? row.third_user_id,
        department_id: departmentId,
        status: patch.status ?? row.status,
      };
      const changed = (Object.keys(next) as (keyof typeof next)[]).some((k) => next[k] !== row[k]);
      if (!changed) return toMember(row);
      const now = this.clock.now();
      this.s.updateMember.run({ ...row, ...next, updated_ms: now, rev: this.nextRev() });
      if (departmentId !== row.department_id) {
        this.adjustCount(tenantId, row.department_id, -1, now);
        this.adjustCount(tenantId, departmentId, 1, now);
      }
      return this.getMember(tenantId, accountId);
    })();
  }

  deleteMember(tenantId: number, accountId: string): void {
    this.db.transaction(() => {
      const row = this.s.membership.get(tenantId, accountId);
      if (!row || row.status === 'left') throw notFound('member');
      if ((JSON.parse(row.roles) as string[]).includes('tenant.admin')) {
        throw new ApiError(403, 'member_is_admin', 'a member holding tenant.admin cannot be removed');
      }
      const now = this.clock.now();
      this.s.updateMember.run({ ...row, status: 'left', updated_ms: now, rev: this.nextRev() });
      this.adjustCount(tenantId, row.department_id, -1, now);
    })();
  }
}
