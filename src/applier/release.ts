/**
 * Release (`orgsync release`) as a change the applier executes. A sync's plan never holds one, so it adds no
 * operation: it is an `update` marked `releases`, and no plan, count, saved plan or digest can tell it exists.
 * Departments and positions: its request PATCHes metadata without managed_by. Members: it has no request (nothing on
 * the platform changes). Then the applier gives the ownership up: the member's ownership record is deleted, and the
 * record's missing-run count (grace period) is forgotten.
 */
import type { Change } from '../domain/index.js';
import { changeLine } from '../domain/index.js';

/** A change that gives a record up (see the head of this file). */
export interface ReleaseChange extends Change {
  op: 'update';
  releases: true;
}

/** True when `c` is a release. */
export function isReleaseChange(c: Change): c is ReleaseChange {
  return c.op === 'update' && (c as Partial<ReleaseChange>).releases === true;
}

/**
 * The one-line form of a change in the applier's log: changeLine, but RELEASE for a release (whose op, `update`,
 * would otherwise make the line say UPDATE for a member whose platform record is not written at all).
 */
export function appliedChangeLine(c: Change, personName = true): string {
  const line = changeLine(c, personName);
  return isReleaseChange(c) ? `RELEASE${line.slice(c.op.length)}` : line;
}
