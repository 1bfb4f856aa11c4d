/**
 * The ownership filter: the one place that decides whether this sync may patch or delete a record.
 * Departments and positions carry metadata.managed_by = sync.id; members are owned through the state DB.
 */
import type { PlatformDepartment, PlatformMember, PlatformPosition } from '../domain/index.js';

/** Who a platform record belongs to, from this sync's point of view. */
export type Ownership =
  /** Created or adopted by this sync: may be patched and removed. */
  | 'owned'
  /** Carries another sync's managed_by: never touched, never adopted. */
  | 'other_sync'
  /** Made by hand (or by anything without a marker): touched only through explicit adoption. */
  | 'unmanaged'
  /** The tenant root or a system position: never touched. */
  | 'system';

/** The metadata key that marks departments and positions as managed. */
export const MANAGED_BY_KEY = 'managed_by';

function managedBy(metadata: Record<string, unknown> | undefined): string | undefined {
  const v = metadata?.[MANAGED_BY_KEY];
  return typeof v === 'string' && v !== '' ? v : undefined;
}

/** Ownership of a department. */
export function departmentOwnership(d: PlatformDepartment, syncId: string): Ownership {
  if (d.depth === 0) return 'system';
  const by = managedBy(d.metadata);
  if (by === undefined) return 'unmanaged';
  return by === syncId ? 'owned' : 'other_sync';
}

/** Ownership of a position. */
export function positionOwnership(p: PlatformPosition, syncId: string): Ownership {
  if (p.is_system) return 'system';
  const by = managedBy(p.metadata);
  if (by === undefined) return 'unmanaged';
  return by === syncId ? 'owned' : 'other_sync';
}

/** Ownership of a member: owned when the state DB records its account under this sync. */
export function memberOwnership(m: PlatformMember, ownedAccounts: ReadonlySet<string>): Ownership {
  return ownedAccounts.has(m.account_id) ? 'owned' : 'unmanaged';
}
