/**
 * Every migration of the state DB, in order. Numbers: 001-009 mirror and sync state (src/mirror),
 * 010-019 ownership, grace, snapshots (reconcile), 020-029 lease lock, run history and pending approvals (operations),
 * 030-039 record history (issue 22), 040-049 caches of the sources (issue 19), 050-059 reconcile again (unfinished
 * creates), 060-069 privacy (issue 29: forgotten members), 070-079 source snapshots (issue 31: delta reads), 080-089 the daily run (issue 42: compact mirror tables).
 * Append new entries; never renumber or edit one that has shipped.
 */
import { migration001 } from './001-mirror-tables.js';
import { migration002 } from './002-mirror-sync-state.js';
import type { Migration } from './types.js';
import { migration010, migration050 } from '../ownership.js';
import { migration015 } from '../trust-state.js';
import { migration020, migration022 } from '../lease.js';
import { migration021 } from '../runs.js';
import { migration023 } from './023-approvals.js';
import { migration030 } from './030-record-history.js';
import { migration040 } from '../phone-cache.js';
import { migration060 } from '../forget.js';
import { migration065 } from './065-approval-plan-chunks.js';
import { migration070 } from '../source-snapshot.js';
import { migration080 } from './080-compact-mirror.js';
import { migration081 } from './081-history-batches.js';

export type { Migration } from './types.js';
export { runMigrations } from './runner.js';

/** The migrations, ascending by version. */
export const migrations: readonly Migration[] = [
  migration001,
  migration002,
  migration010,
  migration015,
  migration020,
  migration021,
  migration022,
  migration023,
  migration030,
  migration040,
  migration050,
  migration060,
  migration065,
  migration070,
  migration080,
  migration081,
];
