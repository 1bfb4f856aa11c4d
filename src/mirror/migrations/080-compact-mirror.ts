import type { Migration } from './types.js';

/** Each mirror table's known columns (in migration 001's order), the ones `extra` leaves out. */
const KNOWN: Record<string, { key: string; columns: string }> = {
  mirror_departments: { key: 'id', columns: 'id, parent_id, name, path, depth, sort_order, third_department_id, member_count, metadata, status, updated_at' },
  mirror_members: { key: 'account_id', columns: 'account_id, display_name, email, phone, third_user_id, title, department_id, status, roles, updated_at' },
  mirror_positions: { key: 'id', columns: 'id, name, description, sort_order, third_position_id, is_system, member_count, agent_count, metadata, status, updated_at' },
};

const TYPES: Record<string, string> = {
  depth: 'INTEGER',
  sort_order: 'INTEGER',
  member_count: 'INTEGER',
  agent_count: 'INTEGER',
  is_system: 'INTEGER',
};

/** One table rebuilt: the known columns, `extra` (the rest of `raw`, or NULL), keyed by its platform id without a rowid. */
function rebuild(table: string): string {
  const { key, columns } = KNOWN[table]!;
  const names = columns.split(', ');
  const defs = names.map((c) => `  ${c} ${TYPES[c] ?? 'TEXT'} NOT NULL${c === key ? ' PRIMARY KEY' : ''}`).join(',\n');
  const rest = `json_remove(raw, ${names.map((c) => `'$.${c}'`).join(', ')})`;
  const third = names.find((c) => c.startsWith('third_'))!;
  return `
CREATE TABLE ${table}_080 (
${defs},
  updated_ms INTEGER NOT NULL,
  extra TEXT,
  seen_walk INTEGER
) STRICT, WITHOUT ROWID;
INSERT INTO ${table}_080 SELECT ${columns}, updated_ms, CASE WHEN ${rest} = '{}' THEN NULL ELSE ${rest} END, seen_walk FROM ${table};
DROP TABLE ${table};
ALTER TABLE ${table}_080 RENAME TO ${table};
CREATE INDEX ${table}_third_id ON ${table} (${third});
`;
}

/** The ownership records keyed by (sync id, source id) as the table itself, not a rowid table and a key index beside it. */
const OWNED_MEMBERS = `
CREATE TABLE owned_members_080 (
  sync_id TEXT NOT NULL,
  third_user_id TEXT NOT NULL,
  account_id TEXT NOT NULL,
  origin TEXT NOT NULL CHECK (origin IN ('created', 'adopted')),
  owned_since TEXT NOT NULL,
  missing_since TEXT,
  missing_runs INTEGER NOT NULL DEFAULT 0,
  PRIMARY KEY (sync_id, third_user_id)
) STRICT, WITHOUT ROWID;
INSERT INTO owned_members_080 SELECT sync_id, third_user_id, account_id, origin, owned_since, missing_since, missing_runs FROM owned_members;
DROP TABLE owned_members;
ALTER TABLE owned_members_080 RENAME TO owned_members;
CREATE UNIQUE INDEX owned_members_account ON owned_members (sync_id, account_id);
`;

/**
 * Migration 080 (issue 42): the mirror tables without `raw`, and the tables of a million rows without a rowid. Each
 * mirror row kept every field twice, once per column and once in the JSON of the whole record, and its platform id a
 * third time in the rowid table's key index: a mirrored member took about 600 bytes. Now the columns are the record,
 * `extra` holds only the fields this version does not know (NULL while the platform sends none), and the platform id
 * is the table's own key (WITHOUT ROWID): about 290 with its third-id index. An ownership record drops its rowid and
 * key index the same way (about 180 bytes to 150).
 */
export const migration080: Migration = {
  version: 80,
  name: 'compact-mirror',
  sql: Object.keys(KNOWN).map(rebuild).join('') + OWNED_MEMBERS,
};
