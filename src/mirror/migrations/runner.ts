/** The migration runner: PRAGMA user_version holds the last applied version. */
import type Database from 'better-sqlite3';
import { OrgsyncError } from '../../shared/errors.js';
import type { Migration } from './types.js';

/**
 * Applies every migration above the DB's user_version in ONE immediate transaction (the version read included), so
 * a crash leaves the DB at its old version or the new one, and processes starting at once on a new DB take turns:
 * the first migrates, the others wait for its lock (the busy timeout) and then find nothing left to do.
 * Returns the versions applied.
 */
export function runMigrations(db: Database.Database, list: readonly Migration[], file = db.name): number[] {
  const sorted = [...list].sort((a, b) => a.version - b.version);
  for (let i = 1; i < sorted.length; i += 1) {
    if (sorted[i]!.version === sorted[i - 1]!.version) {
      throw new OrgsyncError('INTERNAL', `state DB migrations: version ${sorted[i]!.version} is defined twice (${sorted[i - 1]!.name}, ${sorted[i]!.name})`);
    }
  }
  const latest = sorted.at(-1)?.version ?? 0;
  // Read outside a write lock first: an up-to-date DB (every start but the first) takes no write lock at all.
  if ((db.pragma('user_version', { simple: true }) as number) === latest) return [];
  const migrate = db.transaction((): number[] => {
    const current = db.pragma('user_version', { simple: true }) as number;
    if (current > latest) {
      throw new OrgsyncError('STATE_ERROR', `${file}: state DB is at version ${current}, newer than this orgsync knows (${latest}); use a newer orgsync or move the file away`);
    }
    const applied: number[] = [];
    for (const m of sorted) {
      if (m.version <= current) continue;
      try {
        db.exec(m.sql);
      } catch (err) {
        throw new OrgsyncError('STATE_ERROR', `${file}: migration ${String(m.version).padStart(3, '0')} ${m.name} failed: ${(err as Error).message}`, { cause: err });
      }
      applied.push(m.version);
    }
    if (applied.length > 0) db.pragma(`user_version = ${applied.at(-1)!}`);
    return applied;
  });
  return migrate.immediate();
}
