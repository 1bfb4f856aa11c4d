/** The migration runner: PRAGMA user_version holds the last applied version. */
import type Database from 'better-sqlite3';
import { OrgsyncError } from '../../shared/errors.js';
import type { Migration } from './types.js';

/**
 * Applies every migration above the DB's user_version, each in its own transaction together with the version bump,
 * so a crash leaves the DB at a whole version. Returns the versions applied.
 */
export function runMigrations(db: Database.Database, list: readonly Migration[], file = db.name): number[] {
  const sorted = [...list].sort((a, b) => a.version - b.version);
  for (let i = 1; i < sorted.length; i += 1) {
    if (sorted[i]!.version === sorted[i - 1]!.version) {
      throw new OrgsyncError('INTERNAL', `state DB migrations: version ${sorted[i]!.version} is defined twice (${sorted[i - 1]!.name}, ${sorted[i]!.name})`);
    }
  }
  const current = db.pragma('user_version', { simple: true }) as number;
  const latest = sorted.at(-1)?.version ?? 0;
  if (current > latest) {
    throw new OrgsyncError('STATE_ERROR', `${file}: state DB is at version ${current}, newer than this orgsync knows (${latest}); use a newer orgsync or move the file away`);
  }
  const applied: number[] = [];
  for (const m of sorted) {
    if (m.version <= current) continue;
    const apply = db.transaction(() => {
      db.exec(m.sql);
      db.pragma(`user_version = ${m.version}`);
    });
    try {
      apply();
    } catch (err) {
      throw new OrgsyncError('STATE_ERROR', `${file}: migration ${String(m.version).padStart(3, '0')} ${m.name} failed: ${(err as Error).message}`, { cause: err });
    }
    applied.push(m.version);
  }
  return applied;
}
