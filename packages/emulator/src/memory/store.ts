/**
 * The memory area's SQLite store. Every memory belongs to a tenant, a digital employee (agent) and a user (its
 * owner or author), and lives in one of four scopes whose keys decide who sees it (README "Memory"):
 *   user_long_term  tenant + agent + user            what the agent remembers about the user across sessions
 *   agent_private   tenant + agent                   the agent's own notes, across users (the user is the author)
 *   session         tenant + agent + user + session  the current conversation
 *   group_shared    tenant + agent + group           shared by a group conversation (the user is the author)
 */
import type Database from 'better-sqlite3';
import type { MemoryScope } from '../kb/seed.js';

/** A memory row. */
export interface MemoryRow {
  seq: number;
  id: string;
  tenant_id: number;
  scope: MemoryScope;
  user_id: string;
  agent_id: string;
  session_id: string;
  group_id: string;
  content: string;
  created_at: number;
}

/** Who is asking: the keys of a recall, list or delete. */
export interface MemoryCaller {
  tenantId: number;
  userId: string;
  agentId: string;
  sessionId: string;
  /** '' when none. */
  groupId: string;
}

/** Creates the memory table (idempotent). */
export function migrateMemory(db: Database.Database): void {
  db.exec(`
    CREATE TABLE IF NOT EXISTS mem_memories (
      seq INTEGER PRIMARY KEY AUTOINCREMENT,
      id TEXT NOT NULL UNIQUE,
      tenant_id INTEGER NOT NULL,
      scope TEXT NOT NULL,
      user_id TEXT NOT NULL,
      agent_id TEXT NOT NULL,
      session_id TEXT NOT NULL DEFAULT '',
      group_id TEXT NOT NULL DEFAULT '',
      content TEXT NOT NULL,
      created_at INTEGER NOT NULL
    );
    CREATE INDEX IF NOT EXISTS mem_memories_agent ON mem_memories(tenant_id, agent_id, scope);
  `);
}

/** True when the memory is visible to the caller under its scope's keys. */
export function visibleTo(row: MemoryRow, caller: MemoryCaller): boolean {
  if (row.tenant_id !== caller.tenantId || row.agent_id !== caller.agentId) return false;
  switch (row.scope) {
    case 'user_long_term':
      return row.user_id === caller.userId;
    case 'agent_private':
      return true;
    case 'session':
      return row.user_id === caller.userId && row.session_id === caller.sessionId;
    case 'group_shared':
      return caller.groupId !== '' && row.group_id === caller.groupId;
  }
}

/**
 * The ownership check of a delete: the memory is in the caller's tenant, belongs to (or was written by) the given
 * user, and lies in a scope the caller's keys reach (same agent; same session for `session`; same group for
 * `group_shared`).
 */
export function ownedBy(row: MemoryRow, caller: MemoryCaller): boolean {
  return row.user_id === caller.userId && visibleTo(row, caller);
}

/** Typed access to the memory table; statements prepared once. */
export class MemoryStore {
  private readonly s;

  constructor(db: Database.Database) {
    this.s = {
      insert: db.prepare(`INSERT OR IGNORE INTO mem_memories (id, tenant_id, scope, user_id, agent_id, session_id, group_id, content, created_at)
        VALUES (@id, @tenant_id, @scope, @user_id, @agent_id, @session_id, @group_id, @content, @created_at)`),
      byId: db.prepare<[string], MemoryRow>('SELECT * FROM mem_memories WHERE id = ?'),
      inScope: db.prepare<[number, string, string], MemoryRow>(
        'SELECT * FROM mem_memories WHERE tenant_id = ? AND agent_id = ? AND scope = ? ORDER BY seq DESC',
      ),
      delete: db.prepare('DELETE FROM mem_memories WHERE id = ?'),
    };
  }

  insert(row: Omit<MemoryRow, 'seq'>): void {
    this.s.insert.run(row);
  }

  byId(id: string): MemoryRow | undefined {
    return this.s.byId.get(id);
  }

  /** The memories of one scope the caller sees, newest first. */
  inScope(scope: MemoryScope, caller: MemoryCaller): MemoryRow[] {
    return this.s.inScope.all(caller.tenantId, caller.agentId, scope).filter((row) => visibleTo(row, caller));
  }

  /** Deletes one memory; the number of rows removed. */
  delete(id: string): number {
    return this.s.delete.run(id).changes;
  }
}
