/**
 * The mirror of the platform's organisation in the state DB. It knows nothing of HTTP (it must not import
 * src/platform): the daemon lists pages with the client and hands them here.
 */
import type Database from 'better-sqlite3';
import { ENTITY_KINDS, type EntityKind, type PlatformDepartment, type PlatformMember, type PlatformPosition } from '../domain/entities.js';
import { OrgsyncError } from '../shared/errors.js';
import { blankPersonalFields } from './forget.js';
import { keysetPages } from './keyset.js';

/** The record type of each entity kind, as the platform reports it. */
export interface MirrorRecords {
  departments: PlatformDepartment;
  members: PlatformMember;
  positions: PlatformPosition;
}

/** A record of any kind. */
export type MirrorRecord = MirrorRecords[EntityKind];

/** Lookups of one entity kind. */
export interface EntityIndex<T> {
  /** Every mirrored record (tombstones included) by its platform id (account_id for members). */
  byId: ReadonlyMap<string, T>;
  /**
   * By third_*_id (non-empty only). A live record wins over tombstones sharing its third id (docs/decisions.md 6);
   * among tombstones the newest wins.
   */
  byThirdId: ReadonlyMap<string, T>;
}

/** The departments and positions as last mirrored, indexed (members are read by key: byThirdId, get, scan). */
export interface MirrorSnapshot {
  departments: EntityIndex<PlatformDepartment>;
  positions: EntityIndex<PlatformPosition>;
}

/** Members read a window at a time by `scan`. */
const SCAN_WINDOW = 2_000;

/** A walk in progress, from beginWalk to completeWalk. */
export interface WalkHandle {
  entity: EntityKind;
  /** Full walks remove what they did not see; incremental walks only upsert. */
  kind: 'full' | 'incremental';
  id: number;
  /** RFC 3339, the walk's start by the caller's clock. */
  startedAt: string;
}

/** Per-entity sync state. */
export interface EntitySyncState {
  entity: EntityKind;
  /** RFC 3339; undefined until the first walk completes. */
  watermark: string | undefined;
  lastFullWalkAt: string | undefined;
  lastIncrementalAt: string | undefined;
  /** The latest walk begun: its kind, start and completion (undefined completion: interrupted or running). */
  lastWalk: { kind: 'full' | 'incremental'; startedAt: string; completedAt: string | undefined } | undefined;
}

/** A write's outcome, recorded from the response at once. */
export type WriteOutcome =
  | { entity: 'departments'; record: PlatformDepartment }
  | { entity: 'members'; record: PlatformMember }
  | { entity: 'positions'; record: PlatformPosition }
  /** A 204 DELETE (or a 404 on DELETE): the record is now a tombstone (member `left`, others `deleted`). */
  | { entity: EntityKind; removedId: string };

/** Count of records of one entity in one status. */
export interface StatusCount {
  entity: EntityKind;
  status: string;
  count: number;
}

/** One mirror table: its name, key, third id, tombstone status and columns. */
export interface TableSpec {
  table: string;
  key: string;
  thirdKey: string;
  tombstone: string;
  /** Columns in insert order, with how each value is stored. */
  columns: { name: string; kind: 'text' | 'int' | 'bool' | 'json' }[];
  /** The column names, for telling the fields that go to `extra`. */
  names: ReadonlySet<string>;
}

const SPEC_LIST: Record<EntityKind, Omit<TableSpec, 'names'>> = {
  departments: {
    table: 'mirror_departments',
    key: 'id',
    thirdKey: 'third_department_id',
    tombstone: 'deleted',
    columns: [
      { name: 'id', kind: 'text' },
      { name: 'parent_id', kind: 'text' },
      { name: 'name', kind: 'text' },
      { name: 'path', kind: 'text' },
      { name: 'depth', kind: 'int' },
      { name: 'sort_order', kind: 'int' },
      { name: 'third_department_id', kind: 'text' },
      { name: 'member_count', kind: 'int' },
      { name: 'metadata', kind: 'json' },
      { name: 'status', kind: 'text' },
      { name: 'updated_at', kind: 'text' },
    ],
  },
  members: {
    table: 'mirror_members',
    key: 'account_id',
    thirdKey: 'third_user_id',
    tombstone: 'left',
    columns: [
      { name: 'account_id', kind: 'text' },
      { name: 'display_name', kind: 'text' },
      { name: 'email', kind: 'text' },
      { name: 'phone', kind: 'text' },
      { name: 'third_user_id', kind: 'text' },
      { name: 'title', kind: 'text' },
      { name: 'department_id', kind: 'text' },
      { name: 'status', kind: 'text' },
      { name: 'roles', kind: 'json' },
      { name: 'updated_at', kind: 'text' },
    ],
  },
  positions: {
    table: 'mirror_positions',
    key: 'id',
    thirdKey: 'third_position_id',
    tombstone: 'deleted',
    columns: [
      { name: 'id', kind: 'text' },
      { name: 'name', kind: 'text' },
      { name: 'description', kind: 'text' },
      { name: 'sort_order', kind: 'int' },
      { name: 'third_position_id', kind: 'text' },
      { name: 'is_system', kind: 'bool' },
      { name: 'member_count', kind: 'int' },
      { name: 'agent_count', kind: 'int' },
      { name: 'metadata', kind: 'json' },
      { name: 'status', kind: 'text' },
      { name: 'updated_at', kind: 'text' },
    ],
  },
};

/** The mirror tables, by entity. */
export const SPECS: Record<EntityKind, TableSpec> = {
  departments: withNames(SPEC_LIST.departments),
  members: withNames(SPEC_LIST.members),
  positions: withNames(SPEC_LIST.positions),
};

function withNames(spec: Omit<TableSpec, 'names'>): TableSpec {
  return { ...spec, names: new Set(spec.columns.map((c) => c.name)) };
}

const NO_IDS: ReadonlySet<string> = new Set();

/** The tombstone status of each entity. */
export const TOMBSTONE_STATUS: Record<EntityKind, string> = { departments: 'deleted', members: 'left', positions: 'deleted' };

interface Statements {
  upsert: Database.Statement;
  markSeen: Database.Statement;
  deleteUnseen: Database.Statement;
  selectOne: Database.Statement;
  selectAll: Database.Statement;
  countByStatus: Database.Statement;
  tombstone: Database.Statement;
}

interface StateRow {
  entity: EntityKind;
  watermark: string | null;
  last_full_walk_at: string | null;
  last_incremental_at: string | null;
  walk_id: number;
  walk_kind: 'full' | 'incremental' | null;
  walk_started_at: string | null;
  walk_completed_at: string | null;
}

/** The mirror repository over an opened state DB (see ./db.ts). Statements are prepared once, here. */
export class Mirror {
  private readonly stmts: Record<EntityKind, Statements>;
  private readonly selectState: Database.Statement;
  private readonly selectStates: Database.Statement;
  private readonly beginWalkStmt: Database.Statement;
  private readonly completeFullStmt: Database.Statement;
  private readonly completeIncrementalStmt: Database.Statement;
  private readonly completeTx: (walk: WalkHandle, watermark: string, completedAt: string) => { removed: number; completed: boolean };
  private readonly applyTx: <K extends EntityKind>(entity: K, items: readonly MirrorRecords[K][], walk: WalkHandle | undefined) => { upserted: number; tombstones: number };

  private readonly byThirdStmt: Record<EntityKind, Database.Statement>;
  private readonly scanStmt: Database.Statement;
  private readonly selectForgotten: Database.Statement | undefined;
  private readonly unforgetStmt: Database.Statement | undefined;

  constructor(readonly db: Database.Database) {
    const hasForgotten = db.prepare("SELECT 1 FROM sqlite_master WHERE type = 'table' AND name = 'forgotten_members'").get() !== undefined;
    this.selectForgotten = hasForgotten ? db.prepare('SELECT account_id FROM forgotten_members').pluck() : undefined;
    this.unforgetStmt = hasForgotten ? db.prepare('DELETE FROM forgotten_members WHERE account_id = ?') : undefined;
    this.stmts = {} as Record<EntityKind, Statements>;
    for (const entity of ENTITY_KINDS) {
      const s = SPECS[entity];
      const cols = s.columns.map((c) => c.name);
      const all = [...cols, 'updated_ms', 'extra', 'seen_walk'];
      const set = [...cols, 'updated_ms', 'extra'].filter((c) => c !== s.key).map((c) => `${c} = excluded.${c}`);
      this.stmts[entity] = {
        // A version older than the stored one (a list page racing a write already recorded) does not overwrite it.
        upsert: db.prepare(
          `INSERT INTO ${s.table} (${all.join(', ')}) VALUES (${all.map(() => '?').join(', ')})
           ON CONFLICT (${s.key}) DO UPDATE SET ${set.join(', ')}, seen_walk = coalesce(excluded.seen_walk, seen_walk)
           WHERE excluded.updated_ms >= ${s.table}.updated_ms`,
        ),
        markSeen: db.prepare(`UPDATE ${s.table} SET seen_walk = ? WHERE ${s.key} = ?`),
        deleteUnseen: db.prepare(`DELETE FROM ${s.table} WHERE seen_walk IS NULL OR seen_walk <> ?`),
        selectOne: db.prepare(`SELECT ${cols.join(', ')}, extra FROM ${s.table} WHERE ${s.key} = ?`).raw(),
        selectAll: db.prepare(`SELECT ${cols.join(', ')}, extra FROM ${s.table} ORDER BY ${s.key}`).raw(),
        countByStatus: db.prepare(`SELECT status, count(*) AS count FROM ${s.table} GROUP BY status ORDER BY status`),
        tombstone: db.prepare(`UPDATE ${s.table} SET status = @status WHERE ${s.key} = @id`),
      };
    }
    this.byThirdStmt = {} as Record<EntityKind, Database.Statement>;
    for (const entity of ENTITY_KINDS) {
      const s = SPECS[entity];
      this.byThirdStmt[entity] = db
        .prepare(`SELECT ${s.columns.map((c) => c.name).join(', ')}, extra FROM ${s.table} WHERE ${s.thirdKey} = ? ORDER BY status = '${s.tombstone}', updated_ms DESC, ${s.key} LIMIT 1`)
        .raw();
    }
    const members = SPECS.members;
    this.scanStmt = db.prepare(`SELECT ${members.columns.map((c) => c.name).join(', ')}, extra FROM ${members.table} WHERE ${members.key} > ? ORDER BY ${members.key} LIMIT ?`).raw();
    this.selectState = db.prepare('SELECT * FROM mirror_sync_state WHERE entity = ?');
    this.selectStates = db.prepare('SELECT * FROM mirror_sync_state');
    this.beginWalkStmt = db.prepare(
      `UPDATE mirror_sync_state SET walk_id = walk_id + 1, walk_kind = @kind, walk_started_at = @startedAt, walk_completed_at = NULL
       WHERE entity = @entity RETURNING walk_id`,
    ).pluck();
    this.completeFullStmt = db.prepare(
      `UPDATE mirror_sync_state SET watermark = @watermark, last_full_walk_at = @startedAt, walk_completed_at = @completedAt
       WHERE entity = @entity AND walk_id = @id`,
    );
    this.completeIncrementalStmt = db.prepare(
      `UPDATE mirror_sync_state SET watermark = @watermark, last_incremental_at = @startedAt, walk_completed_at = @completedAt
       WHERE entity = @entity AND walk_id = @id`,
    );
    this.completeTx = db.transaction((walk: WalkHandle, watermark: string, completedAt: string) => {
      const stmt = walk.kind === 'full' ? this.completeFullStmt : this.completeIncrementalStmt;
      const info = stmt.run({ entity: walk.entity, id: walk.id, watermark, startedAt: walk.startedAt, completedAt });
      if (info.changes === 0) return { removed: 0, completed: false };
      const removed = walk.kind === 'full' ? this.stmts[walk.entity].deleteUnseen.run(walk.id).changes : 0;
      return { removed, completed: true };
    });
    this.applyTx = db.transaction(<K extends EntityKind>(entity: K, items: readonly MirrorRecords[K][], walk: WalkHandle | undefined) => {
      const spec = SPECS[entity];
      const st = this.stmts[entity];
      const seen = walk?.kind === 'full' ? walk.id : null;
      let tombstones = 0;
      const forgotten = this.forgottenIn(entity);
      for (const item of items) {
        const record = forgotten.size > 0 && forgotten.has(String((item as { account_id?: unknown }).account_id)) ? blankPersonalFields(item as unknown as Record<string, unknown>) : (item as unknown as Record<string, unknown>);
        const info = st.upsert.run(toRow(spec, record, seen));
        // Skipped as older than the stored version: still counts as seen by this walk.
        if (info.changes === 0 && seen !== null) st.markSeen.run(seen, record[spec.key]);
        if (record.status === spec.tombstone) tombstones += 1;
      }
      return { upserted: items.length, tombstones };
    }) as typeof this.applyTx;
  }

  /**
   * Applies one list page idempotently (upsert by id; tombstones are stored with their status).
   * Pass the walk the page belongs to so a full walk can tell which records it saw.
   */
  applyPage<K extends EntityKind>(entity: K, items: readonly MirrorRecords[K][], walk?: WalkHandle): { upserted: number; tombstones: number } {
    if (walk && walk.entity !== entity) throw new OrgsyncError('INTERNAL', `page of ${entity} applied to a walk of ${walk.entity}`);
    return this.applyTx(entity, items, walk);
  }

  /** Starts a walk: a full walk stamps every record it sees with the walk's id. */
  beginWalk(entity: EntityKind, kind: 'full' | 'incremental', startedAt: string): WalkHandle {
    const id = this.beginWalkStmt.get({ entity, kind, startedAt }) as number;
    return { entity, kind, id, startedAt };
  }

  /**
   * Completes a walk and sets the entity's new watermark, in one transaction. A full walk removes every record it
   * did not see (deleted on the platform, or tombstones). Returns how many records were removed.
   * Does nothing (removed: 0, completed: false) when a newer walk of the entity has begun meanwhile.
   */
  completeWalk(walk: WalkHandle, watermark: string, completedAt: string): { removed: number; completed: boolean } {
    return this.completeTx(walk, watermark, completedAt);
  }

  /**
   * Records a write's response at once (a create, patch, or a DELETE's tombstone), so the next plan sees it even
   * before the next refresh. A crash before this call is healed by the next incremental refresh.
   */
  recordOutcome(outcome: WriteOutcome): void {
    const st = this.stmts[outcome.entity];
    if ('removedId' in outcome) {
      st.tombstone.run({ id: outcome.removedId, status: TOMBSTONE_STATUS[outcome.entity] });
      return;
    }
    // Stamped with the latest walk id: a record written during a full walk counts as seen by it.
    const state = this.selectState.get(outcome.entity) as StateRow;
    let record = outcome.record as unknown as Record<string, unknown>;
    if (this.forgottenIn(outcome.entity).has(String(record.account_id))) {
      // This sync wrote the account again (a re-hire brought the person back into a source): no longer forgotten.
      if (record.status !== TOMBSTONE_STATUS.members) this.unforgetStmt?.run(record.account_id);
      else record = blankPersonalFields(record);
    }
    st.upsert.run(toRow(SPECS[outcome.entity], record, state.walk_id));
  }

  /**
   * Issue 29: the members `orgsync forget` erased, whose personal fields the mirror stores blank. Read per page (a
   * small table), since `forget` may run beside this process; empty for the other entities, or before migration 060.
   */
  private forgottenIn(entity: EntityKind): ReadonlySet<string> {
    if (entity !== 'members' || !this.selectForgotten) return NO_IDS;
    return new Set(this.selectForgotten.all() as string[]);
  }

  /** One record by id (tombstones included), as the platform reported it. */
  get<K extends EntityKind>(entity: K, id: string): MirrorRecords[K] | undefined {
    const row = this.stmts[entity].selectOne.get(id) as unknown[] | undefined;
    return row === undefined ? undefined : (fromRow(SPECS[entity], row) as unknown as MirrorRecords[K]);
  }

  /**
   * Every record of an entity, ordered by id: for the departments and positions (thousands). Members are read
   * through the member table and finder (./member-table.ts), a window or a key at a time.
   */
  all<K extends 'departments' | 'positions'>(entity: K): MirrorRecords[K][] {
    return (this.stmts[entity].selectAll.all() as unknown[][]).map((row) => fromRow(SPECS[entity], row) as unknown as MirrorRecords[K]);
  }

  /** The departments and positions by id and by third id. */
  snapshot(): MirrorSnapshot {
    return { departments: this.index('departments'), positions: this.index('positions') };
  }

  /**
   * The record with this third id: a live one before tombstones sharing it (docs/decisions.md 6), then the newest,
   * then the first by platform id.
   */
  byThirdId<K extends EntityKind>(entity: K, thirdId: string): MirrorRecords[K] | undefined {
    if (thirdId === '') return undefined;
    const row = this.byThirdStmt[entity].get(thirdId) as unknown[] | undefined;
    return row === undefined ? undefined : (fromRow(SPECS[entity], row) as unknown as MirrorRecords[K]);
  }

  /**
   * Every member, by platform id, a window at a time (keyset: a write between two windows is seen or not, never
   * repeated): a reader that keeps only what it needs of each holds one window, not the tenant.
   */
  *scanMembers(): Generator<PlatformMember> {
    const windows = keysetPages((after: string, limit) => this.scanStmt.all(after, limit) as unknown[][], (r) => r[0] as string, '', SCAN_WINDOW);
    for (const rows of windows) for (const row of rows) yield fromRow(SPECS.members, row) as unknown as PlatformMember;
  }

  private index<K extends 'departments' | 'positions'>(entity: K): EntityIndex<MirrorRecords[K]> {
    const spec = SPECS[entity];
    const byId = new Map<string, MirrorRecords[K]>();
    const byThirdId = new Map<string, MirrorRecords[K]>();
    for (const record of this.all(entity)) {
      const r = record as unknown as Record<string, string>;
      byId.set(r[spec.key]!, record);
      const third = r[spec.thirdKey];
      if (!third) continue;
      const held = byThirdId.get(third) as unknown as Record<string, string> | undefined;
      if (!held || preferOver(spec, r, held)) byThirdId.set(third, record);
    }
    return { byId, byThirdId };
  }

  /** Record counts by entity and status. */
  counts(): StatusCount[] {
    const out: StatusCount[] = [];
    for (const entity of ENTITY_KINDS) {
      for (const row of this.stmts[entity].countByStatus.all() as { status: string; count: number }[]) {
        out.push({ entity, status: row.status, count: row.count });
      }
    }
    return out;
  }

  /** Record counts by entity and status (the metrics' name for counts()). */
  records(): StatusCount[] {
    return this.counts();
  }

  /** Watermark per entity in ms since the epoch (undefined before the first completed walk), for metrics. */
  watermarks(): Record<EntityKind, number | undefined> {
    const out = {} as Record<EntityKind, number | undefined>;
    for (const s of this.states()) out[s.entity] = s.watermark === undefined ? undefined : Date.parse(s.watermark);
    return out;
  }

  /** The sync state of one entity. */
  state(entity: EntityKind): EntitySyncState {
    return toState(this.selectState.get(entity) as StateRow);
  }

  /** The sync state of every entity, in ENTITY_KINDS order. */
  states(): EntitySyncState[] {
    const rows = new Map((this.selectStates.all() as StateRow[]).map((r) => [r.entity, r]));
    return ENTITY_KINDS.map((e) => toState(rows.get(e)!));
  }
}

function toState(row: StateRow): EntitySyncState {
  return {
    entity: row.entity,
    watermark: row.watermark ?? undefined,
    lastFullWalkAt: row.last_full_walk_at ?? undefined,
    lastIncrementalAt: row.last_incremental_at ?? undefined,
    lastWalk: row.walk_kind
      ? { kind: row.walk_kind, startedAt: row.walk_started_at ?? '', completedAt: row.walk_completed_at ?? undefined }
      : undefined,
  };
}

/** Live beats tombstone; otherwise the newer version wins. */
function preferOver(spec: TableSpec, candidate: Record<string, string>, held: Record<string, string>): boolean {
  const candLive = candidate.status !== spec.tombstone;
  const heldLive = held.status !== spec.tombstone;
  if (candLive !== heldLive) return candLive;
  return Date.parse(candidate.updated_at!) > Date.parse(held.updated_at!);
}

/** The statement parameters of a record, positional in the upsert's column order (cheaper than named ones). */
function toRow(spec: TableSpec, item: Record<string, unknown>, seenWalk: number | null): unknown[] {
  const row: unknown[] = [];
  for (const c of spec.columns) {
    const v = item[c.name];
    if (c.kind === 'json') row.push(JSON.stringify(v ?? null));
    else if (c.kind === 'bool') row.push(v ? 1 : 0);
    else row.push(v);
  }
  const ms = Date.parse(String(item.updated_at));
  row.push(Number.isNaN(ms) ? 0 : ms, extraOf(spec, item), seenWalk);
  return row;
}

/** The fields of a record this version has no column for, as JSON (null when there are none, as usual). */
function extraOf(spec: TableSpec, item: Record<string, unknown>): string | null {
  let extra: Record<string, unknown> | undefined;
  for (const k of Object.keys(item)) if (!spec.names.has(k)) (extra ??= {})[k] = item[k];
  return extra === undefined ? null : JSON.stringify(extra);
}

/** A record from its columns (in spec order) and `extra` (last): the record as the platform reported it. */
export function fromRow(spec: TableSpec, row: readonly unknown[]): Record<string, unknown> {
  const out: Record<string, unknown> = {};
  const columns = spec.columns;
  for (let i = 0; i < columns.length; i++) {
    const c = columns[i]!;
    const v = row[i];
    out[c.name] = c.kind === 'json' ? JSON.parse(v as string) : c.kind === 'bool' ? v === 1 : v;
  }
  const extra = row[columns.length];
  if (typeof extra === 'string') Object.assign(out, JSON.parse(extra) as Record<string, unknown>);
  return out;
}
