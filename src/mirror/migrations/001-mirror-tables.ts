import type { Migration } from './types.js';

/**
 * The mirror: departments, members and positions exactly as the platform reports them (every field, plus the raw
 * JSON with any field this version does not know). `updated_ms` orders versions of a record; `seen_walk` is the id
 * of the last full walk that listed the record (records a completed full walk did not see are removed).
 */
export const migration001: Migration = {
  version: 1,
  name: 'mirror-tables',
  sql: `
CREATE TABLE mirror_departments (
  id TEXT PRIMARY KEY,
  parent_id TEXT NOT NULL,
  name TEXT NOT NULL,
  path TEXT NOT NULL,
  depth INTEGER NOT NULL,
  sort_order INTEGER NOT NULL,
  third_department_id TEXT NOT NULL,
  member_count INTEGER NOT NULL,
  metadata TEXT NOT NULL,
  status TEXT NOT NULL,
  updated_at TEXT NOT NULL,
  updated_ms INTEGER NOT NULL,
  raw TEXT NOT NULL,
  seen_walk INTEGER
) STRICT;
CREATE INDEX mirror_departments_third_id ON mirror_departments (third_department_id);

CREATE TABLE mirror_members (
  account_id TEXT PRIMARY KEY,
  display_name TEXT NOT NULL,
  email TEXT NOT NULL,
  phone TEXT NOT NULL,
  third_user_id TEXT NOT NULL,
  title TEXT NOT NULL,
  department_id TEXT NOT NULL,
  status TEXT NOT NULL,
  roles TEXT NOT NULL,
  updated_at TEXT NOT NULL,
  updated_ms INTEGER NOT NULL,
  raw TEXT NOT NULL,
  seen_walk INTEGER
) STRICT;
CREATE INDEX mirror_members_third_id ON mirror_members (third_user_id);

CREATE TABLE mirror_positions (
  id TEXT PRIMARY KEY,
  name TEXT NOT NULL,
  description TEXT NOT NULL,
  sort_order INTEGER NOT NULL,
  third_position_id TEXT NOT NULL,
  is_system INTEGER NOT NULL,
  member_count INTEGER NOT NULL,
  agent_count INTEGER NOT NULL,
  metadata TEXT NOT NULL,
  status TEXT NOT NULL,
  updated_at TEXT NOT NULL,
  updated_ms INTEGER NOT NULL,
  raw TEXT NOT NULL,
  seen_walk INTEGER
) STRICT;
CREATE INDEX mirror_positions_third_id ON mirror_positions (third_position_id);
`,
};
